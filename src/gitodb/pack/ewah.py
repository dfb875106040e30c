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


def ewah_end(buf: bytes | memoryview, at: int, *, path: str) -> int:
    """The offset just past the EWAH bitmap at ``at``, its word count proven against
    the bytes present before anything is sized by it.  Raises ``BitmapError`` with
    Git's ``ewah_read_mmap`` wording where the buffer cuts the bitmap short."""
    size = len(buf)
    if at + 4 > size:
        raise BitmapError("corrupt ewah bitmap: eof before bit size", path=path, offset=at)
    if at + 8 > size:
        raise BitmapError("corrupt ewah bitmap: eof before length", path=path, offset=at + 4)
    nwords = int.from_bytes(buf[at + 4 : at + 8], "big")
    data_end = at + 8 + 8 * nwords
    if data_end > size:
        raise BitmapError(
            f"corrupt ewah bitmap: eof in data ({data_end - size} bytes short)",
            path=path,
            offset=at + 4,
        )
    if data_end + 4 > size:
        raise BitmapError("corrupt ewah bitmap: eof before rlw", path=path, offset=data_end)
    return data_end + 4


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
    end = ewah_end(buf, at, path=path)
    bit_size, nwords = struct.unpack_from(">II", buf, at)
    if max_bits is not None and bit_size > -(-max_bits // 64) * 64:
        raise BitmapError(
            f"EWAH bitmap of {bit_size} bits for {max_bits} objects", path=path, offset=at
        )
    words_at = at + 8
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


# -- Git's EWAH writer, word for word -------------------------------------------------
# Git stores an XOR-compressed bitmap exactly as its ``ewah_xor`` builds it, which is
# not always the canonical encoding (literal words copied from under a run stay
# literal, even when they are all zeros or all ones).  ``GitEwah`` and ``ewah_xor``
# reproduce that construction, so the words and their count are Git's.

_RUN_LARGEST = (1 << 32) - 1
_LIT_LARGEST = (1 << 31) - 1


class GitEwah:
    """An EWAH bitmap under construction, as Git's ``struct ewah_bitmap``."""

    def __init__(self) -> None:
        self.buffer: list[int] = [0]
        self.rlw = 0
        self.bit_size = 0

    # run-length word fields
    def _run_bit(self) -> int:
        return self.buffer[self.rlw] & 1

    def _run_len(self) -> int:
        return (self.buffer[self.rlw] >> 1) & _RUN_LARGEST

    def _lits(self) -> int:
        return self.buffer[self.rlw] >> 33

    def _set(
        self, run_bit: int | None = None, run_len: int | None = None, lits: int | None = None
    ) -> None:
        w = self.buffer[self.rlw]
        rb = w & 1 if run_bit is None else run_bit
        rl = (w >> 1) & _RUN_LARGEST if run_len is None else run_len
        li = w >> 33 if lits is None else lits
        self.buffer[self.rlw] = rb | (rl << 1) | (li << 33)

    def _push_rlw(self) -> None:
        self.buffer.append(0)
        self.rlw = len(self.buffer) - 1

    def _add_empty_word(self, v: int) -> None:
        no_literal = self._lits() == 0
        run_len = self._run_len()
        if no_literal and run_len == 0:
            self._set(run_bit=v)
        if no_literal and self._run_bit() == v and run_len < _RUN_LARGEST:
            self._set(run_len=run_len + 1)
        else:
            self._push_rlw()
            self._set(run_len=1, run_bit=v)

    def _add_literal(self, word: int) -> None:
        n = self._lits()
        if n >= _LIT_LARGEST:
            self._push_rlw()
            self._set(lits=1)
        else:
            self._set(lits=n + 1)
        self.buffer.append(word)

    def add(self, word: int) -> None:
        """Git's ``ewah_add``: one 64-bit word of the stream."""
        self.bit_size += 64
        if word == 0:
            self._add_empty_word(0)
        elif word == _WORD:
            self._add_empty_word(1)
        else:
            self._add_literal(word)

    def add_empty_words(self, v: int, number: int) -> None:
        """Git's ``ewah_add_empty_words``: ``number`` words of bit ``v``."""
        if number == 0:
            return
        self.bit_size += number * 64
        if self._run_bit() != v and self._run_len() == 0 and self._lits() == 0:
            self._set(run_bit=v)
        elif self._lits() != 0 or self._run_bit() != v:
            self._push_rlw()
            if v:
                self._set(run_bit=v)
        run_len = self._run_len()
        can_add = min(number, _RUN_LARGEST - run_len)
        self._set(run_len=run_len + can_add)
        number -= can_add
        while number >= _RUN_LARGEST:
            self._push_rlw()
            if v:
                self._set(run_bit=v)
            self._set(run_len=_RUN_LARGEST)
            number -= _RUN_LARGEST
        if number > 0:
            self._push_rlw()
            if v:
                self._set(run_bit=v)
            self._set(run_len=number)

    def add_dirty_words(self, words: list[int], negate: bool) -> None:
        """Git's ``ewah_add_dirty_words``: literal words, as they are."""
        at = 0
        number = len(words)
        while True:
            lits = self._lits()
            can_add = min(number, _LIT_LARGEST - lits)
            self._set(lits=lits + can_add)
            for w in words[at : at + can_add]:
                self.buffer.append(w ^ _WORD if negate else w)
            self.bit_size += can_add * 64
            if can_add == number:
                return
            number -= can_add
            at += can_add
            self._push_rlw()

    def serialise(self) -> bytes:
        """The bitmap as Git writes it."""
        n = len(self.buffer)
        return (
            struct.pack(">II", self.bit_size, n)
            + struct.pack(f">{n}Q", *self.buffer)
            + struct.pack(">I", self.rlw)
        )


def git_ewah_of(bits: int) -> GitEwah:
    """Git's ``bitmap_to_ewah``: zero words become runs, trailing zero words go."""
    nwords = (bits.bit_length() + 63) // 64
    words = struct.unpack(f"<{nwords}Q", bits.to_bytes(8 * nwords, "little")) if nwords else ()
    out = GitEwah()
    empty = 0
    last = 0
    for w in words:
        if w == 0:
            empty += 1
            continue
        if last != 0:
            out.add(last)
        if empty:
            out.add_empty_words(0, empty)
            empty = 0
        last = w
    out.add(last)
    return out


class _RlwIter:
    """Git's ``struct rlw_iterator`` over a ``GitEwah``'s words."""

    def __init__(self, e: GitEwah) -> None:
        self.buf = e.buffer
        self.size = len(e.buffer)
        self.pointer = 0
        self.lit_start = 0
        self.run_len = 0
        self.lits = 0
        self.run_bit = 0
        self._next_word()

    def _next_word(self) -> bool:
        if self.pointer >= self.size:
            return False
        w = self.buf[self.pointer]
        self.run_bit = w & 1
        self.run_len = (w >> 1) & _RUN_LARGEST
        self.lits = w >> 33
        self.lit_start = self.pointer + 1
        self.pointer += self.lits + 1
        return True

    def word_size(self) -> int:
        return self.run_len + self.lits

    def discard_first_words(self, x: int) -> None:
        while x > 0:
            if self.run_len > x:
                self.run_len -= x
                return
            x -= self.run_len
            self.run_len = 0
            discard = min(x, self.lits)
            self.lit_start += discard
            self.lits -= discard
            x -= discard
            if (x > 0 or self.word_size() == 0) and not self._next_word():
                break

    def discharge(self, out: GitEwah, limit: int, negate: int) -> int:
        index = 0
        while index < limit and self.word_size() > 0:
            pl = self.run_len
            if index + pl > limit:
                pl = limit - index
            out.add_empty_words(self.run_bit ^ negate, pl)
            index += pl
            pd = self.lits
            if pd + index > limit:
                pd = limit - index
            out.add_dirty_words(self.buf[self.lit_start : self.lit_start + pd], bool(negate))
            self.discard_first_words(pd + pl)
            index += pd
        return index


def git_ewah_xor(a: GitEwah, b: GitEwah) -> GitEwah:
    """Git's ``ewah_xor`` of two bitmaps, built the way Git builds it."""
    i, j = _RlwIter(a), _RlwIter(b)
    out = GitEwah()
    while i.word_size() > 0 and j.word_size() > 0:
        while i.run_len > 0 or j.run_len > 0:
            if i.run_len < j.run_len:
                prey, predator = i, j
            else:
                prey, predator = j, i
            negate = predator.run_bit
            index = prey.discharge(out, predator.run_len, negate)
            out.add_empty_words(negate, predator.run_len - index)
            predator.discard_first_words(predator.run_len)
        literals = min(i.lits, j.lits)
        if literals:
            for k in range(literals):
                out.add(i.buf[i.lit_start + k] ^ j.buf[j.lit_start + k])
            i.discard_first_words(literals)
            j.discard_first_words(literals)
    if i.word_size() > 0:
        i.discharge(out, 1 << 64, 0)
    else:
        j.discharge(out, 1 << 64, 0)
    out.bit_size = max(a.bit_size, b.bit_size)
    return out
