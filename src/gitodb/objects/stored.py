"""What every typed object shares: its content, its format and its (lazily computed) id."""

from __future__ import annotations

from gitodb.objects.format import SHA1, ObjectFormat
from gitodb.objects.header import hash_object
from gitodb.objects.headers import HeaderBlock, parse_headers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar


class StoredObject:
    """Content as stored (``raw``) in format ``fmt``; subclasses parse it lazily."""

    type_name: ClassVar[str]
    __slots__ = ("raw", "fmt", "_id")

    def __init__(self, data: bytes, fmt: ObjectFormat = SHA1, oid: bytes | None = None) -> None:
        self.raw = bytes(data)
        self.fmt = fmt
        self._id = oid

    @property
    def id(self) -> bytes:
        """The object id (computed from the content when not given)."""
        if self._id is None:
            self._id = hash_object(self.fmt, self.type_name, self.raw)
        return self._id


class HeaderObject(StoredObject):
    """A commit or a tag: a header block, then a message."""

    __slots__ = ("_block",)

    def __init__(self, data: bytes, fmt: ObjectFormat = SHA1, oid: bytes | None = None) -> None:
        super().__init__(data, fmt, oid)
        self._block: HeaderBlock | None = None

    @property
    def block(self) -> HeaderBlock:
        """The parsed header block (every header in order, and the message)."""
        if self._block is None:
            self._block = parse_headers(self.raw)
        return self._block
