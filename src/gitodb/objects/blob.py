"""Blob objects, and ``parse_object``: the typed object for any stored content."""

from __future__ import annotations

from gitodb.errors import ObjectFormatError
from gitodb.objects.commit import Commit
from gitodb.objects.format import SHA1, ObjectFormat
from gitodb.objects.stored import StoredObject
from gitodb.objects.tag import Tag
from gitodb.objects.tree import Tree


class Blob(StoredObject):
    """File content; ``data`` as stored."""

    type_name = "blob"
    __slots__ = ()

    @property
    def data(self) -> bytes:
        """The content."""
        return self.raw

    @property
    def size(self) -> int:
        """The content's length in bytes."""
        return len(self.raw)

    def serialize(self) -> bytes:
        """The content (a blob is stored as it is)."""
        return self.raw

    def __repr__(self) -> str:
        return f"Blob({self.id.hex()})"

    @classmethod
    def create(cls, data: bytes, fmt: ObjectFormat = SHA1) -> Blob:
        """A blob of ``data``."""
        return cls(data, fmt)


GitObject = Commit | Tree | Tag | Blob
_CLASSES: dict[str, type[Commit] | type[Tree] | type[Tag] | type[Blob]] = {
    "commit": Commit,
    "tree": Tree,
    "tag": Tag,
    "blob": Blob,
}


def parse_object(
    type_name: str, data: bytes, fmt: ObjectFormat = SHA1, oid: bytes | None = None
) -> GitObject:
    """The typed object for ``data`` of ``type_name`` (parsed lazily)."""
    cls = _CLASSES.get(type_name)
    if cls is None:
        raise ObjectFormatError(f'invalid object type "{type_name}"')
    return cls(data, fmt, oid)
