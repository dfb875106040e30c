"""The ``files`` table: the tree of one revision, flattened like ``git ls-tree -r -l``.

Content is read only when asked for (``content_limit`` bytes at most), through the
object database's streams, so a large blob is never held whole: the first
``content_limit`` bytes are read and ``content_cut`` says whether there was more.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gitodb.bulk.text import text_and_bytes
from gitodb.errors import BadRevisionError
from gitodb.history.treewalk import list_tree
from gitodb.objects.tree import canonical_mode
from gitodb.repo import Repository
from gitodb.repo.revparse import peel_to


def _head(repo: Repository, oid: bytes, limit: int) -> bytes:
    stream = repo.odb.open_stream(oid)
    try:
        return stream.read(limit)
    finally:
        stream.close()


def file_rows(
    repo: Repository, repository: str, rev: str | None = None, content_limit: int | None = None
) -> Iterator[tuple[Any, ...]]:
    """Rows of the ``files`` table for ``rev`` (default ``HEAD``)."""
    revision = rev if rev is not None else "HEAD"
    oid = repo.resolve(revision)
    try:
        commit_hex: str | None = peel_to(repo, oid, "commit", revision).hex()
    except BadRevisionError:  # a tree (or a tag of one): there is no commit
        commit_hex = None
    tree = repo.odb.tree(peel_to(repo, oid, "tree", revision))
    read_header = repo.odb.read_header
    for entry, path in list_tree(repo, tree, recursive=True):
        kind = entry.object_type
        size = None
        content = None
        cut = None
        if kind == "blob":
            size = read_header(entry.id)[1]
            if content_limit is not None:
                content = _head(repo, entry.id, content_limit)
                cut = size > len(content)
        yield (
            repository,
            revision,
            commit_hex,
            *text_and_bytes(path),
            f"{canonical_mode(entry.mode):06o}",
            kind,
            entry.id.hex(),
            size,
            content,
            cut,
        )
