"""Reachability bitmaps: ``pack-<hash>.bitmap`` and ``multi-pack-index-<hash>.bitmap``.

A bitmap file gives, for some commits, the set of every object reachable from
them, as one bit per object of a pack (bit ``n``: the ``n``-th object in pack
order) or of a multi-pack-index (bit ``n``: the ``n``-th object in pseudo-pack
order, see ``MultiPackIndex.pseudo_pack_order``).  Layout, integers big-endian:

- header: ``BITM``, version 1 (2 bytes), options (2 bytes: 0x1 full DAG,
  0x4 name-hash cache, 0x10 lookup table, 0x20 pseudo-merges), the number of
  bitmapped commits (4 bytes), the checksum of the pack or MIDX it belongs to;
- four EWAH bitmaps (``gitodb.pack.ewah``): the objects that are commits,
  trees, blobs, tags;
- per bitmapped commit: its position in id order (the ``.idx`` or the MIDX), an
  XOR offset (the bitmap stored is XORed with the one that many entries before:
  at most 160, never past the first), a flag byte, the EWAH bitmap;
- optional sections (pseudo-merges, then a lookup table of 16 bytes per commit,
  then a name-hash cache of 4 bytes per object in id order), then the checksum of
  the file.

``BitmapIndex`` parses a file's structure eagerly (every length checked against
the file before use) and decodes commit bitmaps on demand; ``BitmappedObjects``
ties one to the pack or MIDX it indexes: bit positions to ids and back.
"""

from __future__ import annotations

import bisect
import mmap
import os
import struct
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from gitodb import trace2
from gitodb.errors import MultiPackIndexError, PackError, report
from gitodb.fileio import release_mapping
from gitodb.objects.format import ObjectFormat
from gitodb.pack.ewah import BitmapError, ewah_end, iter_bits, read_ewah
from gitodb.pack.midx import MidxSet, MultiPackIndex
from gitodb.pack.reader import PackFile

__all__ = [
    "BITMAP_SIGNATURE",
    "BitmapError",
    "BitmapIndex",
    "BitmappedObjects",
    "name_hash",
    "open_bitmap",
]

BITMAP_SIGNATURE = b"BITM"
OPT_FULL_DAG = 0x1
OPT_HASH_CACHE = 0x4
OPT_LOOKUP_TABLE = 0x10
OPT_PSEUDO_MERGES = 0x20
MAX_XOR_OFFSET = 160
LOOKUP_TRIPLET = 16
#: object types in the order of the four type bitmaps
TYPE_NAMES = ("commit", "tree", "blob", "tag")


def name_hash(name: bytes) -> int:
    """Git's path-name hash (``pack_name_hash``) of the name-hash cache: the last
    characters weigh most; whitespace is skipped."""
    h = 0
    for c in name:
        if c in b" \t\n\r\v\f":
            continue
        h = ((h >> 2) + (c << 24)) & 0xFFFFFFFF
    return h


@dataclass(frozen=True)
class _Entry:
    index_pos: int
    xor_offset: int
    flags: int
    ewah_at: int


def _load_failed(e: BitmapError) -> BitmapError:
    """Git's ``read_bitmap_1``: the EWAH reader's line, then its own."""
    message = "failed to load bitmap index (corrupted?)"
    return BitmapError(message, path=e.path, offset=e.offset, details=[e.message])


class BitmapIndex:
    """One ``.bitmap`` file: type bitmaps, commit bitmaps (by id-order position),
    the name-hash cache.

    ``num_objects`` is the number of objects of the pack or MIDX the file belongs
    to (for a MIDX chain layer: with the layers below it, the bit positions it may
    use), ``hash_count`` how many the name-hash cache holds (default: as many; a
    layer's cache holds its own objects only)
    to and ``checksum`` that file's checksum, which the header must repeat.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        fmt: ObjectFormat,
        *,
        num_objects: int,
        checksum: bytes,
        hash_count: int | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self.fmt = fmt
        self.num_objects = num_objects
        self.hash_count = num_objects if hash_count is None else hash_count
        try:
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size < 12 + 2 * fmt.rawsz:
                    raise BitmapError(
                        "corrupted bitmap index (too small)", path=self.path, offset=size
                    )
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except FileNotFoundError:
            raise BitmapError("bitmap file not found", path=self.path) from None
        self._buf = memoryview(self._map)
        self._size = size
        self._decoded: dict[int, int] = {}
        try:
            self._parse(checksum)
        except BaseException:
            self.close()
            raise

    def _parse(self, checksum: bytes) -> None:
        buf, path, rawsz, n = self._buf, self.path, self.fmt.rawsz, self.num_objects
        if bytes(buf[:4]) != BITMAP_SIGNATURE:
            raise BitmapError("corrupted bitmap index file (wrong header)", path=path, offset=0)
        version, options, count = struct.unpack_from(">HHI", buf, 4)
        if version != 1:
            raise BitmapError(
                f"unsupported version '{version}' for bitmap index file", path=path, offset=4
            )
        if not options & OPT_FULL_DAG:
            raise BitmapError(
                "bitmap index is not full-closure (no BITMAP_OPT_FULL_DAG)", path=path, offset=6
            )
        self.options = options
        self.count = count
        if bytes(buf[12 : 12 + rawsz]) != checksum:
            raise BitmapError(
                "checksum doesn't match in the bitmap and its index", path=path, offset=12
            )
        end = self._size - rawsz  # where the optional sections and the trailer end
        self.hash_cache_at = -1
        # Git's load_bitmap_header: each optional section must fit, with its wording
        if options & OPT_HASH_CACHE:
            end -= 4 * self.hash_count
            self.hash_cache_at = end
            if end < 12 + rawsz:
                raise BitmapError(
                    "corrupted bitmap index file (too short to fit hash cache)",
                    path=path,
                    offset=self._size,
                )
        if options & OPT_LOOKUP_TABLE:
            end -= LOOKUP_TRIPLET * count
            if end < 12 + rawsz:
                raise BitmapError(
                    "corrupted bitmap index file (too short to fit lookup table)",
                    path=path,
                    offset=self._size,
                )
        at = 12 + rawsz
        # As Git, the bitmaps are bounded by the file's end (not by the sections
        # after them), so a file cut short reports what Git reports.  Entries are
        # parsed one by one: a count the file cannot hold stops at its end.
        types = []
        for _ in TYPE_NAMES:
            try:
                bits, _size, at = read_ewah(buf, at, path=path, max_bits=n)
            except BitmapError as e:
                raise _load_failed(e) from None
            types.append(bits)
        self.types: tuple[int, ...] = tuple(types)
        self._entries: list[_Entry] = []
        self._by_pos: dict[int, int] = {}
        end = self._size
        for i in range(count):
            if at + 6 > end:
                raise BitmapError(
                    f"corrupt ewah bitmap: truncated header for entry {i}", path=path, offset=at
                )
            pos, xor, flags = struct.unpack_from(">IBB", buf, at)
            if pos >= n:
                raise BitmapError(
                    f"bitmap entry {i}: commit position {pos} out of range ({n} objects)",
                    path=path,
                    offset=at,
                )
            if xor > MAX_XOR_OFFSET or xor > i:
                raise BitmapError(
                    f"bitmap entry {i}: bad XOR offset {xor}", path=path, offset=at + 4
                )
            ewah_at = at + 6
            try:
                at = ewah_end(buf, ewah_at, path=path)
            except BitmapError as e:
                raise _load_failed(e) from None
            self._by_pos[pos] = i
            self._entries.append(_Entry(pos, xor, flags, ewah_at))

    # -- access --------------------------------------------------------------
    def commit_positions(self) -> list[int]:
        """Id-order positions of the bitmapped commits, in file order."""
        return [e.index_pos for e in self._entries]

    def has(self, index_pos: int) -> bool:
        """True if the commit at id-order position ``index_pos`` has a bitmap."""
        return index_pos in self._by_pos

    def bitmap(self, index_pos: int) -> int | None:
        """The reachability bitmap of the commit at ``index_pos`` (None: not bitmapped)."""
        i = self._by_pos.get(index_pos)
        return None if i is None else self._entry_bits(i)

    def _entry_bits(self, i: int) -> int:
        # XOR chains resolve iteratively, base first; each decoded bitmap is kept.
        chain = []
        j = i
        acc = 0
        while True:
            known = self._decoded.get(j)
            if known is not None:
                acc = known
                break
            chain.append(j)
            xor = self._entries[j].xor_offset
            if not xor:
                break
            j -= xor
        for k in reversed(chain):
            bits, _size, _end = read_ewah(
                self._buf, self._entries[k].ewah_at, path=self.path, max_bits=self.num_objects
            )
            # An entry without an XOR offset starts the chain: acc is 0 then.
            acc = bits ^ acc
            self._decoded[k] = acc
        return self._decoded[i]

    def name_hash_at(self, index_pos: int) -> int | None:
        """The name-hash cache value of the object at id-order position (None: no cache)."""
        if self.hash_cache_at < 0 or not 0 <= index_pos < self.hash_count:
            return None
        (v,) = struct.unpack_from(">I", self._buf, self.hash_cache_at + 4 * index_pos)
        return int(v)

    def close(self) -> None:
        """Release the mapping."""
        release_mapping(self._buf, self._map)


class BitmappedObjects:
    """A bitmap with the ids it is about: bit positions to ids and back.

    ``oid_at(bit)`` and ``position(oid)`` translate; ``bitmap_of(oid)`` is the
    stored reachability of a bitmapped commit; ``types[k]`` are the type bitmaps
    (commit, tree, blob, tag).
    """

    def __init__(
        self,
        index: BitmapIndex,
        count: int,
        find: Callable[[bytes], int],
        oid_at_index: Callable[[int], bytes],
        order: array[int] | list[int],
        *,
        pack_paths: list[str],
    ) -> None:
        self.index = index
        self.count = count
        self._find = find
        self._oid_at_index = oid_at_index
        self._order = order  # bit position -> id-order position
        self._inverse: array[int] | None = None
        #: the ``.pack`` files whose objects the bits stand for
        self.pack_paths = pack_paths

    @property
    def types(self) -> tuple[int, ...]:
        """The commit, tree, blob and tag bitmaps."""
        return self.index.types

    def _inv(self) -> array[int]:
        if self._inverse is None:
            inv = array("I", bytes(4 * self.count))
            for bit, pos in enumerate(self._order):
                inv[pos] = bit
            self._inverse = inv
        return self._inverse

    def position(self, oid: bytes) -> int:
        """Bit position of ``oid``, or -1 if the bitmapped objects do not hold it."""
        pos = self._find(oid)
        return self._inv()[pos] if pos >= 0 else -1

    def oid_at(self, bit: int) -> bytes:
        """The id of bit position ``bit``."""
        return self._oid_at_index(self._order[bit])

    def bitmap_of(self, oid: bytes) -> int | None:
        """The stored reachability bitmap of commit ``oid`` (None: it has none)."""
        pos = self._find(oid)
        return self.index.bitmap(pos) if pos >= 0 else None

    def type_of_bit(self, bit: int) -> str | None:
        """``commit``, ``tree``, ``blob`` or ``tag`` for bit position ``bit``."""
        for name, bits in zip(TYPE_NAMES, self.index.types, strict=True):
            if bits >> bit & 1:
                return name
        return None

    def oids(self, bits: int) -> Iterator[bytes]:
        """The ids of the positions set in ``bits``, in bit (pack) order."""
        for b in iter_bits(bits):
            yield self.oid_at(b)

    def close(self) -> None:
        """Release the bitmap file."""
        self.index.close()


def _midx_bitmap(
    objects_dir: str, fmt: ObjectFormat, midx: MultiPackIndex
) -> BitmappedObjects | None:
    path = os.path.join(
        os.path.dirname(midx.path), f"multi-pack-index-{midx.checksum.hex()}.bitmap"
    )
    if not os.path.exists(path):
        return None
    order = midx.reverse_index()
    if order is None:
        report("warning", "multi-pack bitmap is missing required reverse index")
        return None
    index = BitmapIndex(path, fmt, num_objects=midx.count, checksum=midx.checksum)
    pack_dir = os.path.dirname(midx.path)
    return BitmappedObjects(
        index,
        midx.count,
        midx.find,
        midx.oid_at,
        order,
        pack_paths=[os.path.join(pack_dir, n[:-4] + ".pack") for n in midx.pack_names],
    )


class ChainBitmapIndex:
    """The bitmaps of an incremental MIDX chain's layers, base first, as one index.

    Bit positions and commit positions are global (each layer's count on from the
    layers below); a commit's bitmap is in the layer that holds the commit, and each
    layer's type bitmaps cover its own objects, so the chain's are their union.
    """

    def __init__(self, layers: list[BitmapIndex]) -> None:
        self.layers = layers
        types = [0, 0, 0, 0]
        for layer in layers:
            for k, bits in enumerate(layer.types):
                types[k] |= bits
        self.types: tuple[int, ...] = tuple(types)

    def commit_positions(self) -> list[int]:
        """Global id-order positions of the bitmapped commits, layer by layer."""
        return [p for layer in self.layers for p in layer.commit_positions()]

    def has(self, index_pos: int) -> bool:
        """True if some layer has a bitmap for the commit at ``index_pos``."""
        return any(layer.has(index_pos) for layer in self.layers)

    def bitmap(self, index_pos: int) -> int | None:
        """The reachability bitmap of the commit at global ``index_pos``."""
        for layer in reversed(self.layers):
            bits = layer.bitmap(index_pos)
            if bits is not None:
                return bits
        return None

    def close(self) -> None:
        """Release every layer's file."""
        for layer in self.layers:
            layer.close()


def _chain_bitmap(fmt: ObjectFormat, chain: MidxSet) -> BitmappedObjects | None:
    """The bitmap of a MIDX chain (every layer must have one), None if its top has none."""
    layers = chain.layers
    paths = [
        os.path.join(os.path.dirname(m.path), f"multi-pack-index-{m.checksum.hex()}.bitmap")
        for m in layers
    ]
    if not os.path.exists(paths[-1]):
        return None
    order: list[int] = []
    indexes: list[BitmapIndex] = []
    try:
        for m, path in zip(layers, paths, strict=True):
            rev = m.reverse_index()
            if rev is None:
                raise BitmapError(
                    f"could not load reverse index for MIDX {m.checksum.hex()}", path=m.path
                )
            order.extend(m.base_objects + i for i in rev)
            indexes.append(
                BitmapIndex(
                    path,
                    fmt,
                    num_objects=m.base_objects + m.count,
                    checksum=m.checksum,
                    hash_count=m.count,
                )
            )
    except BaseException:
        for index in indexes:
            index.close()
        raise
    bases = [m.base_objects for m in layers]

    def find(oid: bytes) -> int:
        for m in reversed(layers):
            i = m.find(oid)
            if i >= 0:
                return m.base_objects + i
        return -1

    def oid_at(pos: int) -> bytes:
        m = layers[bisect.bisect_right(bases, pos) - 1]
        return m.oid_at(pos - m.base_objects)

    pack_dir = os.path.dirname(os.path.dirname(layers[-1].path))
    return BitmappedObjects(
        ChainBitmapIndex(indexes),  # type: ignore[arg-type]
        chain.count,
        find,
        oid_at,
        order,
        pack_paths=[os.path.join(pack_dir, n[:-4] + ".pack") for n in chain.pack_names],
    )


def _pack_bitmap(pack: PackFile) -> BitmappedObjects:
    path = pack.path[:-5] + ".bitmap"
    index = BitmapIndex(path, pack.fmt, num_objects=pack.count, checksum=pack.idx.pack_checksum)
    return BitmappedObjects(
        index, pack.count, pack.idx.find, pack.idx.oid_at, pack.rev_order, pack_paths=[pack.path]
    )


def open_bitmap(
    objects_dir: str,
    fmt: ObjectFormat,
    *,
    midx: MultiPackIndex | MidxSet | None,
    packs: list[PackFile],
) -> BitmappedObjects | None:
    """The bitmap Git would use for ``objects_dir``: the MIDX's if it has one, else
    the first pack's (None: none usable).

    As Git, a damaged bitmap is reported (``error:``) and not used; a MIDX bitmap
    without a reverse index is reported as a warning.
    """
    found: BitmappedObjects | None = None
    try:
        if isinstance(midx, MidxSet):
            chain, midx = midx, midx.layers[-1] if len(midx.layers) == 1 else None
            if midx is None:
                found = _chain_bitmap(fmt, chain)
        if midx is not None:
            found = _midx_bitmap(objects_dir, fmt, midx)
        pack_dir = os.path.join(objects_dir, "pack")
        for pack in packs:
            if found is not None and not trace2.recording:
                break  # Git looks for other bitmaps only to report them to trace2
            if os.path.dirname(pack.path) != pack_dir or not os.path.exists(
                pack.path[:-5] + ".bitmap"
            ):
                continue
            if found is not None:  # Git uses one bitmap
                trace2.data("bitmap", "ignoring extra bitmap file", pack.path)
                continue
            found = _pack_bitmap(pack)
            trace2.data("bitmap", "opened bitmap file", pack.path)
    except (BitmapError, MultiPackIndexError) as e:
        for line in e.details:
            report("error", line)
        report("error", str(e))
        if found is not None:
            found.close()
        return None
    except PackError as e:
        report("error", str(e))
        if found is not None:
            found.close()
        return None
    return found
