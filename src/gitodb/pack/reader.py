"""Reading objects out of one pack: mmap, entry lookup, iterative delta resolution.

A ``PackFile`` pairs a ``.pack`` with its ``.idx`` (and ``.rev`` when present).
The pack is mmapped once; entries are read through ``memoryview`` slices.  The
compressed span of an entry runs to the next entry's offset (found by bisecting
the offsets in pack order, i.e. the reverse index), so every inflate is one-shot
into a buffer of the exact size the entry header declares.

Delta chains are resolved without recursion: walk from the wanted entry towards
its base until a full object or a cached one is found, then apply the deltas on
the way back.  Reconstructed bases go into a ``DeltaBaseCache`` shared by all packs
of an object database, keyed by (pack, offset) and bounded in bytes like Git's
``core.deltaBaseCacheLimit``.
"""

from __future__ import annotations

import mmap
import os
from bisect import bisect_left, bisect_right

from gitodb.errors import (
    CompressionError,
    DeltaError,
    GitodbError,
    MissingDeltaBaseError,
    ObjectNotFoundError,
    OutOfMemoryError,
    PackError,
    report,
)
from gitodb.fileio import PAGE_DROP_STEP, release_mapping
from gitodb.lazymod import lazy_module
from gitodb.objects.format import ObjectFormat
from gitodb.objects.header import OBJ_OFS_DELTA, OBJ_REF_DELTA, TYPE_NAMES
from gitodb.objects.stream import ObjectStream
from gitodb.pack.cache import (
    DEFAULT_DELTA_BASE_CACHE_LIMIT,
    BaseGetPut,
    DeltaBaseCache,
    pending_bases,
)
from gitodb.pack.entry import parse_entry_header, parse_ofs_distance
from gitodb.pack.idx import PackIndex
from gitodb.pack.rev import compute_rev_order, load_rev, map_rev

TYPE_CHECKING = False
if TYPE_CHECKING:
    import array as array_module
    from array import array
    from collections.abc import Callable, Iterator
    from typing import TypeAlias

    from gitodb import compress
    from gitodb.pack import delta as pack_delta
else:
    # A ref listing or a header lookup inflates nothing and applies no delta.
    compress = lazy_module("gitodb.compress", globals(), "compress")
    pack_delta = lazy_module("gitodb.pack.delta", globals(), "pack_delta")
    array_module = lazy_module("array", globals(), "array_module")

try:
    from gitodb._native import first_unordered_u64 as _first_unordered_u64
    from gitodb._native import gather_u64 as _gather_u64
    from gitodb._native import ofs_base_counts as _ofs_base_counts
    from gitodb._native import scan_headers as _scan_headers
    from gitodb._native import walk_pack as _walk_pack
except ImportError:  # built without a C compiler
    _gather_u64 = _ofs_base_counts = _scan_headers = _walk_pack = None  # type: ignore[assignment]
    _first_unordered_u64 = None  # type: ignore[assignment]
try:
    from gitodb._native import IdOrderWalk as _IdOrderWalk
    from gitodb._native import delta_bases as _delta_bases
except ImportError:  # built without a C compiler
    _IdOrderWalk = _delta_bases = None  # type: ignore[assignment,misc]
try:  # built only where zlib's header and library were found at build time
    from gitodb._native import delta_result_sizes as _delta_result_sizes
except ImportError:
    _delta_result_sizes = None  # type: ignore[assignment]

PACK_SIGNATURE = b"PACK"
_PACK_HEADER_LEN = 12
# Largest output needed to read a delta's two size varints (10 bytes each at most).
_DELTA_HEADER_MAX = 20
# Entries up to this size are inflated from a window when their exact span is not
# known yet (see PackFile._end_for); allocating this much needs no plausibility check.
_WINDOW_MAX = 64 * 1024
# The native walk hands back at most this many entries / bytes of results at a time.
_WALK_ITEMS = 256
_WALK_BYTES = 4 << 20
# Bytes of a delta's zlib stream given to inflate for its header (the exact span if
# that was not enough): the bindings copy all input they did not use, so passing a
# whole large delta to read 20 bytes of it costs a copy of the delta.
_HEAD_WINDOW = 512
# Deflate cannot expand data more than ~1032:1, so a larger declared size is a lie.
_MAX_INFLATE_RATIO = 1040  # compress.MAX_INFLATE_RATIO (read here without importing it)

# Reads the full object with this id from elsewhere (another pack, loose, an
# alternate); used for REF_DELTA bases outside this pack.
ExternalReader: TypeAlias = "Callable[[bytes], tuple[int, bytes]]"
ExternalTypeReader: TypeAlias = "Callable[[bytes], int]"


class PackFile:
    """One ``.pack`` with its ``.idx``: find entries and read objects (deltas resolved)."""

    def __init__(
        self,
        pack_path: str | os.PathLike[str],
        fmt: ObjectFormat,
        *,
        idx_path: str | os.PathLike[str] | None = None,
        cache: DeltaBaseCache | None = None,
        external_reader: ExternalReader | None = None,
        external_type: ExternalTypeReader | None = None,
        verify_index_checksum: bool = True,
    ) -> None:
        self.path = os.fspath(pack_path)
        self.fmt = fmt
        base = self.path[:-5] if self.path.endswith(".pack") else self.path
        self.idx_path = os.fspath(idx_path) if idx_path is not None else base + ".idx"
        self.rev_path = base + ".rev"
        self.idx = PackIndex(self.idx_path, fmt, verify_checksum=verify_index_checksum)
        self.cache = cache if cache is not None else DeltaBaseCache()
        self.key_base = self.cache.new_pack_key()
        self._external = external_reader
        self._external_type = external_type
        self._open_pack()
        self._types: dict[int, int] = {}
        self._sorted_offsets: array[int] | None = None
        self._rev_order: array[int] | None = None
        self._rev_from_file = False
        # The .rev mapped for point lookups (bisected, never read whole); False once
        # it proved unusable (then the order is computed or loaded in full).
        self._rev_map: memoryview | bool | None = None

    def _open_pack(self) -> None:
        path = self.path
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size < _PACK_HEADER_LEN + self.fmt.rawsz:
                    raise PackError("packfile is truncated (too small)", path=path, offset=size)
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except FileNotFoundError:
            raise PackError("packfile not found", path=path) from None
        buf = memoryview(self._map)
        self.buf = buf
        if bytes(buf[:4]) != PACK_SIGNATURE:
            raise PackError("file is not a packfile (bad signature)", path=path, offset=0)
        version = int.from_bytes(buf[4:8], "big")
        if version not in (2, 3):
            raise PackError(
                f"packfile is version {version}, only 2 and 3 are supported", path=path, offset=4
            )
        count = int.from_bytes(buf[8:12], "big")
        if count != self.idx.count:
            raise PackError(
                f"packfile claims {count} objects while its index has {self.idx.count}",
                path=path,
                offset=8,
            )
        self.data_end = size - self.fmt.rawsz
        trailer = bytes(buf[self.data_end :])
        if trailer != self.idx.pack_checksum:
            raise PackError(
                "packfile does not match its index (truncated or replaced?)",
                path=path,
                offset=self.data_end,
            )
        self.size = size

    # -- layout --------------------------------------------------------------
    @property
    def offsets(self) -> array[int]:
        """Pack offsets of every entry in index (id) order (decoded on first use)."""
        return self.idx.offsets

    @property
    def count(self) -> int:
        """Number of objects in the pack."""
        return self.idx.count

    @property
    def rev_order(self) -> array[int]:
        """Index positions in pack-offset order (the ``.rev`` if present, else computed)."""
        if self._rev_order is None:
            order = (
                load_rev(self.rev_path, self.idx.count, self.fmt, self.idx.pack_checksum)
                if os.path.exists(self.rev_path)
                else None
            )
            self._rev_from_file = order is not None
            self._rev_order = order if order is not None else compute_rev_order(self.offsets)
        return self._rev_order

    @property
    def sorted_offsets(self) -> array[int]:
        """All entry offsets in ascending order."""
        if self._sorted_offsets is None:
            offs = self.offsets
            if _gather_u64 is not None:
                self._sorted_offsets = array_module.array("Q")
                self._sorted_offsets.frombytes(_gather_u64(offs, self.rev_order))
            else:
                self._sorted_offsets = array_module.array("Q", (offs[p] for p in self.rev_order))
            if self._rev_from_file and not _increasing(self._sorted_offsets):
                # A .rev whose checksum matches but whose order is wrong: compute it.
                report("error", f"reverse-index file {self.rev_path} is corrupt")
                self._rev_order = compute_rev_order(offs)
                self._rev_from_file = False
                self._sorted_offsets = None
                return self.sorted_offsets
            if self._sorted_offsets and self._sorted_offsets[-1] >= self.data_end:
                bad = self._sorted_offsets[-1]
                raise PackError(
                    f"index points past the end of the pack (offset {bad})",
                    path=self.idx_path,
                    offset=bad,
                )
        return self._sorted_offsets

    def entry_end(self, offset: int) -> int:
        """Offset just past the entry at ``offset`` (the next entry or the trailer).

        Bisects the mapped ``.rev`` when the offsets in pack order are not built yet
        (a point lookup costs O(log n), no O(n) set-up); without a usable ``.rev``
        the order is computed once.
        """
        if self._sorted_offsets is None:
            k = self._rev_position(offset)
            if k is not None:
                return self._rev_offset(k + 1) if k + 1 < self.idx.count else self.data_end
        so = self.sorted_offsets
        j = bisect_right(so, offset)
        return so[j] if j < len(so) else self.data_end

    def _end_for(self, offset: int, pos: int, size: int) -> tuple[int, bool]:
        """Where the zlib data of the entry at ``offset`` (starting at ``pos``) ends.

        ``(end, exact)``: a small entry, when the pack-order offsets are not built,
        gets a window that holds any sane stream of ``size`` bytes (one-shot inflate
        ignores what follows the stream); on failure the caller retries with the
        exact end.  Large entries need the exact span: their declared size is
        checked against it before anything is allocated.
        """
        if self._sorted_offsets is None and size <= _WINDOW_MAX:
            return min(self.data_end, pos + size + (size >> 3) + 64), False
        return self.entry_end(offset), True

    def _load_rev_map(self) -> memoryview | None:
        """The ``.rev`` mapped, header and trailer checked; None when absent or unusable."""
        m = self._rev_map
        if m is None:
            m = self._rev_map = False
            got = map_rev(self.rev_path, self.idx.count, self.fmt, self.idx.pack_checksum)
            if got is not None:
                m = self._rev_map = got
        return m if m is not False else None  # type: ignore[return-value]

    def _rev_offset(self, k: int) -> int:
        m = self._rev_map
        assert isinstance(m, memoryview)
        pos = int.from_bytes(m[12 + 4 * k : 16 + 4 * k], "big")
        if pos >= self.idx.count:
            raise _RevUnusable
        return self.idx.offset_at(pos)

    def _rev_position(self, offset: int) -> int | None:
        """The pack-order position of the entry at ``offset`` by bisecting the ``.rev``.

        None if there is no usable ``.rev`` or no entry starts there (callers then
        use the full order, which also reports a damaged ``.rev`` as Git does).
        """
        if self._load_rev_map() is None:
            return None
        lo, hi = 0, self.idx.count
        try:
            while lo < hi:
                mid = (lo + hi) >> 1
                at = self._rev_offset(mid)
                if at == offset:
                    # A sorted order is what makes the bisection right: check the step.
                    if (mid + 1 < self.idx.count and self._rev_offset(mid + 1) <= at) or (
                        mid and self._rev_offset(mid - 1) >= at
                    ):
                        raise _RevUnusable
                    return mid
                if at < offset:
                    lo = mid + 1
                else:
                    hi = mid
        except _RevUnusable:
            self._rev_map = False
        return None

    def find(self, oid: bytes) -> int:
        """The pack offset of ``oid``, or -1 if this pack does not hold it."""
        i = self.idx.find(oid)
        return self.idx.offset_at(i) if i >= 0 else -1

    def oid_at_offset(self, offset: int) -> bytes:
        """The id of the entry that starts at ``offset``."""
        if self._sorted_offsets is None:
            k = self._rev_position(offset)
            if k is not None:
                m = self._rev_map
                assert isinstance(m, memoryview)
                return self.idx.oid_at(int.from_bytes(m[12 + 4 * k : 16 + 4 * k], "big"))
        so = self.sorted_offsets
        j = bisect_left(so, offset)
        if j >= len(so) or so[j] != offset:
            raise PackError("no pack entry starts at this offset", path=self.path, offset=offset)
        return self.idx.oid_at(self.rev_order[j])

    def iter_pack_order(self) -> Iterator[tuple[bytes, int]]:
        """``(oid, offset)`` of every entry in the order they are stored in the pack."""
        idx = self.idx
        offs = self.offsets
        oids = idx.oid_list()
        for p in self.rev_order:
            yield oids[p], offs[p]

    def iter_objects(self) -> Iterator[tuple[bytes, int, int, bytes]]:
        """``(oid, offset, type_number, data)`` of every entry, walking the pack in order.

        The fast way to read a whole pack: an entry's end is the next offset (no
        search), and an OFS_DELTA's base was normally built a moment ago and is
        still in the cache, so each object costs one inflate (plus one delta
        application).  Anything unusual falls back to ``read_at``.
        """
        if _walk_pack is None:
            yield from self._iter_objects_python()
            return
        # The per-entry loop runs in the native core (_native/walk.c) on the one
        # cache (native: no Python call per object) and on the inflate the
        # compression layer chose (None: the same zlib through its C API); anything
        # unusual comes back as a fallback that read_at handles.
        so = self.sorted_offsets
        rev = self.rev_order
        cache = self.pending_bases()
        # That scan of the entry headers touched every page; the walk reads each page
        # once more and gives them back as it goes.
        self.release_pages()
        released_to = 0
        walk = _walk_pack
        read_at = self.read_at
        inflate = None if compress.native_inflate() == "zlib" else compress.inflate
        table = self.idx.id_table()
        n = len(so)
        k = 0
        while k < n:
            k, fallbacks, items = walk(
                self.buf,
                so,
                k,
                self.data_end,
                inflate,
                cache,
                self.key_base,
                _WALK_ITEMS,
                _WALK_BYTES,
                table,
                rev,
            )
            if k < n and so[k] - released_to >= PAGE_DROP_STEP:
                self.release_pages()
                released_to = so[k]
            if not fallbacks:  # no None among the data
                yield from items  # type: ignore[misc]
                continue
            for oid, off, t, got in items:
                if got is None:
                    t, got = read_at(off)
                yield oid, off, t, got

    def iter_objects_id_order(self) -> Iterator[tuple[bytes, int, int, bytes]]:
        """``(oid, offset, type_number, data)`` of every entry, in id (index) order.

        Reading in id order jumps between delta chains; ``read_at`` per object would
        rebuild most chains many times through the LRU cache.  The native walk
        (``_native/idorder.c``) knows the whole sequence of reads and the delta forest
        before it starts, and keeps in a cache of the same bound
        (``core.deltaBaseCacheLimit``) what will be needed soon and is dear to
        rebuild.  Anything unusual falls back to ``read_at`` (which raises the typed
        error of a damaged entry at its place in the order).  Without the native
        core: ``read_at`` per object, the reference.
        """
        walk = self.id_order_walk()
        if walk is None:
            offsets = self.offsets
            for i, oid in enumerate(self.idx.oid_list()):
                off = offsets[i]
                yield (oid, off, *self.read_at(off))
            return
        read_at = self.read_at
        while items := walk.next(_WALK_ITEMS, _WALK_BYTES):
            for oid, off, t, got in items:
                if got is None:
                    t, got = read_at(off)
                yield oid, off, t, got

    def id_order_walk(self) -> _IdOrderWalk | None:
        """The native walk behind ``iter_objects_id_order`` (None without the native
        core): ``next(max_items, max_bytes)`` gives the next ``(oid, offset, type,
        data)`` in id order, type 0 / data None where ``read_at`` is to read it."""
        if _IdOrderWalk is None:
            return None
        so = self.sorted_offsets
        bases = array_module.array("i")
        bases.frombytes(_delta_bases(self.buf, so, self.data_end))
        self._ref_delta_bases(bases)
        # the compression layer's inflate, or None: the same zlib through its C API
        inflate = None if compress.native_inflate() == "zlib" else compress.inflate
        return _IdOrderWalk(
            self.buf,
            so,
            self.data_end,
            inflate,
            bases,
            self.idx.id_table(),
            self.rev_order,
            self.cache.limit,
        )

    def _ref_delta_bases(self, bases: array[int]) -> None:
        """Fill in the pack position of each REF_DELTA's base (``-2`` in ``bases``,
        as ``delta_bases`` leaves them) when this pack holds it; else ``-3``."""
        k = bases.index(-2) if -2 in bases else -1
        if k < 0:
            return
        so = self.sorted_offsets
        buf = self.buf
        rawsz = self.fmt.rawsz
        n = len(so)
        while k >= 0:
            off = so[k]
            _t, _size, hlen = parse_entry_header(buf, off, self.path)
            base_oid = bytes(buf[off + hlen : off + hlen + rawsz])
            p = self.idx.find(base_oid)
            at = self.idx.offset_at(p) if p >= 0 else -1
            j = bisect_left(so, at) if p >= 0 else n
            bases[k] = j if j < n and j != k and so[j] == at else -3
            try:
                k = bases.index(-2, k + 1)
            except ValueError:
                break

    def ofs_base_counts(self) -> dict[int, int]:
        """``{cache key of an entry: number of OFS_DELTA entries against it}``.

        One pass over the entry headers (no inflate).  A damaged header ends the
        count there: the walk that uses it reports the damage through ``read_at``.
        """
        if _ofs_base_counts is not None:
            return _ofs_base_counts(self.buf, self.sorted_offsets, self.data_end, self.key_base)
        return self._ofs_base_counts_python()

    def _ofs_base_counts_python(self) -> dict[int, int]:
        """``ofs_base_counts`` without the native core: its reference."""
        counts: dict[int, int] = {}
        buf = self.buf
        so = self.sorted_offsets
        kb = self.key_base
        n = len(so)
        data_end = min(self.data_end, len(buf))
        for k in range(n):
            off = so[k]
            end = so[k + 1] if k + 1 < n else data_end
            if end > data_end or off >= end:
                break
            try:
                t, _size, hlen = parse_entry_header(buf, off)
                if off + hlen > end:
                    break
                if t != OBJ_OFS_DELTA:
                    continue
                dist, nlen = parse_ofs_distance(buf, off + hlen)
            except PackError:
                break
            if off + hlen + nlen > end:
                break
            if 0 < dist <= off:
                key = kb + off - dist
                counts[key] = counts.get(key, 0) + 1
        return counts

    def pending_bases(self) -> BaseGetPut:
        """The cache as a walk over this whole pack uses it (see ``PendingBases``)."""
        return pending_bases(self.cache, self.ofs_base_counts())

    def _iter_objects_python(self) -> Iterator[tuple[bytes, int, int, bytes]]:
        """``iter_objects`` in Python: the native walk's reference and fallback."""
        buf = self.buf
        path = self.path
        so = self.sorted_offsets
        rev = self.rev_order
        oids = self.idx.oid_list()
        cache = self.pending_bases()
        get_cached = cache.get
        put = cache.put
        kb = self.key_base
        inflate = compress.inflate
        n = len(so)
        data_end = self.data_end
        ratio = _MAX_INFLATE_RATIO
        min_base = _PACK_HEADER_LEN
        for k in range(n):
            off = so[k]
            end = so[k + 1] if k + 1 < n else data_end
            t, size, hlen = parse_entry_header(buf, off, path)
            pos = off + hlen
            if t == OBJ_OFS_DELTA:
                dist, nlen = parse_ofs_distance(buf, pos, path)
                base_key = kb + off - dist
                hit = get_cached(base_key) if 0 < dist <= off - min_base else None
                start = pos + nlen
                if hit is None or size > (end - start) * ratio:
                    t, data = self.read_at(off)
                    yield oids[rev[k]], off, t, data
                    continue
                try:
                    delta = inflate(buf[start:end], size)
                except CompressionError as e:
                    raise PackError(
                        f"corrupt pack entry: {e.message}", path=path, offset=off
                    ) from None
                t = hit[0]
                data = pack_delta.apply_delta(hit[1], delta, path=path, offset=off)
            elif 0 < t < 5 and size <= (end - pos) * ratio:
                try:
                    data = inflate(buf[pos:end], size)
                except CompressionError as e:
                    raise PackError(
                        f"corrupt pack entry: {e.message}", path=path, offset=off
                    ) from None
                if t != 2 and t != 3:  # commits and tags are rarely delta bases
                    yield oids[rev[k]], off, t, data
                    continue
            else:
                t, data = self.read_at(off)
                yield oids[rev[k]], off, t, data
                continue
            # Accounted by len(data) inside put(): for a delta, ``size`` is the delta's.
            put(kb + off, t, data)
            yield oids[rev[k]], off, t, data

    def headers_by_position(self) -> tuple[bytearray, array[int]]:
        """Type numbers and sizes of every entry, indexed by index (id-order) position.

        Computed walking the pack in offset order: an entry's end is the next
        offset, and an OFS_DELTA's base comes earlier in the pack, so its type is
        already known.  Deltas inflate only the first bytes of their data (the
        result size).  This is ``cat-file --batch-check --batch-all-objects``.
        """
        if _scan_headers is None:
            return self._headers_by_position_python()
        # The header walk runs in C; Python only inflates the head of each delta.
        kinds, types, sizes_raw, starts_raw, ends_raw = _scan_headers(
            self.buf, self.sorted_offsets, self.rev_order, self.data_end, self.fmt.rawsz, self.path
        )
        sizes, starts, ends = (
            array_module.array("Q"),
            array_module.array("Q"),
            array_module.array("Q"),
        )
        sizes.frombytes(sizes_raw)
        starts.frombytes(starts_raw)
        ends.frombytes(ends_raw)
        buf = self.buf
        offsets = self.offsets
        inflate_head = compress.inflate_head
        p = types.find(0)
        while p >= 0:  # REF_DELTA: the base is found by id
            types[p] = self.type_at(offsets[p])
            p = types.find(0, p + 1)
        if _delta_result_sizes is not None:
            # Every delta head at once in C; what it cannot decide (damage) is read
            # below on the chosen backend, which raises the typed error.
            # Read in pack order: front to back through the mapping, not at random.
            left = _delta_result_sizes(buf, kinds, starts_raw, ends_raw, sizes, self.rev_order)
        else:
            left = [p for p, kind in enumerate(kinds) if kind > 4]
        for p in left:
            start, end = starts[p], ends[p]
            try:
                head = inflate_head(buf[start : min(end, start + _HEAD_WINDOW)], _DELTA_HEADER_MAX)
                if len(head) < _DELTA_HEADER_MAX and end > start + _HEAD_WINDOW:
                    head = inflate_head(buf[start:end], _DELTA_HEADER_MAX)
                sizes[p] = pack_delta.delta_sizes(head)[1]
            except CompressionError as e:
                raise PackError(
                    f"corrupt pack entry: {e.message}", path=self.path, offset=offsets[p]
                ) from None
            except DeltaError as e:
                raise DeltaError(e.message, path=self.path, offset=offsets[p]) from None
        return types, sizes

    def _headers_by_position_python(self) -> tuple[bytearray, array[int]]:
        """``headers_by_position`` without the C accelerator.

        Computed walking the pack in offset order: an entry's end is the next
        offset, and an OFS_DELTA's base comes earlier in the pack, so its type is
        already known.  Deltas inflate only the first bytes of their data (the
        result size).  This is ``cat-file --batch-check --batch-all-objects``.
        """
        n = self.idx.count
        types = bytearray(n)
        sizes = array_module.array("Q", bytes(8 * n))
        buf = self.buf
        path = self.path
        so = self.sorted_offsets
        rev = self.rev_order
        known = self._types
        rawsz = self.fmt.rawsz
        data_end = self.data_end
        size_of_delta = self._delta_result_size
        for k in range(n):
            off = so[k]
            p = rev[k]
            t, size, hlen = parse_entry_header(buf, off, path)
            if 0 < t < 5:
                types[p] = t
                sizes[p] = size
                known[off] = t
                continue
            pos = off + hlen
            if t == OBJ_OFS_DELTA:
                dist, nlen = parse_ofs_distance(buf, pos, path)
                base_type = known.get(off - dist)
                pos += nlen
            elif t == OBJ_REF_DELTA:
                base_type = None
                pos += rawsz
            else:
                raise PackError(f"pack entry has invalid type {t}", path=path, offset=off)
            if base_type is None:
                base_type = self.type_at(off)
            known[off] = base_type
            types[p] = base_type
            sizes[p] = size_of_delta(buf[pos : so[k + 1] if k + 1 < n else data_end], off)
        return types, sizes

    def iter_sorted(self) -> Iterator[tuple[bytes, int]]:
        """``(oid, offset)`` of every entry in id order."""
        return zip(self.idx.oid_list(), self.offsets, strict=True)

    # -- reading -------------------------------------------------------------
    def _check_offset(self, offset: int) -> None:
        if offset < _PACK_HEADER_LEN or offset >= self.data_end:
            raise PackError(
                f"pack entry offset {offset} is outside the pack data",
                path=self.path,
                offset=offset,
            )

    def read_at(self, offset: int) -> tuple[int, bytes]:
        """Return ``(type_number, data)`` of the object whose entry starts at ``offset``."""
        try:
            return self._read_at(offset, True)
        except _RetryExact:
            return self._read_at(offset, False)

    def _inflate_entry(self, off: int, pos: int, size: int, windowed: bool) -> bytes:
        """Inflate the ``size`` bytes of the entry at ``off`` (zlib data from ``pos``)."""
        if windowed:
            end, exact = self._end_for(off, pos, size)
        else:
            end, exact = self.entry_end(off), True
        if exact and size > compress.max_inflated_size(end - pos):
            self._impossible_size(off, size, end - pos)
        try:
            return compress.inflate(self.buf[pos:end], size)
        except CompressionError:
            if not exact:
                raise _RetryExact from None
            raise

    def _read_at(self, offset: int, windowed: bool) -> tuple[int, bytes]:
        cache = self.cache
        get_cached = cache.get
        kb = self.key_base
        buf = self.buf
        path = self.path
        inflate_entry = self._inflate_entry
        data_end = self.data_end
        chain: list[tuple[int, int, int]] = []
        seen: set[int] | None = None
        off = at = offset
        size = 0
        try:
            while True:
                hit = get_cached(kb + off)
                if hit is not None:
                    type_num, data = hit
                    break
                if off < _PACK_HEADER_LEN or off >= data_end:
                    self._check_offset(off)
                type_num, size, hlen = parse_entry_header(buf, off, path)
                pos = off + hlen
                if 0 < type_num < 5:
                    at = off
                    data = inflate_entry(off, pos, size, windowed)
                    # Cache full trees and blobs too: in pack order their deltas follow.
                    if chain or type_num == 2 or type_num == 3:
                        cache.put(kb + off, type_num, data)
                    break
                if type_num == OBJ_OFS_DELTA:
                    dist, n = parse_ofs_distance(buf, pos, path)
                    chain.append((off, pos + n, size))
                    if dist == 0 or dist > off - _PACK_HEADER_LEN:
                        raise PackError(
                            f"OFS_DELTA base distance {dist} is out of range", path=path, offset=off
                        )
                    off -= dist
                elif type_num == OBJ_REF_DELTA:
                    base_oid = bytes(buf[pos : pos + self.fmt.rawsz])
                    chain.append((off, pos + self.fmt.rawsz, size))
                    base_pos = self.idx.find(base_oid)
                    if base_pos < 0:
                        type_num, data = self._external_base(base_oid, off)
                        break
                    if seen is None:
                        seen = {c[0] for c in chain}
                    off = self.idx.offset_at(base_pos)
                    if off in seen:
                        raise DeltaError(
                            "REF_DELTA chain forms a cycle", path=path, offset=chain[-1][0]
                        )
                    seen.add(off)
                else:
                    raise PackError(
                        f"pack entry has invalid type {type_num}", path=path, offset=off
                    )
            # Apply the deltas from the base towards the wanted object.
            for i in range(len(chain) - 1, -1, -1):
                doff, dstart, dsize = chain[i]
                size = dsize
                at = doff
                delta = inflate_entry(doff, dstart, dsize, windowed)
                size = -1  # building the delta's result
                data = pack_delta.apply_delta(data, delta, path=path, offset=doff)
                # Every result may be the base of a later delta (and is, in pack order).
                cache.put(kb + doff, type_num, data)
        except CompressionError as e:
            # ``at``: the entry whose own data failed to inflate (not the wanted one)
            raise PackError(f"corrupt pack entry: {e.message}", path=path, offset=at) from None
        except MemoryError:
            # Name what was being built: an inflated entry, or a delta's result.
            raise OutOfMemoryError(
                pack_delta.delta_sizes(delta)[1] if size == -1 else size or None,
                path=path,
                offset=offset,
            ) from None
        return type_num, data

    def apply_own_delta(self, offset: int, base_type: int, base: bytes) -> tuple[int, bytes]:
        """The delta entry at ``offset`` applied to ``base`` (its base, got elsewhere).

        For recovery when the base's copy in this pack is damaged (Git reads the
        base by id then); ``(base_type, data)``.
        """
        t, size, hlen = parse_entry_header(self.buf, offset, self.path)
        pos = offset + hlen
        if t == OBJ_OFS_DELTA:
            pos += parse_ofs_distance(self.buf, pos, self.path)[1]
        elif t == OBJ_REF_DELTA:
            pos += self.fmt.rawsz
        else:
            raise PackError("pack entry is not a delta", path=self.path, offset=offset)
        end = self.entry_end(offset)
        if size > compress.max_inflated_size(end - pos):
            self._impossible_size(offset, size, end - pos)
        try:
            delta = compress.inflate(self.buf[pos:end], size)
        except CompressionError as e:
            raise PackError(
                f"corrupt pack entry: {e.message}", path=self.path, offset=offset
            ) from None
        return base_type, pack_delta.apply_delta(base, delta, path=self.path, offset=offset)

    def _impossible_size(self, offset: int, size: int, span: int) -> None:
        # Checked before inflating: one-shot backends allocate the declared size.
        raise PackError(
            f"pack entry declares {size} bytes, more than its {span} bytes of zlib data can hold",
            path=self.path,
            offset=offset,
        )

    def _external_base(self, base_oid: bytes, offset: int) -> tuple[int, bytes]:
        if self._external is None:
            raise DeltaError(
                f"REF_DELTA base {base_oid.hex()} is not in this pack",
                path=self.path,
                offset=offset,
            )
        try:
            return self._external(base_oid)
        except ObjectNotFoundError:
            # The damage is here: the delta at ``offset`` names a base nobody has.
            raise MissingDeltaBaseError(
                f"delta base {base_oid.hex()} is missing", path=self.path, offset=offset
            ) from None

    def type_at(self, offset: int) -> int:
        """The object type number at ``offset``, following delta chains through headers."""
        types = self._types
        t = types.get(offset)
        if t is not None:
            return t
        buf = self.buf
        path = self.path
        walked: list[int] = []
        off = offset
        while True:
            t = types.get(off)
            if t is not None:
                break
            self._check_offset(off)
            t, _size, hlen = parse_entry_header(buf, off, path)
            if 0 < t < 5:
                break
            walked.append(off)
            if len(walked) > self.idx.count:
                raise DeltaError("delta chain forms a cycle", path=path, offset=offset)
            pos = off + hlen
            if t == OBJ_OFS_DELTA:
                dist, _n = parse_ofs_distance(buf, pos, path)
                if dist == 0 or dist > off - _PACK_HEADER_LEN:
                    raise PackError(
                        f"OFS_DELTA base distance {dist} is out of range", path=path, offset=off
                    )
                off -= dist
            elif t == OBJ_REF_DELTA:
                base_oid = bytes(buf[pos : pos + self.fmt.rawsz])
                base_pos = self.idx.find(base_oid)
                if base_pos < 0:
                    if self._external_type is None:
                        raise DeltaError(
                            f"REF_DELTA base {base_oid.hex()} is not in this pack",
                            path=path,
                            offset=off,
                        )
                    try:
                        t = self._external_type(base_oid)
                    except ObjectNotFoundError:
                        raise MissingDeltaBaseError(
                            f"delta base {base_oid.hex()} is missing", path=path, offset=off
                        ) from None
                    break
                off = self.idx.offset_at(base_pos)
            else:
                raise PackError(f"pack entry has invalid type {t}", path=path, offset=off)
        types[off] = t
        for w in walked:
            types[w] = t
        return t

    def header_at(self, offset: int) -> tuple[int, int]:
        """``(type_number, size)`` at ``offset``; a delta inflates only its size header.

        This is the whole of ``cat-file --batch-check``, so it is written flat: one
        entry-header parse, the type from the per-pack type cache (or a header-only
        walk down the chain), and for a delta the first bytes of its zlib stream.
        """
        buf = self.buf
        path = self.path
        if offset < _PACK_HEADER_LEN or offset >= self.data_end:
            self._check_offset(offset)
        t, size, hlen = parse_entry_header(buf, offset, path)
        if 0 < t < 5:
            return t, size
        pos = offset + hlen
        if t == OBJ_OFS_DELTA:
            pos += parse_ofs_distance(buf, pos, path)[1]
        elif t == OBJ_REF_DELTA:
            pos += self.fmt.rawsz
        else:
            raise PackError(f"pack entry has invalid type {t}", path=path, offset=offset)
        base_type = self._types.get(offset)
        if base_type is None:
            base_type = self.type_at(offset)
        if self._sorted_offsets is None:
            # A delta's header is in the first bytes of its stream: a short window
            # does; the exact end (a .rev bisection) only if that was not enough.
            end = min(self.data_end, pos + _HEAD_WINDOW)
            try:
                return base_type, self._delta_result_size(buf[pos:end], offset)
            except GitodbError:
                if end == self.data_end:
                    raise
        return base_type, self._delta_result_size(buf[pos : self.entry_end(offset)], offset)

    def _delta_result_size(self, zdata: memoryview, offset: int) -> int:
        """The result size a delta declares, inflating only its first bytes."""
        try:
            head = compress.inflate_head(zdata[:_HEAD_WINDOW], _DELTA_HEADER_MAX)
            if len(head) < _DELTA_HEADER_MAX and len(zdata) > _HEAD_WINDOW:
                head = compress.inflate_head(zdata, _DELTA_HEADER_MAX)
        except CompressionError as e:
            raise PackError(
                f"corrupt pack entry: {e.message}", path=self.path, offset=offset
            ) from None
        try:
            return pack_delta.delta_sizes(head)[1]
        except DeltaError as e:
            raise DeltaError(e.message, path=self.path, offset=offset) from None

    def delta_base_at(self, offset: int) -> bytes | None:
        """The id of the delta base of the entry at ``offset``, or None if not a delta."""
        t, _size, hlen = parse_entry_header(self.buf, offset, self.path)
        pos = offset + hlen
        if t == OBJ_OFS_DELTA:
            dist, _n = parse_ofs_distance(self.buf, pos, self.path)
            return self.oid_at_offset(offset - dist)
        if t == OBJ_REF_DELTA:
            return bytes(self.buf[pos : pos + self.fmt.rawsz])
        return None

    def disk_size_at(self, offset: int) -> int:
        """Bytes the entry at ``offset`` occupies in the pack (header included)."""
        return self.entry_end(offset) - offset

    def open_stream(self, offset: int) -> PackEntryStream | None:
        """A streaming reader for a non-delta entry; None for deltas (read them whole)."""
        t, size, hlen = parse_entry_header(self.buf, offset, self.path)
        if not 0 < t < 5:
            return None
        return PackEntryStream(
            self, TYPE_NAMES[t], size, offset + hlen, self.entry_end(offset), offset
        )

    def release_pages(self) -> None:
        """Give the pack's mapped pages back (``madvise(MADV_DONTNEED)``).

        A pass that reads much of a large pack once calls this every so often, so
        that the pages it read stop counting in the process's memory; the data
        stays in the page cache and a later read faults it in again.
        """
        if isinstance(self._map, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            self._map.madvise(mmap.MADV_DONTNEED)

    def close(self) -> None:
        """Release the mappings (objects already returned stay valid).

        A slice of the pack still referenced somewhere (say, by the traceback of
        an error being handled) keeps its mapping alive until it is dropped.
        """
        release_mapping(self.buf, self._map)
        if isinstance(self._rev_map, memoryview):
            m = self._rev_map.obj
            self._rev_map.release()
            m.close()  # type: ignore[attr-defined]
            self._rev_map = None
        self.idx.close()


class _RetryExact(Exception):
    """A windowed inflate failed: read again with every entry's exact span."""


class _RevUnusable(Exception):
    """The mapped ``.rev`` holds a position out of range or out of order."""


def _increasing(values: array[int]) -> bool:
    """True if ``values`` is strictly increasing."""
    if _first_unordered_u64 is not None and values.typecode == "Q":
        return _first_unordered_u64(values) < 0
    return all(a < b for a, b in zip(values, values[1:], strict=False))


class PackEntryStream(ObjectStream):
    """File-like reader over one non-delta pack entry, inflating incrementally."""

    def __init__(
        self, pack: PackFile, type_name: str, size: int, start: int, end: int, offset: int
    ) -> None:
        self.type_name = type_name
        self.size = size
        self._pack = pack
        self._pos = start
        self._end = end
        self._offset = offset
        self._inf = compress.new_inflater()
        self._remaining = size
        self._pending = b""
        self._tail: bytes | memoryview = b""

    def _next_chunk(self) -> bytes:
        inf = self._inf
        try:
            while True:
                data = self._tail
                if not data:
                    # Feed an empty chunk at the end too: zlib may still hold output.
                    stop = min(self._pos + self.CHUNK, self._end)
                    data = self._pack.buf[self._pos : stop]
                    self._pos = stop
                out = inf.decompress(data, min(self.CHUNK, self._remaining + 1))
                self._tail = inf.unconsumed_tail
                if not out and not data:
                    raise PackError(
                        "pack entry is truncated", path=self._pack.path, offset=self._offset
                    )
                if out:
                    self._remaining -= len(out)
                    if self._remaining < 0:
                        raise PackError(
                            "pack entry inflates to more than its declared size",
                            path=self._pack.path,
                            offset=self._offset,
                        )
                    return out
                if inf.eof:
                    raise PackError(
                        "pack entry inflates to less than its declared size",
                        path=self._pack.path,
                        offset=self._offset,
                    )
        except CompressionError as e:
            raise PackError(
                f"corrupt pack entry: {e.message}", path=self._pack.path, offset=self._offset
            ) from None

    def close(self) -> None:
        """Nothing to release: the pack stays open."""


__all__ = ["PackFile", "DeltaBaseCache", "PackEntryStream", "DEFAULT_DELTA_BASE_CACHE_LIMIT"]
