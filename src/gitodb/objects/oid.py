"""``ObjectId``: a binary object id that prints as hex, and what the API takes as an id.

An ``ObjectId`` *is* ``bytes`` (a subclass): it compares, hashes and slices like the
binary id it holds, so it goes wherever the library takes a binary id; only its
``repr`` and ``str`` differ (hex).  Every call that takes an id also takes
``ObjectIdLike``: an ``ObjectId``, raw ``bytes``, full hex (``str`` or ASCII
``bytes``), or, where an object database can resolve it, an abbreviated hex
``str`` of at least four digits (see ``ObjectDatabase.object_id``).
"""

from __future__ import annotations

from gitodb.errors import ObjectFormatError

__all__ = ["ObjectId", "ObjectIdLike", "MINIMUM_ABBREV"]

#: Git's shortest abbreviation it resolves (``MINIMUM_ABBREV`` in Git).
MINIMUM_ABBREV = 4

#: the binary lengths of SHA-1 and SHA-256 ids
_RAW_SIZES = (20, 32)
_HEX_SIZES = (40, 64)

_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


class ObjectId(bytes):
    """A binary object id (SHA-1 or SHA-256) whose ``repr`` and ``str`` are hex.

    ``ObjectId("922b6ba8...")`` takes full hex, ``ObjectId(raw)`` a binary id of 20
    or 32 bytes; anything else raises ``ObjectFormatError``.
    """

    __slots__ = ()

    def __new__(cls, value: str | bytes | bytearray | memoryview) -> ObjectId:
        if isinstance(value, str):
            if len(value) not in _HEX_SIZES or not _HEX_DIGITS.issuperset(value):
                raise ObjectFormatError(f"not a full hex object id: {value!r}")
            return super().__new__(cls, bytes.fromhex(value))
        raw = bytes(value)
        if len(raw) not in _RAW_SIZES:
            raise ObjectFormatError(f"not a binary object id ({len(raw)} bytes): {raw!r}")
        return super().__new__(cls, raw)

    def __repr__(self) -> str:
        return f"ObjectId('{self.hex()}')"

    def __str__(self) -> str:
        return self.hex()

    def __reduce__(self) -> tuple[type[ObjectId], tuple[bytes]]:
        return ObjectId, (bytes(self),)


#: What every call that takes an object id accepts (see the module docstring).
ObjectIdLike = ObjectId | str | bytes | bytearray | memoryview


def is_hex(text: str) -> bool:
    """True if ``text`` is non-empty and only hex digits (either case, as Git reads them)."""
    return bool(text) and _HEX_DIGITS.issuperset(text)
