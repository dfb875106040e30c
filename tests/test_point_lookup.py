"""Point lookups in a big pack cost O(lookups x log n): no list of every id, no whole
``.rev`` read, no per-pack O(n) set-up (Git's for-each-ref, show-ref, cat-file -t/-s/-p
and rev-parse look up a few objects).  Checked by making every O(n) helper fail."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from gitodb.objects.format import SHA1
from gitodb.pack import idx as idx_module
from gitodb.pack import reader as reader_module
from gitodb.repo import Repository
from test_odb_support import git as _git_run


def git(cwd: Path, *args: str, text: bool = True) -> str | bytes:  # type: ignore[misc]
    out = _git_run(cwd, *args).stdout
    return out.decode() if text else out


pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository of small and large (> 64 KiB) blobs in delta chains, one pack + .rev."""
    root = tmp_path_factory.mktemp("point") / "r"
    git(root.parent, "init", "-q", str(root))
    rng = random.Random(7)
    big = bytearray(rng.randbytes(200_000))
    for i in range(12):
        (root / "small.txt").write_text("".join(f"line {j} {i}\n" for j in range(50 + i)))
        big[i * 1000 : i * 1000 + 8] = b"%08d" % i
        (root / "big.bin").write_bytes(bytes(big))
        git(root, "add", "-A")
        git(root, "commit", "-qm", f"c{i}")
        git(root, "tag", f"t{i}")
    git(root, "-c", "pack.writeReverseIndex=true", "repack", "-adq")
    return root


def _all_ids(repo: Path) -> list[tuple[str, str, int]]:
    out = git(repo, "cat-file", "--batch-all-objects", "--batch-check")
    return [(o, t, int(s)) for o, t, s in (line.split() for line in out.splitlines())]


def _forbid_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_a: object, **_k: object) -> object:
        raise AssertionError("O(n) set-up in a point lookup")

    monkeypatch.setattr(idx_module.PackIndex, "oid_list", boom)
    monkeypatch.setattr(idx_module.PackIndex, "_decode_offsets", boom)
    monkeypatch.setattr(reader_module, "load_rev", boom)
    monkeypatch.setattr(reader_module, "compute_rev_order", boom)


def test_point_reads_do_no_per_pack_set_up(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _all_ids(repo)
    _forbid_bulk(monkeypatch)
    r = Repository(repo)
    odb = r.odb
    for oid_hex, type_name, size in expected:
        oid = bytes.fromhex(oid_hex)
        assert odb.read_header(oid) == (type_name, size)
        got_type, data = odb.read(oid)
        assert got_type == type_name and len(data) == size
        if size > 65536:  # read with the exact span found by bisecting the .rev
            assert data == git(repo, "cat-file", type_name, oid_hex, text=False)
    pack = odb.packs[0]
    assert pack.idx._oid_list is None and pack.idx._offsets is None
    assert pack._sorted_offsets is None and pack._rev_order is None


def test_disk_size_and_delta_base_by_rev_bisection(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = git(
        repo,
        "cat-file",
        "--batch-all-objects",
        "--batch-check=%(objectname) %(objectsize:disk) %(deltabase)",
    )
    _forbid_bulk(monkeypatch)
    odb = Repository(repo).odb
    pack = odb.packs[0]
    for line in out.splitlines():
        oid_hex, disk, base = line.split()
        off = pack.find(bytes.fromhex(oid_hex))
        assert pack.disk_size_at(off) == int(disk)
        got = pack.delta_base_at(off)
        assert (got.hex() if got else "0" * 40) == base


def test_a_rev_out_of_order_falls_back_to_the_computed_order(repo: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(repo, copy)
    rev = next((copy / ".git" / "objects" / "pack").glob("*.rev"))
    data = bytearray(rev.read_bytes())
    # Swap two positions: the header and the pack checksum still match.
    data[12:16], data[16:20] = data[16:20], data[12:16]
    rev.chmod(0o644)
    rev.write_bytes(bytes(data))
    expected = _all_ids(repo)
    odb = Repository(copy).odb
    # (Its checksum no longer matches: dropped silently, as Git never checks it.)
    for oid_hex, type_name, size in expected:
        assert odb.read_header(bytes.fromhex(oid_hex)) == (type_name, size)
        assert len(odb.read(bytes.fromhex(oid_hex))[1]) == size
    pack = odb.packs[0]
    for oid_hex, _t, _s in expected:
        off = pack.find(bytes.fromhex(oid_hex))
        assert pack.oid_at_offset(off).hex() == oid_hex
        assert pack.disk_size_at(off) > 0


def test_index_lookup_native_and_python_agree(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = [bytes.fromhex(o) for o, _t, _s in _all_ids(repo)]
    pack_path = next((repo / ".git" / "objects" / "pack").glob("*.idx"))
    idx = idx_module.PackIndex(pack_path, SHA1)
    native = [idx.find(o) for o in ids]
    monkeypatch.setattr(idx_module, "_find_oid", None)
    python = idx_module.PackIndex(pack_path, SHA1)
    assert [python.find(o) for o in ids] == native == sorted(native)
    missing = bytes(20)
    assert idx.find(missing) == python.find(missing) == -1


def test_read_headers_is_read_header_for_packed_ids(repo: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(repo, copy)
    (copy / "loose.txt").write_text("only loose\n")
    loose = str(git(copy, "hash-object", "-w", "loose.txt")).strip()
    expected = _all_ids(copy)
    odb = Repository(copy).odb
    ids = [bytes.fromhex(o) for o, _t, _s in expected] + [bytes(20)]
    got = odb.read_headers(ids)
    # every packed id, as read_header gives it; the loose and the missing one are left out
    assert got == {bytes.fromhex(o): (t, s) for o, t, s in expected if o != loose}
    assert bytes.fromhex(loose) not in got and bytes(20) not in got
