"""Abbreviated object names, as Git's ``find_unique_abbrev`` makes them.

``default_abbrev`` is ``core.abbrev`` (a number, or ``auto``: the length that the
number of packed objects suggests, at least 7); ``unique_abbrev`` lengthens an
abbreviation until no other object in the database shares it.
"""

from __future__ import annotations

from gitodb.errors import ConfigError

TYPE_CHECKING = False
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
        self._scanned = False  # the first lookup looks for new packs, the others not

    def __call__(self, oid: bytes) -> str:
        """The abbreviation of ``oid``."""
        full = oid.hex()
        if self.length >= len(full):
            return full
        got = self._cache.get(oid)
        if got is None:
            # One lookup at the minimum length: the ids sharing it are the only ones
            # a longer prefix can still share, so the length needed is one digit past
            # the longest prefix in common with any of them.
            n = self.length
            for m in self.repo.odb.find_prefix(full[:n], cached=self._scanned):
                if m != oid:
                    other = m.hex()
                    k = self.length
                    while k < len(full) and other[k] == full[k]:
                        k += 1
                    n = max(n, min(k + 1, len(full)))
            self._scanned = True
            got = self._cache[oid] = full[:n]
        return got
