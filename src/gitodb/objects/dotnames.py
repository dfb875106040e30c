"""Tree entry names that HFS+ or NTFS would take for ``.git``, ``.gitmodules``,
``.gitattributes``, ``.gitignore`` or ``.mailmap`` (Git's ``is_hfs_dot*`` and
``is_ntfs_dot*``, path.c and utf8.c), for fsck's tree checks.

HFS+ ignores some code points (zero-width joiners, direction marks, the byte-order
mark) and folds case: ``.Git\\u200c`` is ``.git`` there.  NTFS drops trailing spaces
and periods, stops at ``:`` (an alternate data stream), and has 8.3 short names:
``GIT~1``, ``gitmod~2``, or a fallback like ``gi7eba~1`` (Git's published prefixes).
Written from the behaviour Git documents and tests (t0060, t7450).
"""

from __future__ import annotations

__all__ = [
    "is_dotgit",
    "is_dotgitattributes",
    "is_dotgitignore",
    "is_dotgitmodules",
    "is_dotmailmap",
]

#: code points HFS+ ignores in names (Git's next_hfs_char)
_HFS_IGNORED = frozenset(
    [*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF]
)
#: the fallback 8.3 short-name prefixes Git checks for
_SHORT_PREFIX = {
    "gitmodules": "gi7eba",
    "gitattributes": "gi7d29",
    "gitignore": "gi250a",
    "mailmap": "maba30",
}


def _hfs_chars(name: bytes) -> list[int] | None:
    """The name's code points without those HFS+ ignores (None: not UTF-8)."""
    try:
        text = name.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return [ord(c) for c in text if ord(c) not in _HFS_IGNORED]


def _is_hfs_dot(name: bytes, needle: str) -> bool:
    chars = _hfs_chars(name)
    if chars is None:
        # Git reads byte by byte where UTF-8 fails: only ASCII can match the needle
        return name.lower() == ("." + needle).encode()
    if not chars or chars[0] != ord("."):
        return False
    rest = chars[1:]
    if len(rest) < len(needle):
        return False
    for c, want in zip(rest, needle, strict=False):
        if c > 127 or chr(c).lower() != want:
            return False
    tail = rest[len(needle) :]
    return not tail or tail[0] in (ord("/"), ord("\\"))


def _only_spaces_and_periods(rest: bytes) -> bool:
    for c in rest:
        if c == 0x3A:  # ':' (an alternate data stream)
            return True
        if c not in (0x20, 0x2E):
            return False
    return True


def _is_ntfs_dot(name: bytes, needle: str) -> bool:
    """Git's ``is_ntfs_dot_generic``."""
    n = needle.encode()
    if name[:1] == b"." and name[1 : 1 + len(n)].lower() == n:
        return _only_spaces_and_periods(name[1 + len(n) :])
    if name[:6].lower() == n[:6] and name[6:7] == b"~" and b"1" <= name[7:8] <= b"4":
        return _only_spaces_and_periods(name[8:])
    prefix = _SHORT_PREFIX[needle].encode()
    saw_tilde = False
    i = 0
    while i < 8:
        if i >= len(name):
            return False
        c = name[i]
        if saw_tilde:
            if not 0x30 <= c <= 0x39:
                return False
        elif c == 0x7E:  # '~'
            i += 1
            if i >= len(name) or not 0x31 <= name[i] <= 0x39:
                return False
            saw_tilde = True
        elif i >= 6 or c & 0x80 or bytes([c]).lower() != prefix[i : i + 1]:
            return False
        i += 1
    return _only_spaces_and_periods(name[8:])


def is_dotgit(name: bytes) -> bool:
    """``.git`` as HFS+ or NTFS reads ``name`` (``.GIT``, ``.git.``, ``git~1``...)."""
    if _is_hfs_dot(name, "git"):
        return True
    low = name.lower()
    if low.startswith(b".git"):
        rest = name[4:]
    elif low.startswith(b"git~1"):
        rest = name[5:]
    else:
        return False
    for c in rest:
        if c in (0x2F, 0x5C):  # a directory separator ends the component
            return True
        if c not in (0x2E, 0x20):
            return False
    return True


def is_dotgitmodules(name: bytes) -> bool:
    """``.gitmodules`` as HFS+ or NTFS reads ``name``."""
    return _is_hfs_dot(name, "gitmodules") or _is_ntfs_dot(name, "gitmodules")


def is_dotgitattributes(name: bytes) -> bool:
    """``.gitattributes`` as HFS+ or NTFS reads ``name``."""
    return _is_hfs_dot(name, "gitattributes") or _is_ntfs_dot(name, "gitattributes")


def is_dotgitignore(name: bytes) -> bool:
    """``.gitignore`` as HFS+ or NTFS reads ``name``."""
    return _is_hfs_dot(name, "gitignore") or _is_ntfs_dot(name, "gitignore")


def is_dotmailmap(name: bytes) -> bool:
    """``.mailmap`` as HFS+ or NTFS reads ``name``."""
    return _is_hfs_dot(name, "mailmap") or _is_ntfs_dot(name, "mailmap")
