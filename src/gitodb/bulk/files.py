"""The ``files`` table: the tree of one revision, flattened like ``git ls-tree -r -l``.

Content is read only when asked for (``content_limit`` bytes at most), through the
object database's streams, so a large blob is never held whole: the first
``content_limit`` bytes are read and ``content_cut`` says whether there was more.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from gitodb.bulk.columns import repeated
from gitodb.bulk.schema import DEFAULT_BATCH_ROWS, SCHEMAS
from gitodb.bulk.text import text_and_bytes
from gitodb.errors import BadRevisionError
from gitodb.history import native
from gitodb.history.treewalk import list_tree
from gitodb.objects.commit import Commit
from gitodb.objects.tree import canonical_mode, max_tree_depth
from gitodb.repo import Repository
from gitodb.repo.revparse import peel_to, peel_to_object

try:
    from gitodb import _native as _bulk_native
except ImportError:  # built without the native core
    _bulk_native = None  # type: ignore[assignment]


def _head(repo: Repository, oid: bytes, limit: int) -> bytes:
    stream = repo.odb.open_stream(oid)
    try:
        return stream.read(limit)
    finally:
        stream.close()


def file_rows(
    repo: Repository,
    repository: str,
    rev: str | None = None,
    content_limit: int | None = None,
    max_rows: int = DEFAULT_BATCH_ROWS,
) -> Iterator[tuple[Any, ...] | pa.RecordBatch]:
    """Rows of the ``files`` table for ``rev`` (default ``HEAD``): record batches of
    at most ``max_rows`` rows from the native core's listing (without content), else
    tuples from the Python tree walk."""
    revision = rev if rev is not None else "HEAD"
    oid = repo.resolve(revision)
    try:
        commit, data = peel_to_object(repo, oid, "commit", revision)
    except BadRevisionError:  # a tree (or a tag of one): there is no commit
        commit_hex: str | None = None
        tree_id = peel_to(repo, oid, "tree", revision)
    else:
        # The tree from the commit read once; the listing reads the tree (and says
        # what is wrong with it).
        commit_hex = commit.hex()
        tree_id = Commit(data, repo.object_format, commit).tree
    if content_limit is None:
        batches = _native_file_rows(repo, repository, revision, commit_hex, tree_id, max_rows)
        if batches is not None:
            yield from batches
            return
    tree = repo.odb.tree(tree_id)
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


def _blob_sizes(
    repo: Repository, ids: bytes, blobs: bytes, rawsz: int
) -> tuple[array[int], bytearray]:
    """The sizes of the blobs among ``ids`` (``blobs[i]`` set for a blob) as int64
    values and an Arrow validity bitmap (null where the entry is not a blob).

    The packed ones come from one native call per pack (``read_header_table``: a
    binary search of the index and the entry header; a delta inflates only its size
    header); what that leaves (loose, missing, damaged) is ``read_header``'s, which
    raises Git's error."""
    n = len(blobs)
    where = [i for i in range(n) if blobs[i]]
    # all blobs (no submodule): the ids back to back as they are, no list to make
    oids: list[bytes] | bytes = (
        ids if len(where) == n else [ids[i * rawsz : (i + 1) * rawsz] for i in where]
    )
    odb = repo.odb
    table = odb.read_header_table(oids)
    types: bytes | bytearray
    if table is None:
        types, got = bytes(len(where)), array("q", bytes(8 * len(where)))
    else:
        types, raw = table
        got = array("q", bytes(raw))  # native uint64 (sizes are below 2**63)
    if types.count(0):  # what the packs left: read_header decides (and raises)
        read_header = odb.read_header
        for k in range(len(where)):
            if not types[k]:
                got[k] = read_header(ids[where[k] * rawsz : (where[k] + 1) * rawsz])[1]
    if len(where) == n:  # every entry a blob (no submodule): the sizes as they are
        return got, bytearray(b"\xff" * ((n + 7) // 8))
    sizes = array("q", bytes(8 * n))
    valid = bytearray((n + 7) // 8)
    for k, i in enumerate(where):
        sizes[i] = got[k]
        valid[i >> 3] |= 1 << (i & 7)
    return sizes, valid


def _native_file_rows(
    repo: Repository,
    repository: str,
    revision: str,
    commit_hex: str | None,
    tree_id: bytes,
    max_rows: int,
) -> list[pa.RecordBatch] | None:
    """The rows as record batches from ``OdbReader.ls_tree``'s listing, parsed into
    columns in C (``ls_tree_columns``), or None: not built, or a subtree the native
    listing leaves to Python (missing, malformed: the Python walk raises Git's error)."""
    if _bulk_native is None:
        return None
    type_name, data = repo.odb.read(tree_id)
    if type_name != "tree":
        return None
    text = native.ls_tree_text(
        repo,
        bytes(data),
        recursive=True,
        show_trees=False,
        trees_only=False,
        name_only=False,
        nul=True,
        quote_fully=False,
        max_depth=max_tree_depth(repo.config),
    )
    if text is None:
        return None
    rawsz = repo.object_format.rawsz
    hexsz = 2 * rawsz
    n, path, mode, kind, ids_hex, blobs = _bulk_native.ls_tree_columns(text, rawsz)
    del text
    sizes, valid = _blob_sizes(repo, bytes.fromhex(ids_hex.decode("ascii")), blobs, rawsz)
    path_offsets, path_data, _path_valid, path_bad = path
    if path_bad:
        ends = memoryview(path_offsets).cast("i")
        pairs = [text_and_bytes(path_data[ends[i] : ends[i + 1]]) for i in range(n)]
        paths = pa.array([t for t, _b in pairs], pa.string())
        path_bytes = pa.array([b for _t, b in pairs], pa.binary())
    else:
        paths = pa.StringArray.from_buffers(n, pa.py_buffer(path_offsets), pa.py_buffer(path_data))
        path_bytes = pa.nulls(n, pa.binary())
    offsets = array("i", range(0, hexsz * n + 1, hexsz))
    columns = [
        repeated(repository, n),
        repeated(revision, n),
        repeated(commit_hex, n) if commit_hex is not None else pa.nulls(n, pa.string()),
        paths,
        path_bytes,
        pa.StringArray.from_buffers(n, pa.py_buffer(mode[0]), pa.py_buffer(mode[1])),
        pa.StringArray.from_buffers(n, pa.py_buffer(kind[0]), pa.py_buffer(kind[1])),
        pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(ids_hex)),
        pa.Array.from_buffers(pa.int64(), n, [pa.py_buffer(valid), pa.py_buffer(sizes)]),
        pa.nulls(n, pa.binary()),
        pa.nulls(n, pa.bool_()),
    ]
    whole = pa.RecordBatch.from_arrays(columns, schema=SCHEMAS["files"])
    step = max(1, max_rows)
    return [whole.slice(i, step) for i in range(0, n, step)]
