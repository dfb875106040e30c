"""The ``reference-transaction`` hook (t1416): the phases, the lines it reads, and its
veto, on both ref backends.  The transcripts are compared with Git 2.55 when
``../shared`` has it (Git 2.39 has neither the ``preparing`` phase nor symref lines);
the veto and the literal lines are checked without it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env

GIT_255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"
NULL = "0" * 40
HOOK = """#!/bin/sh
echo "$*" >>"$HOOK_LOG"
while read -r line; do echo "$line" >>"$HOOK_LOG"; done
test "$1" != "$VETO"
"""


def _git(repo: Path, *args: str) -> str:
    """A set-up command, by Git 2.55 in a reftable repository."""
    cmd = str(GIT_255) if (repo / ".git/reftable").is_dir() else "git"
    return subprocess.run(
        [cmd, *args], cwd=repo, env=git_env(), check=True, capture_output=True
    ).stdout.decode()


def _repo(tmp_path: Path, name: str, ref_format: str) -> tuple[Path, str, str]:
    """A repository with two commits, master at the first, and the hook installed."""
    path = tmp_path / name
    path.mkdir()
    if ref_format == "reftable":
        subprocess.run(
            [str(GIT_255), "init", "-q", "-b", "master", "--ref-format=reftable"],
            cwd=path,
            check=True,
            env=git_env(),
        )
    else:
        git("init", "-q", "-b", "master", cwd=path)
    for m in ("PRE", "POST"):
        _git(path, "commit", "-q", "--allow-empty", "-m", m)
    post = _git(path, "rev-parse", "HEAD").strip()
    pre = _git(path, "rev-parse", "HEAD^").strip()
    _git(path, "update-ref", "refs/heads/master", pre)
    hook = path / ".git/hooks/reference-transaction"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(HOOK)
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    return path, pre, post


def _run(
    cmd: list[str], repo: Path, args: list[str], stdin: bytes = b"", veto: str = ""
) -> tuple[int, bytes, str]:
    log = repo / "hook.log"
    log.unlink(missing_ok=True)
    env = {**git_env(), "HOOK_LOG": str(log), "VETO": veto}
    p = subprocess.run([*cmd, *args], cwd=repo, env=env, input=stdin, capture_output=True)
    return p.returncode, p.stderr, log.read_text() if log.exists() else ""


OURS = [sys.executable, "-m", "gitodb"]


def _cases(pre: str, post: str) -> list[tuple[list[str], bytes]]:
    stdin_abort = f"start\nupdate HEAD {post} {NULL}\nupdate refs/heads/x {post}\nabort\n"
    symrefs = (
        "start\nsymref-verify refs/heads/s1 refs/heads/master\n"
        "symref-delete refs/heads/s2 refs/heads/master\n"
        "symref-create refs/heads/s3 refs/heads/master\n"
        "symref-update refs/heads/s4 refs/heads/side ref refs/heads/master\n"
        "prepare\ncommit\n"
    )
    return [
        (["update-ref", "HEAD", post], b""),
        (["update-ref", "--stdin"], stdin_abort.encode()),
        (["symbolic-ref", "refs/heads/sym", "refs/heads/master"], b""),
        (["update-ref", "-d", "refs/heads/loose"], b""),
        (["update-ref", "-d", "refs/heads/packed"], b""),
        (["update-ref", "--no-deref", "--stdin"], symrefs.encode()),
    ]


def _setup_refs(repo: Path, pre: str) -> None:
    _git(repo, "update-ref", "refs/heads/packed", pre)
    _git(repo, "pack-refs", "--all")
    _git(repo, "update-ref", "refs/heads/loose", pre)
    _git(repo, "update-ref", "refs/heads/side", pre)
    for s in ("s1", "s2", "s4"):
        _git(repo, "symbolic-ref", f"refs/heads/{s}", "refs/heads/master")


@pytest.mark.skipif(not GIT_255.exists(), reason="needs ../shared/git-2.55")
@pytest.mark.parametrize("ref_format", ["files", "reftable"])
def test_transcripts_like_git_255(tmp_path: Path, ref_format: str) -> None:
    mine_repo, pre, post = _repo(tmp_path, "mine", ref_format)
    theirs_repo, _, _ = _repo(tmp_path, "theirs", ref_format)
    for repo in (mine_repo, theirs_repo):
        _setup_refs(repo, pre)
    for args, stdin in _cases(pre, post):
        mine = _run(OURS, mine_repo, args, stdin)
        theirs = _run([str(GIT_255)], theirs_repo, args, stdin)
        assert (mine[0], mine[2]) == (theirs[0], theirs[2]), args


@pytest.mark.parametrize("phase", ["preparing", "prepared"])
@pytest.mark.parametrize("ref_format", ["files", "reftable"])
def test_a_veto_leaves_the_ref(tmp_path: Path, phase: str, ref_format: str) -> None:
    if ref_format == "reftable" and not GIT_255.exists():
        pytest.skip("needs ../shared/git-2.55 to make a reftable repository")
    repo, pre, post = _repo(tmp_path, "r", ref_format)
    status, err, log = _run(OURS, repo, ["update-ref", "HEAD", post], veto=phase)
    assert status == 128
    assert (
        err
        == (
            f"fatal: in '{phase}' phase, update aborted by the reference-transaction hook\n"
        ).encode()
    )
    assert _git(repo, "rev-parse", "master").strip() == pre
    assert "committed" not in log and not list(repo.glob(".git/**/*.lock"))


def test_the_lines_of_an_update(tmp_path: Path) -> None:
    repo, pre, post = _repo(tmp_path, "r", "files")
    status, _err, log = _run(OURS, repo, ["update-ref", "HEAD", post, pre])
    assert status == 0
    assert log.splitlines() == [
        "preparing",
        f"{pre} {post} HEAD",
        "prepared",
        f"{pre} {post} refs/heads/master",
        "committed",
        f"{pre} {post} refs/heads/master",
    ]


def test_no_hook_no_run(tmp_path: Path) -> None:
    repo, pre, post = _repo(tmp_path, "r", "files")
    os.unlink(repo / ".git/hooks/reference-transaction")
    assert _run(OURS, repo, ["update-ref", "HEAD", post])[::2] == (0, "")
