"""The one refs interface that both ref backends (files, reftable) implement."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass

SYMREF_MAX_DEPTH = 5


@dataclass(frozen=True, slots=True)
class Ref:
    """A ref as stored: either an id (``oid``, maybe ``peeled``) or a symref ``target``."""

    name: str
    oid: bytes | None = None
    target: str | None = None
    peeled: bytes | None = None

    @property
    def is_symref(self) -> bool:
        return self.target is not None


@dataclass(frozen=True, slots=True)
class ReflogEntry:
    """One reflog entry; ``tz_offset`` is Git's signed ``+HHMM`` number (e.g. 200, -500)."""

    old: bytes
    new: bytes
    name: str
    email: str
    time: int
    tz_offset: int
    message: bytes


class RefStore(ABC):
    """Read and write refs and reflogs of one repository."""

    @abstractmethod
    def read(self, name: str) -> Ref | None:
        """Return the ref ``name`` as stored (symrefs not followed), or None."""

    @abstractmethod
    def iter_refs(self, prefix: str = "") -> Iterator[Ref]:
        """Yield refs under ``refs/`` whose name starts with ``prefix``, sorted by name."""

    def resolve_ref(self, name: str) -> tuple[str, bytes | None] | None:
        """Follow symrefs from ``name``; return (final ref name, id or None if unborn)."""
        for _ in range(SYMREF_MAX_DEPTH + 1):
            ref = self.read(name)
            if ref is None:
                return None
            if ref.target is None:
                return ref.name, ref.oid
            name = ref.target
            if self.read(name) is None:
                return name, None
        return None

    def resolve(self, name: str) -> bytes | None:
        """Return the id ``name`` points at after following symrefs, or None."""
        r = self.resolve_ref(name)
        return r[1] if r else None
