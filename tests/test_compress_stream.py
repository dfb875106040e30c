"""The reusable streaming inflater (``stream.ZlibApiStream``) and ``Inflater.reset``.

Every backend that has a ctypes-driven reusable stream (zlib, zlib-ng) is
checked directly and through ``Inflater`` with reuse switched on, whatever
``selection.STREAM_RESET`` chose for speed: the choice may flip on another
machine, the behaviour must not.
"""

from __future__ import annotations

import random
import tracemalloc
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitodb import compress
from gitodb.compress import backends, selection
from gitodb.errors import CompressionError

INSTALLED = [n for n in backends.BACKENDS if backends.load(n) is not None]
REUSABLE = [n for n in INSTALLED if backends.load(n).new_reusable_stream is not None]
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
    sizes = [b"", b"a", text(100, 1), text(1024, 2), random.Random(3).randbytes(3000),
             text(70000, 4), *([text(200_000, 5)] if big else []), b"z" * 10]
    for i, data in enumerate(sizes):
        z = zlib.compress(data, (i * 3) % 10)
        parts.append(z)
        streams.append((data, len(z)))
    return b"".join(parts) + JUNK, streams


def reusing_inflater(name: str, monkeypatch: pytest.MonkeyPatch) -> compress.Inflater:
    """An ``Inflater`` on backend ``name`` whose reset() reuses the ctypes stream."""
    monkeypatch.setitem(selection.STREAM_RESET, name, (True, "forced by the test"))
    compress.set_backend(name)
    assert compress.active_backend("inflate-stream") == name
    return compress.new_inflater()


# -- ZlibApiStream itself ------------------------------------------------------------

@pytest.mark.parametrize("name", REUSABLE)
@pytest.mark.parametrize("wrap", [bytes, memoryview, bytearray])
def test_pack_scanner_pattern(name: str, wrap: type) -> None:
    """One stream per entry, known size, from a view of the rest of the pack."""
    buf, streams = pack_like()
    rest = wrap(buf)
    s = backends.load(name).new_reusable_stream()
    pos = 0
    for data, zlen in streams:
        s.reset()
        assert (s.eof, s.consumed, s.unused_data, s.unconsumed_tail) == (False, 0, b"", b"")
        out = s.decompress(rest[pos:], len(data) + 1)
        assert out == data and s.eof
        assert s.consumed == zlen
        assert s.unused_data == buf[pos + zlen:]
        assert s.unconsumed_tail == b""
        pos += s.consumed
    assert buf[pos:] == JUNK


@pytest.mark.parametrize("name", REUSABLE)
@pytest.mark.parametrize("chunk", [1, 13, 4096, 1 << 20])
@pytest.mark.parametrize("max_length", [0, 1, 1000, 100_001])
def test_back_to_back_consumed_is_exact(name: str, chunk: int, max_length: int) -> None:
    buf, streams = pack_like(big=chunk > 1)  # byte by byte: keep it quick
    s = backends.load(name).new_reusable_stream()
    pos = 0
    for data, zlen in streams:
        s.reset()
        out = bytearray()
        feed = pos
        while not s.eof:
            piece = buf[feed:feed + chunk]
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
        assert s.unused_data == buf[pos + zlen:feed]
        pos += zlen
    assert buf[pos:] == JUNK


@pytest.mark.parametrize("name", REUSABLE)
@pytest.mark.parametrize("n", [100, 5000, 300_000])  # 300,000: inflated straight into bytes
def test_max_length(name: str, n: int) -> None:
    data = text(n, 6)
    z = zlib.compress(data)
    s = backends.load(name).new_reusable_stream()
    for ml in (n - 1, n, n + 1, n + 2, 2 * n):
        s.reset()
        out = s.decompress(z + b"tail", ml)
        assert out == data[:ml]
        if ml < n:
            assert not s.eof and s.unconsumed_tail and s.unused_data == b""
            assert s.consumed + len(s.unconsumed_tail) == len(z) + 4
            out += s.flush()  # the rest, without a limit
            assert out == data
        assert s.eof and s.unused_data == b"tail" and s.unconsumed_tail == b""
        assert s.consumed == len(z)
    s.reset()
    assert s.decompress(z) == data and s.eof  # 0: no limit
    with pytest.raises(ValueError):
        s.decompress(z, -1)


@pytest.mark.parametrize("name", REUSABLE)
def test_input_after_the_end_is_unused(name: str) -> None:
    z = zlib.compress(b"abc")
    s = backends.load(name).new_reusable_stream()
    s.reset()
    assert s.decompress(z[:-1]) == b"abc" and not s.eof
    assert s.decompress(z[-1:] + b"xy") == b"" and s.eof
    assert s.decompress(memoryview(b"z")) == b""
    assert (s.unused_data, s.consumed) == (b"xyz", len(z))


@pytest.mark.parametrize("name", REUSABLE)
def test_truncated_and_corrupt(name: str) -> None:
    data = text(20000, 7)
    z = zlib.compress(data)
    s = backends.load(name).new_reusable_stream()
    rng = random.Random(8)
    corrupt = [z[:2] + b"\xff" * 20 + z[22:], b"not zlib at all", b"\x78\x9c" + b"\xff" * 50,
               z[:-1] + bytes([z[-1] ^ 1])]  # last: bad Adler-32
    for _ in range(20):
        b = bytearray(z)
        b[rng.randrange(2, len(b))] ^= 1 << rng.randrange(8)
        corrupt.append(bytes(b))
    for sample in corrupt:
        s.reset()
        try:
            out = s.decompress(sample, len(data) + 1)
            out += s.flush()
        except CompressionError:
            continue
        # A flipped bit can leave a valid-looking stream, but never the same data.
        assert not (s.eof and out == data), "corruption went unnoticed"
    for cut in (0, 1, 2, 10, len(z) // 2, len(z) - 1):
        s.reset()
        out = s.decompress(z[:cut], len(data) + 1) + s.flush()
        assert not s.eof and len(out) < len(data) + 1  # truncated: never ends
        # ... and what follows a truncated stream never passes for its end
        for junk in (b"\xff" * 64, zlib.compress(b"next")):
            s.reset()
            try:
                out = s.decompress(z[:cut] + junk, len(data) + 1) + s.flush()
            except CompressionError:
                continue
            assert not (s.eof and out == data)
    for sample in corrupt[:4]:  # bad header, bad codes, bad Adler-32: always errors
        s.reset()
        with pytest.raises(CompressionError):
            s.decompress(sample, len(data) + 1)
            s.flush()
    s.reset()  # usable again after errors
    assert s.decompress(z, len(data) + 1) == data and s.eof and s.consumed == len(z)


@pytest.mark.parametrize("name", REUSABLE)
def test_preset_dictionary_is_an_error(name: str) -> None:
    c = zlib.compressobj(zdict=b"dictionary")
    z = c.compress(b"dictionary text") + c.flush()
    s = backends.load(name).new_reusable_stream()
    s.reset()
    with pytest.raises(CompressionError, match="dictionary"):
        s.decompress(z)


@pytest.mark.parametrize("name", REUSABLE)
@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=3000), level=st.integers(0, 9),
       cuts=st.lists(st.integers(0, 4000), max_size=6),
       max_lengths=st.lists(st.sampled_from([0, 1, 7, 100, 5000]), min_size=1, max_size=4),
       flip=st.none() | st.integers(0, 10_000))
def test_matches_stdlib_decompressobj(name: str, data: bytes, level: int, cuts: list[int],
                                      max_lengths: list[int], flip: int | None) -> None:
    """Same output, eof, unused_data, tail and consumed as ``zlib.decompressobj``."""
    z = bytearray(zlib.compress(data, level) + b"after")
    if flip is not None:
        z[flip % len(z)] ^= 1 << (flip % 8)
    z = bytes(z)
    bounds = sorted({0, len(z), *(c % (len(z) + 1) for c in cuts)})
    s = backends.load(name).new_reusable_stream()
    s.reset()
    ref = zlib.decompressobj()
    results = []
    for obj in (s, ref):
        out, err = bytearray(), False
        try:
            for i, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False)):
                ml = max_lengths[i % len(max_lengths)]
                out += obj.decompress(memoryview(z)[a:b], ml)
                while obj.unconsumed_tail and not obj.eof:
                    out += obj.decompress(obj.unconsumed_tail, ml)
            if not obj.eof:
                out += obj.flush()
        except (CompressionError, zlib.error):
            err = True
        results.append((bytes(out), obj.eof, obj.unused_data, err))
    mine, theirs = results
    if mine[3] or theirs[3]:
        # CPython's flush() swallows a bad checksum (eof stays False); ours raises.
        assert mine[3] and (theirs[3] or not theirs[1])
        return
    assert mine == theirs
    if s.eof:
        assert s.consumed == len(z) - len(s.unused_data)


# -- Inflater.reset with reuse switched on ------------------------------------------

@pytest.mark.parametrize("name", REUSABLE)
@pytest.mark.parametrize("chunk", [1, 4096, 1 << 20])
def test_inflater_reuse_consumed_is_exact(name: str, chunk: int,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    inf = reusing_inflater(name, monkeypatch)
    buf, streams = pack_like()
    pos = 0
    first = None
    for data, zlen in streams:
        inf.reset()
        if first is None:
            first = inf._d
        assert inf._d is first  # one stream object for every stream
        assert (inf.eof, inf.consumed, inf.unused_data, inf.unconsumed_tail) == \
            (False, 0, b"", b"")
        out = bytearray()
        feed = pos
        while not inf.eof:
            piece = buf[feed:feed + chunk]
            feed += len(piece)
            out += inf.decompress(piece, 1000)
            while inf.unconsumed_tail and not inf.eof:
                out += inf.decompress(inf.unconsumed_tail, 1000)
        out += inf.flush()
        assert bytes(out) == data
        assert inf.consumed == zlen
        assert inf.unused_data == buf[pos + zlen:feed]
        pos += inf.consumed
    assert buf[pos:] == JUNK


@pytest.mark.parametrize("name", REUSABLE)
def test_inflater_reuse_errors(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    inf = reusing_inflater(name, monkeypatch)
    data = text(3000, 9)
    z = zlib.compress(data)
    inf.reset()
    with pytest.raises(CompressionError):
        inf.decompress(z[:2] + b"\xff" * 20 + z[22:])
        inf.flush()
    inf.reset()
    inf.decompress(z[:-3])
    inf.flush()
    assert not inf.eof  # truncated: never ends (callers check eof, as with zlib)
    inf.reset()
    assert inf.decompress(memoryview(z), len(data) + 1) == data
    assert inf.eof and inf.consumed == len(z)


@pytest.mark.parametrize("name", REUSABLE)
@pytest.mark.parametrize("size", [100, 4096])
def test_reset_really_reuses(name: str, size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """tracemalloc: after the first stream, a stream allocates only its output."""
    expected = [text(size, seed) for seed in range(40)]
    blocks = [zlib.compress(e) for e in expected]

    def peak_per_stream(inf: compress.Inflater) -> int:
        inf.reset()
        inf.decompress(blocks[0], size + 1)  # first stream sets up the state
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            for e, z in zip(expected, blocks, strict=True):
                inf.reset()
                out = inf.decompress(z, size + 1)
                assert out == e and inf.eof and inf.consumed == len(z)
                del out
            return tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()

    compress.set_backend(name)
    monkeypatch.setitem(selection.STREAM_RESET, name, (False, "forced by the test"))
    fresh = peak_per_stream(compress.new_inflater())
    reused = peak_per_stream(reusing_inflater(name, monkeypatch))
    # The output and a few small objects only; a new zlib stream is 7+ KiB of state.
    assert reused < size + 2048, reused
    assert fresh > reused + 4096, (fresh, reused)


def test_choice_per_backend_is_reported() -> None:
    """Every backend says whether reset() reuses state, and why."""
    for name in INSTALLED:
        b = backends.load(name)
        reuses, why = selection.stream_reset_reuses(b)
        assert why
        if b.new_reusable_stream is None:
            assert not reuses
        else:
            assert (reuses, why) == selection.STREAM_RESET[name]
    for name in ("isal", "libdeflate"):
        b = backends.load(name)
        if b is not None:
            assert b.new_reusable_stream is None and b.reusable_stream_note.startswith("none")


@pytest.mark.parametrize("name", [n for n in INSTALLED if backends.load(n).decompressobj])
def test_inflater_follows_the_choice(name: str) -> None:
    compress.set_backend(name)
    b = backends.load(name)
    inf = compress.new_inflater()
    inf.reset()
    inf.decompress(zlib.compress(b"x"))
    inf.reset()
    reuses = selection.stream_reset_reuses(b)[0]
    assert (inf._reusable is not None) == reuses


@pytest.mark.parametrize("name", REUSABLE)
def test_huge_max_length_allocates_by_input(name: str) -> None:
    """A corrupt declared size (max_length) must not allocate it up front."""
    z = zlib.compress(b"small")
    s = backends.load(name).new_reusable_stream()
    s.reset()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        assert s.decompress(z, 1 << 40) == b"small" and s.eof
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak
