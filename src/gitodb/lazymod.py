"""Modules imported where first used, not where the importing module is loaded.

A module on a short command's path that needs another one only for some of its work
(the pack reader needs the compression layer only to inflate) writes
``compress = lazy_module("gitodb.compress", globals(), "compress")`` instead of the
import.  The first attribute read imports the module and puts it in the caller's
globals under that name, so every later read is a plain global lookup: no
indirection is left on a hot path.  Type checkers see the real import under
``TYPE_CHECKING``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _LazyModule:
    __slots__ = ("_alias", "_name", "_namespace")

    def __init__(self, name: str, namespace: dict[str, Any], alias: str) -> None:
        self._name = name
        self._namespace = namespace
        self._alias = alias

    def __getattr__(self, attr: str) -> Any:
        # __import__ with a fromlist returns the submodule itself (importlib would
        # be one more module on start-up).
        module = __import__(self._name, fromlist=["__name__"])
        self._namespace[self._alias] = module
        return getattr(module, attr)


def lazy_module(name: str, namespace: dict[str, Any], alias: str) -> Any:
    """A stand-in for module ``name`` that imports it, and takes its place as
    ``namespace[alias]``, at the first attribute read."""
    return _LazyModule(name, namespace, alias)
