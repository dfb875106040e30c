"""Reading a pack index from a stream, front to back (``git show-index``).

``PackIndex`` maps a file; this reads an ``.idx`` as it comes (a pipe will do),
the way ``git show-index`` does: version 1 (fan-out, then offset + id entries) or
version 2 (magic, version, fan-out, ids, CRCs, 32-bit offsets, 64-bit offsets).
The trailing checksums are not read.  A short or inconsistent stream raises
``PackError`` with Git's message.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import BinaryIO

from gitodb.errors import PackError
from gitodb.objects.format import ObjectFormat

IDX_MAGIC = b"\377tOc"
_FANOUT_BYTES = 256 * 4


def _read(stream: BinaryIO, n: int, what: str) -> bytes:
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            raise PackError(what)
        data += chunk
    return data


def iter_index_entries(
    stream: BinaryIO, fmt: ObjectFormat
) -> Iterator[tuple[int, bytes, int | None]]:
    """Yield ``(offset, oid, crc32)`` for each entry (``crc32`` None in version 1)."""
    head = _read(stream, 4, "unable to read header")
    if head == IDX_MAGIC:
        version = struct.unpack(">I", _read(stream, 4, "unable to read header"))[0]
        if version != 2:
            raise PackError("unknown index version")
        fanout = _read(stream, _FANOUT_BYTES, "unable to read index")
    else:
        version = 1
        fanout = head + _read(stream, _FANOUT_BYTES - 4, "unable to read index")
    nr = struct.unpack(">I", fanout[-4:])[0]
    rawsz = fmt.rawsz
    if version == 1:
        for i in range(nr):
            entry = _read(stream, 4 + rawsz, f"unable to read entry {i}/{nr}")
            yield struct.unpack(">I", entry[:4])[0], entry[4:], None
        return
    # version 2: the tables follow one another, so the ids must be held until the
    # offsets arrive; they are read in batches as the stream delivers them
    oids: list[bytes] = []
    for i in range(nr):
        oids.append(_read(stream, rawsz, f"unable to read sha1 {i}/{nr}"))
    crcs: list[int] = []
    for i in range(nr):
        crcs.append(struct.unpack(">I", _read(stream, 4, f"unable to read crc {i}/{nr}"))[0])
    small: list[int] = []
    for i in range(nr):
        small.append(
            struct.unpack(">I", _read(stream, 4, f"unable to read 32b offset {i}/{nr}"))[0]
        )
    next_big = 0
    for i in range(nr):
        off = small[i]
        if off & 0x80000000:
            if off & 0x7FFFFFFF != next_big:
                raise PackError("inconsistent 64b offset index")
            off = struct.unpack(">Q", _read(stream, 8, f"unable to read 64b offset {next_big}"))[0]
            next_big += 1
        yield off, oids[i], crcs[i]
