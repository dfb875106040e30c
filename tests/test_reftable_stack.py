"""The reftable stack: merged view, atomic writes, locking, compaction, bad stacks."""

from __future__ import annotations

import multiprocessing
import os
import shutil
from pathlib import Path

import pytest

from gitodb.errors import LockError, RefError, ReftableError
from gitodb.objects.format import SHA1
from gitodb.refs.reftable_store import ReftableRefStore
from gitodb.reftable.dump import format_records
from gitodb.reftable.reader import TableReader
from gitodb.reftable.records import RefRecord
from gitodb.reftable.stack import Stack, compaction_segment
from gitodb.repo import Repository

DATA = Path(__file__).parent / "data"


def _copy(tmp_path: Path, fixture: str) -> Path:
    dst = tmp_path / fixture
    shutil.copytree(DATA / fixture / "repo", dst)
    return dst


def _snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((d / "reftable").iterdir())}


@pytest.mark.e2e
@pytest.mark.parametrize("fixture", ["reftable-stack", "reftable-sha256"])
def test_merged_view_matches_git(fixture: str) -> None:
    s = Stack(DATA / fixture / "repo" / "reftable")
    got = format_records(s.iter_refs(), s.iter_logs())
    assert got == (DATA / fixture / "expected" / "dump-stack.txt").read_bytes()
    # point lookups agree with the merged iteration (tombstones hide older values)
    for rec in s.iter_refs(keep_deletions=True):
        assert s.read_ref(rec.name) == (None if rec.value_type == 0 else rec)
    assert s.read_ref(b"refs/heads/doomed") is None


def test_compaction_segment_is_geometric() -> None:
    assert compaction_segment([100, 50, 25]) == (0, 0)
    assert compaction_segment([100, 60, 50]) == (0, 3)
    assert compaction_segment([1000, 10, 10]) == (1, 3)
    assert compaction_segment([]) == (0, 0)


def _repo(path: Path) -> Repository:
    return Repository(path)


@pytest.mark.e2e
def test_update_read_back_and_auto_compaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1800000000 +0100")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "T")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "t@x")
    d = _copy(tmp_path, "reftable-stack")
    refs = _repo(d).refs
    assert isinstance(refs, ReftableRefStore)
    before = len(refs.stack.names)
    main = refs.resolve("refs/heads/main")
    assert main is not None
    for i in range(20):
        refs.update_ref(f"refs/heads/new{i}", main, None, f"create {i}")
    fresh = _repo(d).refs
    assert [r.name for r in fresh.iter_refs("refs/heads/new")] == sorted(
        f"refs/heads/new{i}" for i in range(20)
    )
    log = fresh.reflog("refs/heads/new7")
    assert len(log) == 1 and log[0].message == b"create 7" and log[0].tz_offset == 100
    # auto-compaction kept the stack geometric: far fewer tables than writes
    assert len(fresh.stack.names) < before + 20
    sizes = [r.size for r in fresh.stack.readers]
    assert compaction_segment(sizes) == (0, 0) or len(sizes) <= 3
    # old-value check
    with pytest.raises(RefError, match="but expected"):
        fresh.update_ref("refs/heads/new1", main, b"\1" * 20)
    with pytest.raises(RefError, match="already exists"):
        fresh.transaction().create  # noqa: B018
        tx = fresh.transaction()
        tx.create("refs/heads/new1", main)
        tx.commit()


def test_lock_held_fails_cleanly(tmp_path: Path) -> None:
    d = _copy(tmp_path, "reftable-small")
    refs = _repo(d).refs
    before = _snapshot(d)
    (d / "reftable" / "tables.list.lock").write_bytes(b"")
    head = refs.resolve("HEAD")
    assert head is not None
    with pytest.raises(LockError):
        refs.update_ref("refs/heads/x", head)
    os.unlink(d / "reftable" / "tables.list.lock")
    assert _snapshot(d) == before


def test_failed_write_leaves_stack_untouched(tmp_path: Path) -> None:
    d = _copy(tmp_path, "reftable-stack")
    s = Stack(d / "reftable")
    before = _snapshot(d)

    def build(stack: Stack, ui: int) -> tuple[list[RefRecord], list]:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        s.modify(build)
    # a record that cannot fit a block fails inside the writer
    with pytest.raises(ReftableError, match="too large"):
        s.modify(lambda st, ui: ([RefRecord(b"refs/heads/" + b"x" * 5000, ui, 1, b"\1" * 20)], []))
    assert _snapshot(d) == before


def test_missing_table_is_reported(tmp_path: Path) -> None:
    d = _copy(tmp_path, "reftable-stack")
    victim = (d / "reftable" / "tables.list").read_text().split()[3]
    os.unlink(d / "reftable" / victim)
    with pytest.raises(ReftableError, match=victim) as e:
        Stack(d / "reftable")
    assert e.value.path is not None and e.value.path.endswith("tables.list")


@pytest.mark.e2e
def test_full_compaction_drops_tombstones(tmp_path: Path) -> None:
    d = _copy(tmp_path, "reftable-stack")
    s = Stack(d / "reftable", auto_compact=False)
    refs = list(s.iter_refs())
    logs = list(s.iter_logs())
    assert s.compact()
    assert len(s.names) == 1 and len(list((d / "reftable").glob("*.ref"))) == 1
    r = TableReader(d / "reftable" / s.names[0])
    assert list(r.iter_refs()) == refs
    assert list(r.iter_logs()) == logs
    assert not (d / "reftable" / "tables.list.lock").exists()


def _writer(args: tuple[str, int]) -> int:
    path, who = args
    repo = Repository(path)
    refs = repo.refs
    head = refs.resolve("HEAD")
    assert head is not None
    done = 0
    for i in range(8):
        while True:
            try:
                refs.update_ref(f"refs/heads/w{who}-{i}", head)
                break
            except LockError:
                continue
        done += 1
    return done


@pytest.mark.e2e
def test_concurrent_writers(tmp_path: Path) -> None:
    d = _copy(tmp_path, "reftable-small")
    with multiprocessing.get_context("fork").Pool(2) as pool:
        assert pool.map(_writer, [(str(d), 0), (str(d), 1)]) == [8, 8]
    refs = _repo(d).refs
    names = {r.name for r in refs.iter_refs("refs/heads/w")}
    assert names == {f"refs/heads/w{w}-{i}" for w in (0, 1) for i in range(8)}
    assert not (d / "reftable" / "tables.list.lock").exists()
    listed = set((d / "reftable" / "tables.list").read_text().split())
    on_disk = {p.name for p in (d / "reftable").iterdir()} - {"tables.list"}
    assert listed == on_disk


@pytest.mark.e2e
def test_reflog_truncation_and_delete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1800000000 +0000")
    d = _copy(tmp_path, "reftable-blocksize")
    refs = _repo(d).refs
    assert refs.options.block_size == 256 and refs.options.restart_interval == 4
    oid = refs.resolve("refs/heads/main")
    assert oid is not None
    refs.update_ref("refs/heads/main", oid, None, "x" + "ü" * 100)
    entry = refs.reflog("refs/heads/main")[-1]
    assert len(entry.message) == 128 and entry.message.endswith(b"\xc3")
    n = len(refs.reflog("refs/heads/main"))
    refs.rewrite_reflog("refs/heads/main", lambda i, _e: i != 0)
    assert len(_repo(d).refs.reflog("refs/heads/main")) == n - 1
    refs.delete_ref("refs/heads/main")
    fresh = _repo(d).refs
    assert fresh.read("refs/heads/main") is None
    assert not fresh.reflog("refs/heads/main")
    assert fresh.fmt == SHA1


@pytest.mark.parametrize(
    "shared,umask,want",
    [
        (None, 0o022, 0o644),
        (None, 0o002, 0o664),
        ("umask", 0o027, 0o640),
        ("group", 0o022, 0o664),
        ("group", 0o027, 0o660),
        ("world", 0o027, 0o664),
        ("true", 0o077, 0o660),
        ("0640", 0o002, 0o640),
    ],
)
def test_shared_repository_modes(tmp_path: Path, shared: str | None, umask: int, want: int) -> None:
    """Tables and tables.list get Git's calc_shared_perm(0666 & ~umask)."""
    import os
    import stat

    d = _copy(tmp_path, "reftable-stack")
    if shared is not None:
        with open(d / "config", "a") as f:
            f.write(f"[core]\n\tsharedRepository = {shared}\n")
    old = os.umask(umask)
    try:
        refs = _repo(d).refs
        main = refs.resolve("refs/heads/main")
        assert main is not None
        refs.update_ref("refs/heads/perm", main)
        refs.pack_refs()
    finally:
        os.umask(old)
    rt = d / "reftable"
    for p in [rt / "tables.list", *rt.glob("*.ref")]:
        assert stat.S_IMODE(p.stat().st_mode) == want, p.name


def test_lock_errors_in_git_words(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    from helpers import run_cli

    d = _copy(tmp_path, "reftable-stack")
    (d / "reftable" / "tables.list.lock").write_bytes(b"")
    capfdbinary.readouterr()
    assert run_cli(d, "update-ref", "refs/heads/b", "refs/heads/main") == 128
    assert capfdbinary.readouterr().err == (
        b"fatal: update_ref failed for ref 'refs/heads/b': cannot lock references\n"
    )
    assert run_cli(d, "pack-refs") == 251
    assert capfdbinary.readouterr().err == b"error: unable to compact stack: data is locked\n"


@pytest.mark.parametrize("fixture", ["reftable-stack", None])
def test_deleting_a_self_referencing_symref(
    tmp_path: Path, fixture: str | None, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    from helpers import git, run_cli

    if fixture is None:
        d = tmp_path / "files"
        git("init", "-q", "-b", "main", d)
        git("commit", "-q", "--allow-empty", "-m", "x", cwd=d)
    else:
        d = _copy(tmp_path, fixture)
    assert run_cli(d, "symbolic-ref", "refs/heads/self", "refs/heads/self") == 0
    capfdbinary.readouterr()
    assert run_cli(d, "update-ref", "-d", "refs/heads/self") == 1
    assert capfdbinary.readouterr().err == (
        b"error: multiple updates for 'refs/heads/self' (including one via symref "
        b"'refs/heads/self') are not allowed\n"
    )


def test_pack_refs_in_worktree_compacts_its_own_stack(tmp_path: Path) -> None:
    import subprocess

    from helpers import git_env, run_cli

    git255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"
    if not git255.exists():
        pytest.skip("needs Git 2.55 to make a reftable worktree")
    env = git_env()
    env["PATH"] = f"{git255.parent}{os.pathsep}{env['PATH']}"
    env["GIT_TEST_REFTABLE_AUTOCOMPACTION"] = "false"

    def g(*args: str, cwd: Path) -> None:
        subprocess.run([str(git255), *args], cwd=cwd, env=env, check=True, capture_output=True)

    repo, wt = tmp_path / "repo", tmp_path / "wt"
    g("init", "-q", "--ref-format=reftable", str(repo), cwd=tmp_path)
    g("config", "maintenance.auto", "false", cwd=repo)
    g("commit", "-q", "--allow-empty", "-m", "A", cwd=repo)
    g("worktree", "add", "-q", str(wt), cwd=repo)
    g("update-ref", "refs/worktree/per-worktree", "HEAD", cwd=wt)
    main_list = (repo / ".git/reftable/tables.list").read_text()
    wt_list = repo / ".git/worktrees/wt/reftable/tables.list"
    assert len(wt_list.read_text().splitlines()) > 1
    assert run_cli(wt, "pack-refs") == 0
    assert len(wt_list.read_text().splitlines()) == 1
    assert (repo / ".git/reftable/tables.list").read_text() == main_list


@pytest.mark.parametrize(
    "args,code,err",
    [
        (
            ["-c", "reftable.blockSize=50", "pack-refs"],
            246,
            b"error: unable to compact stack: entry too large\n",
        ),
        (
            ["-c", "reftable.blockSize=16777216", "pack-refs"],
            128,
            b"fatal: reftable block size cannot exceed 16MB\n",
        ),
        (
            ["-c", "reftable.restartInterval=65536", "pack-refs"],
            128,
            b"fatal: reftable block size cannot exceed 65535\n",
        ),
        (
            [
                "-c",
                "reftable.blockSize=100",
                "update-ref",
                "-m",
                "a" * 500,
                "refs/heads/logme",
                "refs/heads/main",
            ],
            128,
            b"fatal: update_ref failed for ref 'refs/heads/logme': reftable: transaction failure: "
            b"entry too large\n",
        ),
    ],
)
def test_write_option_errors_in_git_words(
    tmp_path: Path,
    args: list[str],
    code: int,
    err: bytes,
    capfdbinary: pytest.CaptureFixture[bytes],
) -> None:
    from helpers import run_cli

    d = _copy(tmp_path, "reftable-stack")
    before = _snapshot(d)
    capfdbinary.readouterr()
    assert run_cli(d, *args) == code
    assert capfdbinary.readouterr().err == err
    assert _snapshot(d) == before
