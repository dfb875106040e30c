"""EWAH compressed bitmaps as Git stores them in ``.bitmap`` files.

A serialised EWAH bitmap (all integers big-endian) is:

- the number of bits of the uncompressed bitmap (4 bytes);
- the number of 64-bit words that follow (4 bytes), then the words;
- the position of the last run-length word among them (4 bytes).

The words are chunks: a run-length word (RLW) and the literal words after it.
An RLW holds, from the lowest bit up, the repeated bit (1 bit), how many words of
that bit come first (32 bits), and how many literal words follow (31 bits).
Within a literal word the lower bits come first in the stream.

Decoded bitmaps are Python ``int`` values (bit ``n`` set: position ``n`` is in
the set), so union, intersection and difference are single big-integer
operations.  Every count read from the file is checked against the bytes that
are there before anything is built from it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from gitodb.errors import PackError

_RUN_BITS = 32
_RUN_MAX = (1 << _RUN_BITS) - 1
_LITERAL_MAX = (1 << 31) - 1
_WORD = 0xFFFFFFFFFFFFFFFF


class BitmapError(PackError):
    """A ``.bitmap`` file (or an EWAH bitmap in it) is malformed."""


def read_ewah(
    buf: bytes | memoryview, at: int, *, path: str, max_bits: int | None = None
) -> tuple[int, int, int]:
    """Decode the EWAH bitmap at ``at``: ``(bits, bit_size, end)``.

    ``bits`` is the bitmap as an ``int``, ``bit_size`` the length the file claims
    and ``end`` the offset just past it.  ``max_bits`` (the number of objects the
    bitmap indexes) bounds what it may claim: Git's writer rounds up to whole
    64-bit words at most.  Raises ``BitmapError`` naming ``path`` and the offset of
    what is wrong.
    """
    size = len(buf)
    if at + 8 > size:
        raise BitmapError("EWAH bitmap header is truncated", path=path, offset=at)
    bit_size, nwords = struct.unpack_from(">II", buf, at)
    if max_bits is not None and bit_size > -(-max_bits // 64) * 64:
        raise BitmapError(
            f"EWAH bitmap of {bit_size} bits for {max_bits} objects", path=path, offset=at
        )
    words_at = at + 8
    end = words_at + 8 * nwords + 4
    # The word count is proven against the bytes present before anything is sized by it.
    if end > size:
        raise BitmapError(
            f"EWAH bitmap claims {nwords} words, more than the file holds", path=path, offset=at + 4
        )
    (rlw_pos,) = struct.unpack_from(">I", buf, end - 4)
    if nwords and rlw_pos >= nwords:
        raise BitmapError(
            f"EWAH bitmap's last run-length word {rlw_pos} is past its {nwords} words",
            path=path,
            offset=end - 4,
        )
    raw = bytes(buf[words_at : words_at + 8 * nwords])
    words = struct.unpack(f">{nwords}Q", raw)
    out = bytearray()
    i = 0
    # The uncompressed length bounds what the runs may expand to: a run of a
    # billion words in a bitmap of a few bits is damage, not data.
    limit_words = (bit_size + 63) // 64
    produced = 0
    while i < nwords:
        rlw = words[i]
        run_bit = rlw & 1
        run = (rlw >> 1) & _RUN_MAX
        lits = rlw >> 33
        if i + 1 + lits > nwords:
            raise BitmapError(
                f"EWAH run-length word promises {lits} literal words past the end",
                path=path,
                offset=words_at + 8 * i,
            )
        produced += run + lits
        if produced > limit_words:
            raise BitmapError(
                f"EWAH bitmap expands past its {bit_size} bits", path=path, offset=words_at + 8 * i
            )
        if run:
            out += (b"\xff" if run_bit else b"\0") * (8 * run)
        if lits:
            out += struct.pack(f"<{lits}Q", *words[i + 1 : i + 1 + lits])
        i += 1 + lits
    bits = int.from_bytes(out, "little")
    if bits >> bit_size:
        raise BitmapError(
            f"EWAH bitmap has bits set past its {bit_size} bits", path=path, offset=at
        )
    if max_bits is not None and bits >> max_bits:
        raise BitmapError(
            f"EWAH bitmap has bits set past its {max_bits} objects", path=path, offset=at
        )
    return bits, bit_size, end


def encode_ewah(bits: int, bit_size: int) -> bytes:
    """Serialise ``bits`` (positions below ``bit_size``) as Git's EWAH writer does.

    Runs of all-zero or all-one words become run-length words, everything else
    literal words; the last run-length word's position closes the bitmap.
    """
    if bits < 0 or bits >> bit_size:
        raise ValueError("bits outside the bitmap's size")
    nwords = (bit_size + 63) // 64
    data = bits.to_bytes(8 * nwords, "little")
    words = struct.unpack(f"<{nwords}Q", data) if nwords else ()
    out: list[int] = []
    rlw_at = 0
    i = 0
    while i < nwords or not out:
        rlw_at = len(out)
        out.append(0)
        run_bit = 0
        run = 0
        if i < nwords and words[i] in (0, _WORD):
            run_bit = 1 if words[i] == _WORD else 0
            target = words[i]
            while i < nwords and words[i] == target and run < _RUN_MAX:
                run += 1
                i += 1
        lits_from = i
        while i < nwords and words[i] not in (0, _WORD) and i - lits_from < _LITERAL_MAX:
            i += 1
        lits = i - lits_from
        out[rlw_at] = run_bit | (run << 1) | (lits << 33)
        out.extend(words[lits_from:i])
        if not nwords:
            break
    body = struct.pack(f">{len(out)}Q", *out)
    return struct.pack(">II", bit_size, len(out)) + body + struct.pack(">I", rlw_at)


def iter_bits(bits: int) -> Iterator[int]:
    """The positions set in ``bits``, lowest first."""
    pos = 0
    data = bits.to_bytes((bits.bit_length() + 7) // 8, "little")
    for byte in data:
        while byte:
            low = byte & -byte
            yield pos + low.bit_length() - 1
            byte ^= low
        pos += 8
