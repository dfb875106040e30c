"""Property tests: the idx parser, entry headers, deltas and pack entries on random input.

Only gitodb's own errors may come out; nothing may hang, and no declared size may
be allocated up front (a delta or entry claiming 2**60 bytes must fail fast).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitodb.errors import GitodbError
from gitodb.objects.format import SHA1
from gitodb.objects.header import OBJ_BLOB
from gitodb.pack.delta import apply_delta
from gitodb.pack.entry import parse_entry_header, parse_ofs_distance
from gitodb.pack.idx import PackIndex, write_index_v2
from gitodb.pack.reader import PackFile
from test_odb_support import PackBuilder, make_delta, varint

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

BASE = b"".join(b"fuzz base %d\n" % i for i in range(40))


@FUZZ
@given(st.binary(max_size=40), st.integers(min_value=0, max_value=40))
def test_entry_header_parser(buf: bytes, offset: int) -> None:
    try:
        t, size, n = parse_entry_header(buf, offset)
        assert 0 <= t <= 7 and size >= 0 and 1 <= n <= 10
    except GitodbError:
        pass
    try:
        dist, n = parse_ofs_distance(buf, offset)
        assert dist >= 0 and n >= 1
    except GitodbError:
        pass


@FUZZ
@given(st.binary(max_size=64), st.binary(max_size=200))
def test_apply_delta_random(base: bytes, delta: bytes) -> None:
    try:
        out = apply_delta(base, delta)
        assert isinstance(out, bytes)
    except GitodbError:
        pass


@FUZZ
@given(
    st.integers(min_value=0, max_value=len(BASE) + 5),
    st.integers(min_value=0, max_value=len(BASE) + 5),
    st.integers(min_value=0, max_value=1 << 62),
)
def test_apply_delta_huge_declared_size(off: int, size: int, declared: int) -> None:
    delta = make_delta(len(BASE), declared, [("copy", off, size or 1)])
    try:
        out = apply_delta(BASE, delta)
        assert len(out) == declared
    except GitodbError:
        pass


def _valid_idx() -> bytes:
    entries = [(bytes([i * 16]) + bytes(19), 0, 12 + i) for i in range(8)]
    return write_index_v2(entries, b"\0" * 20, SHA1)


VALID_IDX = _valid_idx()


@FUZZ
@given(
    st.one_of(
        st.binary(max_size=1200),
        st.tuples(
            st.integers(min_value=0, max_value=len(VALID_IDX) - 1),
            st.integers(min_value=1, max_value=255),
        ).map(
            lambda t: VALID_IDX[: t[0]] + bytes([VALID_IDX[t[0]] ^ t[1]]) + VALID_IDX[t[0] + 1 :]
        ),
        st.integers(min_value=0, max_value=len(VALID_IDX)).map(lambda n: VALID_IDX[:n]),
    )
)
def test_idx_parser(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.idx"
        path.write_bytes(data)
        for verify in (True, False):
            try:
                idx = PackIndex(path, SHA1, verify_checksum=verify)
            except GitodbError:
                continue
            try:
                offs = idx.offsets
                assert len(offs) == idx.count
                for i in range(min(idx.count, 4)):
                    idx.find(idx.oid_at(i))
                list(idx.find_prefix(b"\x10", 1))
            except GitodbError:
                pass
            finally:
                idx.close()


@FUZZ
@given(
    st.binary(max_size=60),
    st.integers(min_value=0, max_value=7),
    st.integers(min_value=0, max_value=1 << 62),
)
def test_pack_entry_random_body(body: bytes, type_num: int, size: int) -> None:
    """An entry with a random header and body: read/header/info give data or our error."""
    with tempfile.TemporaryDirectory() as d:
        b = PackBuilder()
        b.add_object(OBJ_BLOB, BASE, oid=b"\1" * 20)
        off = b.next_offset
        from gitodb.pack.entry import encode_entry_header

        b._add(b"\2" * 20, encode_entry_header(type_num, size) + body)
        b.add_object(OBJ_BLOB, b"after", oid=b"\3" * 20)
        pack = PackFile(b.write(Path(d)), SHA1)
        for op in (pack.read_at, pack.header_at, pack.delta_base_at, pack.type_at):
            try:
                op(off)
            except GitodbError:
                pass
        pack.close()


@FUZZ
@given(st.binary(max_size=40), st.integers(min_value=0, max_value=1 << 62))
def test_pack_delta_entry_random(delta_tail: bytes, declared: int) -> None:
    """A well-formed OFS_DELTA entry whose delta is random after a huge size header."""
    with tempfile.TemporaryDirectory() as d:
        b = PackBuilder()
        base_off = b.add_object(OBJ_BLOB, BASE, oid=b"\1" * 20)
        delta = varint(len(BASE)) + varint(declared) + delta_tail
        off = b.add_ofs_delta(base_off, delta, oid=b"\2" * 20)
        pack = PackFile(b.write(Path(d)), SHA1)
        try:
            t, data = pack.read_at(off)
            assert len(data) == declared
        except GitodbError:
            pass
        pack.close()
