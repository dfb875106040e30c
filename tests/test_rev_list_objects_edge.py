"""``rev-list --objects-edge``: ``--objects``, with the excluded commits that border
the listed ones printed first as ``-<id>``, byte for byte as git prints them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env

GIT255 = Path(os.environ.get("GITODB_GIT_255", "/work/shared/git-2.55/git/bin/git"))


def gitodb(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gitodb", *args], cwd=repo, env=git_env(), capture_output=True
    )


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A history with merges and side branches: edges of several kinds."""
    r = tmp_path_factory.mktemp("edge") / "r"
    git("init", "-q", "-b", "main", r)
    for i in range(4):
        (r / f"f{i}").write_text(f"{i}\n")
        git("add", ".", cwd=r)
        git("commit", "-q", "-m", f"c{i}", cwd=r)
    git("tag", "base", cwd=r)
    git("checkout", "-q", "-b", "side", "HEAD~2", cwd=r)
    for i in range(3):
        (r / f"s{i}").write_text(f"side {i}\n")
        git("add", ".", cwd=r)
        git("commit", "-q", "-m", f"s{i}", cwd=r)
    git("checkout", "-q", "main", cwd=r)
    (r / "m").write_text("m\n")
    git("add", ".", cwd=r)
    git("commit", "-q", "-m", "m", cwd=r)
    git("merge", "-q", "--no-ff", "-m", "merge side", "side", cwd=r)
    (r / "top").write_text("top\n")
    git("add", ".", cwd=r)
    git("commit", "-q", "-m", "top", cwd=r)
    return r


RANGES = [
    ["base..main"],
    ["main~1..main"],
    ["side..main"],
    ["main", "^side", "^base~1"],
    ["--not", "base", "--not", "main", "side"],
    ["--first-parent", "base..main"],
    ["--no-merges", "base..main"],
    ["--no-object-names", "base..main"],
    ["--count", "base..main"],
    ["main"],  # nothing excluded: no edges
]


@pytest.mark.parametrize("args", RANGES, ids=" ".join)
def test_objects_edge_matches_git(repo: Path, args: list[str]) -> None:
    want = git("rev-list", "--objects-edge", *args, cwd=repo)
    got = gitodb(repo, "rev-list", "--objects-edge", *args)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want
    if args[0].endswith("..main") and args[0] != "main":
        assert want.startswith(b"-")  # there is an edge to print


@pytest.mark.parametrize("args", [["base..main"], ["main~1..main"], ["side..main"]], ids=" ".join)
def test_with_a_commit_graph_and_a_topological_order(
    repo: Path, tmp_path: Path, args: list[str]
) -> None:
    # With generation numbers Git sorts incrementally and does not limit the walk:
    # the edges and the trees they exclude come from the start commits only.
    copy = tmp_path / "c"
    git("clone", "-q", "--bare", str(repo), str(copy))
    git("commit-graph", "write", "--reachable", cwd=copy)
    for order in ("--topo-order", "--date-order"):
        for what in ("--objects", "--objects-edge"):
            want = git("rev-list", what, order, *args, cwd=copy)
            got = gitodb(copy, "rev-list", what, order, *args)
            assert got.stdout == want, (what, order)


@pytest.mark.skipif(not GIT255.exists(), reason="needs ../shared/git-2.55")
def test_nul_output_is_refused_as_git_does(repo: Path) -> None:
    want = subprocess.run(
        [str(GIT255), "rev-list", "-z", "--objects-edge", "base..main"],
        cwd=repo,
        env=git_env(),
        capture_output=True,
    )
    got = gitodb(repo, "rev-list", "-z", "--objects-edge", "base..main")
    assert (got.returncode, got.stdout) == (want.returncode, want.stdout) == (128, b"")
    assert got.stderr == want.stderr == b"fatal: -z option used with unsupported option\n"
