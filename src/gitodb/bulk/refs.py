"""The ``refs`` table: HEAD and the root refs, then every ref under ``refs/``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gitodb.bulk.text import str_and_bytes
from gitodb.refs.peel import peel_fully
from gitodb.repo import Repository


def _hex(oid: bytes | None) -> str | None:
    return oid.hex() if oid is not None else None


def ref_rows(repo: Repository, repository: str) -> Iterator[tuple[Any, ...]]:
    """Rows of the ``refs`` table (name, resolved id, peeled id, symref target, backend)."""
    store = repo.refs
    odb = repo.odb
    hexsz = repo.object_format.hexsz
    backend = repo.ref_storage
    refs = list(store.iter_root_refs())
    for ref in (*refs, *store.iter_refs()):
        if ref.target is not None:
            oid = store.resolve(ref.name)
        else:
            oid = ref.oid
        peeled = ref.peeled if ref.peeled is not None and ref.target is None else None
        if peeled is None and oid is not None:
            peeled = peel_fully(odb, oid, hexsz)
        yield (
            repository,
            *str_and_bytes(ref.name),
            _hex(oid),
            _hex(peeled),
            *str_and_bytes(ref.target),
            backend,
        )
