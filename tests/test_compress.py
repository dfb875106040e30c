"""Round trips, back-to-back streams and bad input for every zlib backend.

Every installed backend, for every operation it can do, against the standard
library's zlib in both directions.  Compressed bytes are never compared (each
library compresses differently), only what they inflate to.
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
LEVELS = range(0, 10)


@pytest.fixture(autouse=True)
def _restore_backend():
    yield
    compress.set_backend(None)


def text(n: int, seed: int = 0) -> bytes:
    """Compressible text-like data of ``n`` bytes."""
    rng = random.Random(seed)
    words = [
        bytes(rng.choices(b"abcdefghijklmnopqrstuvwxyz", k=rng.randint(1, 9))) for _ in range(300)
    ]
    out = bytearray()
    while len(out) < n:
        out += rng.choice(words) + rng.choice([b" ", b" ", b"\n", b", "])
    return bytes(out[:n])


SIZES = {
    "empty": b"",
    "1byte": b"x",
    "64KiB+1 text": text(65537),
    "64KiB+1 random": random.Random(5).randbytes(65537),
}


@pytest.fixture(scope="module")
def big() -> tuple[bytes, bytes]:
    """16 MiB of text and its stdlib level-1 stream (the few 16 MiB cases share it)."""
    data = text(1 << 20, seed=16) * 16
    return data, zlib.compress(data, 1)


# -- stdlib deflate -> backend inflate --------------------------------------------------


@pytest.mark.parametrize("name", INSTALLED)
@pytest.mark.parametrize("label", list(SIZES))
def test_backend_inflates_stdlib_streams(name: str, label: str) -> None:
    b = backends.load(name)
    data = SIZES[label]
    ctx = b.new_prefix_context() if b.new_prefix_context else None
    for level in LEVELS:
        z = zlib.compress(data, level)
        assert b.inflate(z, len(data)) == data
        assert b.inflate(z + b"trailing", len(data)) == data
        if b.inflate_prefix is not None:
            assert b.inflate_prefix(z + b"more", len(data)) == (data, len(z))
        if ctx is not None:  # the same context for every level: reuse must be clean
            assert ctx.inflate_prefix(z + b"more", len(data)) == (data, len(z))
        if b.decompressobj is not None:
            d = b.decompressobj()
            assert d.decompress(z + b"tail") + d.flush() == data
            assert d.eof and d.unused_data == b"tail"


@pytest.mark.parametrize("name", INSTALLED)
def test_backend_inflates_16mib(name: str, big: tuple[bytes, bytes]) -> None:
    data, z = big
    b = backends.load(name)
    assert b.inflate(z, len(data)) == data
    if b.new_prefix_context is not None:
        assert b.new_prefix_context().inflate_prefix(z, len(data)) == (data, len(z))


@pytest.mark.parametrize("name", INSTALLED)
def test_api_streaming_inflate_16mib(name: str, big: tuple[bytes, bytes]) -> None:
    data, z = big
    compress.set_backend(name)
    inf = compress.new_inflater()
    out = bytearray()
    for i in range(0, len(z), 1 << 20):
        out += inf.decompress(z[i : i + (1 << 20)])
    out += inf.flush()
    assert inf.eof and inf.consumed == len(z) and out == data


# -- backend deflate -> stdlib inflate --------------------------------------------------


@pytest.mark.parametrize("name", INSTALLED)
@pytest.mark.parametrize("label", list(SIZES))
def test_stdlib_inflates_backend_streams(name: str, label: str) -> None:
    data = SIZES[label]
    compress.set_backend(name)
    for level in [-1, *LEVELS]:
        assert zlib.decompress(compress.deflate(data, level)) == data
        d = compress.Deflater(level)
        out = b"".join([d.compress(data[:7]), d.compress(data[7:]), d.flush()])
        assert zlib.decompress(out) == data


@pytest.mark.parametrize("name", INSTALLED)
def test_backend_deflate_levels_it_claims(name: str) -> None:
    b = backends.load(name)
    data = SIZES["64KiB+1 text"]
    for level in sorted(b.deflate_levels):
        if b.deflate is not None:
            assert zlib.decompress(b.deflate(data, level)) == data
        if b.compressobj is not None:
            c = b.compressobj(level)
            assert zlib.decompress(c.compress(data) + c.flush()) == data


@pytest.mark.parametrize("name", INSTALLED)
def test_deflate_16mib(name: str, big: tuple[bytes, bytes]) -> None:
    data = big[0]
    compress.set_backend(name)
    assert zlib.decompress(compress.deflate(data, 1)) == data


@pytest.mark.parametrize("name", INSTALLED)
def test_level_zero_is_stored(name: str) -> None:
    """Git's level 0 means stored blocks on every backend (ISA-L's 0 is not)."""
    data = random.Random(3).randbytes(1000)
    compress.set_backend(name)
    for out in (
        compress.deflate(data, 0),
        (lambda d: d.compress(data) + d.flush())(compress.Deflater(0)),
    ):
        assert zlib.decompress(out) == data
        # stored: 2-byte header, 5-byte block header(s), the data, 4-byte Adler-32
        assert data in out


@pytest.mark.parametrize("name", INSTALLED)
def test_bad_level(name: str) -> None:
    compress.set_backend(name)
    for level in (-2, 10, 12):
        with pytest.raises(CompressionError, match=f"bad zlib compression level {level}"):
            compress.deflate(b"x", level)
        with pytest.raises(CompressionError):
            compress.Deflater(level)


# -- back-to-back streams ---------------------------------------------------------------


def back_to_back() -> tuple[bytes, list[tuple[bytes, int]]]:
    """Several zlib streams with no lengths between them, then junk; plus (data, zlen)."""
    parts, streams = [], []
    for i, data in enumerate(
        [b"", b"a", text(5000, 1), random.Random(2).randbytes(3000), text(70000, 3), b"z" * 10]
    ):
        z = zlib.compress(data, i % 10)
        parts.append(z)
        streams.append((data, len(z)))
    return b"".join(parts) + b"JUNK after the last stream", streams


@pytest.mark.parametrize("name", INSTALLED)
@pytest.mark.parametrize("chunk", [1, 13, 4096, 1 << 20])
def test_streaming_consumed_is_exact(name: str, chunk: int) -> None:
    compress.set_backend(name)
    buf, streams = back_to_back()
    inf = compress.new_inflater()
    pos = 0
    for data, zlen in streams:
        inf.reset()
        out = bytearray()
        feed = pos
        while not inf.eof:
            piece = buf[feed : feed + chunk]
            assert piece, "ran out of input before the end of the stream"
            feed += len(piece)
            out += inf.decompress(piece, 1000)
            while inf.unconsumed_tail and not inf.eof:  # max_length stopped the output
                out += inf.decompress(inf.unconsumed_tail, 1000)
        out += inf.flush()
        assert bytes(out) == data
        assert inf.consumed == zlen
        assert inf.unused_data == buf[pos + zlen : feed]
        pos += inf.consumed
    assert buf[pos:] == b"JUNK after the last stream"


@pytest.mark.parametrize("name", INSTALLED)
def test_inflate_prefix_consumed_is_exact(name: str) -> None:
    compress.set_backend(name)
    buf, streams = back_to_back()
    inf = compress.new_inflater()
    view = memoryview(buf)
    pos_api = pos_inf = pos_mv = 0
    for data, zlen in streams:
        out, used = compress.inflate_prefix(buf[pos_api:], len(data))
        assert (out, used) == (data, zlen)
        pos_api += used
        out, used = inf.inflate_prefix(buf[pos_inf:], len(data))
        assert (out, used) == (data, zlen)
        pos_inf += used
        out, used = inf.inflate_prefix(view[pos_mv:], len(data))  # read-only view
        assert (out, used) == (data, zlen)
        out, used = inf.inflate_prefix(bytearray(view[pos_mv:]), len(data))
        assert (out, used) == (data, zlen)
        pos_mv += used
        assert compress.inflate(view[pos_mv - used :], len(data)) == data
    assert pos_api == pos_inf == pos_mv == len(buf) - len(b"JUNK after the last stream")


# -- bad input --------------------------------------------------------------------------


def one_shot_ops(name: str):
    """Every one-shot inflate path under backend ``name``: (label, fn(data, size))."""
    compress.set_backend(name)
    inf = compress.new_inflater()
    ops = [
        ("inflate", compress.inflate),
        ("inflate_prefix", compress.inflate_prefix),
        ("Inflater.inflate_prefix", inf.inflate_prefix),
    ]
    b = backends.load(name)
    ops.append(("backend.inflate", b.inflate))
    if b.inflate_prefix is not None:
        ops.append(("backend.inflate_prefix", b.inflate_prefix))
    return ops


@pytest.mark.parametrize("name", INSTALLED)
@pytest.mark.parametrize("n", [3000, 100_000])  # 100,000: inflated straight into the result
def test_wrong_size_is_an_error(name: str, n: int) -> None:
    data = text(n, 7)
    z = zlib.compress(data)
    for label, fn in one_shot_ops(name):
        for size in (0, len(data) - 1, len(data) + 1, 2 * len(data)):
            with pytest.raises(CompressionError):
                fn(z, size)
                pytest.fail(f"{label} accepted size {size}")
        assert fn(z, len(data)) in (data, (data, len(z)))  # still usable afterwards


@pytest.mark.parametrize("name", INSTALLED)
@pytest.mark.parametrize("n", [3000, 100_000])
def test_truncated_and_corrupt_are_errors(name: str, n: int) -> None:
    data = text(n, 8)
    z = zlib.compress(data)
    rng = random.Random(9)
    bad = [z[:n] for n in (0, 1, 2, 10, len(z) // 2, len(z) - 4, len(z) - 1)]
    for _ in range(30):
        b = bytearray(z)
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
        bad.append(bytes(b))
    bad += [b"\x78\x9c" + b"\xff" * 50, b"not zlib at all", b"\x00" * 100]
    for label, fn in one_shot_ops(name):
        for sample in bad:
            with pytest.raises(CompressionError):
                fn(sample, len(data))
                pytest.fail(f"{label} accepted bad input {sample[:20]!r}")


@pytest.mark.parametrize("name", INSTALLED)
def test_streaming_truncated_and_corrupt(name: str) -> None:
    data = text(3000, 10)
    z = zlib.compress(data)
    compress.set_backend(name)
    inf = compress.new_inflater()
    inf.decompress(z[:-3])
    inf.flush()
    assert not inf.eof  # truncated: the stream never ends
    inf.reset()
    corrupt = z[:2] + b"\xff" * 20 + z[22:]
    with pytest.raises(CompressionError):
        inf.decompress(corrupt)
        inf.flush()
    inf.reset()
    assert inf.decompress(z) == data and inf.eof and inf.consumed == len(z)


@pytest.mark.parametrize("name", INSTALLED)
@settings(max_examples=150, deadline=None)
@given(
    blob=st.binary(max_size=300), size=st.one_of(st.integers(0, 5000), st.integers(65536, 200_000))
)
def test_fuzz_only_our_errors(name: str, blob: bytes, size: int) -> None:
    compress.set_backend(name)
    for candidate in (blob, b"\x78\x9c" + blob):
        for fn in (
            compress.inflate,
            compress.inflate_prefix,
            compress.new_inflater().inflate_prefix,
        ):
            try:
                fn(candidate, size)
            except CompressionError:
                pass
        inf = compress.new_inflater()
        try:
            inf.decompress(candidate, size + 1)
            inf.flush()
        except CompressionError:
            pass


# -- reuse -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", INSTALLED)
def test_reused_inflater_does_not_allocate_per_stream(name: str) -> None:
    """Reftable log blocks: one inflater, many ~4 KiB streams, no per-block state."""
    import tracemalloc

    compress.set_backend(name)
    expected = [text(4096, seed) for seed in range(50)]
    blocks = [zlib.compress(e) for e in expected]
    inf = compress.new_inflater()
    inf.inflate_prefix(blocks[0], 4096)  # first call sets up the state
    ctx_reuses = compress.routing().backend("inflate-reuse").reuse_note.startswith("reused")
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        for seed, z in enumerate(blocks):
            out, _ = inf.inflate_prefix(z, 4096)
            assert out == expected[seed]
            del out
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    if ctx_reuses:
        # only the 4 KiB output; a new zlib stream alone is 7+ KiB of state
        assert peak < 6 * 1024, peak
    else:
        assert peak > 0  # honest: this backend sets up a stream per block


def padded_stream(data: bytes, empty_blocks: int) -> bytes:
    """A valid zlib stream: ``empty_blocks`` empty stored blocks, then ``data`` stored.

    Its compressed size is far above ``len(data)``, which no compressor would emit
    but a valid stream may be.
    """
    body = b"\x00\x00\x00\xff\xff" * empty_blocks  # BFINAL=0, stored, LEN=0, NLEN=0xffff
    n = len(data)
    body += b"\x01" + n.to_bytes(2, "little") + (n ^ 0xFFFF).to_bytes(2, "little") + data
    return b"\x78\x01" + body + zlib.adler32(data).to_bytes(4, "big")


@pytest.mark.parametrize("name", INSTALLED)
def test_long_buffers_after_the_stream(name: str) -> None:
    """Streams followed by much more data (a pack's rest), or much longer than their output."""
    compress.set_backend(name)
    data = text(3000, 12)
    junk = random.Random(13).randbytes(1 << 20)
    inf = compress.new_inflater()
    for z in (
        zlib.compress(data),
        padded_stream(data, 0),
        padded_stream(data, 2000),
        padded_stream(b"", 50000),
    ):
        want = zlib.decompress(z)
        for buf in (z + junk, memoryview(z + junk), bytearray(z + junk)):
            assert compress.inflate(buf, len(want)) == want
            assert compress.inflate_prefix(buf, len(want)) == (want, len(z))
            assert inf.inflate_prefix(buf, len(want)) == (want, len(z))
            with pytest.raises(CompressionError):
                compress.inflate_prefix(buf, len(want) + 1)
        # truncated inside a long buffer of zeros: still an error, never a hang
        cut = z[: len(z) // 2] + bytes(1 << 20)
        with pytest.raises(CompressionError):
            compress.inflate_prefix(cut, len(want))
