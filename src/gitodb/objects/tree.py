"""Tree objects: a sequence of ``<octal mode> <name>\\0<binary id>`` entries."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from gitodb.errors import ObjectFormatError

S_IFMT = 0o170000
S_IFDIR = 0o040000
S_IFREG = 0o100000
S_IFLNK = 0o120000
S_IFGITLINK = 0o160000


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One tree entry; ``mode`` as stored (see ``canonical_mode``), ``name`` as bytes."""

    mode: int
    name: bytes
    oid: bytes

    @property
    def object_type(self) -> str:
        """The type the entry's mode implies: ``tree``, ``commit`` (submodule) or ``blob``."""
        kind = self.mode & S_IFMT
        if kind == S_IFDIR:
            return "tree"
        if kind == S_IFGITLINK:
            return "commit"
        return "blob"


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


def iter_tree(data: bytes, rawsz: int, *, path: str | None = None) -> Iterator[TreeEntry]:
    """Yield the entries of a tree object's content; raise ``ObjectFormatError``."""
    pos = 0
    end = len(data)
    while pos < end:
        sp = data.find(b" ", pos)
        if sp < 0:
            raise ObjectFormatError("malformed tree entry: no space after mode", path=path,
                                    offset=pos)
        mode_text = data[pos:sp]
        if not mode_text or not all(0x30 <= c <= 0x37 for c in mode_text):
            raise ObjectFormatError("malformed tree entry: bad mode", path=path, offset=pos)
        nul = data.find(b"\0", sp + 1)
        if nul < 0 or nul == sp + 1:
            raise ObjectFormatError("malformed tree entry: no name", path=path, offset=sp + 1)
        stop = nul + 1 + rawsz
        if stop > end:
            raise ObjectFormatError("malformed tree entry: truncated id", path=path,
                                    offset=nul + 1)
        yield TreeEntry(int(mode_text, 8), data[sp + 1:nul], data[nul + 1:stop])
        pos = stop


def parse_tree(data: bytes, rawsz: int, *, path: str | None = None) -> list[TreeEntry]:
    """All entries of a tree object's content."""
    return list(iter_tree(data, rawsz, path=path))
