"""Pack entry headers: the type-and-size varint and the OFS_DELTA base distance.

Layout (gitformat-pack): the first byte holds a continuation bit, a 3-bit type
and the low 4 bits of the inflated size; each following byte adds 7 more size
bits.  An OFS_DELTA entry is followed by the distance back to its base, a
big-endian varint where every continuation adds one (so there is exactly one
encoding per distance).  A REF_DELTA entry is followed by the base's binary id.
"""

from __future__ import annotations

from gitodb.errors import PackError

# A size is at most 64 bits: 4 bits in the first byte, 7 per byte after it.
_MAX_HEADER_BYTES = 10


def parse_entry_header_python(
    buf: bytes | bytearray | memoryview, offset: int, path: str | None = None
) -> tuple[int, int, int]:
    """Parse the entry header at ``offset``; return ``(type_number, size, header_length)``."""
    try:
        c = buf[offset]
        type_num = (c >> 4) & 7
        size = c & 15
        shift = 4
        pos = offset + 1
        while c & 0x80:
            if pos - offset >= _MAX_HEADER_BYTES:
                raise PackError(
                    "bad pack entry header: size varint too long", path=path, offset=offset
                )
            c = buf[pos]
            if shift == 60 and c & 0x70:  # more than 64 bits, as Git refuses
                raise PackError(
                    "bad pack entry header: size varint too long", path=path, offset=offset
                )
            size |= (c & 0x7F) << shift
            shift += 7
            pos += 1
    except IndexError:
        raise PackError("truncated pack entry header", path=path, offset=offset) from None
    return type_num, size, pos - offset


def parse_ofs_distance_python(
    buf: bytes | bytearray | memoryview, offset: int, path: str | None = None
) -> tuple[int, int]:
    """Parse an OFS_DELTA base distance at ``offset``; return ``(distance, length)``."""
    try:
        c = buf[offset]
        dist = c & 0x7F
        pos = offset + 1
        while c & 0x80:
            if (dist + 1) >> 57:  # the next shift would overflow 64 bits, as Git refuses
                raise PackError(
                    "bad OFS_DELTA base offset: varint too long", path=path, offset=offset
                )
            c = buf[pos]
            dist = ((dist + 1) << 7) | (c & 0x7F)
            pos += 1
    except IndexError:
        raise PackError("truncated OFS_DELTA base offset", path=path, offset=offset) from None
    return dist, pos - offset


def encode_entry_header(type_num: int, size: int) -> bytes:
    """Encode a pack entry header for an object of ``type_num`` and inflated ``size``."""
    out = bytearray()
    c = (type_num << 4) | (size & 15)
    size >>= 4
    while size:
        out.append(c | 0x80)
        c = size & 0x7F
        size >>= 7
    out.append(c)
    return bytes(out)


def encode_ofs_distance(distance: int) -> bytes:
    """Encode the distance from an OFS_DELTA entry back to its base."""
    out = bytearray([distance & 0x7F])
    distance >>= 7
    while distance:
        distance -= 1
        out.append(0x80 | (distance & 0x7F))
        distance >>= 7
    out.reverse()
    return bytes(out)


# Every pack walk calls these once per entry: use the C versions when they were built
# (same results, same errors; tests compare the two).
try:
    from gitodb._native import parse_entry_header as parse_entry_header
    from gitodb._native import parse_ofs_distance as parse_ofs_distance
except ImportError:  # built without a C compiler
    parse_entry_header = parse_entry_header_python  # type: ignore[assignment]
    parse_ofs_distance = parse_ofs_distance_python  # type: ignore[assignment]
