"""Object formats: the hash function that names objects (SHA-1 or SHA-256)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from gitodb.errors import RepositoryError


@dataclass(frozen=True)
class ObjectFormat:
    """One of Git's object formats (``extensions.objectFormat``)."""

    name: str            # "sha1" or "sha256", as Git spells it
    rawsz: int           # bytes in a binary id
    hexsz: int           # characters in a hex id
    reftable_id: bytes   # hash id in a reftable v2 header ("sha1" / "s256")
    pack_hash_id: int    # id in pack-related headers (.rev, midx): 1 sha1, 2 sha256

    def new_hasher(self, data: bytes | bytearray | memoryview = b"") -> Any:
        """Return a fresh ``hashlib`` object for this format."""
        return hashlib.new(self.name, data)

    @property
    def null_oid(self) -> bytes:
        """The all-zero binary id."""
        return b"\0" * self.rawsz

    @property
    def null_hex(self) -> str:
        """The all-zero hex id."""
        return "0" * self.hexsz


SHA1 = ObjectFormat("sha1", 20, 40, b"sha1", 1)
SHA256 = ObjectFormat("sha256", 32, 64, b"s256", 2)

_BY_NAME = {"sha1": SHA1, "sha256": SHA256}


def format_by_name(name: str) -> ObjectFormat:
    """Return the object format Git calls ``name`` ("sha1" or "sha256")."""
    try:
        return _BY_NAME[name.lower()]
    except KeyError:
        raise RepositoryError(f"unknown object format '{name}'") from None
