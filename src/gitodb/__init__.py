"""gitodb: Git's object and ref storage from Python, byte-for-byte compatible with Git.

The common entry points are importable from the package itself::

    import gitodb
    repo = gitodb.discover()          # or gitodb.open("path/to/repo")

They are loaded on first use, so that ``import gitodb`` (which every command
does) stays cheap.
"""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from typing import Any

    from gitodb.errors import (
        AmbiguousObjectNameError,
        BadRevisionError,
        GitodbError,
        ObjectNotFoundError,
        ObjectTypeError,
    )
    from gitodb.objects import Blob, Commit, GitObject, Signature, Tag, Tree, TreeEntry
    from gitodb.objects.format import SHA1, SHA256, ObjectFormat
    from gitodb.objects.oid import ObjectId, ObjectIdLike
    from gitodb.repo import Repository
    from gitodb.repo.odb import ObjectDatabase, ObjectInfo
    from gitodb.types import Buffer, Progress

__all__ = [
    "AmbiguousObjectNameError",
    "BadRevisionError",
    "Blob",
    "Buffer",
    "Commit",
    "GitObject",
    "GitodbError",
    "ObjectDatabase",
    "ObjectFormat",
    "ObjectId",
    "ObjectIdLike",
    "ObjectInfo",
    "ObjectNotFoundError",
    "ObjectTypeError",
    "Progress",
    "Repository",
    "SHA1",
    "SHA256",
    "Signature",
    "Tag",
    "Tree",
    "TreeEntry",
    "__version__",
    "discover",
    "open",
]

# Public name -> module that defines it.
_LAZY = {
    "Repository": "gitodb.repo",
    "ObjectDatabase": "gitodb.repo.odb",
    "ObjectInfo": "gitodb.repo.odb",
    "ObjectId": "gitodb.objects.oid",
    "ObjectIdLike": "gitodb.objects.oid",
    "ObjectFormat": "gitodb.objects.format",
    "SHA1": "gitodb.objects.format",
    "SHA256": "gitodb.objects.format",
    "Blob": "gitodb.objects",
    "Commit": "gitodb.objects",
    "GitObject": "gitodb.objects",
    "Signature": "gitodb.objects",
    "Tag": "gitodb.objects",
    "Tree": "gitodb.objects",
    "TreeEntry": "gitodb.objects",
    "Buffer": "gitodb.types",
    "Progress": "gitodb.types",
    "GitodbError": "gitodb.errors",
    "AmbiguousObjectNameError": "gitodb.errors",
    "BadRevisionError": "gitodb.errors",
    "ObjectNotFoundError": "gitodb.errors",
    "ObjectTypeError": "gitodb.errors",
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
