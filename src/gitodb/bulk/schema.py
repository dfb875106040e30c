"""The fixed Arrow schema of every bulk table, and the bounded batch builder.

Every table starts with ``repository`` (the repository's absolute path as listed
by the run).  Object ids are lower-case hex strings; times are Unix seconds
(``int64``) with Git's ``+HHMM`` zone string beside them; paths and names are
strings decoded from UTF-8 (invalid bytes as U+FFFD), each with a binary
``<column>_bytes`` beside it that holds Git's exact bytes when they are not valid
UTF-8 and is null otherwise (``gitodb.bulk.text``): the bytes of a value are
``row["path_bytes"]`` if not null, else ``row["path"].encode()``.  A column that
does not apply to a row is null.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

#: batches are flushed at this many rows ...
DEFAULT_BATCH_ROWS = 16384
#: ... or when the string/binary data of the rows buffered reaches this many bytes
DEFAULT_BATCH_BYTES = 8 * 1024 * 1024

_ids = pa.list_(pa.string())

SCHEMAS: dict[str, pa.Schema] = {
    # One row per stored copy of an object in the repository's own object directory
    # (a pack entry or a loose file); alternates are not listed.
    "objects": pa.schema(
        [
            ("repository", pa.string()),
            ("id", pa.string()),
            ("type", pa.string()),  # commit, tree, blob, tag (a delta's result type)
            ("size", pa.int64()),  # the object's size (cat-file %(objectsize))
            ("size_on_disk", pa.int64()),  # pack entry bytes or loose file bytes
            ("pack", pa.string()),  # pack file name (pack-<id>.pack), null if loose
            ("offset", pa.int64()),  # entry offset in the pack, null if loose
            ("delta_base", pa.string()),  # id of the direct delta base, null if not a delta
            ("depth", pa.int32()),  # delta chain length, 0 if not a delta
        ]
    ),
    # HEAD and the root refs first, then refs/ sorted by name (for-each-ref order).
    "refs": pa.schema(
        [
            ("repository", pa.string()),
            ("name", pa.string()),
            ("name_bytes", pa.binary()),  # the name's bytes if not UTF-8, else null
            ("target", pa.string()),  # the id the ref resolves to (null: unborn)
            ("peeled", pa.string()),  # the non-tag object an annotated tag peels to
            ("symref_target", pa.string()),  # the ref a symbolic ref names, else null
            ("symref_target_bytes", pa.binary()),
            ("backend", pa.string()),  # files or reftable
        ]
    ),
    # Every commit reachable from the refs and HEAD (or from --rev), children first.
    "commits": pa.schema(
        [
            ("repository", pa.string()),
            ("id", pa.string()),
            ("tree", pa.string()),
            ("parents", _ids),
            ("author_name", pa.string()),
            ("author_name_bytes", pa.binary()),  # the bytes if not UTF-8, else null
            ("author_email", pa.string()),
            ("author_email_bytes", pa.binary()),
            ("author_time", pa.int64()),
            ("author_tz", pa.string()),
            ("committer_name", pa.string()),
            ("committer_name_bytes", pa.binary()),
            ("committer_email", pa.string()),
            ("committer_email_bytes", pa.binary()),
            ("committer_time", pa.int64()),
            ("committer_tz", pa.string()),
            ("subject", pa.string()),  # the first paragraph joined into one line
            ("subject_bytes", pa.binary()),
            ("message", pa.string()),  # the whole message, null unless asked for
            ("message_bytes", pa.binary()),
            ("reachable_from", _ids),  # HEAD, branches, tags, remote-tracking refs
            # whose history holds it (names as text: the refs table has their bytes)
        ]
    ),
    # The tree of one revision, flattened (ls-tree -r -l): blobs and submodules.
    "files": pa.schema(
        [
            ("repository", pa.string()),
            ("revision", pa.string()),  # the revision as given (default HEAD)
            ("commit", pa.string()),  # the commit it names (null for a tree)
            ("path", pa.string()),
            ("path_bytes", pa.binary()),  # the path's bytes if not UTF-8, else null
            ("mode", pa.string()),  # octal as ls-tree prints it (100644, 120000...)
            ("type", pa.string()),  # blob or commit (a submodule)
            ("id", pa.string()),
            ("size", pa.int64()),  # null for submodules
            ("content", pa.binary()),  # the first content-limit bytes, if asked for
            ("content_cut", pa.bool_()),  # true when the content was cut at the limit
        ]
    ),
    # Per commit (as in the commits table), what changed against its first parent.
    "changes": pa.schema(
        [
            ("repository", pa.string()),
            ("commit", pa.string()),
            ("parent", pa.string()),  # the first parent, null for a root commit
            ("status", pa.string()),  # A, D, M or T (diff-tree --no-renames)
            ("path", pa.string()),
            ("path_bytes", pa.binary()),  # the path's bytes if not UTF-8, else null
            ("old_mode", pa.string()),
            ("new_mode", pa.string()),
            ("old_id", pa.string()),
            ("new_id", pa.string()),
        ]
    ),
    # What verify-pack (per pack) and an id check of every loose object found.
    "verify": pa.schema(
        [
            ("repository", pa.string()),
            ("kind", pa.string()),  # pack or loose
            ("file", pa.string()),  # the .pack, the loose directory or object file
            ("objects", pa.int64()),  # objects checked
            ("ok", pa.bool_()),
            ("error_class", pa.string()),
            ("message", pa.string()),
            ("offset", pa.int64()),
        ]
    ),
}

#: A task (one repository, one table, one part) that failed: the run goes on.
ERRORS_SCHEMA = pa.schema(
    [
        ("repository", pa.string()),
        ("table", pa.string()),
        ("part", pa.string()),
        ("error_class", pa.string()),
        ("message", pa.string()),
        ("file", pa.string()),
        ("offset", pa.int64()),
    ]
)

TABLE_NAMES = tuple(SCHEMAS)

#: string columns with few distinct values per file: dictionary-encoded in Parquet.
#: Others (ids, paths, messages) are mostly distinct, and trying a dictionary on
#: them first costs more CPU than writing them.
_FEW_VALUES = frozenset(
    {
        "repository",
        "type",
        "pack",
        "revision",
        "commit",
        "mode",
        "old_mode",
        "new_mode",
        "status",
        "backend",
        "kind",
        "file",
        "table",
        "part",
        "error_class",
        "author_name",
        "author_email",
        "author_tz",
        "committer_name",
        "committer_email",
        "committer_tz",
        "parent",
        # ref names repeat in every row (3.2 million values for libgit2's commits,
        # 131 distinct): a dictionary halves the time to write them
        "reachable_from",
    }
)


def parquet_options(sch: pa.Schema) -> dict[str, Any]:
    """``pyarrow.parquet.ParquetWriter`` options for a table of schema ``sch``: zstd,
    dictionaries for the columns that repeat, statistics (min/max, for readers'
    filters) on numbers and those columns, not on ids and free text.

    Integer columns are DELTA_BINARY_PACKED (a standard Parquet encoding every
    reader has): offsets in pack order, sizes and times are close to their
    neighbours, so the deltas leave zstd less to do; an objects file of a synthetic
    repository is written in ~13% less CPU (and is a little smaller) than PLAIN."""
    few = [f.name for f in sch if f.name in _FEW_VALUES]
    ints = [f.name for f in sch if pa.types.is_integer(f.type) and f.name not in _FEW_VALUES]
    numbers = [f.name for f in sch if pa.types.is_integer(f.type) or pa.types.is_boolean(f.type)]
    return {
        "compression": "zstd",
        "use_dictionary": few,
        "column_encoding": dict.fromkeys(ints, "DELTA_BINARY_PACKED"),
        "write_statistics": few + numbers,
    }


def schema(table: str) -> pa.Schema:
    """The schema of ``table`` (``errors`` included); ``KeyError`` for an unknown name."""
    if table == "errors":
        return ERRORS_SCHEMA
    return SCHEMAS[table]


def _kind(t: pa.DataType) -> int:
    """0: fixed width, 1: string/binary (weighed by length), 2: list (by items)."""
    if pa.types.is_list(t):
        return 2
    if pa.types.is_string(t) or pa.types.is_binary(t):
        return 1
    return 0


class BatchBuilder:
    """Rows in, ``RecordBatch`` out, never more than ``max_rows`` rows or about
    ``max_bytes`` bytes of row data at a time (the Python objects buffered take a
    few times that).  Table code that builds columns itself hands whole batches
    to ``rows`` (they pass through, after the rows buffered before them)."""

    def __init__(
        self,
        sch: pa.Schema,
        max_rows: int = DEFAULT_BATCH_ROWS,
        max_bytes: int = DEFAULT_BATCH_BYTES,
    ) -> None:
        self.schema = sch
        self.max_rows = max(1, max_rows)
        self.max_bytes = max(1, max_bytes)
        self._columns: list[list[Any]] = [[] for _ in sch]
        self._appends = [c.append for c in self._columns]
        kinds = [_kind(f.type) for f in sch]
        self._strings = [i for i, k in enumerate(kinds) if k == 1]
        self._lists = [i for i, k in enumerate(kinds) if k == 2]
        self._fixed = 8 * len(kinds)
        self._rows = 0
        self._bytes = 0

    def add(self, row: Sequence[Any]) -> pa.RecordBatch | None:
        """Buffer one row (values in schema order); return a full batch when one is due."""
        for append, value in zip(self._appends, row, strict=True):
            append(value)
        weight = self._fixed
        for i in self._strings:
            v = row[i]
            if v is not None:
                weight += len(v)
        for i in self._lists:
            v = row[i]
            if v is not None:
                weight += 24 * len(v)  # an estimate: ids and ref names are short
        self._rows += 1
        self._bytes += weight
        if self._rows >= self.max_rows or self._bytes >= self.max_bytes:
            return self.flush()
        return None

    def flush(self) -> pa.RecordBatch | None:
        """The rows buffered as one batch (None when there are none)."""
        if not self._rows:
            return None
        arrays = [
            pa.array(col, type=f.type) for col, f in zip(self._columns, self.schema, strict=True)
        ]
        for col in self._columns:
            col.clear()
        self._rows = 0
        self._bytes = 0
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def rows(self, rows: Iterator[Sequence[Any] | pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Batch every row of ``rows`` (a ``RecordBatch`` among them passes through)."""
        for row in rows:
            if isinstance(row, pa.RecordBatch):
                pending = self.flush()
                if pending is not None:
                    yield pending
                if row.num_rows:
                    yield row
                continue
            batch = self.add(row)
            if batch is not None:
                yield batch
        last = self.flush()
        if last is not None:
            yield last
