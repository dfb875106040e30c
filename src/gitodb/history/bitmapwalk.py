"""Reachability through bitmaps: "the objects reachable from these, minus those".

``reachable_with_bitmap(odb, include, exclude)`` answers as Git's
``prepare_bitmap_walk`` does: the bitmap of each starting point is the stored
one when the commit has one; otherwise the objects are walked (commits to their
parents and trees, trees to their entries, tags to what they point at) until a
commit with a stored bitmap or an object already counted is reached.  The
excluded side is computed first and the included walk stops at anything it
holds.  Objects that are not in the bitmapped pack or MIDX (loose, or in other
packs) are kept beside the bits, in the order they were reached, as Git's
"extended index" keeps them.

``BitmapReach.oids()`` lists the result in the order ``git rev-list
--use-bitmap-index`` prints it: the bitmapped commits, trees, blobs and tags in
pack order, type by type, then the other objects of those types in the order
they were reached.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gitodb.errors import GitodbError, ObjectParseError
from gitodb.objects.commit import parse_commit_links
from gitodb.objects.tree import iter_tree
from gitodb.pack.bitmap import TYPE_NAMES, BitmappedObjects, open_bitmap
from gitodb.pack.ewah import iter_bits

if TYPE_CHECKING:
    from gitodb.objects.filter import ObjectFilter
    from gitodb.repo.odb import ObjectDatabase

__all__ = [
    "BitmapReach",
    "bitmap_can_filter",
    "check_commit_bitmap",
    "filter_reach",
    "open_repository_bitmap",
    "peeled_tips",
    "reachable_with_bitmap",
]

_GITLINK = 0o160000
_TREE = 0o040000


@dataclass
class BitmapReach:
    """The result: ``bits`` over ``bitmap``'s objects and ``extra`` (id -> type) for
    objects outside it, in the order they were reached."""

    bitmap: BitmappedObjects
    bits: int
    extra: dict[bytes, str] = field(default_factory=dict)

    def count(self, types: Iterable[str] = TYPE_NAMES) -> int:
        """How many objects of ``types`` are reachable."""
        wanted = set(types)
        n = 0
        for name, tbits in zip(TYPE_NAMES, self.bitmap.types, strict=True):
            if name in wanted:
                n += (self.bits & tbits).bit_count()
        return n + sum(1 for t in self.extra.values() if t in wanted)

    def oids(self, types: Iterable[str] = TYPE_NAMES) -> Iterator[bytes]:
        """Ids of ``types`` in ``rev-list --use-bitmap-index`` order."""
        wanted = set(types)
        for name, tbits in zip(TYPE_NAMES, self.bitmap.types, strict=True):
            if name in wanted:
                for b in iter_bits(self.bits & tbits):
                    yield self.bitmap.oid_at(b)
        for oid, t in self.extra.items():
            if t in wanted:
                yield oid


def open_repository_bitmap(odb: ObjectDatabase) -> BitmappedObjects | None:
    """The bitmap of ``odb``'s own object directory that Git would use, or None."""
    odb.rescan_packs()
    entry = odb.midx.get(odb.objects_dir)
    midx = entry[0] if entry is not None else None  # one MIDX or a chain of layers
    own = [p for p in odb.packs if p.path.startswith(odb.objects_dir + "/")]
    return open_bitmap(odb.objects_dir, odb.fmt, midx=midx, packs=own)


class _Side:
    """One side of the walk: bits over the bitmap and the objects outside it.

    Testing or setting one bit of a Python int copies the whole int (the walk does
    it for every object it meets, a million times on libgit2.git), so the objects
    walked are bits of a ``bytearray`` and the stored bitmaps taken are ORed into
    one int, whose bytes are looked at only after it changed."""

    def __init__(self, bitmap: BitmappedObjects, *, by_type: bool = False) -> None:
        self.bitmap = bitmap
        self._walked = bytearray((bitmap.count + 7) // 8)
        self._stored = 0
        self._stored_bytes: bytes | None = b""
        self.extra: dict[bytes, str] = {}
        #: with ``by_type``, the bits of each type as the objects themselves say
        self.by_type: dict[str, int] | None = dict.fromkeys(TYPE_NAMES, 0) if by_type else None

    @property
    def bits(self) -> int:
        """Every position held: the objects walked and the stored bitmaps taken."""
        return self._stored | int.from_bytes(self._walked, "little")

    def add_stored(self, stored: int) -> None:
        """Take a stored bitmap (every object a bitmapped commit reaches)."""
        self._stored |= stored
        self._stored_bytes = None

    def add_position(self, pos: int) -> None:
        """Hold the object at bit position ``pos``."""
        self._walked[pos >> 3] |= 1 << (pos & 7)

    def has(self, oid: bytes, pos: int) -> bool:
        if pos < 0:
            return oid in self.extra
        if self._walked[pos >> 3] >> (pos & 7) & 1:
            return True
        stored = self._stored_bytes
        if stored is None:
            size = max(len(self._walked), (self._stored.bit_length() + 7) // 8)
            stored = self._stored_bytes = self._stored.to_bytes(size, "little")
        return pos >> 3 < len(stored) and bool(stored[pos >> 3] >> (pos & 7) & 1)


def _walk(
    odb: ObjectDatabase,
    bitmap: BitmappedObjects,
    tips: Iterable[bytes],
    side: _Side,
    stop: _Side | None,
    *,
    use_stored: bool = True,
) -> None:
    """Add to ``side`` everything reachable from ``tips`` that ``stop`` does not hold
    (``use_stored=False``: walk every object, never taking a stored bitmap)."""
    fmt = odb.fmt
    rawsz = fmt.rawsz
    stack: list[tuple[bytes, str | None]] = [(t, None) for t in tips]
    stack.reverse()
    while stack:
        oid, known_type = stack.pop()
        pos = bitmap.position(oid)
        if side.has(oid, pos) or (stop is not None and stop.has(oid, pos)):
            continue
        if known_type == "blob":
            _add(side, oid, pos, "blob")
            continue
        if use_stored and (known_type is None or known_type == "commit"):
            stored = bitmap.bitmap_of(oid) if pos >= 0 else None
            if stored is not None:
                side.add_stored(stored)
                continue
        kind, data = odb.read(oid)
        _add(side, oid, pos, kind)
        if kind == "commit":
            tree, parents, _end = parse_commit_links(data, fmt)
            # Parents first on the stack's far side: the tree is walked first.
            stack.extend((p, "commit") for p in reversed(parents))
            stack.append((tree, "tree"))
        elif kind == "tree":
            children = []
            for mode, _name, child in iter_tree(data, rawsz):
                if mode == _GITLINK:
                    continue
                children.append((child, "tree" if mode == _TREE else "blob"))
            stack.extend(reversed(children))
        elif kind == "tag":
            target = _tag_target(data, fmt.hexsz)
            stack.append((target, None))


def _add(side: _Side, oid: bytes, pos: int, kind: str) -> None:
    if pos >= 0:
        side.add_position(pos)
        if side.by_type is not None:
            side.by_type[kind] |= 1 << pos
    else:
        side.extra[oid] = kind


def _tag_target(data: bytes, hexsz: int) -> bytes:
    if not data.startswith(b"object ") or data[7 + hexsz : 8 + hexsz] != b"\n":
        raise ObjectParseError("bad tag: no object line", reason="corrupt")
    try:
        return bytes.fromhex(data[7 : 7 + hexsz].decode("ascii"))
    except ValueError:
        raise ObjectParseError("bad tag: object id is not hex", reason="corrupt") from None


def reachable_with_bitmap(
    odb: ObjectDatabase,
    include: Iterable[bytes],
    exclude: Iterable[bytes] = (),
    *,
    bitmap: BitmappedObjects | None = None,
) -> BitmapReach | None:
    """Objects reachable from ``include`` and not from ``exclude`` (binary ids of any
    type: tags are followed), computed with the repository's bitmap.

    Returns None when there is no usable bitmap (the caller walks without one, as
    Git does).  Reads objects through ``odb``; missing or damaged objects raise
    the ``GitodbError`` the read raises.
    """
    if bitmap is None:
        bitmap = open_repository_bitmap(odb)
        if bitmap is None:
            return None
    haves = _Side(bitmap)
    _walk(odb, bitmap, list(exclude), haves, None)
    wants = _Side(bitmap)
    _walk(odb, bitmap, list(include), wants, haves)
    extra = {o: t for o, t in wants.extra.items() if o not in haves.extra}
    return BitmapReach(bitmap, wants.bits & ~haves.bits, extra)


def bitmap_can_filter(spec: ObjectFilter) -> bool:
    """Git's ``can_filter_bitmap``: the filters a bitmap result can be cut by
    (``blob:none``, ``blob:limit``, ``tree:0``, ``object:type``, and combinations
    of those); a path or depth filter needs the walk."""
    if spec.kind == "combine":
        return all(bitmap_can_filter(p) for p in spec.parts)
    if spec.kind == "tree":
        return spec.limit == 0
    return spec.kind in ("blob:none", "blob:limit", "object:type")


def filter_reach(
    reach: BitmapReach,
    spec: ObjectFilter,
    tips: Iterable[bytes],
    size_of: Callable[[bytes], int],
) -> None:
    """Git's ``filter_bitmap``: drop from ``reach`` what ``spec`` filters out (one
    ``bitmap_can_filter`` allows).  The ``tips`` (the objects asked for, and what
    their tags point at; none with ``--filter-provided-objects``) are never
    dropped, as the walk's filters never drop them; ``size_of`` gives a blob's
    size for ``blob:limit``."""
    bitmap = reach.bitmap
    tip_set = set(tips)
    tip_bits = 0
    for oid in tip_set:
        pos = bitmap.position(oid)
        if pos >= 0:
            tip_bits |= 1 << pos
    type_bits = dict(zip(TYPE_NAMES, bitmap.types, strict=True))

    def drop_type(name: str) -> None:
        reach.bits &= ~(type_bits[name] & ~tip_bits)
        for oid in [o for o, t in reach.extra.items() if t == name and o not in tip_set]:
            del reach.extra[oid]

    def apply(f: ObjectFilter) -> None:
        if f.kind == "combine":
            for part in f.parts:
                apply(part)
        elif f.kind == "blob:none":
            drop_type("blob")
        elif f.kind == "tree":  # tree:0: no trees, and so no blobs
            drop_type("tree")
            drop_type("blob")
        elif f.kind == "object:type":
            for name in TYPE_NAMES:
                if name != f.value:
                    drop_type(name)
        elif f.kind == "blob:limit":
            big = 0
            for b in iter_bits(reach.bits & type_bits["blob"] & ~tip_bits):
                if size_of(bitmap.oid_at(b)) >= f.limit:
                    big |= 1 << b
            reach.bits &= ~big
            for oid in [o for o, t in reach.extra.items() if t == "blob" and o not in tip_set]:
                if size_of(oid) >= f.limit:
                    del reach.extra[oid]
        else:
            raise ValueError(f"the bitmap cannot answer the {f.kind} filter")

    apply(spec)


def peeled_tips(odb: ObjectDatabase, oids: Iterable[bytes]) -> list[bytes]:
    """The objects named and, for tags, every object down their chains (Git's
    ``wants`` list of ``prepare_bitmap_walk``)."""
    out = []
    for oid in oids:
        out.append(oid)
        kind, data = odb.read(oid)
        while kind == "tag":
            oid = _tag_target(data, odb.fmt.hexsz)
            out.append(oid)
            kind, data = odb.read(oid)
    return out


def check_commit_bitmap(
    odb: ObjectDatabase, tips: Sequence[bytes], peel: Callable[[bytes], bytes]
) -> tuple[int, int]:
    """Git's ``rev-list --test-bitmap <commit>``: the stored bitmap of the one tip
    (``peel`` makes it a commit) against a walk of every object it reaches, and
    each walked object against the type bitmaps.  Returns ``(stored bitmaps, bits
    set)``; raises ``GitodbError`` with Git's message, in Git's order of checks,
    when there is no bitmap, not one tip, the tip has no bitmap, or they disagree.
    """
    bitmap = open_repository_bitmap(odb)
    if bitmap is None:
        raise GitodbError("failed to load bitmap indexes")
    try:
        if len(tips) != 1:
            raise GitodbError("you must specify exactly one commit to test")
        tip = peel(tips[0])
        stored = bitmap.bitmap_of(tip)
        if stored is None:
            raise GitodbError(f"commit '{tip.hex()}' doesn't have an indexed bitmap")
        walked = _Side(bitmap, by_type=True)
        _walk(odb, bitmap, [tip], walked, None, use_stored=False)
        for oid in walked.extra:
            raise GitodbError(f"object not in bitmap: '{oid.hex()}'")
        assert walked.by_type is not None
        for name, type_bits in zip(TYPE_NAMES, bitmap.types, strict=True):
            wrong = walked.by_type[name] & ~type_bits
            if wrong:
                bit = (wrong & -wrong).bit_length() - 1
                raise GitodbError(
                    f"object '{bitmap.oid_at(bit).hex()}': real type '{name}', "
                    f"expected: '{bitmap.type_of_bit(bit)}'"
                )
        if walked.bits != stored:
            raise GitodbError("mismatch in bitmap results")
        return len(bitmap.index.commit_positions()), stored.bit_count()
    finally:
        bitmap.close()
