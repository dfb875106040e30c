"""The files backend's ``packed-refs.new`` and symlink symrefs, against Git.

t0600 16: Git writes a new ``packed-refs`` into ``packed-refs.new`` (created
exclusively) while it holds ``packed-refs.lock``, so a stale ``.new`` fails the
write and changes nothing.  t0600 32: with ``core.preferSymlinkRefs`` a symref is
a symlink (Git 2.55 warns that the setting is going away); Git reads such a
symlink as a symref, and its listings skip a symlink that does not resolve.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env

GITODB = [sys.executable, "-m", "gitodb"]
GIT255 = Path(os.environ.get("GITODB_GIT_255", "/work/shared/git-2.55/git/bin/git"))


def _run(cmd: list[str], repo: Path, *args: str, stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    p = subprocess.run(
        [*cmd, *args], cwd=repo, env=git_env(), input=stdin, capture_output=True, check=False
    )
    return p.returncode, p.stdout, p.stderr


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "r"
    git("init", "-q", repo)
    git("commit", "-q", "--allow-empty", "-m", "a", cwd=repo)
    git("commit", "-q", "--allow-empty", "-m", "b", cwd=repo)
    return repo


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (["update-ref", "-d", "refs/p/foo"], b""),
        (["update-ref", "--stdin"], b"delete refs/p/foo\n"),
        (["pack-refs", "--all"], b""),
    ],
)
def test_a_stale_packed_refs_new_fails_the_write_like_git(
    tmp_path: Path, args: list[str], stdin: bytes
) -> None:
    repo = _repo(tmp_path)
    git("update-ref", "refs/p/foo", "HEAD~1", cwd=repo)
    git("pack-refs", "--all", cwd=repo)
    git("update-ref", "refs/p/foo", "HEAD", cwd=repo)
    before = git("for-each-ref", cwd=repo)
    packed = (repo / ".git/packed-refs").read_bytes()
    (repo / ".git/packed-refs.new").write_bytes(b"")
    runs = [_run(cmd, repo, *args, stdin=stdin) for cmd in (["git"], GITODB)]
    assert runs[0][0] != 0
    assert runs[1][0] == runs[0][0]
    assert b"packed-refs.new: File exists" in runs[1][2]
    assert git("for-each-ref", cwd=repo) == before
    assert (repo / ".git/packed-refs").read_bytes() == packed
    assert (repo / ".git/packed-refs.new").read_bytes() == b""  # not removed: not ours
    assert not (repo / ".git/packed-refs.lock").exists()


def test_packed_refs_is_replaced_through_new_and_lock_is_left_empty(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    git("update-ref", "refs/p/foo", "HEAD", cwd=repo)
    assert _run(GITODB, repo, "pack-refs", "--all")[0] == 0
    assert _run(GITODB, repo, "update-ref", "-d", "refs/p/foo")[0] == 0
    names = sorted(p.name for p in (repo / ".git").iterdir() if p.name.startswith("packed"))
    assert names == ["packed-refs"]
    assert git("for-each-ref", cwd=repo) == _run(GITODB, repo, "for-each-ref")[1]


def _symref_stdin(name: str) -> bytes:
    return f"start\nsymref-create {name} refs/heads/new\nprepare\ncommit\n".encode()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_refs_are_read_and_listed_like_git(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    git("update-ref", "refs/heads/new", "HEAD", cwd=repo)
    # written by Git 2.39 (no warning there), read by both
    for name in ("refs/heads/ln", "TEST_HEAD"):
        git("-c", "core.prefersymlinkrefs=true", "symbolic-ref", name, "refs/heads/new", cwd=repo)
    assert (repo / ".git/refs/heads/ln").is_symlink()
    # a symlink that resolves (to a file, not naming a ref) is listed by Git
    os.symlink("new", repo / ".git/refs/heads/alias")
    for args in (
        ["symbolic-ref", "refs/heads/ln"],
        ["symbolic-ref", "TEST_HEAD"],
        ["for-each-ref"],
        ["show-ref"],
        ["update-ref", "--no-deref", "-d", "TEST_HEAD"],
    ):
        assert _run(GITODB, repo, *args) == _run(["git"], repo, *args), args


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
@pytest.mark.skipif(not GIT255.exists(), reason="needs ../shared/git-2.55")
@pytest.mark.parametrize("prefer", ["true", "false"])
def test_symref_transaction_writes_symlinks_like_git_255(tmp_path: Path, prefer: str) -> None:
    results = []
    for cmd in ([str(GIT255)], GITODB):
        repo = _repo(tmp_path / cmd[-1].replace("/", "_"))
        git("update-ref", "refs/heads/new", "HEAD", cwd=repo)
        git("config", "core.prefersymlinkrefs", prefer, cwd=repo)
        rc, _, err = _run(
            cmd,
            repo,
            "update-ref",
            "--no-deref",
            "--stdin",
            stdin=_symref_stdin("TEST_SYMREF_HEAD") + _symref_stdin("refs/heads/sym"),
        )
        link = repo / ".git/TEST_SYMREF_HEAD"
        shape = os.readlink(link) if link.is_symlink() else link.read_text()
        log = (repo / ".git/logs/refs/heads/sym").exists()
        results.append((rc, err, shape, (repo / ".git/refs/heads/sym").is_symlink(), log))
        assert _run(["git"], repo, "symbolic-ref", "TEST_SYMREF_HEAD")[1] == b"refs/heads/new\n"
    assert results[1] == results[0]
    assert (results[0][1] != b"") == (prefer == "true")
