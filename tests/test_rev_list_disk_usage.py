"""``rev-list --disk-usage[=human]`` (t6115) and the empty tree's size on disk, which
Git gives as 0 wherever the tree is stored: compared with the git on PATH."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
GIT_255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Packed (with a bitmap) and loose objects, reachable and not, and the empty tree
    stored loose."""
    path = tmp_path_factory.mktemp("du") / "r"
    git("init", "-q", "-b", "main", path)
    git("commit", "-q", "--allow-empty", "-m", "empty", cwd=path)
    for name in ("one", "two"):
        (path / f"{name}.t").write_text(name * 100)
        git("add", ".", cwd=path)
        git("commit", "-q", "-m", name, cwd=path)
    git("repack", "-adbq", cwd=path)
    git("reset", "-q", "--hard", "HEAD^", cwd=path)
    for name in ("three", "four"):
        (path / f"{name}.t").write_text(name * 50)
        git("add", ".", cwd=path)
        git("commit", "-q", "-m", name, cwd=path)
    git("reset", "-q", "--hard", "HEAD^", cwd=path)
    return path


def _both(repo: Path, *args: str, stdin: bytes = b"", git_cmd: str = "git") -> tuple[tuple, tuple]:
    runs = []
    for cmd in ([git_cmd], [sys.executable, "-m", "gitodb"]):
        p = subprocess.run([*cmd, *args], cwd=repo, env=git_env(), input=stdin, capture_output=True)
        runs.append((p.returncode, p.stdout, p.stderr))
    return runs[0], runs[1]


@pytest.mark.parametrize(
    "args",
    [
        ["HEAD"],
        ["--objects", "HEAD"],
        ["--objects", "HEAD^..HEAD"],
        ["--all", "--objects"],
        ["--objects", "--use-bitmap-index", "HEAD"],
        ["--disk-usage=human", "--objects", "--all"],
        ["--disk-usage=typo", "HEAD"],
    ],
    ids=" ".join,
)
def test_disk_usage_like_git(repo: Path, args: list[str]) -> None:
    theirs, mine = _both(repo, "rev-list", "--disk-usage", *args)
    assert mine == theirs


@pytest.mark.skipif(not GIT_255.exists(), reason="needs ../shared/git-2.55")
def test_unpacked_like_git_255(repo: Path) -> None:
    """Git 2.55 leaves packed trees and blobs out too (2.39 only packed commits)."""
    args = ("rev-list", "--disk-usage", "--all", "--objects", "--unpacked")
    for extra in ([], ["--use-bitmap-index"]):
        theirs, mine = _both(repo, *args, *extra, git_cmd=str(GIT_255))
        assert mine == theirs


@pytest.mark.parametrize("repack", [False, True], ids=["loose", "packed"])
def test_the_empty_tree_takes_no_bytes(tmp_path: Path, repack: bool) -> None:
    """Git answers from its cached object before any store, stored or not; only its
    bitmap walk counts the packed entry."""
    repo = tmp_path / "r"
    git("init", "-q", repo)
    git("commit", "-q", "--allow-empty", "-m", "empty", cwd=repo)
    if repack:
        git("repack", "-adbq", cwd=repo)
    else:
        assert (repo / ".git/objects" / EMPTY_TREE[:2] / EMPTY_TREE[2:]).exists()
    fmt = "--batch-check=%(objectname) %(objectsize:disk) %(deltabase)"
    theirs, mine = _both(repo, "cat-file", fmt, stdin=f"{EMPTY_TREE}\n".encode())
    assert mine == theirs and theirs[1].split()[1] == b"0"
    for extra in ([], ["--use-bitmap-index"]):
        theirs, mine = _both(repo, "rev-list", "--disk-usage", "--objects", *extra, "HEAD")
        assert mine == theirs
