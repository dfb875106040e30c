"""The files backend's writes against git 2.39, and the shared refs interface."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gitodb.errors import LockError, RefError
from gitodb.refs.base import check_refname, normalize_reflog_message
from gitodb.refs.files import FilesRefStore
from gitodb.repo import Repository
from helpers import git, run_cli

DATA = Path(__file__).parent / "data"


@pytest.fixture
def env(git_identity: None) -> None:
    """The test identity alone (``conftest.git_identity``)."""


def _make_repo(path: Path) -> list[bytes]:
    git("init", "-q", "-b", "main", path)
    commits = []
    for i in range(3):
        (path / "f").write_text(f"{i}\n")
        git("add", "f", cwd=path)
        git("commit", "-q", "-m", f"c{i}", cwd=path)
        commits.append(git("rev-parse", "HEAD", cwd=path).strip())
    git("tag", "-a", "-m", "t", "v1", commits[0], cwd=path)
    git("tag", "-a", "-m", "tt", "v1-outer", "v1", cwd=path)
    return commits


_run = run_cli


def _state(path: Path) -> dict[str, bytes]:
    out = {}
    gd = path / ".git"
    for sub in ("refs", "logs"):
        for p in sorted((gd / sub).rglob("*")):
            if p.is_file():
                out[p.relative_to(gd).as_posix()] = p.read_bytes()
    for name in ("packed-refs", "HEAD"):
        if (gd / name).exists():
            out[name] = (gd / name).read_bytes()
    return out


@pytest.mark.e2e
def test_update_ref_matches_git(tmp_path: Path, env: None) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    commits = _make_repo(a)
    shutil.copytree(a, b)
    c0, c1, c2 = (c.decode() for c in commits)
    script = [
        ("update-ref", "-m", "make x", "refs/heads/x", c0),
        ("update-ref", "--create-reflog", "-m", "logged tag", "refs/tags/t1", c0),
        ("update-ref", "-m", "unlogged tag", "refs/tags/t2", c0),
        ("update-ref", "-m", "move x", "refs/heads/x", c1, c0),
        ("update-ref", "-m", "via HEAD", "HEAD", c1),
        ("update-ref", "refs/heads/y", c2),
        ("update-ref", "-d", "refs/heads/y"),
        ("update-ref", "-m", "rev syntax", "refs/heads/z", "main~1"),
        ("update-ref", "refs/heads/z", "0" * 40),
        ("symbolic-ref", "-m", "point", "refs/heads/alias", "refs/heads/x"),
        ("update-ref", "-m", "through alias", "refs/heads/alias", c2),
        ("pack-refs", "--all"),
        ("update-ref", "--no-deref", "-d", "refs/heads/alias"),
        ("update-ref", "-d", "refs/heads/x", c2),
    ]
    for cmd in script:
        git(*cmd, cwd=a)
        assert _run(b, *cmd) == 0, cmd
    assert _state(b) == _state(a)
    assert git("show-ref", cwd=b) == git("show-ref", cwd=a)
    assert git("reflog", "show", "main", cwd=b) == git("reflog", "show", "main", cwd=a)
    git("fsck", "--strict", cwd=b)


@pytest.mark.e2e
def test_stdin_transaction_and_old_value_check(
    tmp_path: Path, env: None, capfd: pytest.CaptureFixture[str]
) -> None:
    a = tmp_path / "a"
    c0, c1, _ = (c.decode() for c in _make_repo(a))
    before = _state(a)
    bad = f"start\nupdate refs/heads/main {c0} {c0}\ncreate refs/heads/n {c1}\ncommit\n"
    assert _run(a, "update-ref", "--stdin", stdin=bad.encode()) == 128
    assert "but expected" in capfd.readouterr().err
    assert _state(a) == before and not list((a / ".git").rglob("*.lock"))
    outer = git("rev-parse", "v1-outer", cwd=a).decode().strip()
    good = (
        f"start\nverify refs/tags/v1-outer {outer}\n"
        f"create refs/heads/n {c1}\nupdate refs/heads/main {c0}\ndelete refs/tags/v1\n"
        "prepare\ncommit\n"
    )
    assert _run(a, "update-ref", "-m", "tx", "--stdin", stdin=good.encode()) == 0
    assert capfd.readouterr().out == "start: ok\nprepare: ok\ncommit: ok\n"
    assert git("rev-parse", "refs/heads/n", "main", cwd=a).decode().split() == [c1, c0]
    assert b"refs/tags/v1\n" not in git("show-ref", cwd=a)
    git("fsck", "--strict", cwd=a)


def test_lock_contention_files(tmp_path: Path, env: None) -> None:
    a = tmp_path / "a"
    c0 = _make_repo(a)[0]
    (a / ".git" / "refs" / "heads" / "main.lock").write_text("")
    refs = Repository(a).refs
    before = _state(a)
    with pytest.raises(LockError):
        refs.update_ref("refs/heads/main", bytes.fromhex(c0.decode()))
    assert _state(a) == before


def test_reflog_expire_and_delete_files(tmp_path: Path, env: None) -> None:
    a = tmp_path / "a"
    _make_repo(a)
    b = tmp_path / "b"
    shutil.copytree(a, b)
    git("reflog", "delete", "main@{1}", cwd=a)
    assert _run(b, "reflog", "delete", "main@{1}") == 0
    assert _state(b) == _state(a)
    git("reflog", "expire", "--expire=now", "main", cwd=a)
    assert _run(b, "reflog", "expire", "--expire=now", "main") == 0
    assert _state(b) == _state(a)


def test_names_and_messages() -> None:
    check_refname("refs/heads/ok")
    for bad in ["refs/heads/a..b", "refs/heads/x.lock", "refs/heads/", "refs/he ads/x", "onelevel"]:
        with pytest.raises(RefError):
            check_refname(bad)
    assert (
        normalize_reflog_message("  multi\nline\tmessage  with   spaces \n")
        == b"multi line message with spaces"
    )


@pytest.mark.e2e
def test_files_reflog_read(tmp_path: Path) -> None:
    d = tmp_path / "r"
    shutil.copytree(DATA / "packs-mixed" / "repo", d)
    refs = Repository(d).refs
    assert isinstance(refs, FilesRefStore)
    names = refs.reflog_names()
    assert "HEAD" in names
    for n in names:
        assert refs.reflog(n) and refs.reflog_exists(n)


@pytest.mark.parametrize(
    "first,second", [("refs/heads/d", "refs/heads/d/x"), ("refs/heads/d/x", "refs/heads/d")]
)
@pytest.mark.parametrize("fixture", ["packs-mixed", "reftable-small"])
def test_directory_file_conflict(tmp_path: Path, fixture: str, first: str, second: str) -> None:
    d = tmp_path / "r"
    shutil.copytree(DATA / fixture / "repo", d)
    refs = Repository(d).refs
    oid = refs.resolve("HEAD")
    assert oid is not None
    refs.update_ref(first, oid)
    with pytest.raises(RefError, match="exists; cannot create"):
        refs.update_ref(second, oid)
    assert refs.read(second) is None and not list(d.rglob("*.lock"))


@pytest.mark.e2e
@pytest.mark.parametrize("args", [(), ("refs/tags",), ("refs/heads/*",), ("--count=2",)])
def test_for_each_ref_and_show_ref_match_git(
    tmp_path: Path, env: None, args: tuple[str, ...], capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    d = tmp_path / "r"
    shutil.copytree(DATA / "packs-mixed", d)
    repo = d / "repo"
    assert _run(repo, "for-each-ref", *args) == 0
    assert capfdbinary.readouterr().out == git("for-each-ref", *args, cwd=repo)
    assert _run(repo, "show-ref", "-d", "--head") == 0
    assert capfdbinary.readouterr().out == git("show-ref", "-d", "--head", cwd=repo)
    assert _run(repo, "reflog", "show", "main") == 0
    assert capfdbinary.readouterr().out == git("reflog", "show", "main", cwd=repo)
    assert _run(repo, "reflog", "show", "--format=%H %gd %gs", "main") == 0
    assert capfdbinary.readouterr().out == git(
        "reflog", "show", "--format=%H %gd %gs", "main", cwd=repo
    )


@pytest.mark.e2e
def test_bare_repo_logs_only_when_configured(tmp_path: Path, env: None) -> None:
    src = tmp_path / "src"
    c0 = _make_repo(src)[0].decode()
    a, b = tmp_path / "a.git", tmp_path / "b.git"
    git("clone", "-q", "--bare", src, a)
    shutil.copytree(a, b)
    for args in [
        ("update-ref", "-m", "x", "refs/heads/x", c0),
        ("-c", "core.logAllRefUpdates=always", "update-ref", "-m", "y", "refs/heads/y", c0),
    ]:
        git(*args, cwd=a)
        assert _run(b, *args) == 0

    def logs(d: Path) -> dict[str, bytes]:
        return {
            p.relative_to(d).as_posix(): p.read_bytes()
            for p in sorted((d / "logs").rglob("*"))
            if p.is_file()
        }

    assert logs(b) == logs(a) and "logs/refs/heads/y" in logs(b)
    assert "logs/refs/heads/x" not in logs(b)
