"""Integer encodings shared by every reftable block: Git's varint and big-endian fields."""

from __future__ import annotations

from gitodb.errors import ReftableError
from gitodb.types import Buffer

BLOCK_REF = 0x72  # 'r'
BLOCK_LOG = 0x67  # 'g'
BLOCK_OBJ = 0x6F  # 'o'
BLOCK_INDEX = 0x69  # 'i'
BLOCK_TYPES = (BLOCK_REF, BLOCK_LOG, BLOCK_OBJ, BLOCK_INDEX)

MAGIC = b"REFT"
HEADER_SIZE = {1: 24, 2: 28}
FOOTER_SIZE = {1: 68, 2: 72}
MAX_UPDATE_INDEX = 0xFFFFFFFFFFFFFFFF

# ref value types
REF_DELETION = 0
REF_VAL1 = 1
REF_VAL2 = 2
REF_SYMREF = 3
# log value types
LOG_DELETION = 0
LOG_UPDATE = 1


def get_varint(buf: Buffer, pos: int, end: int) -> tuple[int, int]:
    """Decode Git's varint at ``pos`` (must end before ``end``); return (value, new pos).

    Each continuation byte adds one before shifting, so every value has exactly one
    encoding.  Raises ``ValueError`` when the number runs past ``end`` or is absurdly
    long; callers turn that into a ``ReftableError`` with the table and offset.
    """
    if pos >= end:
        raise ValueError("varint past end of block")
    b = buf[pos]
    pos += 1
    val = b & 0x7F
    while b & 0x80:
        if pos >= end or val > (1 << 56):
            raise ValueError("varint past end of block")
        b = buf[pos]
        pos += 1
        val = ((val + 1) << 7) | (b & 0x7F)
    return val, pos


def put_varint(val: int) -> bytes:
    """Encode ``val`` (>= 0) as Git's varint."""
    if val < 0x80:
        return bytes((val,))
    out = bytearray((val & 0x7F,))
    val >>= 7
    while val:
        val -= 1
        out.append(0x80 | (val & 0x7F))
        val >>= 7
    out.reverse()
    return bytes(out)


def be(buf: Buffer, pos: int, n: int) -> int:
    """Read an ``n``-byte big-endian unsigned integer at ``pos``."""
    return int.from_bytes(buf[pos : pos + n], "big")


def error(message: str, path: str | None, offset: int | None) -> ReftableError:
    """A ``ReftableError`` naming the table and the offset of the damage."""
    return ReftableError(message, path=path, offset=offset)
