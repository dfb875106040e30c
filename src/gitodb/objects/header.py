"""Object types, the ``<type> <size>\\0`` header, and object ids."""

from __future__ import annotations

from gitodb.errors import ObjectFormatError
from gitodb.objects.format import ObjectFormat

# Type numbers as stored in pack entry headers.
OBJ_COMMIT = 1
OBJ_TREE = 2
OBJ_BLOB = 3
OBJ_TAG = 4
OBJ_OFS_DELTA = 6
OBJ_REF_DELTA = 7

TYPE_NAMES = {OBJ_COMMIT: "commit", OBJ_TREE: "tree", OBJ_BLOB: "blob", OBJ_TAG: "tag"}
TYPE_NUMBERS = {name: num for num, name in TYPE_NAMES.items()}

# A loose header is short; Git refuses anything longer than this before the NUL.
MAX_HEADER_LEN = 32
# Sizes are 64-bit in Git (size_t); a header declaring more is corrupt.
MAX_OBJECT_SIZE = (1 << 64) - 1


def object_header(type_name: str, size: int) -> bytes:
    """Return the ``<type> <size>\\0`` header that prefixes hashed and loose content."""
    return b"%s %d\0" % (type_name.encode("ascii"), size)


def hash_object(fmt: ObjectFormat, type_name: str, data: bytes | bytearray | memoryview) -> bytes:
    """Return the binary id of an object of ``type_name`` with content ``data``."""
    h = fmt.new_hasher(object_header(type_name, len(data)))
    h.update(data)
    digest: bytes = h.digest()
    return digest


def parse_object_header(
    buf: bytes | bytearray | memoryview,
    *,
    path: str | None = None,
    allow_unknown_type: bool = False,
) -> tuple[str, int, int]:
    """Parse ``<type> <size>\\0`` at the start of ``buf``.

    Returns ``(type_name, size, header_length)``; raises ``ObjectFormatError``.
    """
    head = bytes(buf[: MAX_HEADER_LEN + 1]) if allow_unknown_type is False else bytes(buf[:4096])
    nul = head.find(b"\0")
    if nul < 0:
        raise ObjectFormatError("object header has no NUL terminator", path=path, offset=0)
    sp = head.find(b" ", 0, nul)
    if sp <= 0:
        raise ObjectFormatError("object header has no type", path=path, offset=0)
    type_name = head[:sp].decode("ascii", "replace")
    # The syntax first, the type name after, as Git (a header that does not parse is
    # "unable to parse"; one that parses with an unknown type is "invalid object type").
    size_text = head[sp + 1 : nul]
    if not size_text.isdigit() or (len(size_text) > 1 and size_text[:1] == b"0"):
        raise ObjectFormatError("object header has a bad size", path=path, offset=sp + 1)
    size = int(size_text)
    if size > MAX_OBJECT_SIZE:  # Git's size_t overflows
        raise ObjectFormatError(f"object header size {size} is too large", path=path, offset=sp + 1)
    if not allow_unknown_type and type_name not in TYPE_NUMBERS:
        raise ObjectFormatError(f'invalid object type "{type_name}"', path=path, offset=0)
    return type_name, size, nul + 1
