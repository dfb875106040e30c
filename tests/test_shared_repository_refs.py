"""``core.sharedRepository`` on the files backend: modes of what ref writes create.

Git (on PATH) and gitodb do the same writes in twin repositories; every file and
directory they create must get the same mode.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import git, run_cli

PATHS = [
    "refs/heads/d",
    "refs/heads/d/x",
    "refs/heads/d/y",
    "logs/refs/heads/d",
    "logs/refs/heads/d/x",
    "logs/refs/heads/d/y",
    "packed-refs",
    "refs/tags/t",
]


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _twins(tmp_path: Path, value: str) -> tuple[Path, Path]:
    out = []
    for who in ("git", "gitodb"):
        repo = tmp_path / who
        git("init", "-q", "-b", "main", repo)
        git("-C", repo, "commit", "-q", "--allow-empty", "-m", "one")
        git("-C", repo, "config", "core.sharedRepository", value)
        out.append(repo)
    return out[0], out[1]


def _modes(repo: Path) -> dict[str, str]:
    git_dir = repo / ".git"
    return {
        p: oct(stat.S_IMODE(os.lstat(git_dir / p).st_mode)) if (git_dir / p).exists() else "-"
        for p in PATHS
    }


@pytest.mark.parametrize("value", ["group", "0640", "all", "umask", "0600"])
def test_modes_like_git(tmp_path: Path, umask: None, value: str) -> None:
    ours_git, ours = _twins(tmp_path, value)
    steps = [
        ("update-ref", "refs/heads/d/x", "HEAD"),
        ("update-ref", "refs/tags/t", "HEAD"),
        ("pack-refs", "--all"),
        ("update-ref", "refs/heads/d/y", "HEAD"),
        ("update-ref", "-d", "refs/tags/t"),
    ]
    for step in steps:
        git("-C", ours_git, *step)
        assert run_cli(ours, *step) == 0, step
    want = _modes(ours_git)
    assert want["refs/heads/d/y"] != "-" and want["packed-refs"] != "-"
    assert _modes(ours) == want
