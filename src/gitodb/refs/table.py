"""A listing of refs as a few byte strings: no Python object per ref.

Commands that show or walk every ref (``for-each-ref``'s plain formats, ``rev-list
--all``) need the names and ids of thousands of refs, and one ``Ref`` per ref is
most of their work after start-up.  A ``RefTable`` holds them back to back:
``names`` (each name followed by ``\\n``, in strictly increasing byte order),
``starts`` (native uint32 offsets of each name in ``names``, and one more: its
length), ``ids`` (``rawsz`` bytes per ref), ``peeled`` (``rawsz`` bytes per ref,
zeros where none is known) and ``has_peeled`` (one byte per ref).  The native core
builds one from a ``packed-refs`` file (``_native.packed_refs_table``), overlays
loose refs (``_native.ref_table_overlay``) and formats it (``format_ref_table``);
``packed_table_python`` and ``overlay_python`` are their reference.

A ref store gives its table with ``RefStore.ref_table()`` (None where it cannot: the
caller lists ``iter_refs()`` instead).  The table lists the refs under ``refs/`` as
``for-each-ref`` and ``rev-list --all`` see them: a symbolic ref with the id it
resolves to, a dangling one left out.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.refs.base import Ref, RefStore

try:
    from gitodb._native import packed_refs_table as _packed_refs_table
    from gitodb._native import ref_table_overlay as _ref_table_overlay
except ImportError:  # built without a C compiler: the Python code below does it
    _packed_refs_table = None  # type: ignore[assignment]
    _ref_table_overlay = None  # type: ignore[assignment]

#: whether the native core builds tables (without it, listings use ``iter_refs``)
native = _packed_refs_table is not None

#: the five byte strings of a table, as the native core passes them
Parts = tuple[bytes, bytes, bytes, bytes, bytes]


class RefTable:
    """Names and ids of refs, sorted by name (see the module's docstring)."""

    __slots__ = ("parts", "rawsz", "_starts")

    def __init__(self, parts: Parts, rawsz: int) -> None:
        self.parts = parts
        self.rawsz = rawsz
        self._starts: memoryview | None = None

    def __len__(self) -> int:
        return len(self.parts[4])

    def _offsets(self) -> memoryview:
        if self._starts is None:
            self._starts = memoryview(self.parts[1]).cast("I")
        return self._starts

    @property
    def ids(self) -> bytes:
        """Every ref's id, ``rawsz`` bytes each, in name order."""
        return self.parts[2]

    def name_bytes(self, i: int) -> bytes:
        """The name of ref ``i``, as bytes."""
        st = self._offsets()
        return self.parts[0][st[i] : st[i + 1] - 1]

    def name(self, i: int) -> str:
        """The name of ref ``i`` (UTF-8 with surrogate escapes, as gitodb spells names)."""
        return self.name_bytes(i).decode("utf-8", "surrogateescape")

    def oid(self, i: int) -> bytes:
        """The id of ref ``i``."""
        r = self.rawsz
        return self.parts[2][i * r : (i + 1) * r]

    def peeled(self, i: int) -> bytes | None:
        """The peeled id stored with ref ``i`` (packed-refs' ``^`` line), or None."""
        if not self.parts[4][i]:
            return None
        r = self.rawsz
        return self.parts[3][i * r : (i + 1) * r]

    def names(self) -> list[str]:
        """Every ref's name, in order."""
        text = self.parts[0]
        if not text:
            return []
        return text[:-1].decode("utf-8", "surrogateescape").split("\n")

    def items(self, lo: int = 0, hi: int | None = None) -> list[tuple[str, bytes]]:
        """``(name, id)`` of the refs ``lo..hi-1`` (all by default), in order: one
        decode of their names, one slice per id."""
        n = len(self)
        hi = n if hi is None else hi
        if lo >= hi:
            return []
        st = self._offsets()
        names = self.parts[0][st[lo] : st[hi] - 1].decode("utf-8", "surrogateescape").split("\n")
        ids, r = self.parts[2], self.rawsz
        return list(zip(names, [ids[i * r : i * r + r] for i in range(lo, hi)], strict=True))

    def prefix_range(self, prefix: bytes) -> tuple[int, int]:
        """``(lo, hi)``: the refs ``lo..hi-1`` are those whose names start with ``prefix``
        (two bisections over the sorted names)."""
        lo = self._lower_bound(prefix)
        # the names with the prefix end before the least string above all of them
        # (the prefix with its last byte raised, past trailing 0xff bytes)
        top = prefix.rstrip(b"\xff")
        if top:
            return lo, self._lower_bound(top[:-1] + bytes([top[-1] + 1]))
        # empty or all 0xff: every name from ``lo`` on starts with the prefix (one
        # above it differs from it by a larger byte, and none is larger than 0xff)
        return lo, len(self)

    def _lower_bound(self, key: bytes) -> int:
        """The first ref whose name is not below ``key``."""
        lo, hi = 0, len(self)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.name_bytes(mid) < key:
                lo = mid + 1
            else:
                hi = mid
        return lo


def _build(entries: list[tuple[bytes, bytes, bytes | None]], rawsz: int) -> Parts:
    """The parts of a table of ``(name, id, peeled)`` entries, sorted and unique."""
    names = b"".join(n + b"\n" for n, _, _ in entries)
    # uint32 offsets, native order, as the native core reads them ("I" is 4 bytes
    # on every platform CPython supports; memoryview needs no import of ``array``,
    # which brings ``collections`` with it)
    starts = bytearray(4 * (len(entries) + 1))
    offsets = memoryview(starts).cast("I")
    at = 0
    for i, (n, _, _) in enumerate(entries):
        offsets[i] = at
        at += len(n) + 1
    offsets[len(entries)] = at
    offsets.release()
    zeros = bytes(rawsz)
    return (
        names,
        bytes(starts),
        b"".join(o for _, o, _ in entries),
        b"".join(p if p is not None else zeros for _, _, p in entries),
        bytes(p is not None for _, _, p in entries),
    )


def table_of(refs: list[Ref], rawsz: int) -> RefTable:
    """The table of ``refs`` (direct refs with ids, in strictly increasing byte order)."""
    entries = []
    for r in refs:
        assert r.oid is not None
        entries.append((r.name.encode("utf-8", "surrogateescape"), r.oid, r.peeled))
    return RefTable(_build(entries, rawsz), rawsz)


def packed_table_python(data: bytes, hexsz: int) -> Parts | bool | None:
    """``_native.packed_refs_table`` in Python: the parts of the table of a plainly valid
    ``packed-refs`` (``gitodb.refs.packed.parse_plain``'s contract) with its names in
    strictly increasing order; False when plain but not so ordered; None when not plain.
    """
    from gitodb.refs.packed import parse_plain_python  # the reference (no native core)

    refs = parse_plain_python(data, hexsz)
    if refs is None:
        return None
    # parse_plain keeps the last line of a name: a repeated name is fewer refs than lines
    lines = sum(1 for line in data.split(b"\n") if line and line[0] not in b"#^")
    names = list(refs)  # in file order (a dict keeps the place of a name's first line)
    if len(names) != lines or any(a >= b for a, b in zip(names, names[1:], strict=False)):
        return False
    entries = []
    for n, r in refs.items():
        assert r.oid is not None
        entries.append((n.encode("ascii"), r.oid, r.peeled))
    return _build(entries, hexsz // 2)


def packed_table(data: bytes, hexsz: int) -> RefTable | bool | None:
    """The ``RefTable`` of ``packed-refs`` ``data``, or as ``packed_table_python`` says."""
    got = (
        _packed_refs_table(data, hexsz)
        if _packed_refs_table is not None
        else packed_table_python(data, hexsz)
    )
    if got is None or isinstance(got, bool):
        return got
    return RefTable(got, hexsz // 2)


def overlay_python(parts: Parts, rawsz: int, names: list[bytes], ids: list[bytes | None]) -> Parts:
    """``_native.ref_table_overlay`` in Python: ``parts`` with ``names[k]`` set to
    ``ids[k]`` (no peeled value) or, for None, left out."""
    t = RefTable(parts, rawsz)
    merged: dict[bytes, tuple[bytes, bytes | None]] = {
        t.name_bytes(i): (t.oid(i), t.peeled(i)) for i in range(len(t))
    }
    for n, o in zip(names, ids, strict=True):
        if o is None:
            merged.pop(n, None)
        else:
            merged[n] = (o, None)
    return _build([(n, o, p) for n, (o, p) in sorted(merged.items())], rawsz)


def overlay(table: RefTable, names: list[bytes], ids: list[bytes | None]) -> RefTable:
    """``table`` with the refs ``names`` (strictly increasing bytes) set to ``ids`` (None:
    left out): loose refs over packed ones, in one merge pass."""
    if not names:
        return table
    if _ref_table_overlay is not None:
        parts = _ref_table_overlay(table.parts, table.rawsz, names, ids)
    else:
        parts = overlay_python(table.parts, table.rawsz, names, ids)
    return RefTable(parts, table.rawsz)


class RefRange:
    """Refs in name order, each a name and an id, whose names are decoded only when
    asked: ``rev-list --all`` starts from thousands of ids and names few of them.
    Either the refs ``lo..hi-1`` of a ``RefTable`` or a list of ``(name, id)``."""

    __slots__ = ("_table", "_lo", "_hi", "_items")

    def __init__(
        self,
        table: RefTable | None = None,
        lo: int = 0,
        hi: int = 0,
        items: list[tuple[str, bytes]] | None = None,
    ) -> None:
        self._table, self._lo, self._hi, self._items = table, lo, hi, items

    def __len__(self) -> int:
        return len(self._items) if self._items is not None else self._hi - self._lo

    def items(self) -> list[tuple[str, bytes]]:
        """Every ``(name, id)``, in order."""
        if self._items is not None:
            return self._items
        assert self._table is not None
        return self._table.items(self._lo, self._hi)

    def ids(self) -> list[bytes]:
        """Every id, in order (no name decoded)."""
        if self._items is not None:
            return [oid for _name, oid in self._items]
        assert self._table is not None
        r, block = self._table.rawsz, self._table.ids
        return [block[i : i + r] for i in range(self._lo * r, self._hi * r, r)]

    def name(self, i: int) -> str:
        """The name of the ``i``-th ref of the range."""
        if self._items is not None:
            return self._items[i][0]
        assert self._table is not None
        return self._table.name(self._lo + i)


def ref_range(store: RefStore, prefix: str = "") -> RefRange:
    """The refs under ``refs/`` whose names start with ``prefix``, in name order,
    symbolic refs resolved and dangling ones left out: what a walker's
    ``--all``/``--branches``/``--tags``/``--glob`` start from.  From the store's
    ``RefTable`` where it gives one (no ``Ref`` per ref); else ``iter_refs``, the
    reference, with each symbolic ref resolved."""
    table = store.ref_table()
    if table is None:
        out = []
        for ref in store.iter_refs(prefix):
            oid = ref.oid if ref.target is None else store.resolve(ref.name)
            if oid is not None:
                out.append((ref.name, oid))
        return RefRange(items=out)
    if not prefix:
        return RefRange(table, 0, len(table))
    return RefRange(table, *table.prefix_range(prefix.encode("utf-8", "surrogateescape")))
