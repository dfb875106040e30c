"""reflog drop / write / delete (with --rewrite, --updateref, dates) on both backends."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gitodb.objects.approxidate import approxidate
from helpers import git_env, run_cli

NULL = "0" * 40
GIT_255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"
_GIT = ["git"]


def git(*args: str | os.PathLike[str], cwd: Path | None = None, check: bool = True) -> bytes:
    """The git this test runs: on PATH for files, Git 2.55 (reftable) when set."""
    env = git_env()
    if _GIT[0] != "git":  # Git 2.55's own sub-commands (fsck runs "git refs verify")
        env["PATH"] = f"{Path(_GIT[0]).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(
        [*_GIT, *map(os.fspath, args)], cwd=cwd, capture_output=True, env=env, check=False
    )
    if check and proc.returncode:
        raise AssertionError(f"git {args}: {proc.stderr.decode(errors='replace')}")
    return proc.stdout


@pytest.fixture(autouse=True)
def _which_git(request: pytest.FixtureRequest) -> None:
    callspec = getattr(request.node, "callspec", None)
    fmt = callspec.params.get("fmt", "files") if callspec is not None else "files"
    if fmt == "reftable":
        if not GIT_255.exists():
            pytest.skip("reftable needs ../shared/git-2.55")
        _GIT[:] = [str(GIT_255)]
    else:
        _GIT[:] = ["git"]


def _repo(tmp_path: Path, ref_format: str) -> Path:
    root = tmp_path / ref_format
    extra = [f"--ref-format={ref_format}"] if ref_format == "reftable" else []
    git("init", "-q", "-b", "main", *extra, root)
    for i in range(4):
        git("-c", f"user.name=U{i}", "commit", "-q", "--allow-empty", "-m", f"c{i}", cwd=root)
    git("branch", "side", cwd=root)
    return root


def _formats() -> list[str]:
    return ["files", "reftable"]


def _log(root: Path, ref: str) -> list[str]:
    return git("reflog", "show", "--format=%H %gs", ref, cwd=root).decode().splitlines()


@pytest.mark.parametrize("fmt", _formats())
def test_drop(tmp_path: Path, fmt: str, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    root = _repo(tmp_path, fmt)
    assert run_cli(root, "reflog", "drop", "refs/heads/main", "refs/heads/nope") == 255
    err = capfdbinary.readouterr().err
    assert err == b"error: reflog could not be found: 'refs/heads/nope'\n"
    assert git("reflog", "exists", "refs/heads/main", cwd=root, check=False) == b""
    assert run_cli(root, "reflog", "exists", "refs/heads/main") == 1
    assert run_cli(root, "reflog", "exists", "refs/heads/side") == 0
    assert run_cli(root, "reflog", "drop", "--all", "side") == 129
    assert run_cli(root, "reflog", "drop", "--all") == 0
    assert run_cli(root, "reflog", "exists", "refs/heads/side") == 1
    git("fsck", "--no-progress", cwd=root)


@pytest.mark.parametrize("fmt", _formats())
def test_write(tmp_path: Path, fmt: str, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    root = _repo(tmp_path, fmt)
    head = git("rev-parse", "HEAD", cwd=root).decode().strip()
    assert run_cli(root, "reflog", "write", "refs/heads/side", NULL, head, "two\nlines") == 0
    assert _log(root, "side")[0] == f"{head} two lines"
    capfdbinary.readouterr()
    assert run_cli(root, "reflog", "write", "x", NULL, head, "m") == 128
    assert capfdbinary.readouterr().err == b"fatal: invalid reference name: x\n"
    assert run_cli(root, "reflog", "write", "refs/heads/side", "0000", head, "m") == 128
    assert capfdbinary.readouterr().err == b"fatal: invalid old object ID: '0000'\n"
    assert run_cli(root, "reflog", "write", "refs/heads/side", NULL, "1" * 40, "m") == 128
    assert capfdbinary.readouterr().err == (
        b"fatal: new object '" + b"1" * 40 + b"' does not exist\n"
    )
    assert run_cli(root, "reflog", "write", "refs/heads/side", NULL) == 129


@pytest.mark.parametrize("fmt", _formats())
def test_delete_matches_git(
    tmp_path: Path, fmt: str, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    root = _repo(tmp_path, fmt)
    other = tmp_path / "other"
    shutil.copytree(root, other)
    for args in (["main@{1}"], ["--rewrite", "main@{2}"], ["--updateref", "main@{0}"]):
        assert run_cli(root, "reflog", "delete", *args) == 0
        git("reflog", "delete", *args, cwd=other)
        assert _log(root, "main") == _log(other, "main")
        assert git("rev-parse", "main", cwd=root) == git("rev-parse", "main", cwd=other)
    if fmt == "files":
        assert (root / ".git/logs/refs/heads/main").read_bytes() == (
            other / ".git/logs/refs/heads/main"
        ).read_bytes()
    capfdbinary.readouterr()
    assert run_cli(root, "reflog", "delete", "nope@{1}") == 255
    assert capfdbinary.readouterr().err == b"error: no reflog for 'nope@{1}'\n"
    assert run_cli(root, "reflog", "delete", "-n", "--verbose", "main@{0}") == 0
    out = capfdbinary.readouterr().out
    assert b"would prune" in out and len(_log(root, "main")) == len(_log(other, "main"))


def test_approxidate() -> None:
    assert approxidate("07.04.2005.15:15:00.-0700") == 1112912100
    assert approxidate("2005-04-07 15:15:00 +0200") == 1112879700
    assert approxidate("@123") == 123
    assert approxidate("3.days.ago", now=10 * 86400) == 7 * 86400
    assert approxidate("Apr 7 2005 22:15:00 UTC") == 1112912100
    with pytest.raises(Exception, match="unsupported date"):
        approxidate("the day after tomorrow")


def test_show_with_paths_after_double_dash(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    root = tmp_path / "r"
    git("init", "-q", "-b", "main", root)
    (root / "--a-file").write_text("a\n")
    git("add", "--", "--a-file", cwd=root)
    git("commit", "-q", "-m", "one", cwd=root)
    (root / "f").write_text("b\n")
    git("add", "f", cwd=root)
    git("commit", "-q", "-m", "two", cwd=root)
    for paths in (["--does-not-exist"], ["--a-file"], ["f"], ["f", "--a-file"]):
        capfdbinary.readouterr()
        assert run_cli(root, "reflog", "show", "--", *paths) == 0
        assert capfdbinary.readouterr().out == git("reflog", "show", "--", *paths, cwd=root)


@pytest.mark.parametrize("fmt", _formats())
def test_expire_rewrite_updateref_matches_git(tmp_path: Path, fmt: str) -> None:
    root = _repo(tmp_path, fmt)
    other = tmp_path / "other"
    shutil.copytree(root, other)
    args = [
        "expire",
        "--expire=now",
        "--expire-unreachable=now",
        "--rewrite",
        "--updateref",
        "refs/heads/main",
    ]
    assert run_cli(root, "reflog", *args) == 0
    git("reflog", *args, cwd=other)
    assert _log(root, "main") == _log(other, "main")
    assert git("rev-parse", "main", cwd=root) == git("rev-parse", "main", cwd=other)


def test_reflog_lookups_match_rev_parse(tmp_path: Path) -> None:
    from gitodb.refs.reflog_at import value_at_index, value_at_time
    from gitodb.repo import Repository

    root = _repo(tmp_path, "files")
    refs = Repository(root).refs
    n = len(refs.reflog("refs/heads/main"))
    for i in range(n):
        want = git("rev-parse", f"main@{{{i}}}", cwd=root).decode().strip()
        assert value_at_index(refs, "refs/heads/main", i).oid.hex() == want
    for i in (n, n + 1):  # the oldest entry created the ref: nothing before it
        with pytest.raises(Exception, match=f"only has {n} entries"):
            value_at_index(refs, "refs/heads/main", i)
        assert git("rev-parse", f"main@{{{i}}}", cwd=root, check=False) == b""
    times = [e.time for e in refs.reflog("refs/heads/main")]
    for when in (times[-1], times[0] + 0, times[-1] + 100):
        want = git("rev-parse", f"main@{{@{when}}}", cwd=root).decode().strip()
        assert value_at_time(refs, "refs/heads/main", when).oid.hex() == want
    early = value_at_time(refs, "refs/heads/main", times[0] - 100)
    assert early.note is not None
