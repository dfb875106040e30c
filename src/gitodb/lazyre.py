"""Regular expressions compiled where first used, not where defined.

Importing ``re`` (with ``enum``, ``functools`` and ``collections``) and compiling a
pattern are start-up time of every command that imports the module holding it, used
or not: a module on a command's path writes ``_WORD = lazy(r"...")`` at its top
instead of ``re.compile``, and ``re`` is imported, and the pattern compiled, by the
first ``_WORD.match(...)`` (or any other attribute).  Flags go inline in the pattern
(``(?s)``, ``(?i)``).  Hot loops take the compiled pattern once (``_WORD.compiled()``)
rather than paying the indirection per call.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any, AnyStr


class _Lazy:
    __slots__ = ("_compiled", "_pattern")

    def __init__(self, pattern: str | bytes) -> None:
        self._pattern = pattern
        self._compiled: Any = None

    def compiled(self) -> Any:
        """The compiled pattern (``re.compile``: ``re`` is imported here, once)."""
        got = self._compiled
        if got is None:
            import re

            got = self._compiled = re.compile(self._pattern)
        return got

    def __getattr__(self, name: str) -> Any:
        # only for what this class lacks: the pattern's own methods and attributes
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"lazy({self._pattern!r})"


def lazy(pattern: AnyStr) -> re.Pattern[AnyStr]:
    """``pattern``, to be compiled by ``re.compile`` when first used (see the module)."""
    return _Lazy(pattern)  # type: ignore[return-value]


def compiled(pattern: re.Pattern[AnyStr]) -> re.Pattern[AnyStr]:
    """The compiled form of a ``lazy`` pattern (a compiled one is returned as it is)."""
    if isinstance(pattern, _Lazy):
        return pattern.compiled()
    return pattern
