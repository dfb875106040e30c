"""The streaming inflater (``Inflater``) and ``inflate_head`` on every backend.

Every stream runs on the chosen backend's public ``decompressobj`` (no ctypes
stream, no library symbols); ``reset()`` starts the next stream.  The pack
scanner's pattern (back-to-back streams, exact input consumed) must hold on
every backend that can stream.
"""

from __future__ import annotations

import random
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitodb import compress
from gitodb.compress import backends
from gitodb.errors import CompressionError

INSTALLED = [n for n in backends.BACKENDS if backends.load(n) is not None]
STREAMING = [n for n in INSTALLED if backends.load(n).decompressobj is not None]
JUNK = b"JUNK after the last stream"


@pytest.fixture(autouse=True)
def _restore_backend():
    yield
    compress.set_backend(None)


def text(n: int, seed: int = 0) -> bytes:
    rng = random.Random(seed)
    words = [bytes(rng.choices(b"abcdefghijklmnop", k=rng.randint(1, 8))) for _ in range(200)]
    out = bytearray()
    while len(out) < n:
        out += rng.choice(words) + rng.choice([b" ", b"\n"])
    return bytes(out[:n])


def pack_like(big: bool = True) -> tuple[bytes, list[tuple[bytes, int]]]:
    """Back-to-back zlib streams with no lengths between them, then junk."""
    parts, streams = [], []
    sizes = [
        b"",
        b"a",
        text(100, 1),
        text(1024, 2),
        random.Random(3).randbytes(3000),
        text(70000, 4),
        *([text(200_000, 5)] if big else []),
        b"z" * 10,
    ]
    for i, data in enumerate(sizes):
        z = zlib.compress(data, (i * 3) % 10)
        parts.append(z)
        streams.append((data, len(z)))
    return b"".join(parts) + JUNK, streams


@pytest.mark.parametrize("name", STREAMING)
@pytest.mark.parametrize("chunk", [1, 13, 4096, 1 << 20])
@pytest.mark.parametrize("max_length", [0, 1, 1000, 100_001])
def test_back_to_back_consumed_is_exact(name: str, chunk: int, max_length: int) -> None:
    buf, streams = pack_like(big=chunk > 1)  # byte by byte: keep it quick
    compress.set_backend(name)
    s = compress.new_inflater()
    pos = 0
    for data, zlen in streams:
        s.reset()
        out = bytearray()
        feed = pos
        while not s.eof:
            piece = buf[feed : feed + chunk]
            assert piece, "ran out of input before the end of the stream"
            feed += len(piece)
            got = s.decompress(piece, max_length)
            assert not max_length or len(got) <= max_length
            out += got
            while s.unconsumed_tail and not s.eof:  # max_length stopped the output
                got = s.decompress(s.unconsumed_tail, max_length)
                assert not max_length or len(got) <= max_length
                out += got
        assert s.flush() == b""
        assert bytes(out) == data
        assert s.consumed == zlen
        assert s.unused_data == buf[pos + zlen : feed]
        pos += zlen
    assert buf[pos:] == JUNK


@pytest.mark.parametrize("name", STREAMING)
@pytest.mark.parametrize("wrap", [bytes, memoryview, bytearray])
def test_pack_scanner_pattern(name: str, wrap: type) -> None:
    """One stream per entry, known size, from a view of the rest of the pack."""
    buf, streams = pack_like()
    rest = wrap(buf)
    compress.set_backend(name)
    s = compress.new_inflater()
    pos = 0
    for data, zlen in streams:
        s.reset()
        assert (s.eof, s.consumed, s.unused_data, s.unconsumed_tail) == (False, 0, b"", b"")
        out = s.decompress(rest[pos:], len(data) + 1)
        assert out == data and s.eof
        assert s.consumed == zlen
        assert s.unconsumed_tail == b""
        pos += s.consumed
    assert buf[pos:] == JUNK


@pytest.mark.parametrize("name", STREAMING)
def test_inflate_head_reads_only_the_start(name: str) -> None:
    compress.set_backend(name)
    data = text(100_000, 9)
    z = zlib.compress(data)
    assert compress.inflate_head(z, 20) == data[:20]
    # Damage after the first output is not met (Git reads headers this way).
    damaged = bytearray(z)
    damaged[len(z) // 2 : len(z) // 2 + 64] = b"\xff" * 64
    assert compress.inflate_head(bytes(damaged), 20) == data[:20]
    with pytest.raises(CompressionError):
        compress.inflate_head(b"\x78\x9c\xff\xff\xff\xff", 20)


@pytest.mark.parametrize("name", STREAMING)
@settings(max_examples=40, deadline=None)
@given(
    data=st.binary(max_size=3000),
    level=st.integers(0, 9),
    cuts=st.lists(st.integers(1, 500), max_size=6),
)
def test_matches_stdlib_decompressobj(name: str, data: bytes, level: int, cuts: list[int]) -> None:
    compress.set_backend(name)
    z = zlib.compress(data, level) + JUNK
    inf = compress.new_inflater()
    out, pos = bytearray(), 0
    for cut in [*cuts, len(z)]:
        piece = z[pos : pos + cut]
        pos += len(piece)
        out += inf.decompress(piece)
        if inf.eof:
            break
    assert bytes(out) == data and inf.eof
    assert inf.consumed == len(z) - len(JUNK)
