"""Reading Git's index file (``.git/index``, versions 2, 3 and 4): its entries.

Only what naming objects needs is read: each entry's path, stage, mode and id
(``:<path>`` and ``:<n>:<path>`` in revision syntax).  Extensions and the stat
data are skipped; the trailing checksum is not checked (Git does not either
when it only reads).  A malformed file raises ``RepositoryError`` naming the file
and the offset of the damaged entry.

Layout (Documentation/gitformat-index): ``DIRC``, version, entry count; per
entry 40 bytes of stat data, the id, 16 bits of flags (stage in bits 12-13,
name length in the low 12), in version 3 a second flags word when the extended
bit is set, then the path: NUL-padded to a multiple of 8 in versions 2 and 3;
in version 4 prefix-compressed against the previous path (a varint of bytes
to drop from its end, then the NUL-terminated rest), unpadded.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gitodb.errors import RepositoryError
from gitodb.objects.format import ObjectFormat

if TYPE_CHECKING:
    from gitodb.repo import Repository

_HEADER = struct.Struct(">4sII")
_STAT_BYTES = 40
_EXTENDED = 0x4000


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One index entry: ``path`` (bytes), ``stage`` (0-3), ``mode``, ``oid``."""

    path: bytes
    stage: int
    mode: int
    oid: bytes


def index_path(repo: Repository) -> str:
    """The index file of ``repo``: ``GIT_INDEX_FILE`` or ``<git dir>/index``."""
    return os.environ.get("GIT_INDEX_FILE") or os.path.join(repo.gitdir, "index")


def read_index(path: str, fmt: ObjectFormat) -> list[IndexEntry]:
    """The entries of the index at ``path`` (an empty list when there is none)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as e:
        raise RepositoryError(f"unable to read index file: {e.strerror}", path=path) from None
    return parse_index(data, fmt, path)


def parse_index(data: bytes, fmt: ObjectFormat, path: str = "index") -> list[IndexEntry]:
    """Parse an index file's bytes (see the module docstring)."""
    return _parse_entries(data, fmt, path)[0]


def read_cache_tree(path: str, fmt: ObjectFormat) -> list[tuple[bytes, bytes]]:
    """The valid trees of the index's cache-tree (``TREE`` extension), as Git's
    ``add_cache_tree`` visits them: ``(directory path, tree id)``, the top first
    (path ``b""``), each directory before the ones inside it."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as e:
        raise RepositoryError(f"unable to read index file: {e.strerror}", path=path) from None
    _entries, pos = _parse_entries(data, fmt, path)
    end = len(data) - fmt.rawsz  # the trailing checksum
    while pos + 8 <= end:
        sig, size = data[pos : pos + 4], int.from_bytes(data[pos + 4 : pos + 8], "big")
        body = pos + 8
        if body + size > end:
            raise RepositoryError("index extension is truncated", path=path, offset=pos)
        if sig == b"TREE":
            out: list[tuple[bytes, bytes]] = []
            _cache_tree(data, body, body + size, b"", True, fmt.rawsz, out, path)
            return out
        pos = body + size
    return []


def _cache_tree(
    data: bytes,
    pos: int,
    end: int,
    base: bytes,
    top: bool,
    rawsz: int,
    out: list[tuple[bytes, bytes]],
    path: str,
) -> int:
    """One cache-tree node at ``pos`` (and its subtrees); the position after it."""
    nul = data.find(b"\0", pos, end)
    nl = data.find(b"\n", nul + 1, end) if nul >= 0 else -1
    if nul < 0 or nl < 0:
        raise RepositoryError("cache-tree entry is truncated", path=path, offset=pos)
    name = data[pos:nul]
    try:
        count_text, subtrees_text = data[nul + 1 : nl].split(b" ")
        count, subtrees = int(count_text), int(subtrees_text)
    except ValueError:
        raise RepositoryError("cache-tree entry is malformed", path=path, offset=pos) from None
    here = base if top else (base + b"/" + name if base else name)
    pos = nl + 1
    if count >= 0:
        if pos + rawsz > end:
            raise RepositoryError("cache-tree entry is truncated", path=path, offset=pos)
        out.append((here, data[pos : pos + rawsz]))
        pos += rawsz
    if subtrees < 0 or subtrees > end - pos:
        raise RepositoryError("cache-tree entry is malformed", path=path, offset=pos)
    for _ in range(subtrees):
        pos = _cache_tree(data, pos, end, here, False, rawsz, out, path)
    return pos


def _parse_entries(data: bytes, fmt: ObjectFormat, path: str) -> tuple[list[IndexEntry], int]:
    """The entries and the offset where the extensions begin."""
    if len(data) < _HEADER.size:
        raise RepositoryError("index file smaller than expected", path=path)
    magic, version, count = _HEADER.unpack_from(data)
    if magic != b"DIRC":
        raise RepositoryError(f"bad signature 0x{int.from_bytes(magic, 'big'):08x}", path=path)
    if version not in (2, 3, 4):
        raise RepositoryError(f"bad index version {version}", path=path)
    rawsz = fmt.rawsz
    fixed = _STAT_BYTES + rawsz + 2
    # each entry takes at least its fixed part: a count beyond that is damage
    if count > (len(data) - _HEADER.size) // (fixed + (0 if version == 4 else 2)):
        raise RepositoryError(f"index claims {count} entries, more than it holds", path=path)
    entries: list[IndexEntry] = []
    pos = _HEADER.size
    prev = b""
    for _ in range(count):
        start = pos
        if pos + fixed > len(data):
            raise RepositoryError("index entry is truncated", path=path, offset=start)
        mode = int.from_bytes(data[pos + 24 : pos + 28], "big")
        oid = data[pos + _STAT_BYTES : pos + _STAT_BYTES + rawsz]
        flags = int.from_bytes(data[pos + fixed - 2 : pos + fixed], "big")
        pos += fixed
        if flags & _EXTENDED:
            if version < 3:
                raise RepositoryError(
                    "extended flags in a version 2 index", path=path, offset=start
                )
            pos += 2
        if version == 4:
            drop, pos = _varint(data, pos, path, start)
            if drop > len(prev):
                raise RepositoryError(
                    "index entry drops more of the previous path than it has",
                    path=path,
                    offset=start,
                )
            nul = data.find(b"\0", pos)
            if nul < 0:
                raise RepositoryError("index entry is truncated", path=path, offset=start)
            name = prev[: len(prev) - drop] + data[pos:nul]
            pos = nul + 1
        else:
            nul = data.find(b"\0", pos)
            if nul < 0:
                raise RepositoryError("index entry is truncated", path=path, offset=start)
            name = data[pos:nul]
            # 1 to 8 NULs pad the entry to a multiple of 8 bytes
            pos = start + ((nul - start) // 8 + 1) * 8
            if pos > len(data):
                raise RepositoryError("index entry is truncated", path=path, offset=start)
        entries.append(IndexEntry(name, (flags >> 12) & 3, mode, oid))
        prev = name
    return entries, pos


def _varint(data: bytes, pos: int, path: str, start: int) -> tuple[int, int]:
    """Git's offset varint (as in OFS_DELTA): ``(value, position after it)``."""
    try:
        c = data[pos]
        value = c & 0x7F
        pos += 1
        while c & 0x80:
            if value > 1 << 56:
                raise RepositoryError("index path varint too long", path=path, offset=start)
            c = data[pos]
            value = ((value + 1) << 7) | (c & 0x7F)
            pos += 1
    except IndexError:
        raise RepositoryError("index entry is truncated", path=path, offset=start) from None
    return value, pos


def lookup_index(repo: Repository, path: str, stage: int = 0) -> IndexEntry | None:
    """The entry for ``path`` at ``stage`` in the repository's index, or None."""
    want = path.encode("utf-8", "surrogateescape")
    for e in read_index(index_path(repo), repo.object_format):
        if e.path == want and e.stage == stage:
            return e
    return None
