"""CRC-32 combine in pure Python, for backends whose binding lacks it.

crc(A + B) is crc(A) "shifted" past len(B) zero bytes, xor crc(B).  Shifting
means multiplying by x^(8 * len2) modulo the CRC polynomial in GF(2); we build
that power from the precomputed x^(2^k) (square-and-multiply), so the cost is
O(log len2) polynomial products of 32 steps each, not O(len2).
"""

from __future__ import annotations

_POLY = 0xEDB88320  # CRC-32 (IEEE 802.3), bit-reflected


def _multmodp(a: int, b: int) -> int:
    """a * b modulo the CRC polynomial, both in reflected bit order."""
    m = 1 << 31
    p = 0
    while True:
        if a & m:
            p ^= b
            if (a & (m - 1)) == 0:
                return p
        m >>= 1
        b = (b >> 1) ^ _POLY if b & 1 else b >> 1


def _x2n_table() -> list[int]:
    """x^(2^k) mod P for k = 0..31 (reflected; x^1 is 1 << 30)."""
    table = []
    p = 1 << 30
    for _ in range(32):
        table.append(p)
        p = _multmodp(p, p)
    return table


#: ``_x2n_table()``, made at the first combine: ~0.3 ms that every command loading
#: this backend would pay at import, and reading objects never combines CRCs
_X2N: list[int] = []


def _x8nmodp(n: int) -> int:
    """x^(8n) mod P."""
    if not _X2N:
        _X2N.extend(_x2n_table())
    x2n = _X2N
    p = 1 << 31  # x^0
    k = 3  # x^(2^3) = x^8 is one byte
    while n:
        if n & 1:
            p = _multmodp(x2n[k & 31], p)
        n >>= 1
        k += 1
    return p


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """CRC-32 of A + B from crc1 = crc(A), crc2 = crc(B), len2 = len(B)."""
    if len2 < 0:
        raise ValueError("crc32_combine: negative length")
    return _multmodp(_x8nmodp(len2), crc1 & 0xFFFFFFFF) ^ (crc2 & 0xFFFFFFFF)
