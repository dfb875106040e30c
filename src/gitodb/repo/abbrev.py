"""Abbreviated object names, as Git's ``find_unique_abbrev`` makes them.

``default_abbrev`` is ``core.abbrev`` (a number, or ``auto``: the length that the
number of packed objects suggests, at least 7); ``Abbreviator`` lengthens an
abbreviation until no other object in the database shares it.
"""

from __future__ import annotations

from gitodb.errors import ConfigError

try:
    from gitodb._native import abbrev_lengths as _abbrev_lengths
except ImportError:  # built without a C compiler: the prefix search of each id
    _abbrev_lengths = None  # type: ignore[assignment]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitodb.repo import Repository

MINIMUM_ABBREV = 4
FALLBACK_DEFAULT_ABBREV = 7
# Git compares the hex length of a prefix in common with this byte count
_GIT_MAX_RAWSZ = 32
# ids abbreviated one by one before the native tables are worth setting up
_FEW = 8


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
    """Shortest unique hex prefixes of at least ``length`` digits (cached per id).

    Git's ``find_unique_abbrev``: one digit past the longest prefix the id shares
    with any other object (packed, in a multi-pack-index or loose), at least
    ``length`` digits.  With the native core the lengths come from
    ``_native.abbrev_lengths`` over the object database's sorted id tables, many
    ids in one call (``lengths``), and the native walk's text and formats use the
    same tables (``native_spec``); ``reference_length`` is the pure-Python path,
    a prefix search of the object database.
    """

    def __init__(self, repo: Repository, length: int) -> None:
        self.repo = repo
        hexsz = repo.object_format.hexsz
        self.length = hexsz if length == 0 or length >= hexsz else max(length, MINIMUM_ABBREV)
        self._cache: dict[bytes, str] = {}
        self._scanned = False  # the first lookup looks for new packs, the others not
        self._spec: tuple[list[Any], int] | None = None
        self._calls = 0

    def __call__(self, oid: bytes) -> str:
        """The abbreviation of ``oid``."""
        got = self._cache.get(oid)
        if got is None:
            full = oid.hex()
            if self.length >= len(full):
                return full
            # A few ids (rev-parse --short, describe) search by prefix, as Git lists
            # only the loose fan-out directories it needs; many go native, where the
            # tables (all loose ids listed) are set up once.
            self._calls += 1
            native = _abbrev_lengths is not None and len(oid) == self.repo.object_format.rawsz
            if native and (self._spec is not None or self._calls > _FEW):
                n = _abbrev_lengths(self.native_spec(), len(oid), [oid])[0]
            else:
                n = self.reference_length(oid)
            got = self._cache[oid] = full[:n]
        return got

    def prime(self, oids: list[bytes]) -> None:
        """Abbreviate ``oids`` in one batch (``lengths``), so that calling this
        abbreviator on them is a look-up: for commands that list many ids."""
        rawsz = self.repo.object_format.rawsz
        todo = [o for o in dict.fromkeys(oids) if o not in self._cache and len(o) == rawsz]
        if len(todo) <= _FEW or self.length >= self.repo.object_format.hexsz:
            return  # one by one is as quick
        for oid, n in zip(todo, self.lengths(todo), strict=True):
            self._cache[oid] = oid.hex()[:n]

    def lengths(self, oids: list[bytes]) -> bytes:
        """The abbreviation length of each id of ``oids``, one byte each (natively in
        one call; else ``reference_length`` of each)."""
        if self.length >= self.repo.object_format.hexsz:
            return bytes([self.length]) * len(oids)
        if _abbrev_lengths is not None:
            return bytes(_abbrev_lengths(self.native_spec(), self.repo.object_format.rawsz, oids))
        return bytes(self.reference_length(o) for o in oids)

    def native_spec(self) -> tuple[list[Any], int]:
        """``(tables, length)`` as ``_native.abbrev_lengths`` and the native walk's
        ``text``/``format`` take it (``ObjectDatabase.abbrev_tables``, listed once)."""
        if self._spec is None:
            full = self.length >= self.repo.object_format.hexsz
            tables: list[Any] = [] if full else self.repo.odb.abbrev_tables()
            self._spec = (tables, self.length)
            self._scanned = True
        return self._spec

    def reference_length(self, oid: bytes) -> int:
        """The abbreviation length of ``oid`` from a prefix search of the object
        database (the pure-Python path, and the native one's reference)."""
        full = oid.hex()
        if self.length >= len(full):
            return len(full)
        # One lookup at the minimum length: the ids sharing it are the only ones a
        # longer prefix can still share, so the length needed is one digit past the
        # longest prefix in common with any of them.  As Git, a prefix in common of
        # GIT_MAX_RAWSZ (32) digits or more does not count (its hex positions are
        # compared with that byte count).
        n = self.length
        for m in self.repo.odb.find_prefix(full[: self.length], cached=self._scanned):
            if m != oid:
                other = m.hex()
                k = self.length
                while k < len(full) and other[k] == full[k]:
                    k += 1
                if k < _GIT_MAX_RAWSZ:
                    n = max(n, k + 1)
        self._scanned = True
        return n
