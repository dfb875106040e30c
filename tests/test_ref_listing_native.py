"""The native ref listings (``_native.packed_refs_plain``, ``_native.ref_block_records``)
against their Python references, on generated files and tables, damaged ones included."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitodb.errors import ReftableError
from gitodb.refs import packed
from gitodb.refs.packed import parse_plain, parse_plain_python
from gitodb.reftable import reader
from gitodb.reftable.reader import BLOCK_REF, TableReader
from gitodb.reftable.records import RefRecord
from gitodb.reftable.writer import TableWriter, WriteOptions

pytestmark = pytest.mark.skipif(
    reader._ref_block_records is None,  # noqa: SLF001
    reason="built without the native core",
)

HEX = "0123456789abcdef"
_ID = st.text(alphabet=HEX, min_size=40, max_size=40)
# name pieces around every rule of the plain parse: its character set, the suspect
# sequences, upper-case and short ids, a missing "refs/", odd bytes
_NAME_PART = st.sampled_from(
    ["a", "b/", "refs/", "..", "/.", "//", ".lock", ".", "/", "~", " ", "{", "é", "\x7f", "}", "@"]
)
_LINE = st.one_of(
    st.builds(lambda i, n: f"{i} refs/{n}\n", _ID, st.lists(_NAME_PART, max_size=4).map("".join)),
    st.builds(lambda i: f"^{i}\n", _ID),
    st.builds(lambda i: f"{i.upper()} refs/heads/x\n", _ID),
    st.builds(lambda i: f"{i[:39]} refs/heads/x\n", _ID),
    st.sampled_from(["# pack-refs with: peeled fully-peeled sorted \n", "# other\n", "\n", "x"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE, max_size=8), st.booleans())
def test_packed_refs_plain_equals_python(lines: list[str], header: bool) -> None:
    text = ("# pack-refs with: peeled \n" if header else "") + "".join(lines)
    data = text.encode("utf-8")
    assert parse_plain(data, 40) == parse_plain_python(data, 40)


@settings(max_examples=600, deadline=None)
@given(st.lists(_LINE, max_size=8), st.integers(0, 3), st.sampled_from([40, 64]))
def test_packed_refs_lines_plain_equals_python(lines: list[str], cut: int, hexsz: int) -> None:
    # searchable's line check from any start (the header's end, or before it),
    # truncated files included; 64-digit ids from the 40-digit ones doubled
    text = "".join(lines)
    if hexsz == 64:
        text = "".join(
            (line[:40] + line[16:] if len(line) > 40 and line[0] in HEX else line)
            for line in text.splitlines(keepends=True)
        )
    data = text.encode("utf-8")[: len(text.encode("utf-8")) - cut]
    for start in {0, data.find(b"\n") + 1, len(data)}:
        native = packed._lines_plain(data, start, hexsz)  # noqa: SLF001
        assert native is packed.lines_plain_python(data, start, hexsz)


def test_packed_refs_lines_plain_on_a_sorted_file() -> None:
    a, b = "1" * 40, "2" * 40
    head = "# pack-refs with: peeled fully-peeled sorted \n"
    good = f"{head}{a} refs/heads/x\n^{b}\n{b} refs/tags/v1.0\n".encode()
    assert packed.searchable(good, 40)
    for bad in (
        f"{head}{a} refs/heads//x\n",  # an empty component
        f"{head}{a} refs/heads/x/\n",  # a "/" at the end
        f"{head}{a} refs/heads/x\n^{b[:39]}\n",  # a short peeled id
        f"{head}{'AB' * 20} refs/heads/x\n",  # upper-case hex
        f"{head}{a} refs/heads/x",  # no newline at the end
    ):
        data = bad.encode()
        assert not packed.searchable(data, 40)
        assert not packed.lines_plain_python(data, len(head), 40)


def test_packed_refs_plain_takes_a_plain_file() -> None:
    a, b = "1" * 40, "2" * 40
    data = f"# pack-refs with: peeled \n{a} refs/heads/x\n^{b}\n{b} refs/tags/y\n".encode()
    got = parse_plain(data, 40)
    assert got is not None and got == parse_plain_python(data, 40)
    assert got["refs/heads/x"].peeled == bytes.fromhex(b)
    assert got["refs/tags/y"].peeled is None
    # a later line for the same name wins, as in the reference
    again = data + f"{a} refs/tags/y\n".encode()
    assert parse_plain(again, 40) == parse_plain_python(again, 40)


_REF_NAME = st.lists(st.sampled_from(["a", "b", "heads", "x/y", "zz", "é"]), min_size=1).map(
    lambda parts: ("refs/" + "/".join(parts)).encode()
)


def _table(names: list[bytes], kinds: list[int], block_size: int, restart: int) -> bytes:
    refs = []
    for i, (name, kind) in enumerate(zip(sorted(set(names)), kinds, strict=False)):
        oid = bytes([i % 256]) * 20
        if kind == 1:
            refs.append(RefRecord(name, 1, 1, oid))
        elif kind == 2:
            refs.append(RefRecord(name, 1, 2, oid, bytes([(i + 1) % 256]) * 20))
        elif kind == 3:
            refs.append(RefRecord(name, 1, 3, target=b"refs/heads/" + name[-3:]))
        else:
            refs.append(RefRecord(name, 1, 0))
    opts = WriteOptions(block_size=block_size, restart_interval=restart)
    return TableWriter(opts).write(refs, [], 1, 1)


def _outcome(fn: object, *args: object) -> object:
    try:
        return list(fn(*args))  # type: ignore[operator]
    except ReftableError as e:
        return ("error", str(e))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_REF_NAME, min_size=1, max_size=40),
    st.lists(st.integers(0, 3), min_size=40, max_size=40),
    st.sampled_from([256, 512, 4096]),
    st.integers(1, 16),
    st.sampled_from([None, b"refs/", b"refs/b", b"refs/heads/zz"]),
    st.data(),
)
def test_ref_block_records_equal_python(
    names: list[bytes],
    kinds: list[int],
    block_size: int,
    restart: int,
    target: bytes | None,
    data: st.DataObject,
) -> None:
    table = bytearray(_table(names, kinds, block_size, restart))
    if data.draw(st.booleans()):
        # damage a byte inside the ref blocks: both give the same records, or the
        # native one declines and the reference reports it
        at = data.draw(st.integers(24, max(24, min(len(table), block_size) - 1)))
        table[at] = data.draw(st.integers(0, 255))
    try:
        r = TableReader(data=bytes(table), name="t.ref")
        leaf = r._first_pos(BLOCK_REF)  # noqa: SLF001
        blocks = list(r.blocks(leaf, BLOCK_REF)) if leaf is not None else []
    except ReftableError:
        return  # header or block framing: not the record decoders' concern
    for blk in blocks:
        try:
            pos = blk.seek_restart(target) if target else blk.rec_start
        except ReftableError:
            continue
        native = _outcome(reader._ref_records, blk, 20, r.min_update_index, target)  # noqa: SLF001
        python = _outcome(
            reader._ref_records_python,  # noqa: SLF001
            blk,
            20,
            r.min_update_index,
            target,
            pos,
        )
        assert native == python


def test_ref_block_records_filter_every_record_of_an_unsorted_block() -> None:
    # Git lists the records of a block in stored order; a seek leaves out, in the
    # whole block, those that sort before the target (the reference loop does)
    names = [b"refs/heads/%c%c" % (a, b) for a in b"abcd" for b in b"xyz"]
    data = bytearray(_table(names, [1] * len(names), 4096, 16))
    r = TableReader(data=bytes(data))
    (blk,) = list(r.blocks(0, BLOCK_REF))
    # the first record (a restart point) is stored whole, and the two after it share
    # its prefix: "refs/heads/ax" -> "refs/heads/zx" makes them zx, zy, zz, then bx...
    at = bytes(data).index(b"refs/heads/ax", blk.rec_start)
    data[at + len(b"refs/heads/")] = ord("z")
    bad = TableReader(data=bytes(data))
    (blk,) = list(bad.blocks(0, BLOCK_REF))
    stored = [rec.name for rec in reader._ref_records_python(blk, 20, 1, None, blk.rec_start)]  # noqa: SLF001
    assert stored != sorted(stored)
    for target in (b"refs/heads/b", b"refs/heads/c", b"refs/heads/zz"):
        python = list(reader._ref_records_python(blk, 20, 1, target, blk.seek_restart(target)))  # noqa: SLF001
        assert list(reader._ref_records(blk, 20, 1, target)) == python  # noqa: SLF001
