"""SHA-1 with collision detection (SHA-1DC), in pure Python: the reference.

This is the counter-cryptanalysis of Stevens (CRYPTO 2013) as refined by
Stevens and Shumow (USENIX Security 2017).  Every known practical collision
attack on SHA-1 (SHAttered, the later chosen-prefix "Shambles") builds its
near-collision blocks on one *disturbance vector* (DV) of Manuel's classes
I(K,b) and II(K,b).  A DV fixes, step by step, where the attack's local
collisions start; from it follows the XOR difference ``DW`` between the
expanded messages of the two colliding blocks.  In a real attack block the
two compressions agree on the whole internal state at any step ``t`` where no
local collision is in flight (``DV[t-5..t-1]`` all zero).  So, for every DV,
we take our own state at that step, run the compression backwards and forwards
from it with the related message ``W ^ DW``, and if the related block ends in
exactly our chaining value, this block completes a collision: we flag it.

Costs: this reference runs the check for every DV on every block, i.e.
``len(DVS)`` extra 80-step compressions per block, about 34 times plain SHA-1
(tens of KB/s in Python; see benchmarks/results/sha1dc.md).  It is the
reference of the native core (``gitodb._native``) and the fallback when that
is not built.  The native core first drops the DVs a block cannot belong to by
their unavoidable bit conditions (``gitodb.objects.sha1dc_ubc``) and so runs
the recompression on about one block in 200.

Everything here is derived from the published description: the DV list is
the set of attack classes the papers name, the DV words follow from the
linear SHA-1 message recurrence, ``DW`` from the 6-step local collision, and
the test step from where the DV has five zero words in a row.
"""

from __future__ import annotations

import functools
import struct

_M = 0xFFFFFFFF
_IV = (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0)

# The disturbance vectors of the known attack classes, as (type, K, b):
# type I (K = 43..52 with b = 0, K = 46..52 with b = 2) and type II
# (K = 45..56 with b = 0, K = 46 and 49..51 with b = 2).
DVS: tuple[tuple[int, int, int], ...] = (
    tuple((1, k, 0) for k in range(43, 53))
    + tuple((1, k, 2) for k in range(46, 53))
    + tuple((2, k, 0) for k in range(45, 57))
    + tuple((2, k, 2) for k in (46, 49, 50, 51))
)


def _rol(x: int, n: int) -> int:
    return ((x << n) | (x >> (32 - n))) & _M


def disturbance_vector(dv_type: int, k: int, b: int) -> dict[int, int]:
    """Words ``DV[-5..79]`` of DV ``I(k,b)`` (type 1) or ``II(k,b)`` (type 2).

    Manuel's classes are fixed by a 16-word window ``DV[k..k+15]``: type I has
    the single bit ``2^b`` in word ``k+15``; type II also has ``2^(b+31)`` in
    words ``k+1`` and ``k+3``.  The other words follow from the SHA-1 message
    recurrence ``DV[i] = rol1(DV[i-3] ^ DV[i-8] ^ DV[i-14] ^ DV[i-16])``,
    run forwards to step 79 and backwards to step -5.
    """
    window = [0] * 16
    window[15] = 1
    if dv_type == 2:
        window[1] = window[3] = 1 << 31
    elif dv_type != 1:
        raise ValueError(f"unknown disturbance vector type {dv_type}")
    dv = {k + i: _rol(w, b) if b else w for i, w in enumerate(window)}
    for i in range(k + 16, 80):
        dv[i] = _rol(dv[i - 3] ^ dv[i - 8] ^ dv[i - 14] ^ dv[i - 16], 1)
    for i in range(k - 1, -6, -1):
        dv[i] = _rol(dv[i + 16], 31) ^ dv[i + 13] ^ dv[i + 8] ^ dv[i + 2]
    return dv


def message_difference(dv: dict[int, int]) -> list[int]:
    """The expanded-message XOR difference ``DW[0..79]`` of a DV.

    A disturbance in ``W[i]`` bit j is corrected by bit j+5 of ``W[i+1]``,
    bit j of ``W[i+2]`` and bit j-2 of ``W[i+3]``, ``W[i+4]``, ``W[i+5]``.
    """
    return [
        dv[i] ^ _rol(dv[i - 1], 5) ^ dv[i - 2] ^ _rol(dv[i - 3] ^ dv[i - 4] ^ dv[i - 5], 30)
        for i in range(80)
    ]


def test_step(dv: dict[int, int]) -> int:
    """The step at which ``dv``'s states are checked: 58, or 65 if 58 is not quiet.

    A step ``t`` is quiet when no local collision is in flight there
    (``DV[t-5..t-1]`` all zero), so an attack block and its partner have the
    same state.  Two steps late in the compression cover every DV; the native
    core groups the DVs by them.
    """
    for t in (58, 65):
        if not any(dv[t - j] for j in range(1, 6)):
            return t
    raise ValueError("disturbance vector is quiet at neither step 58 nor 65")


def _tables() -> list[tuple[int, tuple[int, ...]]]:
    out = []
    for spec in DVS:
        dv = disturbance_vector(*spec)
        out.append((test_step(dv), tuple(message_difference(dv))))
    return out


# (test step, DW[0..79]) per DV, computed once at import.
DV_TABLES = _tables()


def _f(i: int, b: int, c: int, d: int) -> int:
    if i < 20:
        return (b & c) | (~b & d & _M)
    if i < 40 or i >= 60:
        return b ^ c ^ d
    return (b & c) | (b & d) | (c & d)


_K = [0x5A827999] * 20 + [0x6ED9EBA1] * 20 + [0x8F1BBCDC] * 20 + [0xCA62C1D6] * 20


def expand(block: bytes) -> list[int]:
    """The 80 expanded message words of a 64-byte block."""
    w = list(struct.unpack(">16I", block))
    for i in range(16, 80):
        w.append(_rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1))
    return w


def _forward(
    state: tuple[int, int, int, int, int],
    w: list[int],
    start: int,
    stop: int,
    record: list[tuple[int, int, int, int, int]] | None = None,
) -> tuple[int, int, int, int, int]:
    a, b, c, d, e = state
    for i in range(start, stop):
        if record is not None:
            record.append((a, b, c, d, e))
        t = (_rol(a, 5) + _f(i, b, c, d) + e + _K[i] + w[i]) & _M
        a, b, c, d, e = t, a, _rol(b, 30), c, d
    return a, b, c, d, e


def _backward(
    state: tuple[int, int, int, int, int], w: list[int], start: int
) -> tuple[int, int, int, int, int]:
    """Undo steps ``start-1`` down to 0: the state before step 0 (the input IHV)."""
    a, b, c, d, e = state
    for i in range(start - 1, -1, -1):
        # The step made a = f(...) + ..., and shifted the rest along; undo the shift,
        # then solve the step's sum for the word that fell out (the old e).
        pa, pb, pc, pd = b, _rol(c, 2), d, e
        e = (a - _rol(pa, 5) - _f(i, pb, pc, pd) - _K[i] - w[i]) & _M
        a, b, c, d = pa, pb, pc, pd
    return a, b, c, d, e


def compress(
    ihv: tuple[int, ...],
    block: bytes,
    detect: bool = True,
    ubc: list[list[tuple[int, int, int, int, int]]] | None = None,
) -> tuple[tuple[int, ...], bool]:
    """One compression; returns the new chaining value and whether a collision was found.

    With ``ubc`` (conditions per DV, ``sha1dc_ubc.all_conditions()``) a DV whose
    unavoidable bit conditions the block breaks is not recompressed.
    """
    w = expand(block)
    states: list[tuple[int, int, int, int, int]] = []
    final = _forward(tuple(ihv), w, 0, 80, states)  # type: ignore[arg-type]
    states.append(final)
    out = tuple((x + y) & _M for x, y in zip(ihv, final, strict=True))
    if not detect:
        return out, False
    for n, (t, dw) in enumerate(DV_TABLES):
        if ubc is not None and not all(
            (w[w1] >> b1 ^ w[w2] >> b2) & 1 == parity for w1, b1, w2, b2, parity in ubc[n]
        ):
            continue
        w2 = [x ^ y for x, y in zip(w, dw, strict=True)]
        ihv2 = _backward(states[t], w2, t)
        end = _forward(states[t], w2, t, 80)
        out2 = tuple((x + y) & _M for x, y in zip(ihv2, end, strict=True))
        if out2 == out:
            return out, True
    return out, False


@functools.cache
def _ubc_tables() -> list[list[tuple[int, int, int, int, int]]]:
    """The conditions per DV, derived once per process (a fraction of a second)."""
    from gitodb.objects.sha1dc_ubc import all_conditions

    return all_conditions()


def _pad(length: int) -> bytes:
    return b"\x80" + b"\0" * ((55 - length) % 64) + struct.pack(">Q", length * 8)


class Sha1DCRef:
    """Incremental SHA-1DC hasher in pure Python (``update``/``digest``/``copy``).

    ``collision`` turns true once a block completing a known attack was seen.
    With ``safe_hash`` such a block is compressed twice more, so the digest is
    no longer the colliding one (the reference implementation's "safe hash");
    Git builds it off and dies instead, which the callers in gitodb do too.
    """

    name = "sha1"
    digest_size = 20
    block_size = 64

    def __init__(
        self,
        data: bytes | bytearray | memoryview = b"",
        *,
        safe_hash: bool = False,
        detect: bool = True,
        ubc: bool = False,
    ) -> None:
        self._ihv: tuple[int, ...] = _IV
        self._buf = b""
        self._length = 0
        self.collision = False
        self.safe_hash = safe_hash
        self.detect = detect
        # The reference checks every DV; with ubc=True (the fallback hasher) the
        # unavoidable bit conditions filter them first, like the native core.
        self.ubc = ubc
        self._conditions = _ubc_tables() if ubc else None
        if data:
            self.update(data)

    def _block(self, block: bytes) -> None:
        ihv, hit = compress(self._ihv, block, self.detect, self._conditions)
        if hit:
            self.collision = True
            if self.safe_hash:
                ihv = compress(compress(ihv, block, False)[0], block, False)[0]
        self._ihv = ihv

    def update(self, data: bytes | bytearray | memoryview) -> None:
        """Hash more bytes."""
        data = bytes(data)
        self._length += len(data)
        buf = self._buf + data
        n = len(buf) - len(buf) % 64
        for i in range(0, n, 64):
            self._block(buf[i : i + 64])
        self._buf = buf[n:]

    def copy(self) -> Sha1DCRef:
        """An independent hasher in the same state."""
        other = Sha1DCRef(safe_hash=self.safe_hash, detect=self.detect, ubc=self.ubc)
        other._ihv, other._buf, other._length = self._ihv, self._buf, self._length
        other.collision = self.collision
        return other

    def result(self) -> tuple[bytes, bool]:
        """``(digest, collision)`` without changing the hasher."""
        h = self.copy()
        tail = h._buf + _pad(h._length)
        for i in range(0, len(tail), 64):
            h._block(tail[i : i + 64])
        return struct.pack(">5I", *h._ihv), h.collision

    def digest(self) -> bytes:
        """The 20-byte digest (the caller checks ``collision``; see ``result``)."""
        return self.result()[0]

    def hexdigest(self) -> str:
        """The digest in hex."""
        return self.digest().hex()
