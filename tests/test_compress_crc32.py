"""CRC-32 and CRC-32 combine of every backend against a plain table-driven reference."""

from __future__ import annotations

import random

import pytest

from gitodb import compress
from gitodb.compress import backends

INSTALLED = [n for n in backends.BACKENDS if backends.load(n) is not None]


def _make_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table.append(c)
    return table


TABLE = _make_table()


def reference_crc32(data: bytes, crc: int = 0) -> int:
    """The textbook byte-at-a-time reflected CRC-32 (IEEE 802.3)."""
    crc ^= 0xFFFFFFFF
    for byte in data:
        crc = TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def test_reference_is_right() -> None:
    assert reference_crc32(b"") == 0
    assert reference_crc32(b"123456789") == 0xCBF43926  # the standard check value


BUF = random.Random(32).randbytes(4097 + 64)
# Every alignment 0-63; per alignment the lengths around SIMD widths plus random ones.
EDGE_LENGTHS = [
    0,
    1,
    2,
    3,
    7,
    8,
    15,
    16,
    17,
    31,
    32,
    33,
    63,
    64,
    65,
    127,
    128,
    129,
    255,
    256,
    257,
    511,
    512,
    1023,
    1024,
    4095,
    4096,
    4097,
]
CASES = []
_rng = random.Random(4097)
for _align in range(64):
    for _n in _rng.sample(EDGE_LENGTHS, 6) + [_rng.randint(0, 4097) for _ in range(4)]:
        CASES.append((_align, _n, reference_crc32(BUF[_align : _align + _n])))


@pytest.mark.parametrize("name", INSTALLED)
def test_crc32_all_alignments(name: str) -> None:
    crc32 = backends.load(name).crc32
    view = memoryview(BUF)
    for align, n, want in CASES:
        assert crc32(view[align : align + n]) == want, (align, n)
        assert crc32(BUF[align : align + n]) == want, (align, n)


@pytest.mark.parametrize("name", INSTALLED)
def test_crc32_running_value(name: str) -> None:
    crc32 = backends.load(name).crc32
    rng = random.Random(7)
    for _ in range(50):
        a, b = rng.randbytes(rng.randint(0, 300)), rng.randbytes(rng.randint(0, 300))
        assert crc32(b, crc32(a)) == reference_crc32(a + b)
        assert crc32(b, 0xDEADBEEF) == reference_crc32(b, 0xDEADBEEF)


ONE_MIB = random.Random(1).randbytes(1 << 20)
ONE_MIB_CRC = reference_crc32(ONE_MIB)


@pytest.mark.parametrize("name", INSTALLED)
def test_crc32_one_mib(name: str) -> None:
    assert backends.load(name).crc32(ONE_MIB) == ONE_MIB_CRC
    assert backends.load(name).crc32(memoryview(ONE_MIB)[1:], 0) == backends.load(name).crc32(
        ONE_MIB[1:]
    )


@pytest.mark.parametrize("name", INSTALLED)
def test_crc32_combine(name: str) -> None:
    combine = backends.load(name).crc32_combine
    rng = random.Random(11)
    for la, lb in [(0, 0), (0, 5), (5, 0), (1, 1), (100, 4097), (3, 70000), (1 << 20, 17)]:
        a, b = ONE_MIB[:la], rng.randbytes(lb)
        assert combine(reference_crc32(a), reference_crc32(b), lb) == reference_crc32(a + b)
    # long lengths (no data): agree with the standard library's libz-based answer
    want = backends.load("zlib-ng").crc32_combine if "zlib-ng" in INSTALLED else None
    if want is not None:
        for n in (1 << 29, (1 << 32) + 3, 10**12 + 7):
            assert combine(0x12345678, 0x9ABCDEF0, n) == want(0x12345678, 0x9ABCDEF0, n)


@pytest.mark.parametrize("name", INSTALLED)
def test_public_crc32_follows_backend(name: str) -> None:
    try:
        compress.set_backend(name)
        assert compress.crc32 is backends.load(name).crc32  # rebound: no dispatch layer
        assert compress.crc32(b"123456789") == 0xCBF43926
        assert (
            compress.crc32_combine(compress.crc32(b"1234"), compress.crc32(b"56789"), 5)
            == 0xCBF43926
        )
    finally:
        compress.set_backend(None)
