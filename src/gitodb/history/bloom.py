"""Changed-path Bloom filters, as Git's commit-graph stores them (``BIDX``/``BDAT``).

A commit's filter holds every path its diff against its first parent touches,
with each leading directory (``a/b/c`` adds ``a/b`` and ``a``); ``bits_per_entry``
(10) bits per path, ``num_hashes`` (7) bits set per path by double hashing two
seeded murmur3 values.  Version 1 hashes the final bytes of a path as signed
``char`` (Git's original bug, kept for compatibility); version 2 as unsigned.
More than ``max_changed_paths`` (512) paths give the one-byte all-ones filter.

Example::

    f = compute_filter(repo, commit_id, BloomSettings())
    maybe = filter_contains(f, path_key(b"src/main.c", settings), settings)
"""

from __future__ import annotations

from gitodb.history.commitgraph import BloomSettings
from gitodb.history.treediff import diff_trees

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.repo import Repository

_M32 = 0xFFFFFFFF
SEED0 = 0x293AE76F
SEED1 = 0x7E646E2C


def _rotl(v: int, n: int) -> int:
    return ((v << n) | (v >> (32 - n))) & _M32


def murmur3(seed: int, data: bytes, version: int = 2) -> int:
    """Git's ``murmur3_seeded_v1``/``_v2`` (32-bit)."""
    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed & _M32
    n4 = len(data) // 4
    for i in range(n4):
        k = int.from_bytes(data[4 * i : 4 * i + 4], "little")
        k = (k * c1) & _M32
        k = _rotl(k, 15)
        k = (k * c2) & _M32
        h ^= k
        h = (_rotl(h, 13) * 5 + 0xE6546B64) & _M32
    tail = data[4 * n4 :]
    if tail:

        def byte(b: int) -> int:
            # v1 widens a C char: bytes >= 0x80 sign-extend into the upper bits.
            return (b | 0xFFFFFF00) if version == 1 and b & 0x80 else b

        k1 = 0
        if len(tail) >= 3:
            k1 ^= (byte(tail[2]) << 16) & _M32
        if len(tail) >= 2:
            k1 ^= (byte(tail[1]) << 8) & _M32
        k1 ^= byte(tail[0]) & _M32
        k1 = (k1 * c1) & _M32
        k1 = _rotl(k1, 15)
        k1 = (k1 * c2) & _M32
        h ^= k1
    h ^= len(data) & _M32
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h


def path_key(path: bytes, settings: BloomSettings) -> list[int]:
    """Git's ``fill_bloom_key``: the ``num_hashes`` hash values of one path."""
    h0 = murmur3(SEED0, path, settings.hash_version)
    h1 = murmur3(SEED1, path, settings.hash_version)
    return [(h0 + i * h1) & _M32 for i in range(settings.num_hashes)]


def filter_contains(data: bytes, key: list[int]) -> bool:
    """False when the path is certainly not in the filter (Git's ``bloom_filter_contains``)."""
    bits = len(data) * 8
    if not bits:
        return True
    for h in key:
        pos = h % bits
        if not data[pos >> 3] & (1 << (pos & 7)):
            return False
    return True


def changed_paths(
    repo: Repository, old_tree: bytes | None, new_tree: bytes, limit: int
) -> set[bytes] | None:
    """The paths (and their leading directories) a diff touches; None past ``limit``."""
    changes = diff_trees(repo, old_tree, new_tree)
    if len(changes) > limit:
        return None
    paths: set[bytes] = set()
    for ch in changes:
        p = ch.path
        while p and p not in paths:
            paths.add(p)
            cut = p.rfind(b"/")
            p = p[:cut] if cut >= 0 else b""
    return paths if len(paths) <= limit else None


def make_filter(paths: set[bytes] | None, settings: BloomSettings) -> bytes:
    """The filter bytes for ``paths`` (None: too many, the all-ones byte)."""
    if paths is None:
        return b"\xff"
    size = (len(paths) * settings.bits_per_entry + 7) // 8 or 1
    data = bytearray(size)
    bits = size * 8
    for p in paths:
        for h in path_key(p, settings):
            pos = h % bits
            data[pos >> 3] |= 1 << (pos & 7)
    return bytes(data)
