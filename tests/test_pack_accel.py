"""The C accelerator's pack walks give exactly what the pure-Python walks give."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitodb.objects import SHA1, SHA256
from gitodb.pack import reader as reader_module
from gitodb.pack import rev as rev_module
from gitodb.pack.reader import PackFile
from helpers import make_pack


@pytest.mark.parametrize(
    "object_format, git_options",
    [("sha1", ()), ("sha1", ("-c", "repack.useDeltaBaseOffset=false")), ("sha256", ())],
)
def test_header_scan_and_orders_match_python(
    tmp_path: Path, monkeypatch, object_format: str, git_options: tuple[str, ...]
) -> None:
    fmt = SHA1 if object_format == "sha1" else SHA256
    pack_path = make_pack(tmp_path, object_format, *git_options)
    fast = PackFile(pack_path, fmt)
    fast_types, fast_sizes = fast.headers_by_position()
    fast_order, fast_sorted = list(fast.rev_order), list(fast.sorted_offsets)

    monkeypatch.setattr(reader_module, "_scan_headers", None)
    monkeypatch.setattr(reader_module, "_gather_u64", None)
    monkeypatch.setattr(rev_module, "_c_rev_order", None)
    slow = PackFile(pack_path, fmt)
    types, sizes = slow.headers_by_position()
    assert list(slow.rev_order) == fast_order
    assert list(slow.sorted_offsets) == fast_sorted == sorted(slow.offsets)
    assert fast_types == types and list(fast_sizes) == list(sizes)
    assert any(slow.type_at(o) != 0 for o in slow.offsets)
    # Sizes are the objects' sizes, deltas included.
    for p in range(slow.count):
        assert slow.read_at(slow.offsets[p])[1].__len__() == sizes[p]


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_check_lines_match_python_formatting(tmp_path: Path, object_format: str) -> None:
    from array import array

    from gitodb._native import check_lines
    from helpers import git

    fmt = SHA1 if object_format == "sha1" else SHA256
    pack = PackFile(make_pack(tmp_path, object_format), fmt)
    types, sizes = pack.headers_by_position()
    oids = pack.idx.oid_list()
    names = [b"", b"commit", b"tree", b"blob", b"tag"]
    for positions in (array("I", range(len(oids))), pack.rev_order, array("I")):
        expected = b"".join(
            b"%s %s %d\n" % (oids[p].hex().encode(), names[types[p]], sizes[p]) for p in positions
        )
        assert check_lines(oids, types, sizes, positions) == expected
        # the same from the mapped index's id table, without the list of every id
        assert check_lines(pack.idx.id_table(), types, sizes, positions) == expected
    # ... which is what git prints for the whole pack, in id order.
    assert check_lines(oids, types, sizes, array("I", range(len(oids)))) == git(
        "cat-file", "--batch-check", "--batch-all-objects", cwd=tmp_path / "repo"
    )
    with pytest.raises(ValueError):
        check_lines(oids, types, sizes, array("I", [len(oids)]))
    buf, start, stride, rawsz, count = pack.idx.id_table()
    with pytest.raises(ValueError):  # a table that claims more ids than it holds
        check_lines((buf, start, stride, rawsz, count + 10**6), types, sizes, None)


@pytest.mark.skipif(
    reader_module._delta_result_sizes is None, reason="native core built without zlib"
)
@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_native_delta_heads_match_the_chosen_backend(
    tmp_path: Path, monkeypatch, object_format: str
) -> None:
    fmt = SHA1 if object_format == "sha1" else SHA256
    pack_path = make_pack(tmp_path, object_format)
    fast_types, fast_sizes = PackFile(pack_path, fmt).headers_by_position()
    monkeypatch.setattr(reader_module, "_delta_result_sizes", None)
    types, sizes = PackFile(pack_path, fmt).headers_by_position()
    assert fast_types == types and list(fast_sizes) == list(sizes)


def test_damaged_delta_head_is_a_typed_error_naming_the_entry(tmp_path: Path) -> None:
    from gitodb.errors import PackError

    pack_path = make_pack(tmp_path, "sha1")
    pack = PackFile(pack_path, SHA1)
    # The first OFS_DELTA entry: break its zlib header (the first two bytes of its data).
    from gitodb.pack.entry import parse_entry_header, parse_ofs_distance

    buf = bytearray(pack_path.read_bytes())
    for off in sorted(pack.offsets):
        t, _size, hlen = parse_entry_header(buf, off)
        if t == 6:
            _dist, nlen = parse_ofs_distance(buf, off + hlen)
            start = off + hlen + nlen
            buf[start : start + 2] = b"\xff\xff"
            break
    else:
        pytest.fail("no OFS_DELTA in the pack")
    pack.close()
    pack_path.chmod(0o644)
    pack_path.write_bytes(bytes(buf))
    damaged = PackFile(pack_path, SHA1)
    with pytest.raises(PackError) as e:
        damaged.headers_by_position()
    assert e.value.offset == off and "corrupt pack entry" in str(e.value)
