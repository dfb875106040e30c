"""The ``verify`` table: ``verify-pack`` of each pack, an id check of each loose object.

A pack part yields one row: the pack indexed from scratch and compared with its
``.idx`` (``gitodb.pack.verify.index_pack_verify``), ``ok`` or the first damage
found.  The loose part yields one row for the store (objects checked, ok when all
were sound) and one more row per damaged object file.  Damage is this table's
data, so it is never an ``errors`` row.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from gitodb.bulk.objects import LOOSE_PART
from gitodb.errors import GitodbError
from gitodb.objects.header import hash_object
from gitodb.pack.verify import index_pack_verify
from gitodb.repo import Repository


def _failure(e: GitodbError) -> tuple[str, str, int | None]:
    return type(e).__name__, e.message, e.offset


def verify_rows(repo: Repository, repository: str, part: str) -> Iterator[tuple[Any, ...]]:
    """Rows of the ``verify`` table for one part (a pack file name or ``loose``)."""
    objects_dir = repo.odb.objects_dir
    if part != LOOSE_PART:
        path = os.path.join(objects_dir, "pack", part)
        try:
            # One thread: the runner already keeps every core busy with other tasks.
            result = index_pack_verify(path, repo.object_format, threads=1, report=True)
        except GitodbError as e:
            yield (repository, "pack", path, None, False, *_failure(e))
            return
        bad = result.index_error
        yield (
            repository,
            "pack",
            path,
            len(result.offsets),
            bad is None,
            *(_failure(bad) if bad is not None else (None, None, None)),
        )
        return
    store = repo.odb.dirs[0].loose
    fmt = repo.object_format
    checked = 0
    damaged: list[tuple[Any, ...]] = []
    for oid in sorted(store.iter_oids()):
        checked += 1
        file = store.path_of(oid)
        try:
            got = store.read(oid)
            if got is None:
                checked -= 1  # pruned since it was listed
                continue
            if hash_object(fmt, got[0], got[1]) != oid:
                damaged.append(
                    (
                        repository,
                        "loose",
                        file,
                        1,
                        False,
                        "ObjectFormatError",
                        f"hash mismatch for {file}",
                        None,
                    )
                )
        except GitodbError as e:
            damaged.append((repository, "loose", file, 1, False, *_failure(e)))
    first = damaged[0] if damaged else None
    yield (
        repository,
        "loose",
        objects_dir,
        checked,
        first is None,
        *(first[5:] if first is not None else (None, None, None)),
    )
    yield from damaged
