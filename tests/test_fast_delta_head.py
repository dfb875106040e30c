"""The native delta-head decoder against zlib: same first bytes, or it defers to zlib.

``cat-file --batch-check`` needs each delta's result size, the second varint of
its first bytes.  ``_native.fast_delta_head`` decodes those bytes without zlib's
table set-up; wherever it answers, its answer must be zlib's (the bytes a 20-byte
inflate gives, with no error on the way), and where it is unsure it says None.
"""

from __future__ import annotations

import random
import zlib

import pytest

native = pytest.importorskip("gitodb._native")
fast_delta_head = getattr(native, "fast_delta_head", None)
pytestmark = pytest.mark.skipif(fast_delta_head is None, reason="native core built without zlib")

STRATEGIES = [
    zlib.Z_DEFAULT_STRATEGY,
    zlib.Z_FILTERED,
    zlib.Z_HUFFMAN_ONLY,
    zlib.Z_RLE,
    zlib.Z_FIXED,
]


def zlib_head(data: bytes) -> bytes | None:
    """What one inflate into a 20-byte buffer gives (None: zlib reports an error)."""
    try:
        return zlib.decompressobj().decompress(data, 20)
    except zlib.error:
        return None


def delta_like(rng: random.Random) -> bytes:
    """Bytes shaped like a delta: two size varints, copy opcodes, inserted text."""
    out = bytearray()
    for _ in range(2):
        v = rng.choice([rng.randrange(128), rng.randrange(1 << 14), rng.randrange(1 << 30)])
        while True:
            out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
            v >>= 7
            if not v:
                break
    words = [b"int ", b"return ", b"git_", b"(void)", b"\n\t", b"0x", b"struct "]
    for _ in range(rng.randrange(0, 30)):
        if rng.random() < 0.4:
            out += bytes([0x80 | rng.randrange(128)]) + rng.randbytes(rng.randrange(0, 4))
        else:
            n = rng.randrange(1, 40)
            out.append(n)
            out += b"".join(rng.choice(words) for _ in range(n))[:n].ljust(n, b" ")
    return bytes(out)


def stream(rng: random.Random, payload: bytes) -> bytes:
    c = zlib.compressobj(
        rng.randrange(0, 10), zlib.DEFLATED, rng.randrange(9, 16), 8, rng.choice(STRATEGIES)
    )
    if rng.random() < 0.3:  # several blocks: a full flush in between
        cut = rng.randrange(len(payload) + 1)
        return (
            c.compress(payload[:cut])
            + c.flush(zlib.Z_FULL_FLUSH)
            + c.compress(payload[cut:])
            + c.flush()
        )
    return c.compress(payload) + c.flush()


def check(data: bytes) -> bytes | None:
    got = fast_delta_head(data)
    if got is not None:
        assert got == zlib_head(data), data.hex()
    return got


def test_agrees_with_zlib_on_whole_streams() -> None:
    rng = random.Random(12)
    decided = 0
    for _ in range(3000):
        payload = delta_like(rng) if rng.random() < 0.8 else rng.randbytes(rng.randrange(300))
        if check(stream(rng, payload)) is not None:
            decided += 1
    assert decided > 2700  # the common streams are decided without zlib


def test_agrees_with_zlib_on_cut_and_damaged_streams() -> None:
    rng = random.Random(13)
    for _ in range(1500):
        data = stream(rng, delta_like(rng))
        for cut in range(0, len(data) + 1, max(1, len(data) // 12)):
            check(data[:cut])
        damaged = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
        check(bytes(damaged))
        check(rng.randbytes(rng.randrange(1, 40)))


def test_defers_on_a_preset_dictionary_and_on_bad_headers() -> None:
    c = zlib.compressobj(zdict=b"dictionary")
    assert fast_delta_head(c.compress(b"dictionary words") + c.flush()) is None
    good = zlib.compress(b"\x90\x10\x80\x20hello")
    assert fast_delta_head(bytes([good[0], good[1] ^ 1]) + good[2:]) is None
    assert fast_delta_head(b"x") is None


def test_a_stream_ending_early_is_checked_like_zlib() -> None:
    data = zlib.compress(b"\x05\x07abc")
    assert fast_delta_head(data) == b"\x05\x07abc"
    bad = data[:-1] + bytes([data[-1] ^ 0xFF])  # wrong Adler-32
    assert zlib_head(bad) is None and fast_delta_head(bad) is None
    assert fast_delta_head(data[:-2]) == b"\x05\x07abc"  # zlib waits for the trailer
