"""Abbreviated object names, as Git's ``find_unique_abbrev`` makes them.

``default_abbrev`` is ``core.abbrev`` (a number, or ``auto``: the length that the
number of packed objects suggests, at least 7); ``unique_abbrev`` lengthens an
abbreviation until no other object in the database shares it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitodb.errors import ConfigError

if TYPE_CHECKING:
    from gitodb.repo import Repository

MINIMUM_ABBREV = 4
FALLBACK_DEFAULT_ABBREV = 7


def auto_abbrev(repo: Repository) -> int:
    """Git's automatic length: half the bits of the packed-object count, rounded up."""
    count: int = sum(p.idx.count for p in repo.odb.packs)
    bits = count.bit_length()  # msb(count) + 1
    return max(FALLBACK_DEFAULT_ABBREV, (bits + 1) // 2)


def default_abbrev(repo: Repository) -> int:
    """The length ``--abbrev`` without a number means (``core.abbrev``, else auto)."""
    value = repo.config.get("core.abbrev")
    if value is None or value.lower() == "auto":
        return auto_abbrev(repo)
    hexsz = repo.object_format.hexsz
    if value.lower() in ("false", "no", "off"):
        return hexsz
    try:
        n = int(value)
    except ValueError:
        raise ConfigError(
            f"bad numeric config value '{value}' for 'core.abbrev': invalid unit"
        ) from None
    if n < MINIMUM_ABBREV or n > hexsz:
        raise ConfigError(f"abbrev length out of range: {n}")
    return n


class Abbreviator:
    """Shortest unique hex prefixes of at least ``length`` digits (cached per id)."""

    def __init__(self, repo: Repository, length: int) -> None:
        self.repo = repo
        hexsz = repo.object_format.hexsz
        self.length = hexsz if length == 0 or length >= hexsz else max(length, MINIMUM_ABBREV)
        self._cache: dict[bytes, str] = {}

    def __call__(self, oid: bytes) -> str:
        """The abbreviation of ``oid``."""
        full = oid.hex()
        if self.length >= len(full):
            return full
        got = self._cache.get(oid)
        if got is None:
            n = self.length
            find = self.repo.odb.find_prefix
            while n < len(full) and any(m != oid for m in find(full[:n])):
                n += 1
            got = self._cache[oid] = full[:n]
        return got
