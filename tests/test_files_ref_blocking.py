"""A non-empty directory where a loose ref is to be written (t0600 10, 12): Git's
message names the update as given and the directory, and nothing is changed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env


@pytest.mark.parametrize("name", ["refs/ne/foo", "refs/ne/symref"])
def test_a_non_empty_directory_blocks_the_ref_like_git(tmp_path: Path, name: str) -> None:
    repo = tmp_path / "r"
    git("init", "-q", repo)
    git("commit", "-q", "--allow-empty", "-m", "a", cwd=repo)
    (repo / ".git/refs/ne/foo/bar").mkdir(parents=True)
    (repo / ".git/refs/ne/foo/bar/baz.lock").write_bytes(b"")
    git("symbolic-ref", "refs/ne/symref", "refs/ne/foo", cwd=repo)
    runs = []
    for cmd in (["git"], [sys.executable, "-m", "gitodb"]):
        p = subprocess.run(
            [*cmd, "update-ref", "--stdin"],
            cwd=repo,
            env=git_env(),
            input=f"update {name} HEAD\n".encode(),
            capture_output=True,
        )
        runs.append((p.returncode, p.stderr))
    assert runs[1] == runs[0]
    assert runs[0][1].startswith(b"fatal: cannot lock ref") and b"non-empty directory" in runs[0][1]
    assert (repo / ".git/refs/ne/foo/bar/baz.lock").exists()


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (["update-ref", "--stdin"], "update refs/broken/foo HEAD\n"),
        (["update-ref", "--stdin"], "update refs/broken/foo HEAD HEAD\n"),
        (["update-ref", "--stdin"], "update refs/broken/via HEAD\n"),
        (["update-ref", "refs/broken/foo", "HEAD"], ""),
        (["update-ref", "-d", "refs/broken/foo"], ""),
    ],
)
def test_a_broken_ref_blocks_the_update_like_git(
    tmp_path: Path, args: list[str], stdin: str
) -> None:
    """t0600 11, 13: a loose ref file of junk is "reference broken", and Git's
    message does not name the file."""
    repo = tmp_path / "r"
    git("init", "-q", repo)
    git("commit", "-q", "--allow-empty", "-m", "a", cwd=repo)
    (repo / ".git/refs/broken").mkdir(parents=True)
    (repo / ".git/refs/broken/foo").write_bytes(b"gobbledigook\n")
    git("symbolic-ref", "refs/broken/via", "refs/broken/foo", cwd=repo)
    runs = []
    for cmd in (["git"], [sys.executable, "-m", "gitodb"]):
        p = subprocess.run(
            [*cmd, *args],
            cwd=repo,
            env=git_env(),
            input=stdin.encode(),
            capture_output=True,
        )
        runs.append((p.returncode, p.stderr))
    assert runs[1] == runs[0]
    assert b"reference broken\n" in runs[0][1]
    assert (repo / ".git/refs/broken/foo").read_bytes() == b"gobbledigook\n"
