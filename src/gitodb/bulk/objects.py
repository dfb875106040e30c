"""The ``objects`` table: every stored copy of an object, part by part.

A repository's parts are its own packs (one part each, named by the ``.pack``
file) and its loose objects (part ``loose``), so the entries of a large
repository are listed by several workers at once; a pack larger than
``Options.range_bytes`` is itself split into ranges of its entries in pack order
(``pack-<id>.pack#<start>-<stop>``), each a contiguous stretch of the file, so
that even a single-pack repository is shared by the workers.  A whole pack
costs one header walk (``PackFile.headers_by_position``, no object is inflated
except the first bytes of each delta), a range one ``PackFile.header_at`` per
entry of its own; both then parse each entry header once for the delta base
and the chain depth.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gitodb.bulk.columns import fixed_hex, repeated
from gitodb.bulk.schema import SCHEMAS
from gitodb.errors import PackError
from gitodb.objects.header import OBJ_OFS_DELTA, OBJ_REF_DELTA, TYPE_NAMES
from gitodb.pack.entry import parse_entry_header, parse_ofs_distance
from gitodb.pack.reader import PackFile
from gitodb.repo import Repository

try:
    from gitodb._native import pack_columns as _pack_columns
except ImportError:  # built without the native core
    _pack_columns = None  # type: ignore[assignment]

LOOSE_PART = "loose"


def own_pack_names(objects_dir: str) -> list[str]:
    """File names of the packs (with an ``.idx``) in ``objects_dir/pack``, sorted."""
    try:
        names = os.listdir(os.path.join(objects_dir, "pack"))
    except (FileNotFoundError, NotADirectoryError):
        return []
    packs = set(n for n in names if n.startswith("pack-") and n.endswith(".pack"))
    return sorted(n for n in packs if n[:-5] + ".idx" in names)


def own_pack(repo: Repository, name: str) -> PackFile:
    """The open ``PackFile`` of the repository's own pack ``name``; its error if unusable."""
    odb = repo.odb
    own = os.path.join(odb.objects_dir, "pack", name)
    for pack in odb.packs:
        if pack.path == own:
            return pack
    if not os.path.exists(own):
        raise PackError("packfile not found", path=own)
    # Not usable by the object database (it said why on stderr): raise the reason.
    return PackFile(own, repo.object_format, cache=odb.cache)


#: separates a pack's file name from a range of its entries in a part name
RANGE_MARK = "#"


def range_part(pack_name: str, start: int, stop: int) -> str:
    """The part name of entries ``start`` to ``stop`` (pack order) of pack ``pack_name``."""
    return f"{pack_name}{RANGE_MARK}{start}-{stop}"


def parse_part(part: str) -> tuple[str, int, int | None]:
    """``(pack file name, start, stop or None)`` of a pack part (whole or a range)."""
    name, mark, span = part.partition(RANGE_MARK)
    if not mark:
        return name, 0, None
    a, dash, b = span.partition("-")
    if not (dash and a.isdigit() and b.isdigit()) or int(a) > int(b):
        raise ValueError(f"bad part name '{part}'")
    return name, int(a), int(b)


def pack_ranges(pack_path: str, range_bytes: int) -> list[tuple[int, int]]:
    """Ranges of entries (positions in pack order) splitting a pack into pieces of about
    ``range_bytes`` each; ``[]`` when it is smaller.  Reads only the pack header (the
    entry count): planning stays cheap."""
    try:
        size = os.stat(pack_path).st_size
        if size <= range_bytes:
            return []
        with open(pack_path, "rb") as f:
            head = f.read(12)
    except OSError:
        return []
    if len(head) < 12 or head[:4] != b"PACK":
        return []  # the task reads it and says what is wrong
    count = int.from_bytes(head[8:12], "big")
    pieces = min(count, -(-size // max(1, range_bytes)))
    if pieces < 2:
        return []
    step = -(-count // pieces)
    return [(a, min(count, a + step)) for a in range(0, count, step)]


def object_rows(
    repo: Repository, repository: str, part: str, max_rows: int = 16384, max_bytes: int = 8 << 20
) -> Iterator[tuple[Any, ...] | pa.RecordBatch]:
    """Rows of the ``objects`` table for one part (a pack file name, a range of one,
    or ``loose``); a pack's come as record batches of at most ``max_rows`` rows /
    ``max_bytes``."""
    if part == LOOSE_PART:
        yield from _loose_rows(repo, repository)
        return
    name, start, stop = parse_part(part)
    yield from _pack_rows(own_pack(repo, name), repository, name, start, stop, max_rows, max_bytes)


def _loose_rows(repo: Repository, repository: str) -> Iterator[tuple[Any, ...]]:
    store = repo.odb.dirs[0].loose
    for oid in sorted(store.iter_oids()):
        header = store.read_header(oid)
        disk = store.disk_size(oid)
        if header is None or disk is None:
            continue  # removed since it was listed (pruned): no longer stored
        yield (repository, oid.hex(), header[0], header[1], disk, None, None, None, 0)


#: an objects row takes about this many bytes (two ids, a pack name, numbers)
_ROW_BYTES = 200
#: type names by type number, as an Arrow array to ``take`` from
_TYPE_NAMES = pa.array([TYPE_NAMES.get(t, "") for t in range(8)], pa.string())


def _pack_rows(
    pack: PackFile,
    repository: str,
    name: str,
    start: int,
    stop: int | None,
    max_rows: int,
    max_bytes: int,
) -> Iterator[pa.RecordBatch]:
    """Entries ``start`` to ``stop`` (pack order; all by default) of the pack, as
    batches built column by column.

    With the native core, types and sizes come from the pack's one header walk
    (``headers_by_position``, a range too: one walk costs less than a ``header_at``
    per delta) and the rows go into column buffers in C (``pack_columns``), which
    leaves to ``_pack_rows_python``'s per-row code only REF_DELTAs, OFS_DELTAs whose
    base lies before the range, and damage.
    """
    so = pack.sorted_offsets
    n = len(so)
    stop = n if stop is None else stop
    if stop > n:
        raise PackError(
            f"part {start}-{stop} is past the pack's {n} entries (pack replaced?)", path=pack.path
        )
    if _pack_columns is None:
        yield from _pack_rows_python(pack, repository, name, start, stop, max_rows, max_bytes)
        return
    rev = pack.rev_order
    types_by_p, sizes_by_p = pack.headers_by_position()
    id_buf, id_start, id_stride, _rawsz, _count = pack.idx.id_table()
    oid_at = pack.idx.oid_at
    data_end = pack.data_end
    chain = _Chains(pack)
    sch = SCHEMAS["objects"]
    step = max(1, min(max_rows, max_bytes // _ROW_BYTES))
    rawsz = pack.fmt.rawsz
    hexsz = 2 * rawsz
    buf = pack.buf
    depth_by_k = array("H", bytes(2 * (stop - start)))
    for first in range(start, stop, step):
        last = min(stop, first + step)
        count = last - first
        ids = bytearray(count * hexsz)
        kinds = bytearray(count)
        sizes = array("q", bytes(8 * count))
        bases = bytearray(count * hexsz)
        base_valid = bytearray((count + 7) // 8)
        depths = array("i", bytes(4 * count))
        k = first
        while k < last:
            k = _pack_columns(
                buf, data_end, so, rev, id_buf, id_start, id_stride, rawsz, types_by_p,
                sizes_by_p, start, first, k, last, depth_by_k,
                ids, kinds, sizes, bases, base_valid, depths,
            )  # fmt: skip
            if k == last:
                break
            # The row C leaves: the per-row code of the Python path (it raises on damage).
            r = k - first
            off = so[k]
            p = rev[k]
            ids[r * hexsz : (r + 1) * hexsz] = oid_at(p).hex().encode("ascii")
            kinds[r] = types_by_p[p]
            sizes[r] = sizes_by_p[p]
            base_hex, depth = _row_base(pack, chain, so, rev, oid_at, depth_by_k, start, k, off)
            if base_hex is not None:
                bases[r * hexsz : (r + 1) * hexsz] = base_hex.encode("ascii")
                base_valid[r >> 3] |= 1 << (r & 7)
            else:
                base_valid[r >> 3] &= ~(1 << (r & 7)) & 0xFF
            depths[r] = depth
            if depth < 65535:
                depth_by_k[k - start] = depth
            k += 1
        offs = pa.Array.from_buffers(pa.uint64(), count, [None, pa.py_buffer(so[first:last])])
        ends = array("Q", so[first + 1 : last])
        ends.append(so[last] if last < n else data_end)
        ends_arr = pa.Array.from_buffers(pa.uint64(), count, [None, pa.py_buffer(ends)])
        fixed = pa.py_buffer(array("i", range(0, hexsz * count + 1, hexsz)))
        yield pa.RecordBatch.from_arrays(
            [
                repeated(repository, count),
                pa.StringArray.from_buffers(count, fixed, pa.py_buffer(ids)),
                _TYPE_NAMES.take(
                    pa.Array.from_buffers(pa.uint8(), count, [None, pa.py_buffer(kinds)])
                ),
                pa.Array.from_buffers(pa.int64(), count, [None, pa.py_buffer(sizes)]),
                pc.subtract(ends_arr, offs).cast(pa.int64()),
                repeated(name, count),
                offs.cast(pa.int64()),
                pa.StringArray.from_buffers(
                    count, fixed, pa.py_buffer(bases), pa.py_buffer(base_valid)
                ),
                pa.Array.from_buffers(pa.int32(), count, [None, pa.py_buffer(depths)]),
            ],
            schema=sch,
        )


def _row_base(
    pack: PackFile,
    chain: _Chains,
    so: array[int],
    rev: array[int],
    oid_of: Any,
    depth_by_k: array[int],
    start: int,
    k: int,
    off: int,
) -> tuple[str | None, int]:
    """``(delta base id as hex or None, chain depth)`` of the entry at pack-order
    position ``k`` (offset ``off``), as the rows list them."""
    buf = pack.buf
    path = pack.path
    t, _size, hlen = parse_entry_header(buf, off, path)
    if t == OBJ_OFS_DELTA:
        # The common case, inline: the base is earlier, its depth known.
        base_off = off - parse_ofs_distance(buf, off + hlen, path)[0]
        kb = bisect_left(so, base_off)
        if kb >= k or so[kb] != base_off:
            raise PackError("OFS_DELTA base is not an entry of the pack", path=path, offset=off)
        if kb >= start:
            return oid_of(rev[kb]).hex(), depth_by_k[kb - start] + 1
        return oid_of(rev[kb]).hex(), chain.base_and_depth(off)[1]
    if t == OBJ_REF_DELTA:
        base, depth = chain.base_and_depth(off)
        return (base.hex() if base is not None else None), depth
    if 0 < t < 5:
        return None, 0
    raise PackError(f"pack entry has invalid type {t}", path=path, offset=off)


def _pack_rows_python(
    pack: PackFile,
    repository: str,
    name: str,
    start: int,
    stop: int,
    max_rows: int,
    max_bytes: int,
) -> Iterator[pa.RecordBatch]:
    """``_pack_rows`` without the native core: the whole pack takes its types and
    sizes from one header walk (``headers_by_position``); a range asks
    ``header_at`` for its own entries only."""
    so = pack.sorted_offsets
    rev = pack.rev_order
    n = len(so)
    whole = start == 0 and stop == n
    # The whole pack copies its id table once; a range reads only its own ids.
    oid_of = pack.idx.oid_list().__getitem__ if whole else pack.idx.oid_at
    types_by_p, sizes_by_p = pack.headers_by_position() if whole else (None, None)
    header_at = pack.header_at
    data_end = pack.data_end
    chain = _Chains(pack)
    sch = SCHEMAS["objects"]
    step = max(1, min(max_rows, max_bytes // _ROW_BYTES))
    rawsz = pack.fmt.rawsz
    buf = pack.buf
    path = pack.path
    # Chain depth by pack-order position within the range: two bytes an entry (Git
    # caps depth at 4095; deeper chains and bases before the range go to _Chains).
    depth_by_k = array("H", bytes(2 * (stop - start)))
    for first in range(start, stop, step):
        last = min(stop, first + step)
        kinds = bytearray(last - first)
        sz: list[int] = []
        bases: list[str | None] = []
        depths: list[int] = []
        ids = []
        for k in range(first, last):
            off = so[k]
            p = rev[k]
            ids.append(oid_of(p))
            t, size, hlen = parse_entry_header(buf, off, path)
            if types_by_p is not None:
                kinds[k - first] = types_by_p[p]
                sz.append(sizes_by_p[p])  # type: ignore[index]
            elif 0 < t < 5:  # not a delta: the entry header says it all
                kinds[k - first] = t
                sz.append(size)
            else:
                kind, size = header_at(off)
                kinds[k - first] = kind
                sz.append(size)
            base_hex, depth = _row_base(pack, chain, so, rev, oid_of, depth_by_k, start, k, off)
            if depth < 65535:
                depth_by_k[k - start] = depth
            bases.append(base_hex)
            depths.append(depth)
        count = last - first
        offs = pa.Array.from_buffers(pa.uint64(), count, [None, pa.py_buffer(so[first:last])])
        ends = array("Q", so[first + 1 : last])
        ends.append(so[last] if last < n else data_end)
        ends_arr = pa.Array.from_buffers(pa.uint64(), count, [None, pa.py_buffer(ends)])
        yield pa.RecordBatch.from_arrays(
            [
                repeated(repository, count),
                fixed_hex(ids, rawsz),
                _TYPE_NAMES.take(
                    pa.Array.from_buffers(pa.uint8(), count, [None, pa.py_buffer(kinds)])
                ),
                pa.array(sz, pa.int64()),
                pc.subtract(ends_arr, offs).cast(pa.int64()),
                repeated(name, count),
                offs.cast(pa.int64()),
                pa.array(bases, pa.string()),
                pa.array(depths, pa.int32()),
            ],
            schema=sch,
        )


class _Chains:
    """Delta base ids and chain depths of a pack's entries, each entry parsed once.

    Walking the pack in offset order, an OFS_DELTA's base is always known already;
    a REF_DELTA's base may be stored later (a completed thin pack), so the chain is
    followed forward iteratively and every depth on the way remembered.
    """

    def __init__(self, pack: PackFile) -> None:
        self.pack = pack
        self.depth: dict[int, int] = {}
        # offset -> (base id, base offset or None when the base is outside the pack)
        self.link: dict[int, tuple[bytes, int | None] | None] = {}

    def _link(self, off: int) -> tuple[bytes, int | None] | None:
        got = self.link.get(off, False)
        if got is not False:
            return got  # type: ignore[return-value]
        pack = self.pack
        t, _size, hlen = parse_entry_header(pack.buf, off, pack.path)
        link: tuple[bytes, int | None] | None = None
        if t == OBJ_OFS_DELTA:
            base_off = off - parse_ofs_distance(pack.buf, off + hlen, pack.path)[0]
            link = (pack.oid_at_offset(base_off), base_off)
        elif t == OBJ_REF_DELTA:
            base = bytes(pack.buf[off + hlen : off + hlen + pack.fmt.rawsz])
            found = pack.find(base)
            link = (base, found if found >= 0 else None)
        self.link[off] = link
        return link

    def base_and_depth(self, off: int) -> tuple[bytes | None, int]:
        """``(direct base id or None, chain length)`` of the entry at ``off``."""
        link = self._link(off)
        if link is None:
            self.depth[off] = 0
            return None, 0
        known = self.depth.get(off)
        if known is not None:
            return link[0], known
        walked = [off]
        cur = link[1]
        extra = 1  # a base outside the pack ends the chain at depth 1 from there
        while cur is not None:
            d = self.depth.get(cur)
            if d is not None:
                extra = d + 1
                break
            nxt = self._link(cur)
            if nxt is None:
                self.depth[cur] = 0
                extra = 1
                break
            walked.append(cur)
            if len(walked) > self.pack.count:
                raise PackError("delta chain forms a cycle", path=self.pack.path, offset=off)
            cur = nxt[1]
        for i, w in enumerate(reversed(walked)):
            self.depth[w] = extra + i
        # The links of entries already passed are not needed again.
        for w in walked:
            self.link.pop(w, None)
        return link[0], self.depth[off]


__all__ = [
    "LOOSE_PART",
    "RANGE_MARK",
    "object_rows",
    "own_pack",
    "own_pack_names",
    "pack_ranges",
    "parse_part",
    "range_part",
]
