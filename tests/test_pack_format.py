"""Pack primitives against Git: entry headers, deltas, .idx v1/v2 and .rev bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitodb.errors import DeltaError, PackError
from gitodb.objects import SHA1, SHA256
from gitodb.pack import delta as delta_module
from gitodb.pack import entry as entry_module
from gitodb.pack.delta import apply_delta, apply_delta_python, delta_sizes
from gitodb.pack.entry import (
    encode_entry_header,
    encode_ofs_distance,
    parse_entry_header,
    parse_ofs_distance,
)
from gitodb.pack.idx import PackIndex, write_index_v1, write_index_v2
from gitodb.pack.rev import read_rev, write_rev
from helpers import git, make_pack


@given(st.integers(1, 7), st.integers(0, 2**64 - 1))
def test_entry_header_round_trip(type_num: int, size: int) -> None:
    enc = encode_entry_header(type_num, size)
    assert parse_entry_header(b"\xff" + enc + b"tail", 1) == (type_num, size, len(enc))


@given(st.integers(0, 2**63))
def test_ofs_distance_round_trip(distance: int) -> None:
    enc = encode_ofs_distance(distance)
    assert parse_ofs_distance(enc + b"\x00", 0) == (distance, len(enc))


def _outcome(fn, *args):
    try:
        return fn(*args)
    except (PackError, DeltaError) as e:
        return type(e), e.message, e.path, e.offset


@settings(max_examples=500)
@given(st.binary(max_size=14), st.integers(0, 14))
def test_varint_parsers_c_equals_python(buf: bytes, offset: int) -> None:
    # The C parsers (used when built) accept, reject and report exactly like Python's.
    for c_fn, py_fn in [
        (parse_entry_header, entry_module.parse_entry_header_python),
        (parse_ofs_distance, entry_module.parse_ofs_distance_python),
    ]:
        assert _outcome(c_fn, buf, offset, "p.pack") == _outcome(py_fn, buf, offset, "p.pack")
    assert _outcome(delta_sizes, buf) == _outcome(delta_module.delta_sizes_python, buf)


@pytest.mark.parametrize("buf", [b"\xff" * 9 + b"\x0f", b"\xff" * 9 + b"\x1f", b"\xff" * 11])
def test_entry_header_over_64_bits_is_refused(buf: bytes) -> None:
    if buf[9] == 0x0F:
        assert parse_entry_header(buf, 0) == (7, 2**64 - 1, 10)
    else:
        with pytest.raises(PackError, match="too long"):
            parse_entry_header(buf, 0)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        c = n & 0x7F
        n >>= 7
        out.append(c | (0x80 if n else 0))
        if not n:
            return bytes(out)


# Both implementations: the C accelerator (when built) and the Python reference.
IMPLEMENTATIONS = [
    pytest.param(apply_delta_python, id="python"),
    pytest.param(apply_delta, id="default"),
]


def test_c_accelerator_is_built() -> None:
    # CI installs with a compiler; the accelerator must be there and in use.
    assert delta_module._c_apply_delta is not None
    assert parse_entry_header is not entry_module.parse_entry_header_python


@pytest.mark.parametrize("apply", IMPLEMENTATIONS)
def test_apply_delta_copy_and_insert(apply) -> None:
    base = b"0123456789abcdef"
    # copy 4 bytes at offset 10, insert "XY", copy 3 bytes at offset 0
    delta = _varint(16) + _varint(9) + bytes([0x91, 10, 4, 2]) + b"XY" + bytes([0x90, 3])
    assert delta_sizes(delta)[:2] == (16, 9)
    assert apply(base, delta) == b"abcdXY012"
    assert apply(memoryview(base), memoryview(delta)) == b"abcdXY012"


@pytest.mark.parametrize("apply", IMPLEMENTATIONS)
def test_apply_delta_copy_size_zero_means_64k(apply) -> None:
    base = bytes(range(256)) * 300
    delta = _varint(len(base)) + _varint(0x10000) + bytes([0x81, 5])
    assert apply(base, delta) == base[5 : 5 + 0x10000]


@pytest.mark.parametrize("apply", IMPLEMENTATIONS)
@pytest.mark.parametrize(
    "delta, why",
    [
        (_varint(4) + _varint(8) + bytes([0x91, 2, 8]), "copy past the end of the base"),
        (_varint(4) + _varint(3) + b"\x05ab", "insert past the end of the delta"),
        (_varint(4) + _varint(3) + b"\x00", "reserved opcode"),
        (_varint(4) + _varint(5) + b"\x02ab", "result shorter than declared"),
        (_varint(3) + _varint(2) + b"\x02ab", "wrong base size"),
        (_varint(4) + _varint(2**62) + b"\x01a", "huge declared size"),
        (b"\x80", "truncated header"),
        (_varint(4) + _varint(4) + b"\x9f", "truncated copy opcode"),
    ],
)
def test_apply_delta_rejects_bad_deltas(apply, delta: bytes, why: str) -> None:
    with pytest.raises(DeltaError) as info:
        apply(b"abcd", delta, path="x.pack", offset=12)
    assert "x.pack at offset 12" in str(info.value)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64), st.binary(max_size=64))
def test_apply_delta_fuzz_only_delta_errors(base: bytes, body: bytes) -> None:
    delta = _varint(len(base)) + _varint(len(body) * 3) + body
    results = []
    for apply in (apply_delta_python, apply_delta):
        try:
            results.append(apply(base, delta))
        except DeltaError:
            results.append(None)
    # The accelerator accepts and rejects exactly what the reference does.
    assert results[0] == results[1]
    assert results[0] is None or len(results[0]) == len(body) * 3


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_index_and_rev_writers_match_git(tmp_path: Path, object_format: str) -> None:
    fmt = SHA1 if object_format == "sha1" else SHA256
    pack = make_pack(tmp_path, object_format)
    idx = PackIndex(pack.with_suffix(".idx"), fmt)
    entries = [(idx.oid_at(i), idx.crc_at(i), idx.offset_at(i)) for i in range(idx.count)]
    assert write_index_v2(entries, idx.pack_checksum, fmt) == pack.with_suffix(".idx").read_bytes()

    git("index-pack", "--rev-index", "-o", tmp_path / "v2.idx", pack, cwd=pack.parent)
    rev = write_rev(idx.offsets, idx.pack_checksum, fmt)
    assert rev == (tmp_path / "v2.rev").read_bytes()
    order = read_rev(tmp_path / "v2.rev", idx.count, fmt, idx.pack_checksum)
    assert [idx.offsets[i] for i in order] == sorted(idx.offsets)

    if object_format == "sha1":
        git("index-pack", "--index-version=1", "-o", tmp_path / "v1.idx", pack)
        assert write_index_v1(entries, idx.pack_checksum, fmt) == (tmp_path / "v1.idx").read_bytes()
        v1 = PackIndex(tmp_path / "v1.idx", fmt)
        assert v1.version == 1
        assert [v1.oid_at(i) for i in range(v1.count)] == [e[0] for e in entries]
        assert list(v1.offsets) == list(idx.offsets)


def test_index_64bit_offsets_round_trip(tmp_path: Path) -> None:
    entries = [(bytes([i]) * 20, i, off) for i, off in enumerate([12, 2**31, 2**33 + 5])]
    data = write_index_v2(entries, b"\x11" * 20, SHA1)
    path = tmp_path / "big.idx"
    path.write_bytes(data)
    idx = PackIndex(path, SHA1)
    assert list(idx.offsets) == [12, 2**31, 2**33 + 5]
    assert idx.find(b"\x02" * 20) == 2 and idx.find(b"\x03" * 20) == -1


def test_index_lookup_and_prefixes(tmp_path: Path) -> None:
    pack = make_pack(tmp_path, "sha1")
    idx = PackIndex(pack.with_suffix(".idx"), SHA1)
    oids = [idx.oid_at(i) for i in range(idx.count)]
    assert oids == sorted(oids)
    for i, oid in enumerate(oids):
        assert idx.find(oid) == i
        assert i in idx.find_prefix(oid, 7)
        assert list(idx.find_prefix(oid, 40)) == [i]


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda b: b[:-1], "truncated"),
        (lambda b: b + b"\0" * 4, "wrong size"),
        (lambda b: b[:100], "too small"),
        (lambda b: b[:-1] + bytes([b[-1] ^ 1]), "bad checksum"),
        (lambda b: b[:8] + b"\xff\xff\xff\xff" + b[12:], "fan-out"),
        (lambda b: b"", "empty"),
    ],
)
def test_damaged_index_is_a_pack_error(tmp_path: Path, damage, message: str) -> None:
    entries = [(bytes([i * 9]) * 20, i, 12 + i) for i in range(20)]
    path = tmp_path / "x.idx"
    path.write_bytes(damage(write_index_v2(entries, b"\x11" * 20, SHA1)))
    with pytest.raises(PackError, match=message) as info:
        PackIndex(path, SHA1)
    assert str(path) in str(info.value)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_index_parser_fuzz_only_pack_errors(tmp_path_factory, data) -> None:
    entries = [(bytes([i * 13 % 256]) + bytes(19), i, 12 + i) for i in range(8)]
    raw = bytearray(write_index_v2(entries, b"\x11" * 20, SHA1))
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(raw)))
    path = tmp_path_factory.mktemp("fuzz") / "f.idx"
    path.write_bytes(bytes(raw[:cut]))
    try:
        idx = PackIndex(path, SHA1, verify_checksum=data.draw(st.booleans()))
        for i in range(idx.count):
            idx.find(idx.oid_at(i))
        list(idx.offsets)
    except PackError:
        pass
