"""Multi-pack-index files (``objects/pack/multi-pack-index``): reading through mmap.

A MIDX indexes the objects of many packs at once, so a lookup is one binary
search instead of one per pack.  Layout (all integers big-endian):

- header, 12 bytes: ``MIDX``, file version (1 or 2), hash version (1 SHA-1,
  2 SHA-256), number of chunks, number of base files (0), number of packs;
- a table of contents: one ``(4-byte chunk id, 8-byte offset)`` per chunk and a
  terminating entry with id 0 whose offset is where the last chunk ends;
- the chunks: ``PNAM`` NUL-terminated ``.idx`` names (sorted in version 1),
  ``OIDF`` fan-out of 256 counts, ``OIDL`` sorted ids, ``OOFF`` one
  ``(pack-int-id, offset)`` pair per id (offset with the high bit set: an index
  into ``LOFF``, the 8-byte offsets), and optionally ``RIDX`` (positions in
  pseudo-pack order) and ``BTMP`` (bitmapped packs);
- the checksum of everything before it.

Git 2.47+ can also write an incremental chain: ``multi-pack-index.d/`` holds
``multi-pack-index-<hash>.midx`` layers and ``multi-pack-index-chain`` lists their
hashes, base first.  A layer's object positions and pack ids continue its base's.

Parsing follows Git's loader: a damaged header or table of contents makes Git
ignore the file (``MultiPackIndexError`` with ``ignorable`` set), while a missing
or mis-sized required chunk is fatal.  Every count read from the file is checked
against the size of the chunk that holds it before anything is allocated.
"""

from __future__ import annotations

import mmap
import os
import struct
import sys
from array import array
from collections.abc import Iterator
from typing import Any, NamedTuple

from gitodb import trace2
from gitodb.durable import env_bool
from gitodb.errors import MultiPackIndexError, report
from gitodb.fileio import release_mapping
from gitodb.objects.format import ObjectFormat
from gitodb.pack.idx import sorted_prefix_positions
from gitodb.pack.rev import read_rev

MIDX_SIGNATURE = b"MIDX"
MIDX_NAME = "multi-pack-index"
MIDX_CHAIN_DIR = "multi-pack-index.d"
MIDX_CHAIN_FILE = "multi-pack-index-chain"
HEADER_SIZE = 12
TOC_ENTRY_SIZE = 12
CHUNK_ALIGNMENT = 4
LARGE_OFFSET_NEEDED = 0x80000000

CHUNK_PNAM = b"PNAM"
CHUNK_OIDF = b"OIDF"
CHUNK_OIDL = b"OIDL"
CHUNK_OOFF = b"OOFF"
CHUNK_LOFF = b"LOFF"
CHUNK_RIDX = b"RIDX"
CHUNK_BTMP = b"BTMP"

try:
    from gitodb._native import find_oid as _find_oid
except ImportError:  # built without a C compiler
    _find_oid = None  # type: ignore[assignment]


class Chunk(NamedTuple):
    """One entry of a chunk table: id, start and size in the file."""

    id: bytes
    start: int
    size: int


def read_chunk_table(
    buf: memoryview | bytes, size: int, toc_at: int, count: int, rawsz: int, path: str
) -> dict[bytes, Chunk]:
    """Parse a chunk-format table of contents as Git's ``read_table_of_contents``.

    ``count`` chunks start at ``toc_at``; the data must end before the trailing
    checksum.  Raises an ignorable ``MultiPackIndexError`` (Git prints an error and
    goes on without the file).
    """
    if toc_at + (count + 1) * TOC_ENTRY_SIZE > size - rawsz:
        raise MultiPackIndexError(
            "multi-pack-index chunk table of contents is too large for the file",
            path=path,
            offset=toc_at,
            ignorable=True,
        )
    chunks: dict[bytes, Chunk] = {}
    at = toc_at
    for _ in range(count):
        cid = bytes(buf[at : at + 4])
        (start,) = struct.unpack_from(">Q", buf, at + 4)
        if cid == b"\0\0\0\0":
            raise MultiPackIndexError(
                "terminating chunk id appears earlier than expected",
                path=path,
                offset=at,
                ignorable=True,
            )
        if start % CHUNK_ALIGNMENT:
            raise MultiPackIndexError(
                f"chunk id {cid.hex()} not {CHUNK_ALIGNMENT}-byte aligned",
                path=path,
                offset=at,
                ignorable=True,
            )
        (end,) = struct.unpack_from(">Q", buf, at + TOC_ENTRY_SIZE + 4)
        if end < start or end > size - rawsz:
            raise MultiPackIndexError(
                f"improper chunk offset(s) {start:x} and {end:x}",
                path=path,
                offset=at + 4,
                ignorable=True,
            )
        if cid in chunks:
            raise MultiPackIndexError(
                f"duplicate chunk ID {cid.hex()} found", path=path, offset=at, ignorable=True
            )
        chunks[cid] = Chunk(cid, start, end - start)
        at += TOC_ENTRY_SIZE
    final = bytes(buf[at : at + 4])
    if final != b"\0\0\0\0":
        raise MultiPackIndexError(
            f"final chunk has non-zero id {final.hex()}", path=path, offset=at, ignorable=True
        )
    return chunks


class MultiPackIndex:
    """One MIDX file (or one layer of a chain), mmapped; ids found by binary search.

    Positions (``find``, ``oid_at``) are local to this file; ``base_objects`` and
    ``base_packs`` say how many objects and packs the layers below it hold.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        fmt: ObjectFormat,
        *,
        base: MultiPackIndex | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self.fmt = fmt
        self.base = base
        self.count: int = 0
        self.num_packs: int = 0
        self.base_objects: int
        self.base_packs: int
        self.base_objects = base.base_objects + base.count if base is not None else 0
        self.base_packs = base.base_packs + base.num_packs if base is not None else 0
        try:
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size < HEADER_SIZE + fmt.rawsz:
                    raise MultiPackIndexError(
                        f"multi-pack-index file {self.path} is too small",
                        path=self.path,
                        offset=size,
                        ignorable=True,
                    )
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except FileNotFoundError:
            raise MultiPackIndexError(
                "multi-pack-index file not found", path=self.path, ignorable=True
            ) from None
        self._buf = memoryview(self._map)
        self._size = size
        try:
            self._parse()
        except BaseException:
            self.close()
            raise

    # -- parsing -----------------------------------------------------------
    def _parse(self) -> None:
        buf, size, path, rawsz = self._buf, self._size, self.path, self.fmt.rawsz
        sig = bytes(buf[:4])
        if sig != MIDX_SIGNATURE:
            raise MultiPackIndexError(
                f"multi-pack-index signature 0x{sig.hex()} does not match signature "
                f"0x{MIDX_SIGNATURE.hex()}",
                path=path,
                offset=0,
            )
        self.version = buf[4]
        if self.version not in (1, 2):
            raise MultiPackIndexError(
                f"multi-pack-index version {self.version} not recognized", path=path, offset=4
            )
        hash_version = buf[5]
        if hash_version != self.fmt.pack_hash_id:
            raise MultiPackIndexError(
                f"multi-pack-index hash version {hash_version} does not match version "
                f"{self.fmt.pack_hash_id}",
                path=path,
                offset=5,
                ignorable=True,
            )
        nchunks = buf[6]
        (self.num_packs,) = struct.unpack_from(">I", buf, 8)
        chunks = read_chunk_table(buf, size, HEADER_SIZE, nchunks, rawsz, path)
        self.chunks = chunks
        pnam = chunks.get(CHUNK_PNAM)
        if pnam is None:
            raise MultiPackIndexError(
                "multi-pack-index required pack-name chunk missing or corrupted",
                path=path,
                offset=HEADER_SIZE,
            )
        self.fanout = self._read_fanout(chunks.get(CHUNK_OIDF))
        self._fan_at = chunks[CHUNK_OIDF].start
        self.count = n = self.fanout[255]
        oidl = chunks.get(CHUNK_OIDL)
        if oidl is None or oidl.size != n * rawsz:
            raise MultiPackIndexError(
                "multi-pack-index required OID lookup chunk missing or corrupted",
                path=path,
                offset=oidl.start if oidl else HEADER_SIZE,
                details=["multi-pack-index OID lookup chunk is the wrong size"] if oidl else [],
            )
        self._oid_at = oidl.start
        ooff = chunks.get(CHUNK_OOFF)
        if ooff is None or ooff.size != n * 8:
            raise MultiPackIndexError(
                "multi-pack-index required object offsets chunk missing or corrupted",
                path=path,
                offset=ooff.start if ooff else HEADER_SIZE,
                details=["multi-pack-index object offset chunk is the wrong size"] if ooff else [],
            )
        self._ooff_at = ooff.start
        loff = chunks.get(CHUNK_LOFF)
        self._loff_at = loff.start if loff else 0
        self._loff_count = loff.size // 8 if loff else 0
        self.pack_names = self._read_pack_names(pnam)
        self._pack_set = frozenset(self.pack_names)
        self._ridx = chunks.get(CHUNK_RIDX)
        self.checksum = bytes(buf[size - rawsz : size])

    def _read_fanout(self, chunk: Chunk | None) -> tuple[int, ...]:
        missing = "multi-pack-index required OID fanout chunk missing or corrupted"
        if chunk is None:
            raise MultiPackIndexError(missing, path=self.path, offset=HEADER_SIZE)
        if chunk.size != 256 * 4:
            raise MultiPackIndexError(
                missing,
                path=self.path,
                offset=chunk.start,
                details=["multi-pack-index OID fanout is of the wrong size"],
            )
        fanout = struct.unpack_from(">256I", self._buf, chunk.start)
        for i in range(255):
            if fanout[i] > fanout[i + 1]:
                raise MultiPackIndexError(
                    missing,
                    path=self.path,
                    offset=chunk.start + 4 * i,
                    details=[
                        f"oid fanout out of order: fanout[{i}] = {fanout[i]:x} > "
                        f"{fanout[i + 1]:x} = fanout[{i + 1}]"
                    ],
                )
        return fanout

    def _read_pack_names(self, chunk: Chunk) -> list[str]:
        # Every name takes at least its NUL: more packs than bytes cannot be right,
        # and is refused before a list of that length is built.
        if self.num_packs > chunk.size:
            raise MultiPackIndexError(
                "multi-pack-index pack-name chunk is too short", path=self.path, offset=chunk.start
            )
        raw = bytes(self._buf[chunk.start : chunk.start + chunk.size])
        names: list[str] = []
        at = 0
        for i in range(self.num_packs):
            end = raw.find(b"\0", at)
            if end < 0:
                raise MultiPackIndexError(
                    "multi-pack-index pack-name chunk is too short",
                    path=self.path,
                    offset=chunk.start + at,
                )
            name = raw[at:end].decode("utf-8", "surrogateescape")
            if i and self.version == 1 and name <= names[-1]:
                raise MultiPackIndexError(
                    f"multi-pack-index pack names out of order: '{names[-1]}' before '{name}'",
                    path=self.path,
                    offset=chunk.start + at,
                )
            names.append(name)
            at = end + 1
        return names

    # -- checks --------------------------------------------------------------
    def checksum_valid(self) -> bool:
        """True if the trailing checksum matches the file's contents."""
        end = self._size - self.fmt.rawsz
        return bool(self.fmt.new_hasher(self._buf[:end]).digest() == self.checksum)

    def contains_pack(self, idx_name: str) -> bool:
        """True if this file (not its base) covers the pack whose ``.idx`` is named."""
        return idx_name in self._pack_set

    # -- access --------------------------------------------------------------
    def oid_at(self, i: int) -> bytes:
        """The binary id at local position ``i``."""
        rawsz = self.fmt.rawsz
        at = self._oid_at + i * rawsz
        return bytes(self._buf[at : at + rawsz])

    def pack_id_at(self, i: int) -> int:
        """The global pack-int-id of local position ``i`` (checked against the count)."""
        at = self._ooff_at + 8 * i
        pid = int.from_bytes(self._buf[at : at + 4], "big")
        if pid >= self.num_packs:
            raise MultiPackIndexError(
                f"bad pack-int-id: {pid + self.base_packs} "
                f"({self.num_packs + self.base_packs} total packs)",
                path=self.path,
                offset=at,
            )
        return pid + self.base_packs

    def offset_at(self, i: int) -> int:
        """The pack offset of local position ``i``."""
        at = self._ooff_at + 8 * i + 4
        v = int.from_bytes(self._buf[at : at + 4], "big")
        if not v & LARGE_OFFSET_NEEDED or not self._loff_at:
            return v
        j = v & ~LARGE_OFFSET_NEEDED
        if j >= self._loff_count:
            raise MultiPackIndexError(
                "multi-pack-index large offset out of bounds", path=self.path, offset=at
            )
        at = self._loff_at + 8 * j
        return int.from_bytes(self._buf[at : at + 8], "big")

    def find(self, oid: bytes) -> int:
        """Local position of ``oid`` in this file, or -1."""
        first = oid[0]
        lo = self.fanout[first - 1] if first else 0
        hi = self.fanout[first]
        rawsz = self.fmt.rawsz
        if _find_oid is not None and len(oid) == rawsz:
            return _find_oid(self._buf, self._oid_at, rawsz, rawsz, lo, hi, oid)
        buf, base = self._buf, self._oid_at
        while lo < hi:
            mid = (lo + hi) >> 1
            cand = bytes(buf[base + mid * rawsz : base + (mid + 1) * rawsz])
            if cand == oid:
                return mid
            if cand < oid:
                lo = mid + 1
            else:
                hi = mid
        return -1

    def find_prefix(self, prefix: bytes, nibbles: int) -> Iterator[int]:
        """Local positions whose id starts with the first ``nibbles`` hex digits of ``prefix``."""
        return sorted_prefix_positions(self.fanout, self.count, self.oid_at, prefix, nibbles)

    def abbrev_table(self) -> tuple[Any, int, int, int, int]:
        """``(buffer, fan-out, ids, stride, count)``: this file's sorted ids in its
        mapping, as ``_native.abbrev_lengths`` reads a table."""
        return self._buf, self._fan_at, self._oid_at, self.fmt.rawsz, self.count

    def oid_list(self) -> list[bytes]:
        """All ids of this file in sorted order (one copy of the table)."""
        rawsz = self.fmt.rawsz
        table = bytes(self._buf[self._oid_at : self._oid_at + self.count * rawsz])
        return [table[i : i + rawsz] for i in range(0, len(table), rawsz)]

    def entries(self) -> Iterator[tuple[bytes, int, int]]:
        """Every ``(oid, global pack-int-id, offset)`` of this file in id order."""
        pids, offs = self.columns()
        return zip(self.oid_list(), pids, offs, strict=True)

    def columns(self) -> tuple[array[int], array[int]]:
        """Global pack-int-ids and pack offsets of all entries, decoded in one pass.

        Raises ``MultiPackIndexError`` at the first bad pack-int-id or large offset.
        """
        n = self.count
        raw = array("I", bytes(self._buf[self._ooff_at : self._ooff_at + 8 * n]))
        if sys.byteorder == "little":
            raw.byteswap()
        pids = raw[0::2]
        offs = array("Q", raw[1::2])
        if n and max(pids) >= self.num_packs:
            i = next(i for i, p in enumerate(pids) if p >= self.num_packs)
            self.pack_id_at(i)  # raises Git's message
        if self.base_packs:
            pids = array("I", (p + self.base_packs for p in pids))
        if n and self._loff_at and max(offs) & LARGE_OFFSET_NEEDED:
            for i, v in enumerate(offs):
                if v & LARGE_OFFSET_NEEDED:
                    offs[i] = self.offset_at(i)
        return pids, offs

    def rev_positions(self) -> list[int] | None:
        """The ``RIDX`` chunk (local positions in pseudo-pack order), None if absent.

        A chain layer's chunk counts on from its base's objects (as Git writes it);
        the positions returned are local.  A chunk of the wrong size is reported as
        Git does and treated as absent.
        """
        ridx = self._ridx
        if ridx is None:
            return None
        if ridx.size != 4 * self.count:
            report("error", "multi-pack-index reverse-index chunk is the wrong size")
            return None
        order = list(struct.unpack_from(f">{self.count}I", self._buf, ridx.start))
        base = self.base_objects
        if order and (max(order) >= base + self.count or min(order) < base):
            raise MultiPackIndexError(
                "multi-pack-index reverse-index chunk has an entry out of range",
                path=self.path,
                offset=ridx.start
                + 4 * next(i for i, v in enumerate(order) if not base <= v < base + self.count),
            )
        return [v - base for v in order] if base else order

    def reverse_index(self) -> list[int] | None:
        """Local positions in pseudo-pack order, from the ``RIDX`` chunk or else from
        ``multi-pack-index-<checksum>.rev`` (what Git before 2.35 wrote); None if
        neither is there.  A damaged ``.rev`` raises ``PackError``.
        ``GIT_TEST_MIDX_READ_RIDX=0`` (Git's test knob) skips the chunk."""
        order = self.rev_positions() if env_bool("GIT_TEST_MIDX_READ_RIDX", True) else None
        if order is not None:
            trace2.data("load_midx_revindex", "source", "midx")  # where Git reports it read it
            return order
        rev = os.path.join(
            os.path.dirname(self.path), f"multi-pack-index-{self.checksum.hex()}.rev"
        )
        if not os.path.exists(rev):
            return None
        trace2.data("load_midx_revindex", "source", "rev")
        return list(read_rev(rev, self.count, self.fmt, pack_checksum=self.checksum))

    def pseudo_pack_order(self, preferred: int) -> list[int]:
        """Local positions as Git's bitmaps see the packs: the objects of pack
        ``preferred`` (local pack-int-id) first, then the other packs in pack-int-id
        order, each in pack-offset order.  This is what ``RIDX`` records."""
        pids, offs = self.columns()
        base = self.base_packs
        return sorted(
            range(self.count),
            key=lambda i: (pids[i] - base != preferred, pids[i], offs[i]),
        )

    def close(self) -> None:
        """Release the mapping (kept alive while a slice of it is still referenced)."""
        release_mapping(self._buf, self._map)


class MidxSet:
    """The MIDX of one object directory: one file, or the layers of a chain.

    ``layers`` go base first; ``pack_names`` are indexed by global pack-int-id.
    """

    def __init__(self, layers: list[MultiPackIndex]) -> None:
        self.layers = layers
        self.pack_names: list[str] = [n for m in layers for n in m.pack_names]
        self._packs = frozenset(self.pack_names)
        self.count = sum(m.count for m in layers)

    @property
    def path(self) -> str:
        """The file of the top layer."""
        return self.layers[-1].path

    def contains_pack(self, idx_name: str) -> bool:
        """True if some layer covers the pack whose ``.idx`` is named."""
        return idx_name in self._packs

    def find(self, oid: bytes) -> tuple[int, int] | None:
        """``(global pack-int-id, offset)`` of ``oid``, or None."""
        for m in reversed(self.layers):
            i = m.find(oid)
            if i >= 0:
                return m.pack_id_at(i), m.offset_at(i)
        return None

    def find_prefix(self, prefix: bytes, nibbles: int) -> Iterator[bytes]:
        """Ids starting with the first ``nibbles`` hex digits of ``prefix``."""
        for m in self.layers:
            for i in m.find_prefix(prefix, nibbles):
                yield m.oid_at(i)

    def close(self) -> None:
        """Release every layer's mapping."""
        for m in self.layers:
            m.close()


def load_midx(objects_dir: str, fmt: ObjectFormat) -> MidxSet | None:
    """The MIDX of ``objects_dir`` (``pack/multi-pack-index``, else the chain), or None.

    Raises ``MultiPackIndexError``; one with ``ignorable`` set means Git would print
    the error and go on without a MIDX.
    """
    pack_dir = os.path.join(objects_dir, "pack")
    single = os.path.join(pack_dir, MIDX_NAME)
    if os.path.exists(single):
        return MidxSet([MultiPackIndex(single, fmt)])
    chain = os.path.join(pack_dir, MIDX_CHAIN_DIR, MIDX_CHAIN_FILE)
    try:
        with open(chain, "rb") as f:
            raw = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    layers: list[MultiPackIndex] = []
    base: MultiPackIndex | None = None
    for lineno, line in enumerate(raw.splitlines()):
        name = line.decode("ascii", "replace").strip()
        if len(name) != fmt.hexsz or any(c not in "0123456789abcdef" for c in name):
            for m in layers:
                m.close()
            raise MultiPackIndexError(
                f"invalid multi-pack-index chain: line '{name}' not a hash",
                path=chain,
                offset=lineno,
                ignorable=True,
            )
        layer_path = os.path.join(pack_dir, MIDX_CHAIN_DIR, f"multi-pack-index-{name}.midx")
        try:
            base = MultiPackIndex(layer_path, fmt, base=base)
        except MultiPackIndexError:
            for m in layers:
                m.close()
            raise
        if base.checksum.hex() != name:
            for m in [*layers, base]:
                m.close()
            raise MultiPackIndexError(
                "multi-pack-index chain layer does not match its name",
                path=layer_path,
                offset=base._size - fmt.rawsz,
                ignorable=True,
            )
        layers.append(base)
    return MidxSet(layers) if layers else None
