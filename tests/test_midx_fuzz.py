"""Property tests: the multi-pack-index parser on damaged and random input.

Only gitodb's own errors may come out, whatever the bytes; counts in the file
(packs, objects, chunk offsets) are never trusted to size anything.
"""

from __future__ import annotations

import os
import struct
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitodb.errors import GitodbError
from gitodb.objects.format import SHA1, SHA256, ObjectFormat
from gitodb.pack.midx import MultiPackIndex
from gitodb.pack.midx_write import encode_midx

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _valid(fmt: ObjectFormat, n: int = 40, large: bool = False) -> bytes:
    oids = sorted({fmt.new_hasher(b"%d" % i).digest() for i in range(n)})
    entries = [
        (o, i % 3, (1 << 33) + i if large and i % 2 else 12 + 7 * i) for i, o in enumerate(oids)
    ]
    return encode_midx(["pack-a.idx", "pack-b.idx", "pack-c.idx"], entries, fmt)


def _exercise(data: bytes, fmt: ObjectFormat) -> None:
    fd, path = tempfile.mkstemp()
    try:
        os.write(fd, data)
        os.close(fd)
        try:
            m = MultiPackIndex(path, fmt)
        except GitodbError:
            return
        try:
            m.checksum_valid()
            m.rev_positions()
            for i in range(min(m.count, 64)):
                try:
                    oid = m.oid_at(i)
                    assert m.find(oid) >= -1
                    m.pack_id_at(i)
                    m.offset_at(i)
                except GitodbError:
                    pass
            list(m.find_prefix(b"\x10", 1))
            m.find(b"\x00" * fmt.rawsz)
            m.find(b"\xff" * fmt.rawsz)
        finally:
            m.close()
    finally:
        os.unlink(path)


def test_valid_file_round_trips() -> None:
    for fmt in (SHA1, SHA256):
        for large in (False, True):
            data = _valid(fmt, large=large)
            fd, path = tempfile.mkstemp()
            os.write(fd, data)
            os.close(fd)
            m = MultiPackIndex(path, fmt)
            assert m.checksum_valid() and m.count == 40 and m.num_packs == 3
            assert (b"LOFF" in m.chunks) == large
            for i, (oid, pid, off) in enumerate(m.entries()):
                assert m.find(oid) == i and pid == i % 3
                assert off == ((1 << 33) + i if large and i % 2 else 12 + 7 * i)
            m.close()
            os.unlink(path)


@FUZZ
@given(
    st.sampled_from([SHA1, SHA256]),
    st.booleans(),
    st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), max_size=8),
    st.one_of(st.none(), st.integers(min_value=0)),
)
def test_damaged_file(
    fmt: ObjectFormat, large: bool, flips: list[tuple[int, int]], cut: int | None
) -> None:
    data = bytearray(_valid(fmt, large=large))
    for pos, val in flips:
        data[pos % len(data)] = val
    if cut is not None:
        del data[cut % (len(data) + 1) :]
    _exercise(bytes(data), fmt)


@FUZZ
@given(
    st.integers(0, 255),
    st.integers(0, 2**32 - 1),
    st.lists(
        st.tuples(
            st.sampled_from([b"PNAM", b"OIDF", b"OIDL", b"OOFF", b"LOFF", b"RIDX", b"\0\0\0\0"]),
            st.integers(0, 2**64 - 1),
        ),
        max_size=8,
    ),
    st.binary(max_size=1200),
)
def test_random_chunk_table(
    nchunks: int, npacks: int, toc: list[tuple[bytes, int]], body: bytes
) -> None:
    head = b"MIDX" + struct.pack(">BBBBI", 1, 1, nchunks, 0, npacks)
    table = b"".join(cid + struct.pack(">Q", off) for cid, off in toc)
    _exercise(head + table + body + b"\0" * 20, SHA1)
