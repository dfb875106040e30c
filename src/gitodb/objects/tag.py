"""Annotated tag objects, parsed lazily and serialised back to the same bytes.

``object``, ``type`` and ``tag`` lines are read by the rules of Git's
``parse_tag_buffer``; the signature is the message tail from the last line that
starts a signature block (Git's ``parse_signed_buffer``).

Example::

    t = Tag(data, SHA1)
    t.object, t.type, t.name, t.tagger, t.message, t.signature
    Tag.create(object=c.id, type="commit", name=b"v1", tagger=sig, message=b"v1\\n")
"""

from __future__ import annotations

from gitodb.errors import ObjectFormatError, ObjectParseError
from gitodb.objects.commit import parse_hex
from gitodb.objects.format import SHA1, ObjectFormat, as_oid
from gitodb.objects.headers import (
    Header,
    check_header,
    serialize_headers,
)
from gitodb.objects.signature import Signature
from gitodb.objects.stored import HeaderObject

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

TAG_TARGET_TYPES = ("blob", "tree", "commit", "tag")
_SIGNATURE_STARTS = (
    b"-----BEGIN PGP SIGNATURE-----",
    b"-----BEGIN PGP MESSAGE-----",
    b"-----BEGIN SIGNED MESSAGE-----",
    b"-----BEGIN SSH SIGNATURE-----",
)


def parse_tag_fields(buf: bytes, fmt: ObjectFormat) -> tuple[bytes, bytes, bytes]:
    """``(object id, raw type, tag name)`` by Git's ``parse_tag_buffer`` rules.

    The type is cut at an embedded NUL, as Git copies it into a C string.  Raises
    ``ObjectParseError`` with reason ``corrupt`` or ``unknown-type``.
    """
    hexsz = fmt.hexsz
    end = len(buf)

    def corrupt(offset: int) -> ObjectParseError:
        return ObjectParseError("corrupt tag", reason="corrupt", offset=offset)

    if end < hexsz + 24 or buf[:7] != b"object ":
        raise corrupt(0)
    target = parse_hex(buf, 7, hexsz)
    if target is None or buf[7 + hexsz] != 0x0A:
        raise corrupt(7)
    pos = 8 + hexsz
    if not buf.startswith(b"type ", pos):
        raise corrupt(pos)
    pos += 5
    nl = buf.find(b"\n", pos)
    if nl < 0 or nl - pos >= 20:
        raise corrupt(pos)
    type_name = buf[pos:nl].split(b"\0", 1)[0]
    if type_name.decode("latin-1") not in TAG_TARGET_TYPES:
        raise ObjectParseError(
            f"unknown tag type '{type_name.decode('utf-8', 'surrogateescape')}'",
            reason="unknown-type",
            offset=pos,
        )
    pos = nl + 1
    if not (pos + 4 < end and buf.startswith(b"tag ", pos)):
        raise corrupt(pos)
    nl = buf.find(b"\n", pos + 4)
    if nl < 0:
        raise corrupt(pos)
    return target, type_name, buf[pos + 4 : nl]


def signature_start(body: bytes) -> int:
    """Where the signature block of a tag message starts (``len(body)`` if unsigned)."""
    match = len(body)
    pos = 0
    while pos < len(body):
        if body.startswith(_SIGNATURE_STARTS, pos):
            match = pos
        nl = body.find(b"\n", pos)
        pos = len(body) if nl < 0 else nl + 1
    return match


class Tag(HeaderObject):
    """An annotated tag: ``object``, ``type`` (of the object), ``name``, ``tagger``, ``message``,
    ``signature``, ``extra_headers``; ``serialize()`` gives back the content."""

    type_name = "tag"
    __slots__ = ("_fields",)

    def __init__(self, data: bytes, fmt: ObjectFormat = SHA1, oid: bytes | None = None) -> None:
        super().__init__(data, fmt, oid)
        self._fields: tuple[bytes, bytes, bytes] | None = None

    def _get_fields(self) -> tuple[bytes, bytes, bytes]:
        if self._fields is None:
            self._fields = parse_tag_fields(self.raw, self.fmt)
        return self._fields

    @property
    def object(self) -> bytes:
        """The id of the tagged object."""
        return self._get_fields()[0]

    @property
    def type(self) -> str:
        """The tagged object's type: ``commit``, ``tree``, ``blob`` or ``tag``."""
        return self._get_fields()[1].decode("ascii")

    @property
    def name(self) -> bytes:
        """The ``tag`` line: the tag's name."""
        return self._get_fields()[2]

    @property
    def tagger(self) -> Signature | None:
        """The ``tagger`` line, when there is one (old tags have none)."""
        value = self.block.get(b"tagger")
        return None if value is None else Signature(value)

    @property
    def headers(self) -> list[Header]:
        """Every header as ``(key, value)``, in order."""
        return self.block.headers

    @property
    def extra_headers(self) -> list[Header]:
        """Headers other than the first object, type, tag and tagger lines."""
        out: list[Header] = []
        seen: set[bytes] = set()
        for key, value in self.block.headers:
            if key in (b"object", b"type", b"tag", b"tagger") and key not in seen:
                seen.add(key)
                continue
            out.append((key, value))
        return out

    @property
    def body(self) -> bytes:
        """Everything after the blank line: message and signature."""
        return self.block.message or b""

    @property
    def message(self) -> bytes:
        """The message, without the signature block."""
        body = self.body
        return body[: signature_start(body)]

    @property
    def signature(self) -> bytes | None:
        """The signature block at the end of the message, or None."""
        body = self.body
        start = signature_start(body)
        return body[start:] if start < len(body) else None

    def serialize(self) -> bytes:
        """The content, rebuilt from the parsed header block."""
        b = self.block
        return serialize_headers(b.headers, b.message, b.terminated)

    def __repr__(self) -> str:
        return f"Tag({self.id.hex()})"

    @classmethod
    def create(
        cls,
        *,
        object: str | bytes,
        type: str,
        name: bytes | str,
        message: bytes | str,
        tagger: Signature | None = None,
        signature: bytes | None = None,
        extra_headers: Iterable[Header] = (),
        fmt: ObjectFormat = SHA1,
    ) -> Tag:
        """A new tag: object, type, tag, tagger, extra headers; message then signature."""
        if type not in TAG_TARGET_TYPES:
            raise ObjectFormatError(f"invalid tag target type '{type}'")
        bname = name.encode("utf-8", "surrogateescape") if isinstance(name, str) else name
        if not bname or b"\n" in bname:
            raise ObjectFormatError(f"invalid tag name {bname!r}")
        headers: list[Header] = [
            (b"object", as_oid(fmt, object).hex().encode()),
            (b"type", type.encode()),
            (b"tag", bname),
        ]
        if tagger is not None:
            headers.append((b"tagger", tagger.raw))
        headers += list(extra_headers)
        for key, value in headers:
            check_header(key, value or b"")
        body = message.encode("utf-8", "surrogateescape") if isinstance(message, str) else message
        if signature is not None:
            body += signature
        return cls(serialize_headers(headers, body), fmt)
