"""multi-pack-index: reading Git's files, writing byte-identical ones, using them for lookups.

Every repository is built with the ``git`` on PATH; where Git 2.55 is present in
``../shared`` its output is compared too (those cases skip without it).
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from gitodb.errors import GitodbError, MultiPackIndexError
from gitodb.objects.format import format_by_name
from gitodb.pack.idx import PackIndex
from gitodb.pack.midx import MultiPackIndex, load_midx
from gitodb.pack.midx_write import verify_midx
from gitodb.repo.odb import ObjectDatabase
from helpers import git, git_env, run_gitodb

GIT255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"

pytestmark = pytest.mark.e2e


gitodb = run_gitodb


def git_run(*args: str, cwd: Path, exe: str = "git") -> subprocess.CompletedProcess:
    return subprocess.run([exe, *args], cwd=cwd, capture_output=True, env=git_env(), check=False)


def make_repo(tmp_path: Path, fmt: str = "sha1", packs: int = 4, name: str = "repo") -> Path:
    """A repository with ``packs`` packs (each commit repacked incrementally)."""
    repo = tmp_path / name
    git("init", "-q", f"--object-format={fmt}", repo)
    for i in range(packs):
        for j in range(3):
            (repo / f"f{j}.txt").write_text("".join(f"line {k} {i} {j}\n" for k in range(50 + i)))
        git("add", ".", cwd=repo)
        git("commit", "-q", "-m", f"c{i}", cwd=repo)
        git("repack", "-q", "-d", cwd=repo)
    return repo


def midx_path(repo: Path) -> Path:
    return repo / ".git/objects/pack/multi-pack-index"


def git_midx(repo: Path, *args: str, exe: str = "git") -> bytes:
    """Git's MIDX for the repository's current packs (the file is removed again)."""
    p = midx_path(repo)
    saved = p.read_bytes() if p.exists() else None
    git_run("multi-pack-index", "write", *args, cwd=repo, exe=exe)
    out = p.read_bytes()
    if saved is None:
        p.unlink()
    else:
        p.write_bytes(saved)
    return out


@pytest.fixture(params=["sha1", "sha256"])
def repo(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return make_repo(tmp_path, request.param)


def gitexes() -> list[str]:
    return ["git", *([str(GIT255)] if GIT255.exists() else [])]


# -- writing -----------------------------------------------------------------------


def test_write_is_byte_identical_to_git(repo: Path) -> None:
    for exe in gitexes():
        expected = git_midx(repo, exe=exe)
        r = gitodb("multi-pack-index", "write", cwd=repo)
        assert r.returncode == 0, r.stderr
        assert midx_path(repo).read_bytes() == expected, exe
        midx_path(repo).unlink()


def test_write_with_an_existing_midx_and_new_packs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, packs=3)
    git("multi-pack-index", "write", cwd=repo)
    (repo / "new.txt").write_text("new\n")
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "new", cwd=repo)
    git("repack", "-q", "-d", cwd=repo)
    before = midx_path(repo).read_bytes()
    expected = git_midx(repo)
    assert expected != before
    assert gitodb("multi-pack-index", "write", cwd=repo).returncode == 0
    assert midx_path(repo).read_bytes() == expected


def dup_packs(tmp_path: Path) -> tuple[Path, str, str, str]:
    """Two packs that both hold blob ``b``: ``test-AB`` and ``test-BC``; as t5319."""
    repo = tmp_path / "dup"
    git("init", "-q", "--bare", repo)
    a, b, c = (
        git("hash-object", "-w", "--stdin", cwd=repo, input=x).strip()
        for x in (b"a\n", b"b\n", b"c\n")
    )
    ab = git("pack-objects", "objects/pack/test-AB", cwd=repo, input=a + b"\n" + b + b"\n")
    bc = git("pack-objects", "objects/pack/test-BC", cwd=repo, input=b + b"\n" + c + b"\n")
    for oid in (a, b, c):
        h = oid.decode()
        os.unlink(repo / "objects" / h[:2] / h[2:])
    # Same mtime: the tie goes to the pack met first (as Git's order does).
    for p in (repo / "objects/pack").iterdir():
        os.utime(p, (1_700_000_000, 1_700_000_000))
    return repo, b.decode(), ab.strip().decode(), bc.strip().decode()


def test_preferred_pack_is_chosen_for_duplicates(tmp_path: Path) -> None:
    repo, b, _ab, bc = dup_packs(tmp_path)
    pref = f"test-BC-{bc}.idx"
    midx = repo / "objects/pack/multi-pack-index"
    for args in ([], [f"--preferred-pack={pref}"], [f"--preferred-pack=test-BC-{bc}.pack"]):
        git("multi-pack-index", "write", *args, cwd=repo)
        expected = midx.read_bytes()
        midx.unlink()
        r = gitodb("multi-pack-index", "write", *args, cwd=repo)
        assert r.returncode == 0 and r.stderr == b"", r.stderr
        assert midx.read_bytes() == expected, args
        m = MultiPackIndex(midx, format_by_name("sha1"))
        chosen = m.pack_names[m.pack_id_at(m.find(bytes.fromhex(b)))]
        m.close()
        if args:
            assert chosen == pref
        midx.unlink()


def test_newer_pack_wins_without_preference(tmp_path: Path) -> None:
    repo, b, ab, bc = dup_packs(tmp_path)
    # AB is newer (and sorts first): BC newer must flip the choice to BC.
    pdir = repo / "objects/pack"
    for ext in (".pack", ".idx"):
        os.utime(pdir / f"test-BC-{bc}{ext}", (1_700_000_100, 1_700_000_100))
    expected = git_midx_bare(repo)
    assert gitodb("multi-pack-index", "write", cwd=repo).returncode == 0
    data = (pdir / "multi-pack-index").read_bytes()
    assert data == expected
    m = MultiPackIndex(pdir / "multi-pack-index", format_by_name("sha1"))
    assert m.pack_names[m.pack_id_at(m.find(bytes.fromhex(b)))] == f"test-BC-{bc}.idx"
    m.close()


def git_midx_bare(repo: Path) -> bytes:
    p = repo / "objects/pack/multi-pack-index"
    git("multi-pack-index", "write", cwd=repo)
    out = p.read_bytes()
    p.unlink()
    return out


def test_stdin_packs_and_up_to_date_file_is_kept(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, packs=3)
    idxs = sorted(p.name for p in (repo / ".git/objects/pack").glob("*.idx"))
    stdin = (idxs[1] + "\n").encode()
    r = subprocess.run(
        ["git", "multi-pack-index", "write", "--stdin-packs"],
        cwd=repo,
        input=stdin,
        env=git_env(),
        check=True,
        capture_output=True,
    )
    assert r.returncode == 0
    expected = midx_path(repo).read_bytes()
    midx_path(repo).unlink()
    assert (
        gitodb("multi-pack-index", "write", "--stdin-packs", cwd=repo, stdin=stdin).returncode == 0
    )
    assert midx_path(repo).read_bytes() == expected
    # Now covering everything; writing again keeps the same file (same inode).
    assert gitodb("multi-pack-index", "write", cwd=repo).returncode == 0
    ino = midx_path(repo).stat().st_ino
    assert gitodb("multi-pack-index", "write", cwd=repo).returncode == 0
    assert midx_path(repo).stat().st_ino == ino


def test_write_errors_as_git(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    git("init", "-q", empty)
    r = gitodb(
        "multi-pack-index", "write", "--stdin-packs", "--preferred-pack=nope", cwd=empty, stdin=b""
    )
    g = subprocess.run(
        [gitexes()[-1], "multi-pack-index", "write", "--stdin-packs", "--preferred-pack=nope"],
        cwd=empty,
        input=b"",
        capture_output=True,
        env=git_env(),
        check=False,
    )
    # Git 2.39 exits 1, Git 2.55 255 (the reference); 2.39 words the error otherwise
    assert r.returncode == 255 and g.returncode in (1, 255)
    if GIT255.exists():
        assert g.stderr == r.stderr
    assert r.stderr == b"warning: unknown preferred pack: 'nope'\nerror: no pack files to index.\n"
    assert not (empty / ".git/objects/pack/multi-pack-index").exists()
    assert gitodb("multi-pack-index", cwd=empty).returncode == 129
    assert gitodb("multi-pack-index", "write", "--bogus", cwd=empty).returncode == 129
    r = gitodb("multi-pack-index", "write", cwd=tmp_path)
    assert r.returncode == 128 and b"not a git repository" in r.stderr


def test_stale_rev_files_are_removed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, packs=2)
    stale = repo / ".git/objects/pack/multi-pack-index-abc.rev"
    stale.write_bytes(b"")
    assert gitodb("multi-pack-index", "write", cwd=repo).returncode == 0
    assert not stale.exists()


# -- reading -------------------------------------------------------------------------


def test_reader_matches_every_pack_index(repo: Path) -> None:
    git("multi-pack-index", "write", cwd=repo)
    fmt = format_by_name(git("rev-parse", "--show-object-format", cwd=repo).decode().strip())
    m = MultiPackIndex(midx_path(repo), fmt)
    assert m.checksum_valid() and m.version == 1
    pdir = repo / ".git/objects/pack"
    assert m.pack_names == sorted(p.name for p in pdir.glob("*.idx"))
    seen = {}
    for name in m.pack_names:
        idx = PackIndex(pdir / name, fmt)
        for i in range(idx.count):
            seen.setdefault(idx.oid_at(i), set()).add((name, idx.offset_at(i)))
        idx.close()
    assert m.count == len(seen)
    for oid, pid, off in m.entries():
        assert (m.pack_names[pid], off) in seen[oid]
    assert m.find(b"\xff" * fmt.rawsz) == -1
    m.close()
    assert verify_midx(str(repo / ".git/objects"), fmt) == []


def test_odb_lookups_go_through_the_midx(tmp_path: Path) -> None:
    repo, b, ab, bc = dup_packs(tmp_path)
    fmt = format_by_name("sha1")
    pdir = repo / "objects/pack"
    # The AB pack is newest (tried first without a MIDX); the MIDX prefers BC.
    os.utime(pdir / f"test-AB-{ab}.pack", (1_700_000_200, 1_700_000_200))
    git("multi-pack-index", "write", f"--preferred-pack=test-BC-{bc}.idx", cwd=repo)
    odb = ObjectDatabase(repo / "objects", fmt)
    pack, _off = odb.locate(bytes.fromhex(b))  # type: ignore[misc]
    assert pack.path.endswith(f"test-BC-{bc}.pack")
    odb.close()
    plain = ObjectDatabase(repo / "objects", fmt, multi_pack_index=False)
    pack, _off = plain.locate(bytes.fromhex(b))  # type: ignore[misc]
    assert pack.path.endswith(f"test-AB-{ab}.pack")
    plain.close()
    # core.multiPackIndex=false is honoured through the repository
    r = gitodb("-c", "core.multiPackIndex=false", "cat-file", "-p", b, cwd=repo)
    assert r.stdout == b"b\n"


def test_cli_reads_match_git_with_midx(repo: Path) -> None:
    git("multi-pack-index", "write", cwd=repo)
    for args in (
        ["cat-file", "--batch-all-objects", "--batch-check"],
        ["rev-list", "--all", "--objects"],
    ):
        assert gitodb(*args, cwd=repo).stdout == git(*args, cwd=repo)
    # abbreviations resolve through the MIDX
    full = git("rev-parse", "HEAD", cwd=repo).decode().strip()
    r = gitodb("cat-file", "-t", full[:7], cwd=repo)
    assert r.stdout == b"commit\n"


def test_pack_not_in_midx_is_still_found(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, packs=2)
    git("multi-pack-index", "write", cwd=repo)
    (repo / "late.txt").write_text("late\n")
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "late", cwd=repo)
    git("repack", "-q", "-d", cwd=repo)
    blob = git("rev-parse", "HEAD:late.txt", cwd=repo).decode().strip()
    assert gitodb("cat-file", "-p", blob, cwd=repo).stdout == b"late\n"
    args = ["cat-file", "--batch-all-objects", "--batch-check"]
    assert gitodb(*args, cwd=repo).stdout == git(*args, cwd=repo)


@pytest.mark.skipif(not GIT255.exists(), reason="needs Git 2.55 in ../shared")
def test_incremental_chain_written_by_git_255(tmp_path: Path) -> None:
    repo = tmp_path / "chain"
    git("init", "-q", repo)
    for i in range(4):
        (repo / f"f{i}").write_text(f"{i}\n")
        git("add", ".", cwd=repo)
        git("commit", "-q", "-m", f"c{i}", cwd=repo)
        git("repack", "-q", "-d", cwd=repo)
        if i % 2:
            git_run("multi-pack-index", "write", "--incremental", cwd=repo, exe=str(GIT255))
    chain = repo / ".git/objects/pack/multi-pack-index.d/multi-pack-index-chain"
    assert len(chain.read_text().split()) == 2
    fmt = format_by_name("sha1")
    midx = load_midx(str(repo / ".git/objects"), fmt)
    assert midx is not None and len(midx.layers) == 2
    assert midx.layers[1].base_packs == midx.layers[0].num_packs
    odb = ObjectDatabase(repo / ".git/objects", fmt)
    assert len(odb._midx_covered) == 4
    for line in git("rev-list", "--all", "--objects", cwd=repo).split(b"\n"):
        if line:
            assert odb.contains(bytes.fromhex(line[:40].decode()))
    odb.close()
    args = ["cat-file", "--batch-all-objects", "--batch-check"]
    assert gitodb(*args, cwd=repo).stdout == git(*args, cwd=repo)


# -- damage ------------------------------------------------------------------------------


def _corrupt(repo: Path, pos: int, data: bytes) -> Path:
    p = midx_path(repo)
    raw = bytearray(p.read_bytes())
    raw[pos : pos + len(data)] = data
    os.chmod(p, 0o644)
    p.write_bytes(bytes(raw))
    return p


# (position, bytes, Git's stderr first line, fatal?) as Git 2.55 prints them for the
# 4-pack sha1 repository; the "ignorable" ones let Git go on reading the packs.
CORRUPTIONS = [
    (
        0,
        b"\0",
        "fatal: multi-pack-index signature 0x00494458 does not match signature 0x4d494458",
        True,
    ),
    (4, b"\0", "fatal: multi-pack-index version 0 not recognized", True),
    (5, b"\3", "error: multi-pack-index hash version 3 does not match version 1", False),
    (6, b"\1", "error: final chunk has non-zero id 4f494446", False),
    (6, b"\7", "error: terminating chunk id appears earlier than expected", False),
    (12, b"\1", "fatal: multi-pack-index required pack-name chunk missing or corrupted", True),
    (16, b"\1", "error: improper chunk offset(s) 100000000000048 and ", False),
    (23, b"\1", "error: chunk id 504e414d not 4-byte aligned", False),
]


@pytest.mark.parametrize(("pos", "data", "message", "fatal"), CORRUPTIONS)
def test_damaged_midx_is_reported_as_git(
    tmp_path: Path, pos: int, data: bytes, message: str, fatal: bool
) -> None:
    repo = make_repo(tmp_path)
    git("multi-pack-index", "write", cwd=repo)
    _corrupt(repo, pos, data)
    if GIT255.exists():
        g = git_run("rev-list", "--all", "--objects", cwd=repo, exe=str(GIT255))
        assert g.stderr.decode().splitlines()[0].startswith(message)
        assert (g.returncode == 128) == fatal
    r = gitodb("rev-list", "--all", "--objects", cwd=repo)
    first = r.stderr.decode().splitlines()[0]
    if fatal:
        assert r.returncode == 128
        # Git's line whole; where it is wrong stays on the typed error.
        assert first == message
        if GIT255.exists():
            assert r.stderr == g.stderr
        with pytest.raises(MultiPackIndexError) as ei:
            load_midx(str(repo / ".git/objects"), format_by_name("sha1"))
        assert ei.value.path == str(midx_path(repo)) and ei.value.offset is not None
    else:
        assert r.returncode == 0 and first.startswith(message)
        if GIT255.exists():
            assert r.stderr == g.stderr
        assert r.stdout == git(
            "-c", "core.multiPackIndex=false", "rev-list", "--all", "--objects", cwd=repo
        )
        v = gitodb("multi-pack-index", "verify", cwd=repo)
        assert v.returncode == 1
        assert v.stderr.decode().splitlines()[-1] == (
            "error: multi-pack-index file exists, but failed to parse"
        )


def _layout(p: Path) -> dict[bytes, tuple[int, int]]:
    raw = p.read_bytes()
    n = raw[6]
    out = {}
    for i in range(n):
        cid = raw[12 + 12 * i : 16 + 12 * i]
        start = struct.unpack(">Q", raw[16 + 12 * i : 24 + 12 * i])[0]
        end = struct.unpack(">Q", raw[28 + 12 * i : 36 + 12 * i])[0]
        out[cid] = (start, end)
    return out


def test_verify_reports_bad_offsets_and_checksum_as_git(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    git("multi-pack-index", "write", cwd=repo)
    p = midx_path(repo)
    good = p.read_bytes()
    ooff = _layout(p)[b"OOFF"][0]
    cases = [
        (ooff + 16 * 8 + 6, b"\xff"),  # an offset: "incorrect object offset"
        (len(good) - 10, b"\xff" * 10),  # the checksum
        (_layout(p)[b"OIDL"][0] + 16 * 20, b"\0"),  # "oid lookup out of order"
    ]
    for pos, data in cases:
        p.write_bytes(good)
        _corrupt(repo, pos, data)
        g = git_run("multi-pack-index", "verify", cwd=repo)
        r = gitodb("multi-pack-index", "verify", cwd=repo)
        assert (r.returncode, r.stderr) == (g.returncode, g.stderr), pos
        assert r.returncode == 1
    # a pack-int-id out of range is fatal (Git: "bad pack-int-id")
    p.write_bytes(good)
    _corrupt(repo, ooff + 16 * 8 + 2, b"\7")
    r = gitodb("multi-pack-index", "verify", cwd=repo)
    assert r.returncode == 128
    assert re.fullmatch(
        rb"incorrect checksum\nfatal: bad pack-int-id: 179\d \(4 total packs\)\n", r.stderr
    )
    g = git_run("multi-pack-index", "verify", cwd=repo)
    assert (r.returncode, r.stderr) == (g.returncode, g.stderr)


def test_verify_missing_pack(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    git("multi-pack-index", "write", cwd=repo)
    pnam = _layout(midx_path(repo))[b"PNAM"][0]
    _corrupt(repo, pnam + 2, b"a")  # "paak-..." names a pack that is not there
    g = git_run("multi-pack-index", "verify", cwd=repo)
    r = gitodb("multi-pack-index", "verify", cwd=repo)
    assert r.returncode == g.returncode == 1
    assert b"failed to load pack in position 0\n" in r.stderr
    assert r.stderr == g.stderr
    # Lookups: the renamed pack is read through its own .idx; nothing is lost.
    args = ["cat-file", "--batch-all-objects", "--batch-check"]
    assert gitodb(*args, cwd=repo).stdout == git(*args, cwd=repo)


def test_required_chunk_of_wrong_size_is_fatal_with_details(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    git("multi-pack-index", "write", cwd=repo)
    p = midx_path(repo)
    raw = bytearray(p.read_bytes())
    # Shrink OIDF by moving OIDL's start (table entry 2) forward by 4.
    start = struct.unpack(">Q", raw[12 + 24 + 4 : 12 + 24 + 12])[0]
    raw[12 + 24 + 4 : 12 + 24 + 12] = struct.pack(">Q", start - 4)
    p.write_bytes(bytes(raw))
    with pytest.raises(MultiPackIndexError) as ei:
        MultiPackIndex(p, format_by_name("sha1"))
    assert ei.value.path == str(p) and not ei.value.ignorable
    assert ei.value.message == "multi-pack-index required OID fanout chunk missing or corrupted"
    assert ei.value.details == ["multi-pack-index OID fanout is of the wrong size"]
    r = gitodb("rev-list", "--all", cwd=repo)
    assert r.returncode == 128
    assert r.stderr.startswith(b"error: multi-pack-index OID fanout is of the wrong size\nfatal: ")


def test_huge_pack_count_is_refused_before_allocating(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, packs=1)
    git("multi-pack-index", "write", cwd=repo)
    p = _corrupt(repo, 8, b"\xff\xff\xff\xff")
    with pytest.raises(MultiPackIndexError, match="pack-name chunk is too short") as ei:
        MultiPackIndex(p, format_by_name("sha1"))
    assert ei.value.offset is not None


def test_expire_removes_unreferenced_packs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, packs=3)
    git("multi-pack-index", "write", cwd=repo)
    git("repack", "-q", "-a", cwd=repo)  # one new pack with everything (kept: no -d)
    twin = tmp_path / "twin"
    shutil.copytree(repo, twin, symlinks=True)
    for r in (repo, twin):
        # The new pack (newest mtime) wins every object: the old ones become unused.
        git("multi-pack-index", "write", cwd=r)
    g = git_run("multi-pack-index", "expire", cwd=twin)
    assert g.returncode == 0
    r = gitodb("multi-pack-index", "expire", cwd=repo)
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in (repo / ".git/objects/pack").iterdir())
    assert names == sorted(p.name for p in (twin / ".git/objects/pack").iterdir())
    assert midx_path(repo).read_bytes() == midx_path(twin).read_bytes()


def _old_packs(repo: Path, originals: set[str]) -> set[str]:
    return {p.name for p in (repo / ".git/objects/pack").glob("*.pack")} & originals


@pytest.mark.parametrize("batch", ["0", "1", "2k", "1m"])
def test_repack_takes_the_packs_git_takes(tmp_path: Path, batch: str) -> None:
    repo = make_repo(tmp_path, packs=5)
    # Growing mtimes: the batch order is oldest first.
    for n, p in enumerate(sorted((repo / ".git/objects/pack").glob("*.pack"))):
        os.utime(p, (1_700_000_000 + n, 1_700_000_000 + n))
    (
        repo
        / ".git/objects/pack"
        / (sorted((repo / ".git/objects/pack").glob("*.idx"))[0].stem + ".keep")
    ).write_text("")
    git("multi-pack-index", "write", cwd=repo)
    twin = tmp_path / "twin"
    shutil.copytree(repo, twin, symlinks=True)
    originals = {p.name for p in (repo / ".git/objects/pack").glob("*.pack")}
    g = git_run("multi-pack-index", "repack", f"--batch-size={batch}", cwd=twin)
    assert g.returncode == 0, g.stderr
    r = gitodb("multi-pack-index", "repack", f"--batch-size={batch}", cwd=repo)
    assert r.returncode == 0, r.stderr
    new_git = len(list((twin / ".git/objects/pack").glob("*.pack"))) - len(originals)
    new_ours = len(list((repo / ".git/objects/pack").glob("*.pack"))) - len(originals)
    assert new_ours == new_git
    assert git_run("multi-pack-index", "expire", cwd=twin).returncode == 0
    assert gitodb("multi-pack-index", "expire", cwd=repo).returncode == 0
    assert _old_packs(repo, originals) == _old_packs(twin, originals)
    assert gitodb("multi-pack-index", "verify", cwd=repo).returncode == 0
    assert git_run("multi-pack-index", "verify", cwd=repo).returncode == 0
    args = ["cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"]
    assert gitodb(*args, cwd=repo).stdout == git(*args, cwd=twin)


def test_expire_keeps_an_unreferenced_cruft_pack(tmp_path: Path) -> None:
    repo = tmp_path / "cruft"
    git("init", "-q", repo)
    (repo / "base").write_text("base\n")
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "base", cwd=repo)
    base = git("rev-parse", "HEAD", cwd=repo).strip()
    (repo / "gone").write_text("gone\n")
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "unreachable", cwd=repo)
    unreachable = git("rev-parse", "HEAD", cwd=repo).strip()
    git("reset", "-q", "--hard", base, cwd=repo)
    git("reflog", "expire", "--all", "--expire=all", cwd=repo)
    git("repack", "-q", "--cruft", "-d", cwd=repo)
    (mtimes,) = (repo / ".git/objects/pack").glob("*.mtimes")
    pack = (
        git(
            "pack-objects",
            "--revs",
            ".git/objects/pack/pack",
            cwd=repo,
            input=b"%s..%s\n" % (base, unreachable),
        )
        .strip()
        .decode()
    )
    # Preferring the new pack leaves the cruft pack without any object in the MIDX.
    args = ["multi-pack-index", "write", f"--preferred-pack=pack-{pack}.pack"]
    assert gitodb(*args, cwd=repo).returncode == 0
    twin = tmp_path / "twin"
    shutil.copytree(repo, twin, symlinks=True)
    assert git_run("multi-pack-index", "expire", cwd=twin).returncode == 0
    assert gitodb("multi-pack-index", "expire", cwd=repo).returncode == 0
    assert mtimes.exists()
    assert sorted(os.listdir(repo / ".git/objects/pack")) == sorted(
        os.listdir(twin / ".git/objects/pack")
    )


@pytest.mark.skipif(not GIT255.exists(), reason="needs Git 2.55 in ../shared (midx.version=2)")
def test_version_2_is_byte_identical_to_git_255(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, packs=3)
    git_run("-c", "midx.version=2", "multi-pack-index", "write", cwd=repo, exe=str(GIT255))
    expected = midx_path(repo).read_bytes()
    assert expected[4] == 2
    midx_path(repo).unlink()
    assert gitodb("-c", "midx.version=2", "multi-pack-index", "write", cwd=repo).returncode == 0
    assert midx_path(repo).read_bytes() == expected
    m = MultiPackIndex(midx_path(repo), format_by_name("sha1"))
    assert m.version == 2 and m.num_packs == 3
    m.close()


def test_reverse_index_chunk_is_the_pseudo_pack_order(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, packs=4)
    idxs = sorted(p.name for p in (repo / ".git/objects/pack").glob("*.idx"))
    fmt = format_by_name("sha1")
    for pref in (idxs[2], idxs[0]):
        # A bitmap MIDX carries RIDX; the preferred pack's objects come first.
        g = git_run("multi-pack-index", "write", "--bitmap", f"--preferred-pack={pref}", cwd=repo)
        assert g.returncode == 0, g.stderr
        m = MultiPackIndex(midx_path(repo), fmt)
        order = m.reverse_index()
        assert order is not None and sorted(order) == list(range(m.count))
        assert order == m.pseudo_pack_order(m.pack_names.index(pref))
        m.close()
        for f in (repo / ".git/objects/pack").glob("multi-pack-index*"):
            f.unlink()
    # Without RIDX and without a .rev there is no reverse index.
    git("multi-pack-index", "write", cwd=repo)
    m = MultiPackIndex(midx_path(repo), fmt)
    assert m.reverse_index() is None
    m.close()


def test_reverse_index_from_an_old_style_rev_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, packs=3)
    git("multi-pack-index", "write", cwd=repo)
    fmt = format_by_name("sha1")
    m = MultiPackIndex(midx_path(repo), fmt)
    order = m.pseudo_pack_order(1)
    body = b"RIDX" + struct.pack(">II", 1, 1) + struct.pack(f">{m.count}I", *order) + m.checksum
    rev = midx_path(repo).parent / f"multi-pack-index-{m.checksum.hex()}.rev"
    rev.write_bytes(body + fmt.new_hasher(body).digest())
    assert m.reverse_index() == order
    rev.write_bytes(body + b"\0" * 20)  # bad checksum: an error, not a wrong answer
    with pytest.raises(GitodbError):
        m.reverse_index()
    m.close()


def test_midx_of_an_alternate_is_used(tmp_path: Path) -> None:
    base = make_repo(tmp_path, packs=3, name="base")
    git("multi-pack-index", "write", cwd=base)
    user = tmp_path / "user"
    git("init", "-q", user)
    (user / ".git/objects/info/alternates").write_text(str(base / ".git/objects") + "\n")
    fmt = format_by_name("sha1")
    odb = ObjectDatabase(user / ".git/objects", fmt)
    assert odb.midx[str(base / ".git/objects")] is not None
    assert len(odb._midx_covered) == 3
    odb.close()
    args = ["cat-file", "--batch-all-objects", "--batch-check"]
    assert gitodb(*args, cwd=user).stdout == git(*args, cwd=user)


def test_objects_of_a_pack_gone_from_under_the_midx(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, packs=3)
    git("multi-pack-index", "write", cwd=repo)
    oids = git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo)
    victim = sorted((repo / ".git/objects/pack").glob("*.pack"))[1]
    victim.rename(victim.with_suffix(".bak"))
    args = ["cat-file", "--batch-check"]
    theirs = subprocess.run(
        ["git", *args], cwd=repo, input=oids, capture_output=True, env=git_env()
    )
    ours = gitodb(*args, cwd=repo, stdin=oids)
    assert ours.stdout == theirs.stdout
    assert b" missing\n" in ours.stdout
    assert ours.stderr == theirs.stderr


def _midx_repo_with_loose_copies(tmp_path: Path) -> tuple[Path, Path]:
    """One pack under a MIDX whose objects are loose too; returns (repo, its .idx)."""
    repo = tmp_path / "repo"
    git("init", "-q", repo)
    for i in range(2):
        (repo / f"f{i}").write_text(f"{i}\n")
        git("add", ".", cwd=repo)
        git("commit", "-q", "-m", f"c{i}", cwd=repo)
    git("repack", "-a", "-q", cwd=repo)  # no -d: the loose copies stay
    git("multi-pack-index", "write", cwd=repo)
    (idx,) = (repo / ".git/objects/pack").glob("*.idx")
    return repo, idx


@pytest.mark.parametrize("damage", ["missing", "truncated"])
def test_midx_pack_without_a_usable_idx_is_reported_and_skipped(
    tmp_path: Path, damage: str
) -> None:
    # Git 2.55 (t5319 'corrupt idx reports errors'): a pack the MIDX names cannot be
    # opened without its .idx; a lookup landing there says "index unavailable" and the
    # object is read from another copy.
    repo, idx = _midx_repo_with_loose_copies(tmp_path)
    args = ["-c", "core.multiPackIndex=true", "rev-list", "--objects", "--all"]
    expect = git(*args, cwd=repo)
    if damage == "missing":
        idx.unlink()
    else:
        idx.write_bytes(idx.read_bytes()[:1064])
    ours = gitodb(*args, cwd=repo)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == expect
    pack = idx.with_suffix(".pack")
    assert f"error: packfile {pack} index unavailable\n".encode() in ours.stderr
    if GIT255.exists():
        theirs = git_run(*args, cwd=repo, exe=str(GIT255))
        assert theirs.stdout == ours.stdout
        assert b"index unavailable" in theirs.stderr


def test_midx_pack_without_idx_objects_are_missing_as_git_255(tmp_path: Path) -> None:
    repo, idx = _midx_repo_with_loose_copies(tmp_path)
    git("prune-packed", cwd=repo)  # only the packed copies are left
    tip = git("rev-parse", "HEAD", cwd=repo)
    idx.unlink()
    args = ["cat-file", "--batch-check=%(objectsize:disk)"]
    ours = gitodb(*args, cwd=repo, stdin=tip)
    assert ours.returncode == 0
    assert ours.stdout == tip.strip() + b" missing\n"
    assert b"index unavailable" in ours.stderr
    if GIT255.exists():
        theirs = subprocess.run(
            [str(GIT255), *args], cwd=repo, input=tip, capture_output=True, env=git_env()
        )
        assert theirs.stdout == ours.stdout


def test_large_offset_out_of_bounds_is_gits_fatal_line(tmp_path: Path) -> None:
    # t5319 'reader bounds-checks large offset table': Git's fatal line is compared
    # whole; the file and offset stay on the exception for library users.
    from gitodb.pack.midx_write import encode_midx

    repo = make_repo(tmp_path, packs=1)
    fmt = format_by_name("sha1")
    (idx_path,) = (repo / ".git/objects/pack").glob("*.idx")
    idx = PackIndex(idx_path, fmt)
    entries = [(oid, 0, off) for oid, off in zip(idx.oid_list(), idx.offsets, strict=True)]
    idx.close()
    oid0 = entries[0][0]
    entries[0] = (oid0, 0, 1 << 33)  # one LOFF entry, index 0
    data = bytearray(encode_midx([idx_path.name], entries, fmt))
    ooff = data.index(b"OOFF")
    (ooff_at,) = struct.unpack_from(">Q", data, ooff + 4)
    struct.pack_into(">I", data, ooff_at + 4, 0x80000001)  # index 1: past the table
    midx_path(repo).write_bytes(bytes(data))
    ours = gitodb("cat-file", "--batch-all-objects", "--batch-check=%(objectsize)", cwd=repo)
    assert ours.returncode == 128
    assert ours.stderr == b"fatal: multi-pack-index large offset out of bounds\n"
    m = MultiPackIndex(midx_path(repo), fmt)
    with pytest.raises(MultiPackIndexError) as ei:
        m.offset_at(0)
    m.close()
    assert ei.value.path == str(midx_path(repo))
    assert ei.value.offset == ooff_at + 4  # the offset word of entry 0
    assert f"{midx_path(repo)} at offset {ooff_at + 4}" in str(ei.value)
