"""Ref writes as safe as Git's: lock ownership, atomic transactions, typed I/O errors,
refusing what is not a ref, corrupt input, D/F conflicts, the ``--stdin`` protocol.

Expected messages are Git 2.55's (recorded here; the ``git`` on PATH is older).
"""

from __future__ import annotations

import errno
import os
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitodb.errors import LockError, RefError
from gitodb.refs.files import FilesRefStore
from gitodb.repo import Repository
from helpers import git, run_cli, snapshot

GIT255 = Path(__file__).resolve().parents[2] / "shared" / "git-2.55" / "git" / "bin" / "git"


@pytest.fixture
def env(git_identity: None) -> None:
    """The test identity alone (``conftest.git_identity``)."""


def _repo(path: Path, reftable: bool = False) -> str:
    """A repository with one commit on main; returns the commit id (hex)."""
    if reftable:
        if not GIT255.exists():
            pytest.skip("needs Git 2.55 to create a reftable repository")
        subprocess.run(
            [str(GIT255), "init", "-q", "-b", "main", "--ref-format=reftable", str(path)],
            check=True,
            env=_genv(),
        )
        # no background maintenance: it would leave objects/maintenance.lock meanwhile
        subprocess.run(
            [str(GIT255), "-C", str(path), "config", "maintenance.auto", "false"],
            check=True,
            env=_genv(),
        )
        subprocess.run(
            [str(GIT255), "-C", str(path), "commit", "-q", "--allow-empty", "-m", "c0"],
            check=True,
            env=_genv(),
        )
    else:
        git("init", "-q", "-b", "main", path)
        git("commit", "-q", "--allow-empty", "-m", "c0", cwd=path)
    return Repository(path).refs.resolve("HEAD").hex()  # type: ignore[union-attr]


def _genv() -> dict[str, str]:
    from helpers import git_env

    env = git_env()
    # Git 2.55 runs helpers such as "git maintenance" from PATH: make them 2.55 too
    env["PATH"] = f"{GIT255.parent}{os.pathsep}{env.get('PATH', '')}"
    return env


_run = run_cli


def _locks(path: Path) -> list[str]:
    return sorted(str(p) for p in path.rglob("*.lock"))


# -- 1. a writer never removes another writer's lock ---------------------------------


def test_commit_does_not_remove_a_lock_taken_after_its_rename(
    tmp_path: Path, env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _repo(tmp_path)
    git("commit", "-q", "--allow-empty", "-m", "c1", cwd=tmp_path)
    # a new value: an unchanged one is not written at all (like Git)
    head = git("rev-parse", "HEAD~1", cwd=tmp_path).decode().strip()
    ref = tmp_path / ".git" / "refs" / "heads" / "main"
    real_rename = os.rename

    def rename_then_other_writer_locks(src: object, dst: object) -> None:
        real_rename(src, dst)  # type: ignore[arg-type]
        if os.fspath(dst) == str(ref):  # type: ignore[arg-type]
            Path(str(ref) + ".lock").write_text("other writer\n")

    monkeypatch.setattr(os, "rename", rename_then_other_writer_locks)
    Repository(tmp_path).refs.update_ref("refs/heads/main", bytes.fromhex(head))
    assert Path(str(ref) + ".lock").read_text() == "other writer\n"


def test_rollback_leaves_a_replaced_lock_alone(tmp_path: Path) -> None:
    from gitodb.lockfile import LockFile

    target = tmp_path / "x"
    lock = LockFile(target)
    os.unlink(str(target) + ".lock")  # e.g. removed as stale by a user...
    Path(str(target) + ".lock").write_text("theirs")  # ...and taken by someone else
    lock.rollback()
    assert Path(str(target) + ".lock").read_text() == "theirs"


def test_lock_contention_is_a_typed_error_after_the_timeout(tmp_path: Path, env: None) -> None:
    head = _repo(tmp_path)
    Path(tmp_path / ".git/refs/heads/main.lock").write_text("")
    repo = Repository(tmp_path, config_overrides=["core.filesRefLockTimeout=20"])
    with pytest.raises(LockError, match="Unable to create .*main.lock': File exists"):
        repo.refs.update_ref("refs/heads/main", bytes.fromhex(head))
    assert (tmp_path / ".git/refs/heads/main").read_text() == head + "\n"


# -- 2. transactions are all-or-nothing, I/O errors typed ------------------------------


def _many(n: int, head: str, verb: str = "create") -> bytes:
    return "".join(f"{verb} refs/heads/r{i:03d} {head}\n" for i in range(n)).encode()


def test_failing_write_changes_no_ref(
    tmp_path: Path, env: None, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    head = _repo(tmp_path)
    _run(tmp_path, "update-ref", "--stdin", stdin=_many(301, head))
    capfd.readouterr()
    git("pack-refs", "--all", cwd=tmp_path)
    c1 = (
        git(
            "commit-tree",
            "-m",
            "c1",
            "-p",
            head,
            git("rev-parse", "HEAD^{tree}", cwd=tmp_path).decode().strip(),
            cwd=tmp_path,
        )
        .decode()
        .strip()
    )
    before = snapshot(tmp_path / ".git")
    script = _many(300, c1, "update") + b"delete refs/heads/r300\n"
    real_write = os.write
    calls = [0]

    def full_disk(fd: int, data: object) -> int:
        calls[0] += 1
        if calls[0] == 120:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "write", full_disk)
    assert _run(tmp_path, "update-ref", "--stdin", stdin=script) == 128
    monkeypatch.setattr(os, "write", real_write)
    err = capfd.readouterr().err
    assert err.startswith("fatal: couldn't write '") and "No space left on device" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert snapshot(tmp_path / ".git") == before
    assert not _locks(tmp_path / ".git")


@pytest.mark.parametrize("reftable", [False, True])
def test_component_too_long_is_one_fatal_line(
    tmp_path: Path, env: None, reftable: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    head = _repo(tmp_path, reftable)
    before = snapshot(tmp_path / ".git")
    name = "refs/heads/" + "a" * 300
    code = _run(tmp_path, "update-ref", name, head)
    err = capfd.readouterr().err
    if reftable:
        # reftable has no file per ref: Git stores the name
        assert code == 0 and Repository(tmp_path).refs.resolve(name) == bytes.fromhex(head)
        return
    assert code == 128
    assert err == (
        f"fatal: update_ref failed for ref '{name}': cannot lock ref '{name}': "
        f"Unable to create '{tmp_path}/.git/{name}.lock': File name too long\n"
    )
    assert snapshot(tmp_path / ".git") == before


def test_transaction_cost_is_linear_in_packed_refs_reads(
    tmp_path: Path, env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = _repo(tmp_path)
    _run(tmp_path, "update-ref", "--stdin", stdin=_many(200, head))
    git("pack-refs", "--all", cwd=tmp_path)
    parses = [0]
    real = FilesRefStore._parse_packed

    def counting(self: FilesRefStore, data: bytes, path: Path) -> object:
        parses[0] += 1
        return real(self, data, path)

    monkeypatch.setattr(FilesRefStore, "_parse_packed", counting)
    script = "".join(f"create refs/heads/new/n{i:03d} {head}\n" for i in range(200))
    assert _run(tmp_path, "update-ref", "--stdin", stdin=script.encode()) == 0
    assert parses[0] <= 2  # once, and again only if packed-refs changed


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_full_tmpfs(tmp_path: Path, env: None, capfd: pytest.CaptureFixture[str]) -> None:
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True
        ).returncode
        != 0
    ):
        pytest.skip("mount not allowed here")
    try:
        repo = mnt / "r"
        head = _repo(repo)
        capfd.readouterr()
        filler = mnt / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
        before = snapshot(repo / ".git")
        code = _run(repo, "update-ref", "--stdin", stdin=_many(300, head))
        err = capfd.readouterr().err
        assert code == 128 and err.startswith("fatal: ") and err.count("\n") == 1
        assert snapshot(repo / ".git") == before
        assert not _locks(repo / ".git")
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


# -- 3. only refs are written, and only to objects that exist ---------------------------


@pytest.mark.parametrize(
    "name", ["logs/HEAD", "logs/refs/heads/main", "shallow", "hooks", "config", "objects"]
)
def test_delete_refuses_what_is_not_a_ref(
    tmp_path: Path, env: None, name: str, capfd: pytest.CaptureFixture[str]
) -> None:
    _repo(tmp_path)
    (tmp_path / ".git" / "shallow").write_text("x\n")
    before = snapshot(tmp_path / ".git")
    assert _run(tmp_path, "update-ref", "-d", name) == 1
    assert capfd.readouterr().err == f"error: refusing to update ref with bad name '{name}'\n"
    assert snapshot(tmp_path / ".git") == before


@pytest.mark.parametrize("reftable", [False, True])
def test_refs_to_missing_objects_and_non_commit_branches(
    tmp_path: Path, env: None, reftable: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    _repo(tmp_path, reftable)
    tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    missing = "0" * 39 + "1"
    before = snapshot(tmp_path / ".git")
    assert _run(tmp_path, "update-ref", "refs/heads/c", missing) == 128
    assert capfd.readouterr().err == (
        "fatal: update_ref failed for ref 'refs/heads/c': trying to write ref 'refs/heads/c' "
        f"with nonexistent object {missing}\n"
    )
    assert (
        _run(
            tmp_path,
            "update-ref",
            "--stdin",
            stdin=f"start\ncreate refs/heads/c {missing}\ncommit\n".encode(),
        )
        == 128
    )
    assert capfd.readouterr().err == (
        f"fatal: trying to write ref 'refs/heads/c' with nonexistent object {missing}\n"
    )
    assert (
        _run(tmp_path, "update-ref", "--stdin", stdin=f"create refs/heads/c {'0' * 40}\n".encode())
        == 128
    )
    assert capfd.readouterr().err == "fatal: create refs/heads/c: zero <new-oid>\n"
    git("hash-object", "-w", "-t", "tree", "/dev/null", cwd=tmp_path) if not reftable else None
    assert _run(tmp_path, "update-ref", "refs/heads/d", tree) == 128
    assert capfd.readouterr().err == (
        "fatal: update_ref failed for ref 'refs/heads/d': trying to write non-commit object "
        f"{tree} to branch 'refs/heads/d'\n"
    )
    if not reftable:
        assert snapshot(tmp_path / ".git") == before


def test_delete_of_a_directory_is_a_df_error(
    tmp_path: Path, env: None, capfd: pytest.CaptureFixture[str]
) -> None:
    _repo(tmp_path)
    assert _run(tmp_path, "update-ref", "-d", "refs/heads") == 1
    assert capfd.readouterr().err == (
        "error: cannot lock ref 'refs/heads': 'refs/heads/main' "
        "exists; cannot create 'refs/heads'\n"
    )
    assert (tmp_path / ".git/refs/heads/main").is_file()


# -- 4. corrupt input is refused, not made permanent -----------------------------------


def test_cut_packed_refs_is_refused_and_kept(
    tmp_path: Path, env: None, capfd: pytest.CaptureFixture[str]
) -> None:
    head = _repo(tmp_path)
    git("tag", "v1", cwd=tmp_path)
    git("branch", "side", cwd=tmp_path)
    git("pack-refs", "--all", cwd=tmp_path)
    packed = tmp_path / ".git" / "packed-refs"
    data = packed.read_bytes()
    assert data.endswith(b" refs/tags/v1\n")
    packed.write_bytes(data[:-4])  # "... refs/tag"
    before = snapshot(tmp_path / ".git")
    for cmd in (
        ("show-ref",),
        ("update-ref", "-d", "refs/heads/side"),
        ("update-ref", "refs/heads/x", head),
    ):
        code = _run(tmp_path, *cmd)
        err = capfd.readouterr().err
        assert code in (1, 128), cmd
        assert "unterminated line in " in err and f"packed-refs: {head} refs/tag" in err, err
        assert "Traceback" not in err and err.count("\n") == 1
    assert snapshot(tmp_path / ".git") == before


@pytest.mark.parametrize(
    "name,email,ident",
    [
        ("a\nb", "x@y", "ab <x@y>"),
        (" <a>;.b\t", "<x\n@y> ", "a;.b <x@y>"),
        (".;,", "e@x", ". <e@x>"),
    ],
)  # as Git 2.55 writes them (2.39 also strips '.')
def test_identity_crud_is_stripped_like_git(
    tmp_path: Path, env: None, name: str, email: str, ident: str
) -> None:
    head = _repo(tmp_path)
    cfg = ["-c", f"user.name={name}", "-c", f"user.email={email}"]
    os.environ.pop("GIT_COMMITTER_NAME")
    os.environ.pop("GIT_COMMITTER_EMAIL")
    assert _run(tmp_path, *cfg, "update-ref", "-m", "m", "refs/heads/o", head) == 0
    log = (tmp_path / ".git" / "logs" / "refs" / "heads" / "o").read_text()
    assert log == f"{'0' * 40} {head} {ident} 1700000000 +0000\tm\n"


# -- 5. D/F conflicts are refused on both backends -------------------------------------


@pytest.mark.parametrize("reftable", [False, True])
def test_symref_df_conflict(
    tmp_path: Path, env: None, reftable: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    head = _repo(tmp_path, reftable)
    before = snapshot(tmp_path / ".git")
    prefix = "" if reftable else "cannot lock ref 'refs/heads': "
    assert _run(tmp_path, "symbolic-ref", "refs/heads", "refs/heads/foo") == 1
    assert capfd.readouterr().err == (
        f"error: {prefix}'refs/heads/main' exists; cannot create 'refs/heads'\n"
    )
    prefix = "" if reftable else "cannot lock ref 'refs/heads/main/x': "
    assert _run(tmp_path, "update-ref", "refs/heads/main/x", head) == 128
    assert capfd.readouterr().err == (
        f"fatal: update_ref failed for ref 'refs/heads/main/x': {prefix}'refs/heads/main' "
        "exists; cannot create 'refs/heads/main/x'\n"
    )
    assert snapshot(tmp_path / ".git") == before
    # Git 2.55 refuses it even when the same transaction deletes the ref in the way
    script = f"start\ndelete refs/heads/main\ncreate refs/heads/main/x {head}\ncommit\n"
    assert _run(tmp_path, "update-ref", "--stdin", stdin=script.encode()) == 128
    prefix = "" if reftable else "cannot lock ref 'refs/heads/main/x': "
    assert capfd.readouterr().err == (
        f"fatal: commit: {prefix}'refs/heads/main' exists; cannot create 'refs/heads/main/x'\n"
    )
    assert snapshot(tmp_path / ".git") == before


# -- 6. the --stdin transaction protocol --------------------------------------------


@pytest.mark.parametrize("reftable", [False, True])
def test_start_then_end_of_input_aborts(
    tmp_path: Path, env: None, reftable: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    head = _repo(tmp_path, reftable)
    before = snapshot(tmp_path / ".git")
    assert (
        _run(
            tmp_path, "update-ref", "--stdin", stdin=f"start\ncreate refs/heads/n {head}\n".encode()
        )
        == 0
    )
    assert capfd.readouterr().out == "start: ok\n"
    assert snapshot(tmp_path / ".git") == before
    assert (
        _run(
            tmp_path,
            "update-ref",
            "--stdin",
            stdin=f"start\ncreate refs/heads/n {head}\nprepare\nstart\n".encode(),
        )
        == 128
    )
    cap = capfd.readouterr()
    assert cap.out == "start: ok\nprepare: ok\n"
    assert cap.err == "fatal: prepared transactions can only be closed\n"
    assert snapshot(tmp_path / ".git") == before and not _locks(tmp_path / ".git")
    assert (
        _run(
            tmp_path,
            "update-ref",
            "--stdin",
            stdin=f"start\ncreate refs/heads/n {head}\ncommit\nverify HEAD\n".encode(),
        )
        == 128
    )
    assert capfd.readouterr().err == "fatal: transaction is closed\n"


def test_start_is_answered_before_more_input(tmp_path: Path, env: None) -> None:
    _repo(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gitodb", "update-ref", "--stdin"],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"start\n")
        proc.stdin.flush()
        # the bug was reading all of stdin first: no answer while the pipe stays open.
        # 120 s only keeps that bug from hanging the suite; the answer takes well under 1 s
        ready, _, _ = select.select([proc.stdout], [], [], 120)
        assert ready, "no answer to 'start' while stdin stays open"
        assert proc.stdout.readline() == b"start: ok\n"
        proc.stdin.close()
        assert proc.wait() == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("reftable", [False, True])
def test_update_via_symref_and_directly_is_refused(
    tmp_path: Path, env: None, reftable: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    head = _repo(tmp_path, reftable)
    before = snapshot(tmp_path / ".git")
    assert (
        _run(
            tmp_path,
            "update-ref",
            "--stdin",
            stdin=f"update HEAD {head}\nupdate refs/heads/main {head}\n".encode(),
        )
        == 128
    )
    assert capfd.readouterr().err == (
        "fatal: multiple updates for 'refs/heads/main' "
        "(including one via symref 'HEAD') are not allowed\n"
    )
    assert snapshot(tmp_path / ".git") == before and not _locks(tmp_path / ".git")


# -- 7. linked worktrees ------------------------------------------------------------


@pytest.mark.parametrize("reftable", [False, True])
def test_linked_worktree_has_its_own_head(
    tmp_path: Path, env: None, reftable: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    main_wt = tmp_path / "m"
    head = _repo(main_wt, reftable)
    gitcmd = [str(GIT255)] if reftable else ["git"]
    subprocess.run(
        [*gitcmd, "worktree", "add", "-q", "-b", "wt", str(tmp_path / "w")],
        cwd=main_wt,
        check=True,
        env=_genv(),
    )
    subprocess.run(
        [*gitcmd, "-c", "maintenance.auto=false", "commit", "-q", "--allow-empty", "-m", "c1"],
        cwd=main_wt,
        check=True,
        env=_genv(),
    )
    c1 = Repository(main_wt).refs.resolve("HEAD").hex()  # type: ignore[union-attr]
    wt = tmp_path / "w"
    assert _run(wt, "symbolic-ref", "HEAD") == 0
    assert capfd.readouterr().out == "refs/heads/wt\n"
    assert _run(wt, "update-ref", "-m", "in wt", "HEAD", c1) == 0
    assert _run(wt, "update-ref", "refs/bisect/bad", c1) == 0
    assert _run(wt, "update-ref", "refs/worktree/x", head) == 0
    assert _run(wt, "update-ref", "FOO_HEAD", head) == 0

    def rev(where: Path, *names: str) -> list[str]:
        out = subprocess.run(
            [*gitcmd, "rev-parse", *names], cwd=where, env=_genv(), capture_output=True, check=True
        ).stdout
        return out.decode().split()

    assert rev(main_wt, "refs/heads/main", "refs/heads/wt") == [c1, c1]
    assert rev(
        wt, "HEAD", "refs/bisect/bad", "refs/worktree/x", "FOO_HEAD", "main-worktree/HEAD"
    ) == [c1, c1, head, head, c1]
    # the main worktree does not see the linked worktree's per-worktree refs
    assert (
        subprocess.run(
            [*gitcmd, "rev-parse", "--verify", "-q", "refs/bisect/bad"],
            cwd=main_wt,
            env=_genv(),
            capture_output=True,
        ).returncode
        == 1
    )
    assert rev(main_wt, "worktrees/w/refs/bisect/bad") == [c1]
    assert _run(main_wt, "symbolic-ref", "HEAD") == 0
    assert capfd.readouterr().out == "refs/heads/main\n"
    assert _run(main_wt, "update-ref", "worktrees/w/refs/bisect/good", head) == 0
    assert rev(wt, "refs/bisect/good") == [head]
    log = subprocess.run(
        [*gitcmd, "reflog", "show", "--format=%gs", "HEAD"],
        cwd=wt,
        env=_genv(),
        capture_output=True,
        check=True,
    ).stdout
    assert log.split(b"\n")[0] == b"in wt"
    if not reftable:
        git("fsck", "--strict", cwd=main_wt)
    else:
        subprocess.run([str(GIT255), "refs", "verify"], cwd=wt, env=_genv(), check=True)


# -- 9. reflog expire honours gc.reflogExpire* ---------------------------------------


def _aged_repo(path: Path) -> None:
    """Reflogs with entries from 2001 to 2023, some of them unreachable after a reset."""
    from helpers import git_env

    def run(date: int, *args: str) -> None:
        env_ = git_env()
        env_["GIT_COMMITTER_DATE"] = f"{date} +0000"
        subprocess.run(["git", *args], cwd=path, env=env_, check=True, capture_output=True)

    git("init", "-q", "-b", "main", path)
    for i, date in enumerate((1000000000, 1200000000, 1400000000, 1600000000, 1700000000)):
        run(date, "commit", "-q", "--allow-empty", "-m", f"c{i}")
        if i == 2:
            run(date, "branch", "side")
    run(1700000100, "reset", "-q", "--hard", "HEAD~2")  # c3, c4 unreachable from main


@pytest.mark.e2e
@pytest.mark.parametrize(
    "config",
    [
        [],
        ["gc.reflogExpire=never"],
        ["gc.reflogExpire=never", "gc.reflogExpireUnreachable=now"],
        ["gc.reflogExpireUnreachable=never"],
        ["gc.refs/heads/*.reflogExpire=never"],
        ["gc.reflogExpire=never", "gc.reflogExpireUnreachable=never"],
        ["gc.HEAD.reflogExpireUnreachable=1500000000"],
        ["gc.reflogExpire=false"],
    ],
)
def test_reflog_expire_config_like_git(tmp_path: Path, env: None, config: list[str]) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _aged_repo(a)
    shutil.copytree(a, b)
    cfg = [x for c in config for x in ("-c", c)]
    git(*cfg, "reflog", "expire", "--all", cwd=a)
    assert _run(b, *cfg, "reflog", "expire", "--all") == 0
    logs = {
        p.relative_to(a).as_posix(): p.read_bytes()
        for p in (a / ".git/logs").rglob("*")
        if p.is_file()
    }
    ours = {
        p.relative_to(b).as_posix(): p.read_bytes()
        for p in (b / ".git/logs").rglob("*")
        if p.is_file()
    }
    assert ours == logs
    if config == ["gc.reflogExpire=never", "gc.reflogExpireUnreachable=never"]:
        assert len(ours[".git/logs/HEAD"].splitlines()) == 6  # nothing expired


# -- 8. damaged reftable stacks are typed errors ----------------------------------------


@pytest.mark.parametrize("victim", ["tables.list", "table"])
def test_directory_in_place_of_reftable_file(
    tmp_path: Path, env: None, victim: str, capfd: pytest.CaptureFixture[str]
) -> None:
    head = _repo(tmp_path, reftable=True)
    rt = tmp_path / ".git" / "reftable"
    name = "tables.list" if victim == "tables.list" else (rt / "tables.list").read_text().split()[0]
    os.unlink(rt / name)
    os.mkdir(rt / name)
    for cmd in (("show-ref",), ("update-ref", "refs/heads/x", head)):
        assert _run(tmp_path, *cmd) == 128
        err = capfd.readouterr().err
        assert err.startswith("fatal: unable to ") and "Is a directory" in err
        assert err.count("\n") == 1
    assert not _locks(tmp_path / ".git")


@pytest.mark.parametrize("reftable", [False, True])
def test_writer_retries_a_held_lock(
    tmp_path: Path, env: None, reftable: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lock released while the writer backs off is taken (Git's lock timeout)."""
    import gitodb.lockfile as lockfile

    head = _repo(tmp_path, reftable)
    held = tmp_path / ".git" / ("reftable/tables.list.lock" if reftable else "refs/heads/main.lock")
    held.write_text("")
    waits: list[float] = []

    def sleep(seconds: float) -> None:  # the other writer finishes during our first wait
        waits.append(seconds)
        if held.exists():
            held.unlink()

    monkeypatch.setattr(lockfile.time, "sleep", sleep)
    refs = Repository(tmp_path).refs
    refs.update_ref("refs/heads/main", bytes.fromhex(head), message="retried")
    assert len(waits) == 1 and 0.00075 <= waits[0] <= 0.00125  # Git's first backoff: ~1 ms
    held.write_text("")
    no_wait = ["reftable.lockTimeout=0", "core.filesRefLockTimeout=0"]
    with pytest.raises(LockError):
        Repository(tmp_path, config_overrides=no_wait).refs.update_ref(
            "refs/heads/main", bytes.fromhex(head)
        )
    assert len(waits) == 1  # a zero timeout does not wait


def test_compaction_does_not_block_writers(
    tmp_path: Path, env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tables merge without tables.list.lock; a table added meanwhile is kept."""
    from gitodb.reftable.stack import Stack

    head = _repo(tmp_path, reftable=True)
    refs = Repository(tmp_path, config_overrides=["reftable.autoCompaction=false"]).refs
    for i in range(4):
        refs.update_ref(f"refs/heads/b{i}", bytes.fromhex(head))
    stack = refs.stack  # type: ignore[attr-defined]
    real = Stack._write_table
    added = []

    def write_table(self: Stack, data: bytes, lo: int, hi: int) -> str:
        name = real(self, data, lo, hi)
        if not added:  # another writer commits while the merge runs
            added.append(True)
            other = Repository(
                tmp_path,
                config_overrides=["reftable.autoCompaction=false", "reftable.lockTimeout=0"],
            ).refs
            other.update_ref("refs/heads/during", bytes.fromhex(head))
        return name

    monkeypatch.setattr(Stack, "_write_table", write_table)
    assert stack.compact()
    fresh = Repository(tmp_path).refs
    names = [r.name for r in fresh.iter_refs("refs/heads/")]
    assert names == [
        "refs/heads/b0",
        "refs/heads/b1",
        "refs/heads/b2",
        "refs/heads/b3",
        "refs/heads/during",
        "refs/heads/main",
    ]
    assert len((tmp_path / ".git/reftable/tables.list").read_text().split()) == 2
    assert not _locks(tmp_path / ".git")
    subprocess.run([str(GIT255), "refs", "verify"], cwd=tmp_path, env=_genv(), check=True)


# -- 6b. --stdin parsing, messages recorded from Git 2.55 -------------------------

_STDIN_CASES = [
    (b"\n", "fatal: empty command in input\n"),
    (
        b" create refs/heads/x HEAD\n",
        "fatal: whitespace before command:  create refs/heads/x HEAD\n\n",
    ),
    (b"create \n", "fatal: create: missing <ref>\n"),
    (b"create refs/heads/x\n", "fatal: create refs/heads/x: missing <new-oid>\n"),
    (b"create refs/heads/x HEAD HEAD\n", "fatal: create refs/heads/x: extra input:  HEAD\n\n"),
    (b"update refs/heads/x\n", "fatal: update refs/heads/x: missing <new-oid>\n"),
    (b'create refs/heads/x "HEAD\n', 'fatal: badly quoted argument: "HEAD\n\n'),
    (
        b'create refs/heads/x "HEAD"junk\n',
        'fatal: unexpected character after quoted argument: "HEAD"junk\n\n',
    ),
    (
        b"update refs/heads/x HEAD does-not-exist\n",
        "fatal: update refs/heads/x: invalid <old-oid>: does-not-exist\n",
    ),
    (
        b"create refs/heads/x does-not-exist\n",
        "fatal: create refs/heads/x: invalid <new-oid>: does-not-exist\n",
    ),
    (b"delete refs/heads/x " + b"0" * 40 + b"\n", "fatal: delete refs/heads/x: zero <old-oid>\n"),
    (
        b"verify refs/heads/main HEAD extra\n",
        "fatal: verify refs/heads/main: extra input:  extra\n\n",
    ),
    (b"bogus\n", "fatal: unknown command: bogus\n\n"),
    (b"option foo\n", "fatal: option unknown: foo\n\n"),
    (b"create refs/heads/a..b HEAD\n", "fatal: invalid ref format: refs/heads/a..b\n"),
    (b"start extra\n", "fatal: unknown command: start extra\n\n"),
]
_STDIN_Z_CASES = [
    (b"create refs/heads/x\0\0", "fatal: create refs/heads/x: missing <new-oid>\n"),
    (
        b"update refs/heads/x\0\0",
        "warning: update refs/heads/x: missing <new-oid>, treating as "
        "zero\nfatal: update refs/heads/x: unexpected end of input when reading <old-oid>\n",
    ),
    (
        b"update refs/heads/y\0HEAD\0",
        "fatal: update refs/heads/y: unexpected end of input when reading <old-oid>\n",
    ),
]


@pytest.mark.parametrize(
    "z,data,expected",
    [(False, d, e) for d, e in _STDIN_CASES] + [(True, d, e) for d, e in _STDIN_Z_CASES],
)
def test_stdin_parse_errors_like_git(
    tmp_path: Path,
    env: None,
    z: bool,
    data: bytes,
    expected: str,
    capfd: pytest.CaptureFixture[str],
) -> None:
    _repo(tmp_path)
    before = snapshot(tmp_path / ".git")
    args = ["update-ref", "--stdin"] + (["-z"] if z else [])
    assert _run(tmp_path, *args, stdin=data) == 128
    assert capfd.readouterr().err == expected
    assert snapshot(tmp_path / ".git") == before


def test_stdin_quoted_and_empty_values(tmp_path: Path, env: None) -> None:
    head = _repo(tmp_path)
    script = (
        b'create refs/heads/q "refs/heads/main"\n'
        b'create refs/heads/e "refs/heads/\\155ain"\n'
        b"update refs/heads/n refs/heads/main \n"
    )  # empty <old-oid>: must not exist
    assert _run(tmp_path, "update-ref", "--stdin", stdin=script) == 0
    refs = Repository(tmp_path).refs
    assert [refs.resolve(n) for n in ("refs/heads/q", "refs/heads/e", "refs/heads/n")] == [
        bytes.fromhex(head)
    ] * 3


def test_large_transaction_within_a_small_open_file_limit(tmp_path: Path, env: None) -> None:
    import resource

    _repo(tmp_path)
    script = "".join(f"create refs/heads/{i} HEAD\n" for i in range(200)).encode()

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    proc = subprocess.run(
        [sys.executable, "-m", "gitodb", "update-ref", "--stdin"],
        cwd=tmp_path,
        input=script,
        capture_output=True,
        preexec_fn=limit,
    )
    assert proc.returncode == 0, proc.stderr
    assert len(list(Repository(tmp_path).refs.iter_refs("refs/heads/"))) == 201


def test_head_and_its_referent_in_one_transaction(
    tmp_path: Path, env: None, capfd: pytest.CaptureFixture[str]
) -> None:
    head = _repo(tmp_path)
    before = snapshot(tmp_path / ".git")
    script = f"update refs/heads/main {head}\noption no-deref\nupdate HEAD {head}\n"
    assert _run(tmp_path, "update-ref", "--stdin", stdin=script.encode()) == 128
    assert capfd.readouterr().err == (
        "fatal: multiple updates for 'HEAD' (including one via "
        "its referent 'refs/heads/main') are not allowed\n"
    )
    assert snapshot(tmp_path / ".git") == before


def test_no_deref_update_of_symref_checks_resolved_old_value(tmp_path: Path, env: None) -> None:
    head = _repo(tmp_path)
    git("symbolic-ref", "TESTSYMREF", "refs/heads/main", cwd=tmp_path)
    script = f"option no-deref\nupdate TESTSYMREF {head} {head}\n"
    assert _run(tmp_path, "update-ref", "--stdin", stdin=script.encode()) == 0
    assert (tmp_path / ".git" / "TESTSYMREF").read_text() == head + "\n"
    assert (tmp_path / ".git/refs/heads/main").read_text() == head + "\n"


def test_reflog_expire_errors_and_usage(
    tmp_path: Path, env: None, capfd: pytest.CaptureFixture[str]
) -> None:
    _repo(tmp_path)
    assert _run(tmp_path, "reflog", "expire", "main@{123}") == 1
    assert capfd.readouterr().err == "error: reflog could not be found: 'main@{123}'\n"
    assert _run(tmp_path, "reflog", "list", "bogus") == 255  # Git 2.55: error() returns -1
    assert capfd.readouterr().err == "error: list does not accept arguments: 'bogus'\n"
    assert _run(tmp_path, "reflog", "expire", "-h") == 129
    assert capfd.readouterr().out.startswith("usage: gitodb reflog expire ")


@pytest.mark.e2e
def test_reflog_expire_all_covers_linked_worktrees(tmp_path: Path, env: None) -> None:
    main_wt = tmp_path / "m"
    _repo(main_wt)
    git("worktree", "add", "-q", "-b", "wt", tmp_path / "w", cwd=main_wt)
    wt_log = main_wt / ".git" / "worktrees" / "w" / "logs" / "HEAD"
    assert wt_log.read_text()
    assert _run(main_wt, "reflog", "expire", "--all", "--single-worktree", "--expire=now") == 0
    assert wt_log.read_text()  # not this worktree's
    assert (main_wt / ".git" / "logs" / "HEAD").read_text() == ""
    assert _run(main_wt, "reflog", "expire", "--all", "--expire=now") == 0
    assert wt_log.read_text() == ""


@pytest.mark.e2e
def test_reflog_expire_stale_fix_drops_entries_with_missing_objects(
    tmp_path: Path, env: None
) -> None:
    head = _repo(tmp_path)
    tree = (
        git("mktree", "--missing", cwd=tmp_path, input=b"100644 blob " + b"1" * 40 + b"\tf\n")
        .decode()
        .strip()
    )  # blob missing
    broken = git("commit-tree", "-m", "broken", "-p", head, tree, cwd=tmp_path).decode().strip()
    git("update-ref", "-m", "to broken", "refs/heads/main", broken, cwd=tmp_path)
    git("update-ref", "-m", "back", "refs/heads/main", head, cwd=tmp_path)
    before = (tmp_path / ".git/logs/refs/heads/main").read_text().splitlines()
    assert len(before) == 3
    assert (
        _run(
            tmp_path,
            "reflog",
            "expire",
            "--stale-fix",
            "--expire=never",
            "--expire-unreachable=never",
            "main",
        )
        == 0
    )
    after = (tmp_path / ".git/logs/refs/heads/main").read_text().splitlines()
    assert after == before[:1]


@pytest.mark.parametrize("reftable", [False, True])
def test_stdin_symref_commands(
    tmp_path: Path, env: None, reftable: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    head = _repo(tmp_path, reftable)
    refs = Repository(tmp_path).refs
    refs.set_symref("refs/heads/symref", "refs/heads/main")

    def stdin(text: str, *opts: str) -> int:
        return _run(tmp_path, "update-ref", *opts, "--stdin", stdin=text.encode())

    assert stdin("symref-verify refs/heads/symref refs/heads/main\n") == 128
    assert capfd.readouterr().err == "fatal: symref-verify: cannot operate with deref mode\n"
    assert stdin("symref-verify refs/heads/symref refs/heads/main\n", "--no-deref") == 0
    assert stdin("symref-delete refs/heads/symref refs/heads/x\n", "--no-deref") == 128
    assert capfd.readouterr().err == (
        "fatal: verifying symref target: 'refs/heads/symref': "
        "is at refs/heads/main but expected refs/heads/x\n"
    )
    assert (
        stdin("symref-update refs/heads/symref refs/heads/x ref refs/heads/main\n", "--no-deref")
        == 0
    )
    assert Repository(tmp_path).refs.read("refs/heads/symref").target == "refs/heads/x"  # type: ignore[union-attr]
    assert (
        stdin(f"symref-update refs/heads/main refs/heads/x oid {'0' * 40}\n", "--no-deref") == 128
    )
    assert "reference already exists" in capfd.readouterr().err
    assert stdin(f"symref-update refs/heads/s2 refs/heads/main oid {head}\n", "--no-deref") == 128
    assert stdin("symref-update refs/heads/s2 refs/heads/main foo x\n", "--no-deref") == 128
    assert capfd.readouterr().err.endswith(
        "fatal: symref-update refs/heads/s2: invalid arg 'foo' for old value\n"
    )
    assert (
        stdin(
            "symref-create refs/heads/s3\0refs/heads/main\0", "--no-deref", "-z", "--create-reflog"
        )
        == 0
    )
    assert Repository(tmp_path).refs.reflog_exists("refs/heads/s3")
    assert stdin("symref-delete refs/heads/s3\0refs/heads/main\0", "--no-deref", "-z") == 0
    assert Repository(tmp_path).refs.read("refs/heads/s3") is None
    assert stdin("symref-delete refs/heads/main refs/heads/x\n", "--no-deref") == 128
    assert capfd.readouterr().err == (
        "fatal: cannot lock ref 'refs/heads/main': expected symref with target "
        "'refs/heads/x': but is a regular ref\n"
    )
    assert not _locks(tmp_path / ".git")


def test_abort_prunes_directories_it_made(tmp_path: Path, env: None) -> None:
    _repo(tmp_path)
    script = b"start\ncreate refs/heads/nested/deep/x HEAD\nprepare\n"
    assert _run(tmp_path, "update-ref", "--stdin", stdin=script) == 0
    assert not (tmp_path / ".git/refs/heads/nested").exists()
    assert not _locks(tmp_path / ".git")
    git("pack-refs", "--all", cwd=tmp_path)  # refs/heads now empty: it must stay (Git)
    assert _run(tmp_path, "update-ref", "--stdin", stdin=script) == 0
    assert (tmp_path / ".git/refs/heads").is_dir()


def test_no_deref_create_refuses_dangling_symref(
    tmp_path: Path, env: None, capfd: pytest.CaptureFixture[str]
) -> None:
    _repo(tmp_path)
    git("symbolic-ref", "refs/heads/dangling", "refs/heads/nope", cwd=tmp_path)
    assert (
        _run(
            tmp_path,
            "update-ref",
            "--no-deref",
            "--stdin",
            stdin=b"create refs/heads/dangling HEAD\n",
        )
        == 128
    )
    assert capfd.readouterr().err == (
        "fatal: cannot lock ref 'refs/heads/dangling': dangling symref already exists\n"
    )
    assert (tmp_path / ".git/refs/heads/dangling").read_text() == "ref: refs/heads/nope\n"
    assert not (tmp_path / ".git/refs/heads/nope").exists()


def test_reftable_empty_reflog_message_and_lock_message_like_git(
    tmp_path: Path, env: None, capfd: pytest.CaptureFixture[str]
) -> None:
    from gitodb.reftable.stack import Stack

    head = _repo(tmp_path, reftable=True)
    subprocess.run(
        [str(GIT255), "update-ref", "refs/heads/by-git", head],
        cwd=tmp_path,
        env=_genv(),
        check=True,
    )
    assert _run(tmp_path, "update-ref", "refs/heads/by-us", head) == 0
    stack = Stack(tmp_path / ".git" / "reftable")
    (theirs,) = stack.iter_logs(b"refs/heads/by-git")
    (ours,) = stack.iter_logs(b"refs/heads/by-us")
    assert theirs.message == ours.message == b"\n"
    (tmp_path / ".git/reftable/tables.list.lock").write_text("")
    assert _run(tmp_path, "-c", "reftable.lockTimeout=0", "update-ref", "refs/heads/x", head) == 128
    # Git 2.55's words for REFTABLE_LOCK_ERROR
    assert capfd.readouterr().err == (
        "fatal: update_ref failed for ref 'refs/heads/x': cannot lock references\n"
    )


@pytest.mark.parametrize(
    "tail, broken",
    [(b"junk\n", True), (b"\x00\n", False), (b" extra\n", False), (b"\n", False), (b"", False)],
)
def test_loose_ref_after_its_id_is_the_end_or_whitespace(
    tmp_path: Path, tail: bytes, broken: bool
) -> None:
    # Git's parse_loose_ref_contents: junk glued to the id makes the ref broken.
    git("init", "-q", tmp_path)
    git(
        "-c",
        "user.name=a",
        "-c",
        "user.email=b",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "c",
        cwd=tmp_path,
    )
    head = git("rev-parse", "HEAD", cwd=tmp_path).strip()
    (tmp_path / ".git/refs/heads/x").write_bytes(head + tail)
    git_ok = (
        subprocess.run(
            ["git", "rev-parse", "--verify", "-q", "refs/heads/x"],
            cwd=tmp_path,
            capture_output=True,
        ).returncode
        == 0
    )
    assert git_ok is not broken
    refs = Repository(tmp_path).refs
    if broken:
        with pytest.raises(RefError, match="reference broken"):
            refs.read("refs/heads/x")
    else:
        ref = refs.read("refs/heads/x")
        assert ref is not None and ref.oid == bytes.fromhex(head.decode())


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d, h: d + b"\n", "unexpected line"),  # blank line
        (lambda d, h: d + b"# a comment\n", "unexpected line"),  # '#' past line 1
        (lambda d, h: b"# not a header\n" + d.split(b"\n", 1)[1], "unexpected line"),
        (lambda d, h: d.replace(b"\n", b"\n^" + h + b"\n", 1), "unexpected line"),  # ^ first
        (lambda d, h: d + h + b" refs/../../config\n", "packed refname is dangerous"),
        (lambda d, h: d + h + b"x refs/heads/y\n", "unexpected line"),  # junk after the id
    ],
)
def test_packed_refs_lines_git_dies_on(tmp_path: Path, edit, message: str) -> None:  # type: ignore[no-untyped-def]
    git("init", "-q", tmp_path)
    git(
        "-c",
        "user.name=a",
        "-c",
        "user.email=b",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "c",
        cwd=tmp_path,
    )
    git("pack-refs", "--all", cwd=tmp_path)
    head = git("rev-parse", "HEAD", cwd=tmp_path).strip()
    packed = tmp_path / ".git/packed-refs"
    packed.write_bytes(edit(packed.read_bytes(), head))
    theirs = subprocess.run(["git", "show-ref"], cwd=tmp_path, capture_output=True)
    assert theirs.returncode == 128 and message.encode() in theirs.stderr
    with pytest.raises(RefError, match=message):
        Repository(tmp_path).refs.read("refs/heads/master")
