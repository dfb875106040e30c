"""Tree objects: a sequence of ``<octal mode> <name>\\0<binary id>`` entries.

``iter_tree`` is the one tree parser.  It accepts exactly what Git's
``decode_tree_entry`` accepts and fails with Git's messages (``too-short tree
object``, ``malformed mode in tree entry``, ``empty filename in tree entry``).
``Tree`` wraps it: entries in stored (Git's) order, lookup by name, and
``serialize()`` giving back the same bytes.

Example::

    t = Tree(data, SHA1)
    for entry in t: entry.mode, entry.name, entry.id
    t[b"README"].id;  b"src" in t
    Tree.create([(0o100644, b"a", blob_id), (0o040000, b"d", tree_id)])
"""

from __future__ import annotations

from gitodb.errors import ObjectFormatError, ObjectParseError
from gitodb.objects.format import SHA1, ObjectFormat, as_oid
from gitodb.objects.stored import StoredObject
from gitodb.types import NamedTuple, Protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable, Iterator

S_IFMT = 0o170000
S_IFDIR = 0o040000
S_IFREG = 0o100000
S_IFLNK = 0o120000
S_IFGITLINK = 0o160000

#: Git's default ``core.maxTreeDepth``: how deep a walk descends before it fails
DEFAULT_MAX_TREE_DEPTH = 2048


class _IntConfig(Protocol):
    def get_int(self, key: str, default: int) -> int: ...


def max_tree_depth(config: _IntConfig) -> int:
    """``core.maxTreeDepth``: how many trees deep a walk may go below its root
    (Git's fail-safe; a deeper tree raises ``TreeDepthError``)."""
    return config.get_int("core.maxtreedepth", DEFAULT_MAX_TREE_DEPTH)


# Modes Git writes; creating a tree with any other mode is refused.
VALID_MODES = (0o100644, 0o100755, 0o120000, 0o040000, 0o160000)


class TreeEntry(NamedTuple):
    """One tree entry: ``mode`` as stored (see ``canonical_mode``), ``name``, ``id``."""

    mode: int
    name: bytes
    id: bytes

    @property
    def oid(self) -> bytes:
        """The entry's object id (same as ``id``)."""
        return self.id

    @property
    def object_type(self) -> str:
        """The type the mode implies: ``tree``, ``commit`` (submodule) or ``blob``."""
        kind = self.mode & S_IFMT
        if kind == S_IFDIR:
            return "tree"
        if kind == S_IFGITLINK:
            return "commit"
        return "blob"

    @property
    def is_tree(self) -> bool:
        """True for a subdirectory."""
        return self.mode & S_IFMT == S_IFDIR


def canonical_mode(mode: int) -> int:
    """Git's ``canon_mode``: regular files become 100644 or 100755."""
    kind = mode & S_IFMT
    if kind == S_IFREG:
        return S_IFREG | (0o755 if mode & 0o100 else 0o644)
    if kind == S_IFLNK:
        return S_IFLNK
    if kind == S_IFDIR:
        return S_IFDIR
    return S_IFGITLINK


_ENTRY_RE: dict[int, tuple[re.Pattern[bytes], re.Pattern[bytes]]] = {}


def _entry_re(rawsz: int) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """(one entry, a whole well-formed tree) for ids of ``rawsz`` bytes."""
    pats = _ENTRY_RE.get(rawsz)
    if pats is None:
        import re  # (here: a command that parses no tree in Python never imports it)

        entry = rb"([0-7]+) ([^\0]+)\0(.{%d})" % rawsz
        whole = rb"(?:[0-7]+ [^\0]+\0.{%d})*" % rawsz
        pats = _ENTRY_RE[rawsz] = (re.compile(entry, re.S), re.compile(whole, re.S))
    return pats


def parse_entries(
    data: bytes, rawsz: int, *, path: str | None = None
) -> list[tuple[bytes, bytes, bytes]]:
    """``[(mode text, name, id)]`` of a tree's content; ``ObjectParseError`` like Git."""
    entry, whole = _entry_re(rawsz)
    if whole.fullmatch(data) is not None:
        return entry.findall(data)
    pos = 0
    for m in entry.finditer(data):
        if m.start() != pos:
            break
        pos = m.end()
    _fail_at(data, pos, rawsz, path)
    raise AssertionError("unreachable")  # pragma: no cover


def _fail_at(data: bytes, pos: int, rawsz: int, path: str | None) -> None:
    """Raise the error Git's ``decode_tree_entry`` gives for the entry at ``pos``."""
    end = len(data)
    if end - pos < rawsz + 3 or data[end - rawsz - 1] != 0:
        raise ObjectParseError("too-short tree object", path=path, offset=pos)
    space = data.find(b" ", pos)
    mode = data[pos:space] if space >= 0 else data[pos:]
    if data[pos] == 0x20 or space < 0 or not mode or any(c < 0x30 or c > 0x37 for c in mode):
        raise ObjectParseError("malformed mode in tree entry", path=path, offset=pos)
    if data[space + 1] == 0:
        raise ObjectParseError("empty filename in tree entry", path=path, offset=space + 1)
    # A NUL at end - rawsz - 1 exists, so the name ends and its id fits: Git would go
    # on; the regex only stops here for such input when the id overlaps the end.
    raise ObjectParseError("too-short tree object", path=path, offset=pos)


def iter_tree(data: bytes, rawsz: int, *, path: str | None = None) -> Iterator[TreeEntry]:
    """Yield the entries of a tree object's content; raise ``ObjectParseError``."""
    for mode, name, oid in parse_entries(data, rawsz, path=path):
        yield TreeEntry(int(mode, 8), name, oid)


def parse_tree(data: bytes, rawsz: int, *, path: str | None = None) -> list[TreeEntry]:
    """All entries of a tree object's content."""
    return list(iter_tree(data, rawsz, path=path))


def tree_sort_key(name: bytes, mode: int) -> bytes:
    """Git's tree order: names compared bytewise, a directory as if it ended in ``/``."""
    return name + b"/" if mode & S_IFMT == S_IFDIR else name


class Tree(StoredObject):
    """A tree: its entries in stored order, iteration, ``len``, lookup by name."""

    type_name = "tree"
    __slots__ = ("_entries", "_modes", "_by_name")

    def __init__(self, data: bytes, fmt: ObjectFormat = SHA1, oid: bytes | None = None) -> None:
        super().__init__(data, fmt, oid)
        self._entries: list[TreeEntry] | None = None
        self._modes: dict[int, bytes] = {}  # entries whose mode text is not "%o" % mode
        self._by_name: dict[bytes, TreeEntry] | None = None

    @property
    def entries(self) -> list[TreeEntry]:
        """The entries as stored (Git writes them in ``tree_sort_key`` order)."""
        if self._entries is None:
            parsed = parse_entries(self.raw, self.fmt.rawsz)
            make = TreeEntry._make
            entries = [make((int(m, 8), n, i)) for m, n, i in parsed]
            for i, (mode_text, _n, _i) in enumerate(parsed):
                if mode_text[:1] == b"0":  # zero-padded mode (old Git): keep the text
                    self._modes[i] = mode_text
            self._entries = entries
        return self._entries

    def __iter__(self) -> Iterator[TreeEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, name: bytes | str) -> TreeEntry | None:
        """The entry called ``name``, or None."""
        if self._by_name is None:
            self._by_name = {e.name: e for e in self.entries}
        key = name.encode("utf-8", "surrogateescape") if isinstance(name, str) else name
        return self._by_name.get(key)

    def __getitem__(self, name: bytes | str) -> TreeEntry:
        entry = self.get(name)
        if entry is None:
            raise KeyError(name)
        return entry

    def __contains__(self, name: object) -> bool:
        return isinstance(name, (bytes, str)) and self.get(name) is not None

    def serialize(self) -> bytes:
        """The content, rebuilt from the parsed entries."""
        modes = self._modes
        parts = []
        for i, e in enumerate(self.entries):
            mode = modes.get(i) or b"%o" % e.mode
            parts.append(b"%s %s\0%s" % (mode, e.name, e.id))
        return b"".join(parts)

    def __repr__(self) -> str:
        return f"Tree({self.id.hex()})"

    @classmethod
    def create(
        cls, entries: Iterable[tuple[int, bytes | str, str | bytes]], fmt: ObjectFormat = SHA1
    ) -> Tree:
        """A tree of ``(mode, name, id)`` entries, sorted into Git's order.

        Refuses (``ObjectFormatError``) what Git's fsck calls a bad tree: an empty
        name, ``.``/``..``, a ``/`` or NUL in a name, a duplicate, a mode Git does
        not write.
        """
        items = []
        for mode, name, oid in entries:
            bname = name.encode("utf-8", "surrogateescape") if isinstance(name, str) else name
            if not bname or bname in (b".", b"..") or b"/" in bname or b"\0" in bname:
                raise ObjectFormatError(f"invalid tree entry name {bname!r}")
            if mode not in VALID_MODES:
                raise ObjectFormatError(f"invalid mode {mode:o} for tree entry {bname!r}")
            items.append((tree_sort_key(bname, mode), TreeEntry(mode, bname, as_oid(fmt, oid))))
        items.sort(key=lambda item: item[0])
        names = {e.name for _k, e in items}
        if len(names) != len(items):
            dup = next(
                e.name
                for i, (_k, e) in enumerate(items)
                if any(e.name == o.name for _k2, o in items[:i])
            )
            raise ObjectFormatError(f"duplicate tree entry {dup!r}")
        data = b"".join(b"%o %s\0%s" % (e.mode, e.name, e.id) for _k, e in items)
        return cls(data, fmt)
