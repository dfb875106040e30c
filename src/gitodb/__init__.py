"""gitodb: Git's object and ref storage from Python, byte-for-byte compatible with Git.

The common entry points are importable from the package itself::

    import gitodb
    repo = gitodb.discover()          # or gitodb.open("path/to/repo")

They are loaded on first use, so that ``import gitodb`` (which every command
does) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    import os

    from gitodb.errors import GitodbError
    from gitodb.repo import Repository

__all__ = ["GitodbError", "Repository", "__version__", "discover", "open"]

# Public name -> module that defines it.
_LAZY = {
    "Repository": "gitodb.repo",
    "GitodbError": "gitodb.errors",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gitodb' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def open(path: str | os.PathLike[str] = ".") -> Repository:  # noqa: A001 - like io.open
    """Open the repository at ``path`` (a work tree, a ``.git`` directory or file, or bare)."""
    from gitodb.repo import Repository

    return Repository(path)


def discover(start: str | os.PathLike[str] | None = None) -> Repository:
    """Find the repository containing ``start`` (default: the current directory) as Git does."""
    from gitodb.repo import Repository

    return Repository.discover(start)
