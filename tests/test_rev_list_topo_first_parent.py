"""``--topo-order``/``--date-order`` with ``--first-parent`` against git, with and
without a commit-graph.

With generation numbers (a commit-graph), Git sorts an unlimited topological walk
incrementally (``init_topo_walk``), counting only first-parent edges; without them
it limits the list and sorts it with ``sort_in_topological_order``, counting every
parent edge inside the list.  The history here makes the two differ: ``x`` is the
tip of ``side`` (first-parent reachable) and the second parent of ``main``'s merge.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers import commit_at, git, git_env
from oracle import assert_same

ORDERS = [
    ["rev-list", "--topo-order", "--first-parent", "--all"],
    ["rev-list", "--date-order", "--first-parent", "--all"],
    ["rev-list", "--topo-order", "--first-parent", "--parents", "--all"],
    ["rev-list", "--topo-order", "--first-parent", "main", "side"],
    ["rev-list", "--topo-order", "--first-parent", "--all", "^a"],
    ["rev-list", "--topo-order", "--first-parent", "--all", "^main~2"],
    ["log", "--topo-order", "--first-parent", "--format=%H %s", "--all"],
]


def _merge_at(path: Path, branch: str, n: int) -> None:
    date = f"{1700000000 + n * 100} +0000"
    env = dict(git_env(), GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    subprocess.run(
        ["git", "merge", "-q", "--no-ff", "-m", f"merge {branch}", branch],
        cwd=path,
        env=env,
        check=True,
        capture_output=True,
    )


def _history(path: Path, y_at: int = 5) -> Path:
    """main: a - b - m - c (m merges x); side: a - x - y, y the newest commit (or
    dated ``y_at``); other: m - z."""
    git("init", "-q", "-b", "main", path)
    commit_at(path, "a", 0)
    git("tag", "a", cwd=path)
    commit_at(path, "b", 1)
    git("checkout", "-q", "-b", "side", "a", cwd=path)
    commit_at(path, "x", 2)
    git("checkout", "-q", "main", cwd=path)
    _merge_at(path, "side", 3)
    commit_at(path, "c", 4)
    git("checkout", "-q", "side", cwd=path)
    commit_at(path, "y", y_at)
    git("checkout", "-q", "-b", "other", "main~1", cwd=path)
    commit_at(path, "z", 6)
    git("checkout", "-q", "main", cwd=path)
    return path


@pytest.mark.parametrize("graph", [False, True], ids=["no-graph", "commit-graph"])
@pytest.mark.parametrize("args", ORDERS, ids=lambda a: " ".join(a[1:]))
def test_first_parent_orders_match_git(tmp_path: Path, graph: bool, args: list[str]) -> None:
    repo = _history(tmp_path / "r")
    if graph:
        git("commit-graph", "write", "--reachable", cwd=repo)
    assert_same(repo, *args)


def test_the_history_tells_the_two_sorts_apart(tmp_path: Path) -> None:
    """Git itself orders this history differently with a commit-graph (else the
    test above could not catch a walk that ignores generation numbers)."""
    repo = _history(tmp_path / "r")
    args = ("rev-list", "--topo-order", "--first-parent", "--all")
    without = git(*args, cwd=repo)
    git("commit-graph", "write", "--reachable", cwd=repo)
    assert git(*args, cwd=repo) != without
    assert git("-c", "core.commitGraph=false", *args, cwd=repo) == without


@pytest.mark.parametrize("graph", [False, True], ids=["no-graph", "commit-graph"])
@pytest.mark.parametrize("order", ["--topo-order", "--date-order"])
def test_excluded_first_parent_of_a_merge(tmp_path: Path, graph: bool, order: str) -> None:
    """m's first parent b excluded: Git's incremental sort skips it and lowers the
    in-degree of m's second parent x instead, so x is listed right after m, before
    its own child y (dated before x here, so y is the last tip)."""
    repo = _history(tmp_path / "r", y_at=0)
    if graph:
        git("commit-graph", "write", "--reachable", cwd=repo)
    out = assert_same(repo, "rev-list", order, "--first-parent", "--all", "^main~2")
    if graph and order == "--topo-order":
        x = git("rev-parse", "side~1", cwd=repo)
        y = git("rev-parse", "side", cwd=repo)
        assert out.index(x) < out.index(y)
