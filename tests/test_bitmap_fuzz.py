"""Property tests: the .bitmap reader and EWAH decoder on damaged and random input.

Only gitodb's own errors may come out, whatever the bytes, and each names the file
and an offset in it; counts in the file (commits, words, run lengths) are never
trusted to size anything.
"""

from __future__ import annotations

import os
import random
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitodb.errors import GitodbError
from gitodb.objects.format import SHA1, SHA256, ObjectFormat
from gitodb.pack.bitmap import BitmapIndex
from gitodb.pack.bitmap_write import BitmapEntry, encode_bitmap
from gitodb.pack.ewah import read_ewah

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
N = 200
CHECKSUM = {SHA1.name: b"\x11" * 20, SHA256.name: b"\x22" * 32}


def _valid(fmt: ObjectFormat, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    full = [sum(1 << i for i in range(N) if rng.random() < 0.4) for _ in range(5)]
    entries = [BitmapEntry(7 * k, b, xor_offset=k % 3 if k else 0) for k, b in enumerate(full)]
    types = (1, 2, (1 << N) - 4, 0)
    cache = [rng.getrandbits(32) for _ in range(N)]
    return encode_bitmap(
        fmt, CHECKSUM[fmt.name], N, types, entries, hash_cache=cache, lookup_table=seed % 2 == 0
    )


def _exercise(data: bytes, fmt: ObjectFormat) -> None:
    fd, path = tempfile.mkstemp(suffix=".bitmap")
    try:
        os.write(fd, data)
        os.close(fd)
        try:
            idx = BitmapIndex(path, fmt, num_objects=N, checksum=CHECKSUM[fmt.name])
        except GitodbError as e:
            assert e.path == path and e.offset is not None, e
            return
        try:
            for pos in idx.commit_positions():
                try:
                    bits = idx.bitmap(pos)
                    assert bits is not None and bits >> N == 0
                except GitodbError as e:
                    assert e.path == path and e.offset is not None, e
            for i in (0, N - 1, N):
                idx.name_hash_at(i)
        finally:
            idx.close()
    finally:
        os.unlink(path)


def test_valid_files_read_back() -> None:
    for fmt in (SHA1, SHA256):
        for seed in (1, 2):
            data = _valid(fmt, seed)
            fd, path = tempfile.mkstemp()
            os.write(fd, data)
            os.close(fd)
            idx = BitmapIndex(path, fmt, num_objects=N, checksum=CHECKSUM[fmt.name])
            assert idx.count == 5 and idx.commit_positions() == [0, 7, 14, 21, 28]
            idx.close()
            os.unlink(path)


@FUZZ
@given(
    st.sampled_from([SHA1, SHA256]),
    st.integers(1, 2),
    st.lists(st.tuples(st.integers(0, 4000), st.integers(0, 255)), min_size=1, max_size=8),
)
def test_flipped_bytes_raise_only_gitodb_errors(
    fmt: ObjectFormat, seed: int, edits: list[tuple[int, int]]
) -> None:
    data = bytearray(_valid(fmt, seed))
    for pos, value in edits:
        data[pos % len(data)] = value
    _exercise(bytes(data), fmt)


@FUZZ
@given(st.sampled_from([SHA1, SHA256]), st.integers(0, 5000))
def test_truncated_files_raise_only_gitodb_errors(fmt: ObjectFormat, cut: int) -> None:
    data = _valid(fmt)
    _exercise(data[: cut % len(data)], fmt)


@FUZZ
@given(st.binary(max_size=300))
def test_random_ewah_raises_only_gitodb_errors(data: bytes) -> None:
    try:
        bits, size, end = read_ewah(data, 0, path="r.bitmap", max_bits=4096)
    except GitodbError as e:
        assert e.path == "r.bitmap" and e.offset is not None
        return
    assert end <= len(data) and bits >> size == 0 and size <= 4096
