"""Reftable tables: reading Git's tables, writing identical structure, bad input, fuzz."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitodb import compress
from gitodb.errors import ReftableError
from gitodb.objects.format import SHA1, SHA256
from gitodb.reftable.basics import get_varint, put_varint
from gitodb.reftable.block import Block
from gitodb.reftable.dump import format_blocks, format_records
from gitodb.reftable.reader import TableReader, _log_records, _ref_records
from gitodb.reftable.records import LogRecord, RefRecord
from gitodb.reftable.writer import TableWriter, WriteOptions

DATA = Path(__file__).parent / "data"
FIXTURES = ["reftable-small", "reftable-stack", "reftable-sha256", "reftable-blocksize"]
TABLES = sorted(p for f in FIXTURES for p in (DATA / f / "repo" / "reftable").glob("*.ref"))


def _expected(table: Path, kind: str) -> Path:
    return table.parents[2] / "expected" / f"{kind}{table.name}.txt"


@pytest.mark.e2e
@pytest.mark.parametrize("table", TABLES, ids=lambda p: f"{p.parts[-4]}/{p.name[:30]}")
def test_records_match_git_dump(table: Path) -> None:
    r = TableReader(table)
    got = format_records(r.iter_refs(), r.iter_logs())
    assert got == _expected(table, "dump-t-").read_bytes()
    assert format_blocks(r.block_summary(), r.block_size) == _expected(table, "dump-").read_text()


@pytest.mark.e2e
@pytest.mark.parametrize("table", TABLES, ids=lambda p: f"{p.parts[-4]}/{p.name[:30]}")
def test_rewrite_gives_git_structure(table: Path) -> None:
    """Rewriting Git's records gives the same blocks, and the same bytes."""
    r = TableReader(table)
    opts = WriteOptions(
        block_size=r.block_size,
        restart_interval=4 if "blocksize" in str(table) else 16,
        fmt=SHA1 if r.version == 1 else SHA256,
    )
    data = TableWriter(opts).write(
        list(r.iter_refs()), list(r.iter_logs()), r.min_update_index, r.max_update_index
    )
    r2 = TableReader(data=data)
    assert r2.block_summary() == r.block_summary()
    assert list(r2.iter_refs()) == list(r.iter_refs())
    assert list(r2.iter_logs()) == list(r.iter_logs())
    # Git 2.55 (zlib-ng) deflates log blocks exactly like zlib and zlib-ng at level 9
    if not r.has_logs or compress.active_backend("deflate") in ("zlib", "zlib-ng"):
        assert data == table.read_bytes()


def test_seek_and_prefix_with_multilevel_index() -> None:
    table = next((DATA / "reftable-blocksize" / "repo" / "reftable").glob("*.ref"))
    r = TableReader(table)
    assert r.ref_index_pos and r.log_index_pos and r.obj_pos
    names = [x.name for x in r.iter_refs()]
    for name in names[::7]:
        rec = r.seek_ref(name)
        assert rec is not None and rec.name == name
    assert r.seek_ref(b"refs/heads/nope") is None
    tags = [x.name for x in r.iter_refs(b"refs/tags/a/")]
    assert tags == [n for n in names if n.startswith(b"refs/tags/a/")] and len(tags) == 60
    main_logs = list(r.iter_logs(b"refs/heads/main"))
    assert main_logs == [g for g in r.iter_logs() if g.refname == b"refs/heads/main"]
    assert len(main_logs[0].message) == 129  # block_size/2 + newline
    # obj blocks: "which refs point at this id" agrees with a full scan, for every id
    all_refs = list(r.iter_refs())
    for oid in {x.oid for x in all_refs if x.oid} | {x.peeled for x in all_refs if x.peeled}:
        want = sorted(x.name for x in all_refs if oid in (x.oid, x.peeled))
        assert sorted(x.name for x in r.refs_for(oid)) == want
    assert list(r.refs_for(b"\xee" * 20)) == []


def test_varint_roundtrip() -> None:
    for v in [0, 1, 127, 128, 255, 16511, 16512, 2**32, 2**63]:
        enc = put_varint(v)
        assert get_varint(enc, 0, len(enc)) == (v, len(enc))


def _small_table() -> bytes:
    refs = [RefRecord(b"refs/heads/a%03d" % i, 1, 1, bytes([i]) * 20) for i in range(50)]
    logs = [
        LogRecord(
            b"refs/heads/a%03d" % i,
            1,
            1,
            b"\0" * 20,
            bytes([i]) * 20,
            b"N",
            b"e",
            1700000000,
            100,
            b"msg\n",
        )
        for i in range(50)
    ]
    return TableWriter(WriteOptions(block_size=256, restart_interval=2)).write(refs, logs, 1, 1)


def test_bad_magic_truncated_crc() -> None:
    data = _small_table()
    with pytest.raises(ReftableError, match="magic") as e:
        TableReader(data=b"XXXX" + data[4:], name="t.ref")
    assert e.value.path == "t.ref" and e.value.offset == 0
    with pytest.raises(ReftableError) as e:
        TableReader(data=data[:-10], name="t.ref")
    assert e.value.offset is not None
    bad = bytearray(data)
    bad[-30] ^= 0xFF
    with pytest.raises(ReftableError, match="CRC|footer"):
        TableReader(data=bytes(bad), name="t.ref")


def test_corrupt_log_block() -> None:
    data = bytearray(_small_table())
    r = TableReader(data=bytes(data))
    pos = r.log_pos
    data[pos + 10 : pos + 20] = b"\xff" * 10
    r = TableReader(data=bytes(data), name="t.ref")
    with pytest.raises(ReftableError, match="log block") as e:
        list(r.iter_logs())
    assert e.value.offset == pos + 4


def test_restart_out_of_range_and_keys_out_of_order() -> None:
    data = bytearray(_small_table())
    r = TableReader(data=bytes(data))
    blk = r.block_at(256)
    end = 256 + blk.block_len
    bad = bytearray(data)
    bad[end - 5 : end - 2] = (0xFFFFFF).to_bytes(3, "big")
    # A damaged restart table is reported when asked for, and a seek scans instead
    # (Git lists such a block): the same records either way.
    damaged = TableReader(data=bytes(bad)).block_at(256)
    with pytest.raises(ReftableError, match="restart offset"):
        damaged.restarts  # noqa: B018
    assert damaged.seek_restart(b"refs/heads/a") == damaged.rec_start
    last = list(_ref_records(blk, 20, 1, None))[-1].name
    for target in (None, last):
        assert list(_ref_records(damaged, 20, 1, target)) == list(_ref_records(blk, 20, 1, target))
    # swap two full keys: restart records are stored whole, so flip a byte in the 2nd one
    recs = list(_ref_records(blk, 20, 1, None))
    assert recs
    bad = bytearray(data)
    second = blk.restarts[1] if len(blk.restarts) > 1 else None
    assert second is not None
    bad[second + 2 + len(b"refs/heads/")] = ord("0")  # 'a' -> '0' sorts before
    # Git (2.55 show-ref) lists such refs in stored order, without an error: so does gitodb
    names = [r.name for r in TableReader(data=bytes(bad)).iter_refs()]
    assert len(names) == len(list(TableReader(data=bytes(data)).iter_refs()))
    assert names != sorted(names)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=0, max_size=300), st.sampled_from([0x72, 0x67]))
def test_fuzz_block_decoder(body: bytes, btype: int) -> None:
    """Random block bytes: only ReftableError, never another exception or a hang."""
    buf = bytes([btype]) + (len(body) + 4).to_bytes(3, "big") + body
    try:
        blk = Block(buf, 0, 0, btype, len(buf), "fuzz", 0)
        if btype == 0x72:
            list(_ref_records(blk, 20, 0, None))
            list(_ref_records(blk, 20, 0, b"refs/x"))
        else:
            list(_log_records(blk, 20, None))
    except ReftableError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=2000), st.binary(min_size=1, max_size=8))
def test_fuzz_table_mutation(offset: int, junk: bytes) -> None:
    data = bytearray(_small_table())
    offset %= len(data)
    data[offset : offset + len(junk)] = junk
    try:
        r = TableReader(data=bytes(data), name="t.ref")
        list(r.iter_refs())
        list(r.iter_logs())
        r.seek_ref(b"refs/heads/a010")
    except ReftableError:
        pass


def test_seek_finds_refs_in_every_block_of_an_unindexed_table() -> None:
    # A table of 2-3 ref blocks has no index: its seek starts at the first block and
    # must keep skipping smaller names into the later blocks (a stress run found
    # names in the second block that listed but did not resolve).
    names = [f"refs/heads/w{i // 40:02d}/r{i:03d}".encode() for i in range(256)]
    refs = [RefRecord(n, 1, 1, bytes([i % 256]) * 20) for i, n in enumerate(names)]
    data = TableWriter(WriteOptions(block_size=4096)).write(refs, [], 1, 1)
    reader = TableReader(data=data)
    assert sum(1 for s, _a, _b in reader.block_summary() if s == "ref") >= 2
    assert not reader.ref_index_pos
    assert [r.name for r in reader.iter_refs()] == names
    for n in names:
        rec = reader.seek_ref(n)
        assert rec is not None and rec.name == n
    assert [r.name for r in reader.iter_refs(start=names[200])] == names[200:]
    assert reader.seek_ref(b"refs/heads/w03/r1") is None
