"""The tables by name: options, parts, and the batches of one (repository, part).

``table_batches(path, table, part, ...)`` opens the repository, yields Arrow record
batches of the table's fixed schema and closes the repository again: nothing is
held between calls, so a task can run in any process (only paths travel).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import pyarrow as pa

from gitodb.bulk.commits import change_rows, commit_rows, parse_slice, slice_part
from gitodb.bulk.files import file_rows
from gitodb.bulk.objects import (
    LOOSE_PART,
    object_rows,
    own_pack_names,
    pack_ranges,
    range_part,
)
from gitodb.bulk.refs import ref_rows
from gitodb.bulk.schema import (
    DEFAULT_BATCH_BYTES,
    DEFAULT_BATCH_ROWS,
    TABLE_NAMES,
    BatchBuilder,
    schema,
)
from gitodb.bulk.verify import verify_rows
from gitodb.repo import Repository

#: the part of a table that is the whole repository
WHOLE = "all"
#: a repository whose packs hold at least this many bytes is split per pack
DEFAULT_SPLIT_BYTES = 64 * 1024 * 1024
#: ... and a pack of the objects table larger than this into ranges of about this size
DEFAULT_RANGE_BYTES = 64 * 1024 * 1024
#: tables whose rows come per pack (and per loose store)
SPLIT_TABLES = ("objects", "verify")
#: ... and split into equal slices of one listing: each part repeats the walk (about
#: a third of the work), so two slices (two workers' worth) and not more
SLICED_TABLES = {"commits": 2}
#: which option applies to which tables
OPTION_TABLES = {
    "rev": ("commits", "changes", "files"),
    "content_limit": ("files",),
    "message": ("commits",),
}


class BulkUsageError(ValueError):
    """An unknown table, or an option the table does not take."""


@dataclass(frozen=True)
class Options:
    """What a table is asked for; ``None``/defaults mean "not given"."""

    rev: str | None = None
    content_limit: int | None = None
    message: bool = False
    batch_rows: int = DEFAULT_BATCH_ROWS
    batch_bytes: int = DEFAULT_BATCH_BYTES
    split_bytes: int = DEFAULT_SPLIT_BYTES
    range_bytes: int = DEFAULT_RANGE_BYTES

    def check(self, table: str) -> None:
        """Raise ``BulkUsageError`` for an unknown table or an option it does not take."""
        if table not in TABLE_NAMES:
            raise BulkUsageError(f"unknown table '{table}' (tables: {', '.join(TABLE_NAMES)})")
        given = {
            "rev": self.rev is not None,
            "content_limit": self.content_limit is not None,
            "message": self.message,
        }
        for name, used in given.items():
            if used and table not in OPTION_TABLES[name]:
                flag = "--" + name.replace("_", "-")
                raise BulkUsageError(f"option {flag} does not apply to table '{table}'")
        if self.content_limit is not None and self.content_limit < 0:
            raise BulkUsageError("--content-limit must be a number of bytes >= 0")
        if self.split_bytes < 1 or self.range_bytes < 1:
            raise BulkUsageError("split_bytes and range_bytes must be at least 1")

    def table_options(self) -> dict[str, Any]:
        """The options that change a table's rows (recorded beside the output)."""
        d = asdict(self)
        for k in ("batch_rows", "batch_bytes"):
            d.pop(k)
        return d


#: no options given
DEFAULT_OPTIONS = Options()


def parts(repository: str, table: str, options: Options = DEFAULT_OPTIONS) -> list[str]:
    """The parts of ``table`` for one repository: ``["all"]``, or each own pack and
    ``loose`` when the packs reach ``options.split_bytes``; for ``objects``, a pack
    larger than ``options.range_bytes`` is parts of ranges of its entries; ``commits``
    is then slices of its listing (``commits.slice_part``), in the table's order.

    Planning only lists the ``objects/pack`` directory (and reads the header of a
    pack to split); a repository that cannot be looked at is one ``all`` part
    (whose task then reports why).
    """
    if table not in SPLIT_TABLES and table not in SLICED_TABLES:
        return [WHOLE]
    try:
        repo = Repository(repository)
        objects_dir = os.path.join(repo.common_dir, "objects")
    except Exception:
        return [WHOLE]
    packs = own_pack_names(objects_dir)
    total = 0
    for name in packs:
        try:
            total += os.stat(os.path.join(objects_dir, "pack", name)).st_size
        except OSError:
            pass
    if not packs or total < options.split_bytes:
        return [WHOLE]
    if table in SLICED_TABLES:
        n = SLICED_TABLES[table]
        return [slice_part(k, n) for k in range(n)]
    if table != "objects":
        return [*packs, LOOSE_PART]
    out = []
    for name in packs:
        ranges = pack_ranges(os.path.join(objects_dir, "pack", name), options.range_bytes)
        out += [range_part(name, a, b) for a, b in ranges] if ranges else [name]
    return [*out, LOOSE_PART]


Rows = Iterator[tuple[Any, ...] | pa.RecordBatch]


def _split_rows(
    rows: Callable[[Repository, str, str, Options], Rows],
) -> Callable[[Repository, str, str, Options], Rows]:
    def whole(repo: Repository, repository: str, part: str, o: Options) -> Rows:
        if part != WHOLE:
            yield from rows(repo, repository, part, o)
            return
        for name in own_pack_names(repo.odb.objects_dir):
            yield from rows(repo, repository, name, o)
        yield from rows(repo, repository, LOOSE_PART, o)

    return whole


_ROWS: dict[str, Callable[[Repository, str, str, Options], Rows]] = {
    "objects": _split_rows(
        lambda repo, path, part, o: object_rows(repo, path, part, o.batch_rows, o.batch_bytes)
    ),
    "verify": _split_rows(lambda repo, path, part, _o: verify_rows(repo, path, part)),
    "refs": lambda repo, path, _p, _o: ref_rows(repo, path),
    "commits": lambda repo, path, part, o: commit_rows(
        repo,
        path,
        o.rev,
        o.message,
        o.batch_rows,
        o.batch_bytes,
        None if part == WHOLE else parse_slice(part) or _bad_part(part),
    ),
    "changes": lambda repo, path, _p, o: change_rows(repo, path, o.rev),
    "files": lambda repo, path, _p, o: file_rows(repo, path, o.rev, o.content_limit, o.batch_rows),
}


def _bad_part(part: str) -> Any:
    raise ValueError(f"bad part name '{part}'")


def _close(repo: Repository) -> None:
    close = getattr(repo, "close", None)
    if callable(close):
        close()
    elif "odb" in repo.__dict__:  # before Repository.close(): release the pack maps
        repo.odb.close()


def table_batches(
    repository: str | os.PathLike[str],
    table: str,
    part: str = WHOLE,
    options: Options = DEFAULT_OPTIONS,
) -> Iterator[pa.RecordBatch]:
    """The record batches of ``table`` for one repository (and part).

    Errors reading the repository propagate (``GitodbError``, ``OSError``); the
    runners turn them into ``errors`` rows.
    """
    options.check(table)
    path = os.path.abspath(os.fspath(repository))
    repo = Repository(path)
    try:
        builder = BatchBuilder(schema(table), options.batch_rows, options.batch_bytes)
        yield from builder.rows(_ROWS[table](repo, path, part, options))
    finally:
        _close(repo)
