"""Pack index files (``.idx``), versions 1 and 2: reading through mmap, and writing.

v1: 256 big-endian fan-out counts, then ``count`` entries of (4-byte offset, id),
then the pack checksum and the index checksum.
v2: ``\\377tOc``, version 2, the fan-out, the sorted ids, the CRC-32 of every
entry's raw pack bytes, 4-byte offsets (high bit set: an index into the table of
8-byte offsets that follows), then the pack checksum and the index checksum.
"""

from __future__ import annotations

import mmap
import os
import struct
import sys
from bisect import bisect_left

from gitodb.errors import PackError
from gitodb.fileio import release_mapping
from gitodb.lazymod import lazy_module
from gitodb.objects.format import ObjectFormat

TYPE_CHECKING = False
if TYPE_CHECKING:
    import array as array_module
    from array import array
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import Any
else:
    # ``array`` imports ``collections``: a ref listing needs neither
    array_module = lazy_module("array", globals(), "array_module")

IDX_V2_MAGIC = b"\377tOc"
_FANOUT_BYTES = 256 * 4
# Offsets above this go to the 64-bit table, as Git's default ``off32_limit``.
OFFSET32_LIMIT = 0x7FFFFFFF
# Without the native core, after this many lookups (and at least 1/64th of the
# count) an index builds its list of ids (see ``PackIndex.find``).
_FINDS_BEFORE_LIST = 256

try:
    from gitodb._native import find_oid as _find_oid
    from gitodb._native import mark_present as _mark_present
except ImportError:  # built without a C compiler (or an older build: rebuild it)
    _find_oid = None  # type: ignore[assignment]
    _mark_present = None  # type: ignore[assignment]


def _be_uint32_array(buf: bytes | memoryview) -> array[int]:
    arr = array_module.array("I", bytes(buf))
    if arr.itemsize != 4:  # pragma: no cover - exotic platforms
        arr = array_module.array("L", bytes(buf))
    if sys.byteorder == "little":
        arr.byteswap()
    return arr


def _be_uint64_array(buf: bytes | memoryview) -> array[int]:
    arr = array_module.array("Q", bytes(buf))
    if sys.byteorder == "little":
        arr.byteswap()
    return arr


class PackIndex:
    """A read-only ``.idx`` file, mmapped; ids are looked up by binary search."""

    def __init__(
        self, path: str | os.PathLike[str], fmt: ObjectFormat, *, verify_checksum: bool = True
    ) -> None:
        self.path = os.fspath(path)
        self.fmt = fmt
        try:
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size == 0:
                    raise PackError("index file is empty", path=self.path, offset=0)
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except FileNotFoundError:
            raise PackError("index file not found", path=self.path) from None
        self._buf = memoryview(self._map)
        self._parse(size)
        if verify_checksum:
            self.verify_checksum()
        self._offsets: array[int] | None = None
        self._oid_list: list[bytes] | None = None
        self._finds = 0

    # -- parsing -----------------------------------------------------------
    def _parse(self, size: int) -> None:
        buf = self._buf
        rawsz = self.fmt.rawsz
        if bytes(buf[:4]) == IDX_V2_MAGIC:
            if size < 8:
                raise PackError("index file too small", path=self.path, offset=0)
            (version,) = struct.unpack_from(">I", buf, 4)
            if version != 2:
                raise PackError(
                    f"index file has unsupported version {version}", path=self.path, offset=4
                )
            self.version = 2
            fan_at = 8
        else:
            self.version = 1
            fan_at = 0
        if size < fan_at + _FANOUT_BYTES + 2 * rawsz:
            raise PackError("index file too small", path=self.path, offset=0)
        fanout: tuple[int, ...] = struct.unpack_from(">256I", buf, fan_at)
        if sorted(fanout) != list(fanout):  # one C pass over a sound table
            prev = 0
            for i, n in enumerate(fanout):  # where it goes down, for the message
                if n < prev:
                    raise PackError(
                        "index file has a non-monotonic fan-out table",
                        path=self.path,
                        offset=fan_at + 4 * i,
                    )
                prev = n
        self.fanout = fanout
        self._fan_at = fan_at
        self.count = n = fanout[255]
        body = fan_at + _FANOUT_BYTES
        if self.version == 1:
            self._oid_at = body + 4
            self._oid_stride = rawsz + 4
            expected = body + n * (rawsz + 4) + 2 * rawsz
            self._crc_at = -1
            self._off32_at = body
            self._off64_at = -1
        else:
            self._oid_at = body
            self._oid_stride = rawsz
            self._crc_at = body + n * rawsz
            self._off32_at = self._crc_at + 4 * n
            self._off64_at = self._off32_at + 4 * n
            expected = self._off64_at + 2 * rawsz
        if size < expected:
            raise PackError(
                f"index file truncated: {size} bytes, expected at least {expected}",
                path=self.path,
                offset=size,
            )
        n64 = (size - expected) // 8
        if (
            self.version == 1
            and size != expected
            or (self.version == 2 and size != expected + 8 * n64)
        ):
            raise PackError(f"index file has wrong size {size}", path=self.path, offset=size)
        self._large_count = n64 if self.version == 2 else 0
        trailer = size - 2 * rawsz
        self.pack_checksum = bytes(buf[trailer : trailer + rawsz])
        self.checksum = bytes(buf[trailer + rawsz : size])
        self._size = size

    def verify_checksum(self) -> None:
        """Check the trailing checksum over the whole index; raise ``PackError`` if wrong."""
        end = self._size - self.fmt.rawsz
        if self.fmt.new_hasher(self._buf[:end]).digest() != self.checksum:
            raise PackError("index file has a bad checksum", path=self.path, offset=end)

    # -- access ------------------------------------------------------------
    def oid_at(self, i: int) -> bytes:
        """The binary id of the ``i``-th entry in sorted order."""
        at = self._oid_at + i * self._oid_stride
        return bytes(self._buf[at : at + self.fmt.rawsz])

    def crc_at(self, i: int) -> int:
        """The CRC-32 stored for the ``i``-th entry (index v2 only)."""
        if self._crc_at < 0:
            raise PackError("index v1 has no CRC-32 values", path=self.path)
        return int.from_bytes(self._buf[self._crc_at + 4 * i : self._crc_at + 4 * i + 4], "big")

    def offset_at(self, i: int) -> int:
        """The pack offset of the ``i``-th entry, read from the mapping (no table built)."""
        if self._offsets is not None:
            return self._offsets[i]
        buf = self._buf
        if self.version == 1:
            at = self._off32_at + i * self._oid_stride
            return int.from_bytes(buf[at : at + 4], "big")
        at = self._off32_at + 4 * i
        v = int.from_bytes(buf[at : at + 4], "big")
        if not v & 0x80000000:
            return v
        j = v & 0x7FFFFFFF
        if j >= self._large_count:
            raise PackError("index has a bad 64-bit offset reference", path=self.path, offset=at)
        at = self._off64_at + 8 * j
        return int.from_bytes(buf[at : at + 8], "big")

    @property
    def offsets(self) -> array[int]:
        """Pack offsets of all entries in index (id-sorted) order, decoded once."""
        if self._offsets is None:
            self._offsets = self._decode_offsets()
        return self._offsets

    def _decode_offsets(self) -> array[int]:
        n = self.count
        buf = self._buf
        if self.version == 1:
            stride = self._oid_stride
            start = self._off32_at
            return array_module.array(
                "Q",
                (
                    int.from_bytes(buf[at : at + 4], "big")
                    for at in range(start, start + n * stride, stride)
                ),
            )
        small = _be_uint32_array(buf[self._off32_at : self._off32_at + 4 * n])
        out = array_module.array("Q", small)
        if n and max(small) & 0x80000000:
            large = _be_uint64_array(buf[self._off64_at : self._off64_at + 8 * self._large_count])
            for i, v in enumerate(small):
                if v & 0x80000000:
                    j = v & 0x7FFFFFFF
                    if j >= len(large):
                        raise PackError(
                            "index has a bad 64-bit offset reference",
                            path=self.path,
                            offset=self._off32_at + 4 * i,
                        )
                    out[i] = large[j]
        return out

    def native_layout(self) -> tuple[int, int, int, int, int, int, int, int, int]:
        """Where the tables lie in the mapping, as ``_native.pack_headers`` reads them:
        ``(version, fan-out, ids, id stride, 32-bit offsets, 64-bit offsets, number of
        64-bit offsets, id length, count)``."""
        return (
            self.version,
            8 if self.version == 2 else 0,
            self._oid_at,
            self._oid_stride,
            self._off32_at,
            self._off64_at,
            self._large_count,
            self.fmt.rawsz,
            self.count,
        )

    @property
    def mapping(self) -> memoryview:
        """The index file's bytes (the read-only mapping)."""
        return self._buf

    def find(self, oid: bytes) -> int:
        """Return the position of ``oid`` in the index, or -1."""
        first = oid[0]
        lo = self.fanout[first - 1] if first else 0
        hi = self.fanout[first]
        if _find_oid is not None and len(oid) == self.fmt.rawsz:
            # Straight in the mapping: O(log n) a lookup, no per-index set-up.
            return _find_oid(self._buf, self._oid_at, self._oid_stride, self.fmt.rawsz, lo, hi, oid)
        oids = self._oid_list
        if oids is not None:
            i = bisect_left(oids, oid, lo, hi)
            return i if i < hi and oids[i] == oid else -1
        # Without the native core, many lookups (batch reads) pay once for a list of
        # ids and then bisect in C; a few lookups search the mapping directly.
        self._finds += 1
        if self._finds > _FINDS_BEFORE_LIST and self._finds > self.count >> 6:
            self.oid_list()
            return self.find(oid)
        buf = self._buf
        base = self._oid_at
        stride = self._oid_stride
        rawsz = self.fmt.rawsz
        while lo < hi:
            mid = (lo + hi) >> 1
            at = base + mid * stride
            cand = buf[at : at + rawsz]
            if cand == oid:
                return mid
            if bytes(cand) < oid:
                lo = mid + 1
            else:
                hi = mid
        return -1

    def mark_present(
        self, oids: bytes, marks: bytearray, tag: int = 1, positions: Any = None
    ) -> int:
        """Set ``marks[i]`` to ``tag`` (1-255) for every id of ``oids`` (``rawsz`` bytes
        each, any order) that this index holds, and ``positions[i]`` (an int64 array,
        if given) to its position here; return how many were newly marked.

        One bisect per id straight in the mapping (the native core's, in one call);
        ids already marked are skipped.
        """
        rawsz = self.fmt.rawsz
        if _mark_present is not None:
            return int(
                _mark_present(
                    self._buf,
                    self._fan_at,
                    self._oid_at,
                    self._oid_stride,
                    rawsz,
                    oids,
                    marks,
                    tag,
                    positions,
                )
            )
        marked = 0
        for i in range(len(marks)):
            if marks[i]:
                continue
            at = self.find(oids[i * rawsz : (i + 1) * rawsz])
            if at >= 0:
                marks[i] = tag
                if positions is not None:
                    positions[i] = at
                marked += 1
        return marked

    def find_prefix(self, prefix: bytes, nibbles: int) -> Iterator[int]:
        """Positions whose id starts with the first ``nibbles`` hex digits of ``prefix``.

        ``prefix`` is the binary form, its last byte padded with a zero nibble when
        ``nibbles`` is odd.
        """
        return sorted_prefix_positions(self.fanout, self.count, self.oid_at, prefix, nibbles)

    def abbrev_table(self) -> tuple[Any, int, int, int, int]:
        """``(buffer, fan-out, ids, stride, count)``: the sorted ids in the mapping, as
        ``_native.abbrev_lengths`` reads a table."""
        return self._buf, self._fan_at, self._oid_at, self._oid_stride, self.count

    def id_table(self) -> tuple[Any, int, int, int, int]:
        """``(buffer, start, stride, rawsz, count)``: where the sorted ids lie in the
        mapping (entry i's id is ``rawsz`` bytes at ``start + i * stride``)."""
        return self._buf, self._oid_at, self._oid_stride, self.fmt.rawsz, self.count

    def oid_list(self) -> list[bytes]:
        """All ids in sorted order, as one list (built once with a single copy)."""
        if self._oid_list is None:
            rawsz = self.fmt.rawsz
            stride = self._oid_stride
            table = bytes(self._buf[self._oid_at : self._oid_at + self.count * stride])
            self._oid_list = [table[i : i + rawsz] for i in range(0, len(table), stride)]
        return self._oid_list

    def iter_oids(self) -> Iterator[bytes]:
        """All ids in sorted order."""
        for i in range(self.count):
            yield self.oid_at(i)

    def close(self) -> None:
        """Release the mapping (kept alive while a slice of it is still referenced)."""
        release_mapping(self._buf, self._map)


def write_index_v2(
    entries: Iterable[tuple[bytes, int, int]],
    pack_checksum: bytes,
    fmt: ObjectFormat,
    *,
    offset32_limit: int = OFFSET32_LIMIT,
) -> bytes:
    """Return the bytes of a v2 ``.idx`` for ``entries`` of ``(oid, crc32, offset)``.

    The bytes equal what ``git index-pack`` writes for the same pack.
    """
    ents = sorted(entries)
    return index_v2_sorted(
        [e[0] for e in ents],
        array_module.array("I", (e[1] for e in ents)),
        [e[2] for e in ents],
        pack_checksum,
        fmt,
        offset32_limit=offset32_limit,
    )


def index_v2_sorted(
    oids: Sequence[bytes],
    crcs: array[int],
    offsets: Iterable[int],
    pack_checksum: bytes,
    fmt: ObjectFormat,
    *,
    offset32_limit: int = OFFSET32_LIMIT,
) -> bytes:
    """:func:`write_index_v2` for columns already in ``(oid, offset)`` order."""
    fanout = _fanout(oids)
    crcs = array_module.array("I", crcs)  # a copy: byteswapped below
    off32 = array_module.array("I")
    off64 = array_module.array("Q")
    for off in offsets:
        if off > offset32_limit:
            off32.append(0x80000000 | len(off64))
            off64.append(off)
        else:
            off32.append(off)
    if sys.byteorder == "little":
        crcs.byteswap()
        off32.byteswap()
        off64.byteswap()
    body = b"".join(
        [
            IDX_V2_MAGIC,
            struct.pack(">I", 2),
            fanout,
            b"".join(oids),
            crcs.tobytes(),
            off32.tobytes(),
            off64.tobytes(),
            pack_checksum,
        ]
    )
    return body + fmt.new_hasher(body).digest()


def write_index_v1(
    entries: Iterable[tuple[bytes, int, int]], pack_checksum: bytes, fmt: ObjectFormat
) -> bytes:
    """Return the bytes of a v1 ``.idx`` for ``entries`` of ``(oid, crc32, offset)``."""
    ents = sorted(entries)
    for _oid, _crc, off in ents:
        if off > 0xFFFFFFFF:
            raise PackError("pack too large for index version 1")
    parts = [_fanout(e[0] for e in ents)]
    parts.extend(struct.pack(">I", off) + oid for oid, _crc, off in ents)
    parts.append(pack_checksum)
    body = b"".join(parts)
    return body + fmt.new_hasher(body).digest()


def _fanout(sorted_oids: Iterable[bytes]) -> bytes:
    counts = [0] * 256
    for oid in sorted_oids:
        counts[oid[0]] += 1
    total = 0
    out = array_module.array("I")
    for c in counts:
        total += c
        out.append(total)
    if sys.byteorder == "little":
        out.byteswap()
    return out.tobytes()


def sorted_prefix_positions(
    fanout: Sequence[int],
    count: int,
    oid_at: Callable[[int], bytes],
    prefix: bytes,
    nibbles: int,
) -> Iterator[int]:
    """Positions in a sorted id table with a 256-entry fan-out (a pack index, a
    multi-pack-index) whose id starts with the first ``nibbles`` hex digits of
    ``prefix`` (binary, its last byte padded with a zero nibble when odd)."""
    full = nibbles // 2
    lo_key = prefix[:full] + (bytes([prefix[full] & 0xF0]) if nibbles % 2 else b"")
    first = lo_key[0] if lo_key else 0
    lo = fanout[first - 1] if first else 0
    hi = fanout[first] if lo_key else count
    # Binary search for the first id >= lo_key.
    while lo < hi:
        mid = (lo + hi) >> 1
        if oid_at(mid) < lo_key:
            lo = mid + 1
        else:
            hi = mid
    i = lo
    while i < count:
        oid = oid_at(i)
        odd_mismatch = nibbles % 2 and (oid[full] >> 4) != (prefix[full] >> 4)
        if oid[:full] != prefix[:full] or odd_mismatch:
            break
        yield i
        i += 1
