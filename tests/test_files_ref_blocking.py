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
