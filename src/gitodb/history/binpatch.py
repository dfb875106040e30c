"""Git's binary patch (``diff --binary``): ``GIT binary patch`` and two hunks.

Each hunk takes one side to the other (new from old, then old from new).  It is
either ``literal <size>``, the target deflated, or ``delta <size>``, a pack-style
delta from the source to the target, deflated; the delta is used only when its
deflated form is the smaller one.  The deflated bytes are written 52 to a line in
base85, each line led by a letter for its length (``A``-``Z`` 1-26, ``a``-``z``
27-52), and each hunk ends with an empty line.

The delta is Git's ``diff_delta`` (its ``create_delta_index`` and
``create_delta``, as Git's own documentation and the delta format describe them):
the source is indexed by a Rabin fingerprint of every 16-byte block (the lowest
of equal neighbouring blocks kept, at most 64 per hash bucket, culled evenly),
and the target is scanned with the rolling fingerprint, taking the longest match
of at least 4 bytes (looking no further once one reaches 4096 bytes), extending
it backwards over inserted bytes, and inserting the rest 127 bytes at most per
opcode.  Git gives up (no delta) when the delta would be larger than the target
deflated; so does ``diff_delta`` here.  Deflating is the compression layer's
``deflate_as_git``: the same bytes as Git's zlib at Git's level.
"""

from __future__ import annotations

from base64 import b85encode

from gitodb import compress

_RABIN_SHIFT = 23
_RABIN_WINDOW = 16
_HASH_LIMIT = 64
_MAX_OP_SIZE = 5 + 5 + 1 + _RABIN_WINDOW + 7  # Git grows its buffer this far ahead
_POLY = 0xAB59B4D1  # x^31 + ..., the fingerprint's polynomial as Git uses it


def _tables() -> tuple[list[int], list[int]]:
    """T[t]: what XOR-ing removes the byte ``t`` shifted past bit 30 (its residue
    modulo the polynomial, plus bit 31 to cancel); U[c]: byte ``c``'s part of a
    16-byte window's fingerprint once it is the oldest byte (``c * x^120``)."""

    def times_x(v: int, k: int) -> int:
        for _ in range(k):
            v <<= 1
            if v & 0x80000000:
                v ^= _POLY
        return v

    t = [((i << 31) & 0xFFFFFFFF) ^ times_x(i, 31) for i in range(256)]
    u = [times_x(c, 8 * (_RABIN_WINDOW - 1)) for c in range(256)]
    return t, u


_T, _U = _tables()


def _index(src: bytes) -> tuple[list[list[tuple[int, int]]], int]:
    """``create_delta_index``: per bucket, ``(fingerprint, end offset)`` of the
    blocks in ascending order, and the bucket mask."""
    T = _T
    entries = (len(src) - 1) // _RABIN_WINDOW
    hsize_want = entries // 4
    bits = 4
    while (1 << bits) < hsize_want:
        bits += 1
    hmask = (1 << bits) - 1
    # Blocks from the end backwards; each bucket is built newest-first, so the
    # lowest address ends up first (Git pushes at the head of a list).
    buckets: list[list[tuple[int, int]]] = [[] for _ in range(hmask + 1)]
    prev_val = -1
    last: list[tuple[int, int]] | None = None
    for start in range(entries * _RABIN_WINDOW - _RABIN_WINDOW, -1, -_RABIN_WINDOW):
        val = 0
        for i in range(start + 1, start + _RABIN_WINDOW + 1):
            val = (((val << 8) | src[i]) & 0xFFFFFFFF) ^ T[val >> _RABIN_SHIFT]
        ptr = start + _RABIN_WINDOW
        if val == prev_val and last is not None:
            last[-1] = (val, ptr)  # keep the lowest of consecutive identical blocks
        else:
            prev_val = val
            last = buckets[val & hmask]
            last.append((val, ptr))
    for b in range(len(buckets)):
        lst = buckets[b]
        lst.reverse()  # ascending addresses, as Git's list from its head
        count = len(lst)
        if count > _HASH_LIMIT:
            buckets[b] = _cull(lst, count)
    return buckets, hmask


def _cull(lst: list[tuple[int, int]], count: int) -> list[tuple[int, int]]:
    """Keep exactly ``_HASH_LIMIT`` entries of a bucket, spread evenly, as Git's
    accumulator walk over the list does."""
    keep: list[tuple[int, int]] = []
    acc = 0
    k = 0
    while k < count:
        acc += count - _HASH_LIMIT
        kept = k
        if acc > 0:
            while acc > 0:
                k += 1
                acc -= _HASH_LIMIT
            # the entries after ``kept`` up to ``k`` are dropped
        keep.append(lst[kept])
        k += 1
    return keep


def _size_varint(out: bytearray, n: int) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def diff_delta(src: bytes, trg: bytes, max_size: int = 0) -> bytes | None:
    """Git's delta from ``src`` to ``trg``, or None: either side empty, or the
    delta longer than ``max_size`` (when not 0)."""
    if not src or not trg:
        return None
    T, U = _T, _U
    buckets, hmask = _index(src)
    ref_top = len(src)
    top = len(trg)
    head = bytearray()
    _size_varint(head, len(src))
    _size_varint(head, len(trg))
    # The output with room for the worst case; out[outpos] is the next byte.
    out = bytearray(len(head) + 2 * top + 64)
    out[: len(head)] = head
    outpos = len(head)
    outpos += 1  # the first insert's count
    val = 0
    data = 0
    while data < _RABIN_WINDOW and data < top:
        c = trg[data]
        out[outpos] = c
        outpos += 1
        val = (((val << 8) | c) & 0xFFFFFFFF) ^ T[val >> _RABIN_SHIFT]
        data += 1
    inscnt = data
    moff = 0
    msize = 0
    # Git's output buffer size: it stops where growing it shows the delta too long.
    outsize = 8192
    if max_size and outsize >= max_size:
        outsize = max_size + _MAX_OP_SIZE + 1
    while data < top:
        if msize < 4096:
            val ^= U[trg[data - _RABIN_WINDOW]]
            val = (((val << 8) | trg[data]) & 0xFFFFFFFF) ^ T[val >> _RABIN_SHIFT]
            for ev, ptr in buckets[val & hmask]:
                if ev != val:
                    continue
                ref_size = ref_top - ptr
                if ref_size > top - data:
                    ref_size = top - data
                if ref_size <= msize:
                    break
                n = 0
                while n < ref_size and trg[data + n] == src[ptr + n]:
                    n += 1
                if msize < n:
                    msize = n
                    moff = ptr
                    if msize >= 4096:
                        break
        if msize < 4:
            if not inscnt:
                outpos += 1
            out[outpos] = trg[data]
            outpos += 1
            data += 1
            inscnt += 1
            if inscnt == 0x7F:
                out[outpos - inscnt - 1] = inscnt
                inscnt = 0
            msize = 0
        else:
            if inscnt:
                while moff and src[moff - 1] == trg[data - 1]:
                    # match one byte back
                    msize += 1
                    moff -= 1
                    data -= 1
                    outpos -= 1
                    inscnt -= 1
                    if inscnt:
                        continue
                    outpos -= 1  # remove the count slot
                    inscnt = -1
                    break
                if inscnt > 0:
                    out[outpos - inscnt - 1] = inscnt
                inscnt = 0
            left = 0 if msize < 0x10000 else msize - 0x10000
            msize -= left
            op = outpos
            outpos += 1
            i = 0x80
            for bit, shift in ((0x01, 0), (0x02, 8), (0x04, 16), (0x08, 24)):
                if moff & (0xFF << shift):
                    out[outpos] = (moff >> shift) & 0xFF
                    outpos += 1
                    i |= bit
            for bit, shift in ((0x10, 0), (0x20, 8)):
                if msize & (0xFF << shift):
                    out[outpos] = (msize >> shift) & 0xFF
                    outpos += 1
                    i |= bit
            out[op] = i
            data += msize
            moff += msize
            msize = left
            if moff > 0xFFFFFFFF:
                msize = 0
            if msize < 4096:
                val = 0
                for j in range(data - _RABIN_WINDOW, data):
                    val = (((val << 8) | trg[j]) & 0xFFFFFFFF) ^ T[val >> _RABIN_SHIFT]
        if outpos >= outsize - _MAX_OP_SIZE:
            outsize = outsize * 3 // 2
            if max_size and outsize >= max_size:
                outsize = max_size + _MAX_OP_SIZE + 1
            if max_size and outpos > max_size:
                return None
    if inscnt:
        out[outpos - inscnt - 1] = inscnt
    if max_size and outpos > max_size:
        return None
    return bytes(out[:outpos])


def _hunk(out: list[bytes], src: bytes, trg: bytes, level: int) -> None:
    """One hunk: ``trg`` as a literal or as a delta from ``src``."""
    deflated = compress.deflate_as_git(trg, level)
    delta = None
    if src and trg:
        raw = diff_delta(src, trg, len(deflated))
        if raw is not None:
            delta = (len(raw), compress.deflate_as_git(raw, level))
    if delta is not None and len(delta[1]) < len(deflated):
        out.append(b"delta %d\n" % delta[0])
        data = delta[1]
    else:
        out.append(b"literal %d\n" % len(trg))
        data = deflated
    for at in range(0, len(data), 52):
        chunk = data[at : at + 52]
        n = len(chunk)
        out.append(bytes([n + 64 if n <= 26 else n - 26 + 96]) + b85encode(chunk, pad=True) + b"\n")
    out.append(b"\n")


def binary_patch(old: bytes, new: bytes, level: int = 1) -> bytes:
    """``GIT binary patch`` from ``old`` to ``new`` and back (``level``: Git's
    ``core.compression``)."""
    out = [b"GIT binary patch\n"]
    _hunk(out, old, new, level)
    _hunk(out, new, old, level)
    return b"".join(out)
