"""The ``gitodb`` entry point: global options, unknown commands, fatal errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import git, git_env


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "gitodb", *args], cwd=cwd,
                          capture_output=True, env=git_env(), check=False)


def test_unknown_command_is_like_git(tmp_path: Path) -> None:
    proc = run("bogus", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == b"gitodb: 'bogus' is not a gitodb command. See 'gitodb --help'.\n"


def test_dash_c_and_git_dir_select_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    git("init", "-q", repo)
    oid = git("hash-object", "-w", "--stdin", cwd=repo, input=b"x\n").strip().decode()
    assert run("-C", str(repo), "cat-file", "-p", oid).stdout == b"x\n"
    assert run(f"--git-dir={repo / '.git'}", "cat-file", "-t", oid,
               cwd=tmp_path).stdout == b"blob\n"


def test_outside_a_repository_is_one_fatal_line(tmp_path: Path) -> None:
    proc = run("cat-file", "-t", "HEAD", cwd=tmp_path)
    assert proc.returncode == 128
    assert proc.stderr.startswith(b"fatal: not a git repository")
    assert proc.stderr.count(b"\n") == 1
