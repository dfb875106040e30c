"""The ObjectDatabase Python API on the recorded fixtures and on repositories git builds."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gitodb.errors import ObjectNotFoundError
from gitodb.objects.format import format_by_name
from gitodb.objects.header import hash_object
from gitodb.repo import Repository
from gitodb.repo.odb import ObjectDatabase
from test_odb_support import DATA, copy_fixture, git, make_repo

pytestmark = pytest.mark.e2e


def expected_check(fixture: str) -> list[tuple[bytes, str, int, int, bytes | None]]:
    rows = []
    for line in (DATA / fixture / "expected" / "batch-check.txt").read_text().splitlines():
        oid, t, size, disk, base = line.split()
        rows.append(
            (
                bytes.fromhex(oid),
                t,
                int(size),
                int(disk),
                None if set(base) == {"0"} else bytes.fromhex(base),
            )
        )
    return rows


@pytest.mark.parametrize("fixture", ["packs-mixed", "packs-sha256"])
def test_every_object_of_fixture(fixture: str) -> None:
    repo = Repository(DATA / fixture / "repo")
    odb = repo.odb
    fmt = repo.object_format
    rows = expected_check(fixture)
    assert list(odb.iter_oids()) == [r[0] for r in rows]
    assert sorted(odb.iter_oids("pack")) == [r[0] for r in rows]
    for oid, t, size, disk, base in rows:
        assert odb.contains(oid)
        assert odb.read_header(oid) == (t, size)
        got_t, data = odb.read(oid)
        assert (got_t, len(data)) == (t, size)
        assert hash_object(fmt, t, data) == oid  # the content really is that object
        info = odb.info(oid)
        assert (info.type_name, info.size, info.disk_size, info.delta_base) == (t, size, disk, base)
        with odb.open_stream(oid) as s:
            chunks = []
            while True:
                c = s.read(1000)
                if not c:
                    break
                chunks.append(c)
        assert b"".join(chunks) == data and s.size == size


def test_missing_object() -> None:
    odb = Repository(DATA / "packs-mixed" / "repo").odb
    missing = b"\x01" * 20
    assert not odb.contains(missing)
    for op in (odb.read, odb.read_header, odb.info, odb.open_stream):
        with pytest.raises(ObjectNotFoundError):
            op(missing)


def test_alternates_relative_absolute_chained(tmp_path: Path) -> None:
    repo = copy_fixture("packs-mixed", tmp_path)
    alt = tmp_path / "packs-mixed" / "alt-objects"
    # Move the alternate one level further away and chain to it through an
    # absolute path from a middle object directory.
    middle = tmp_path / "middle-objects"
    (middle / "info").mkdir(parents=True)
    far = tmp_path / "far-objects"
    shutil.move(str(alt), far)
    (middle / "info" / "alternates").write_text(f"# comment\n\n{far}\n")
    (repo / "objects" / "info" / "alternates").write_text("../../../middle-objects\n")
    odb = Repository(repo).odb
    assert [os.path.realpath(d.path) for d in odb.dirs] == [
        os.path.realpath(repo / "objects"),
        os.path.realpath(middle),
        os.path.realpath(far),
    ]
    rows = expected_check("packs-mixed")
    for oid, t, size, _disk, _base in rows:
        assert odb.read_header(oid) == (t, size)


def test_alternate_cycle_is_harmless(tmp_path: Path) -> None:
    repo = copy_fixture("packs-mixed", tmp_path)
    alt = tmp_path / "packs-mixed" / "alt-objects"
    (alt / "info").mkdir(exist_ok=True)
    (alt / "info" / "alternates").write_text(str(repo / "objects") + "\n")
    odb = Repository(repo).odb
    assert len(odb.dirs) == 2


def test_new_pack_found_on_miss(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "w")
    repo = Repository(work)
    odb = repo.odb
    packs_before = len(odb.packs)
    # Another process writes a pack with an object we have not seen.
    data = b"written later\n"
    oid = git(work, "hash-object", "-w", "--stdin", input=data).stdout.strip().decode()
    git(work, "pack-objects", "-q", ".git/objects/pack/pack", input=oid.encode() + b"\n")
    git(work, "prune-packed")
    assert not (work / ".git" / "objects" / oid[:2] / oid[2:]).exists()
    assert odb.read(bytes.fromhex(oid)) == ("blob", data)
    assert len(odb.packs) == packs_before + 1


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_live_repo_matches_git(tmp_path: Path, object_format: str) -> None:
    work = make_repo(tmp_path / "w", object_format)
    fmt = format_by_name(object_format)
    out = git(
        work,
        "cat-file",
        "--batch-all-objects",
        "--batch-check=%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase)",
    ).stdout.decode()
    odb = Repository(work).odb
    oids = []
    for line in out.splitlines():
        oid_hex, t, size, disk, base = line.split()
        oid = bytes.fromhex(oid_hex)
        oids.append(oid)
        info = odb.info(oid)
        assert (info.type_name, info.size, info.disk_size) == (t, int(size), int(disk))
        assert (info.delta_base or fmt.null_oid).hex() == base
        t2, data = odb.read(oid)
        assert hash_object(fmt, t2, data) == oid
    assert list(odb.iter_oids()) == oids


def test_64bit_offsets_and_idx_v1(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "w")
    pack_dir = work / ".git" / "objects" / "pack"
    git(work, "repack", "-adq")
    (pack,) = pack_dir.glob("*.pack")
    for version in ("2,100", "1"):
        idx = pack.with_suffix(".idx")
        idx.unlink()
        git(work, "index-pack", f"--index-version={version}", str(pack))
        if version.startswith("2"):
            # Offsets above 100 went to the 64-bit table.
            assert idx.stat().st_size > 8 + 1024 + 28 * 30
        odb = ObjectDatabase(work / ".git" / "objects", format_by_name("sha1"))
        assert odb.packs[0].idx.version == int(version[0])
        expected = git(work, "cat-file", "--batch-all-objects", "--batch").stdout
        got = []
        for oid in odb.iter_oids():
            t, data = odb.read(oid)
            got.append(b"%s %s %d\n%s\n" % (oid.hex().encode(), t.encode(), len(data), data))
        assert b"".join(got) == expected
        odb.close()


def test_delta_base_cache_limit_from_config(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "w")
    git(work, "config", "core.deltaBaseCacheLimit", "1k")
    odb = Repository(work).odb
    assert odb.cache.limit == 1024
    for oid in odb.iter_oids():
        odb.read(oid)
        assert odb.cache.size <= 1024


def test_pack_order_iteration_walks_offsets(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "w")
    odb = Repository(work).odb
    seen = set()
    last: dict[object, int] = {}
    for oid, pack, where in odb.iter_located("pack"):
        assert oid not in seen
        seen.add(oid)
        if pack is not None:
            assert isinstance(where, int) and where > last.get(pack, -1)
            last[pack] = where
    assert seen == set(odb.iter_oids())


def test_repository_read_object_by_name() -> None:
    repo = Repository(DATA / "packs-sha256" / "repo")
    t, data = repo.read_object("HEAD")
    assert t == "commit" and data.startswith(b"tree ")
    assert repo.read_object("HEAD^{tree}")[0] == "tree"
