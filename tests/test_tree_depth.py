"""``core.maxTreeDepth`` (t6700): walks stop where Git stops on a tree nested deeper
than the limit, with Git's message, exit status and what Git printed before, and
a tree deeper than Python's recursion limit is no traceback.

Against the ``git`` on PATH where it has the option (2.39 does not: there the
outcomes are Git 2.55's, skipped without ``../shared``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env

GIT255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"
needs_255 = pytest.mark.skipif(not GIT255.exists(), reason="needs ../shared/git-2.55")
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def _deep(repo: Path, tag: str, depth: int) -> None:
    path = "a/" * depth + "file"
    stream = (
        f"commit refs/tags/{tag}\ncommitter foo <foo@example.com> 1234 -0000\n"
        f"data 4\nmsg\nM 100644 inline {path}\ndata 2\nc\n\n"
    ).encode()
    git("fast-import", "--quiet", cwd=repo, input=stream)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("deep") / "r.git"
    git("init", "-q", "--bare", r)
    _deep(r, "small", 50)
    _deep(r, "big", 2100)  # past the default of 2048, and Python's recursion limit
    return r


def _run(cmd: list[str], repo: Path) -> tuple[int, bytes, bytes]:
    p = subprocess.run(cmd, cwd=repo, capture_output=True, env=git_env())
    return p.returncode, p.stdout, p.stderr


@needs_255
@pytest.mark.parametrize(
    "args",
    [
        ["ls-tree", "-r", "small"],
        ["ls-tree", "-r", "-t", "small"],
        ["ls-tree", "-r", "small", "a"],
        ["rev-list", "--objects", "small"],
        ["diff-tree", "-r", EMPTY_TREE, "small"],
        ["log", "--raw", "-r", "--format=%H", "small"],
    ],
)
@pytest.mark.parametrize("limit", ["3", "49", "50"])
def test_the_limit_stops_walks_like_git(repo: Path, args: list[str], limit: str) -> None:
    cmd = ["-c", f"core.maxtreedepth={limit}", *args]
    assert _run([sys.executable, "-m", "gitodb", *cmd], repo) == _run([str(GIT255), *cmd], repo)


@needs_255
@pytest.mark.parametrize(
    "args",
    [
        ["ls-tree", "-r", "big"],
        ["ls-tree", "-r", "big", "a"],
        ["rev-list", "--objects", "big"],
        ["diff-tree", "-r", EMPTY_TREE, "big"],
    ],
)
def test_the_default_limit_fails_gracefully(repo: Path, args: list[str]) -> None:
    mine = _run([sys.executable, "-m", "gitodb", *args], repo)
    assert mine == _run([str(GIT255), *args], repo)
    assert mine[0] != 0 and b"exceeded maximum allowed tree depth" in mine[2]
    assert b"Traceback" not in mine[2]


FILTERS = [
    "blob:none",
    "blob:limit=1",
    "tree:5000",
    "tree:3",
    "object:type=tree",
    "combine:blob:none+tree:2000",
]


@pytest.mark.parametrize("spec", FILTERS)
def test_filtered_listing_of_a_deep_tree_like_git(repo: Path, spec: str) -> None:
    # --filter's tree walk on a tree deeper than Python's recursion limit (it recursed:
    # RecursionError), with core.maxTreeDepth raised past it (git 2.39 has no limit)
    args = ["-c", "core.maxtreedepth=4096", "rev-list", "--objects", f"--filter={spec}", "big"]
    theirs = _run(["git", *args], repo)
    assert theirs[0] == 0
    mine = _run([sys.executable, "-m", "gitodb", *args], repo)
    assert mine == theirs


@needs_255
@pytest.mark.parametrize("spec", FILTERS)
def test_filtered_listing_stops_at_the_default_limit_like_git(repo: Path, spec: str) -> None:
    args = ["rev-list", "--objects", f"--filter={spec}", "big"]
    mine = _run([sys.executable, "-m", "gitodb", *args], repo)
    assert mine == _run([str(GIT255), *args], repo)
    assert b"Traceback" not in mine[2]
