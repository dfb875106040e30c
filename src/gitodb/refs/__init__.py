"""Ref backends behind one interface; ``open_refs`` picks by ``extensions.refStorage``."""

from __future__ import annotations

import os

from gitodb.errors import RepositoryError
from gitodb.objects.format import ObjectFormat
from gitodb.refs.base import Ref, ReflogEntry, RefStore, RefTransaction

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.refs.files import FilesRefStore

__all__ = ["Ref", "ReflogEntry", "RefStore", "RefTransaction", "FilesRefStore", "open_refs"]


def open_refs(
    git_dir: str | os.PathLike[str],
    fmt: ObjectFormat,
    ref_storage: str = "files",
    config: object | None = None,
    *,
    worktree_dir: str | os.PathLike[str] | None = None,
) -> RefStore:
    """Open the ref store of the repository whose (common) git directory is ``git_dir``.

    ``worktree_dir`` is a linked worktree's own git directory (``.git/worktrees/<id>``):
    its per-worktree refs (HEAD, ``refs/bisect/``...) are read and written there.
    """
    if ref_storage == "files":
        from gitodb.refs.files import FilesRefStore

        return FilesRefStore(git_dir, fmt, config, worktree_dir=worktree_dir)
    if ref_storage == "reftable":
        from gitodb.refs.reftable_store import ReftableRefStore

        return ReftableRefStore(git_dir, fmt, config, worktree_dir=worktree_dir)
    raise RepositoryError(f"unknown ref storage format '{ref_storage}'")


def __getattr__(name: str) -> object:
    # ``gitodb.refs.FilesRefStore`` without loading the files backend into a
    # reftable repository's commands (each backend is imported when opened)
    if name == "FilesRefStore":
        from gitodb.refs.files import FilesRefStore

        return FilesRefStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
