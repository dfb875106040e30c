"""Path-limited ``rev-list`` (history simplification) against ``git rev-list``.

The history has merges that bring changes to the paths from either side, a side
branch whose only change is already on the main line (a TREESAME merge), an
``-s ours`` merge, an empty commit and a directory; each walk is compared with and
without a commit-graph holding changed-path Bloom filters (which must change
nothing but the number of tree diffs).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gitodb.history.revwalk import RevWalk
from gitodb.repo import Repository
from helpers import git, git_env
from oracle import assert_same


def _at(repo: Path, when: list[int], *args: str) -> None:
    when[0] += 10
    env = git_env()
    env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{when[0]} +0000"
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _build(r: Path) -> None:
    t = [1700000000]
    git("init", "-q", "-b", "main", r)

    def commit(msg: str, **files: str) -> None:
        for name, text in files.items():
            path = r / name.replace("__", "/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        _at(r, t, "add", ".")
        _at(r, t, "commit", "-q", "--allow-empty", "-m", msg)

    commit("one", foo="a\n", d__x="x\n")
    git("tag", "root", cwd=r)
    commit("two", bar="b\n")
    git("checkout", "-q", "-b", "side", "HEAD^", cwd=r)
    commit("side1", foo="s\n")
    commit("side2", d__y="y\n")
    git("checkout", "-q", "main", cwd=r)
    commit("three", baz="c\n")
    _at(r, t, "merge", "-q", "-m", "merge1", "side")
    git("checkout", "-q", "-b", "side2", "root", cwd=r)
    commit("o1", other="q\n")
    git("checkout", "-q", "main", cwd=r)
    _at(r, t, "merge", "-q", "-m", "merge2", "side2")
    _at(r, t, "merge", "-q", "-s", "ours", "-m", "ours", "root")
    git("checkout", "-q", "-b", "side3", "HEAD~2", cwd=r)
    commit("samefoo", foo="s\n")
    git("checkout", "-q", "main", cwd=r)
    _at(r, t, "merge", "-q", "-m", "merge3", "side3")
    commit("last", foo="z\n")
    commit("empty")


@pytest.fixture(scope="module", params=["plain", "bloom"])
def repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("paths") / "r"
    _build(r)
    if request.param == "bloom":
        git("commit-graph", "write", "--reachable", "--changed-paths", cwd=r)
    return r


PATHS = [["foo"], ["d"], ["d/y"], ["bar", "other"], ["nothing"], ["."], ["d/*"], ["foo", "d"]]
OPTIONS = [
    [],
    ["--parents"],
    ["--full-history"],
    ["--full-history", "--parents"],
    ["--sparse"],
    ["--sparse", "--parents"],
    ["--full-history", "--sparse"],
    ["--remove-empty"],
    ["--topo-order", "--parents"],
    ["--date-order", "--parents", "--full-history"],
    ["--reverse", "--parents", "--full-history"],
    ["--first-parent", "--parents"],
    ["--no-merges", "--parents"],
    ["--merges", "--full-history"],
    ["--count"],
    ["--objects"],
    ["--objects", "--full-history", "--filter=blob:none"],
    ["-n2", "--boundary", "--parents"],
]


@pytest.mark.parametrize("paths", PATHS, ids=" ".join)
@pytest.mark.parametrize("options", OPTIONS, ids=" ".join)
def test_simplification_like_git(repo: Path, paths: list[str], options: list[str]) -> None:
    assert_same(repo, "rev-list", *options, "HEAD", "--", *paths)


@pytest.mark.parametrize(
    "args",
    [
        ["--boundary", "--parents", "--full-history", "main", "^root", "--", "foo"],
        ["--boundary", "--reverse", "--parents", "--full-history", "main", "^root", "--", "foo"],
        ["--boundary", "HEAD~3..HEAD"],
        ["--boundary", "--timestamp", "--parents", "HEAD~3..HEAD"],
        ["--header", "-2", "HEAD"],
        ["--header", "--parents", "HEAD", "--", "foo"],
        ["HEAD", "foo"],  # a file name ends the revisions
        ["--objects", "HEAD", "d"],
        ["HEAD", "no-such-file"],
    ],
)
def test_walk_options_like_git(repo: Path, args: list[str]) -> None:
    assert_same(repo, "rev-list", *args)


GIT255 = Path(__file__).resolve().parents[1] / ".." / "shared" / "git-2.55" / "git" / "bin" / "git"


@pytest.mark.skipif(not GIT255.exists(), reason="-z needs Git 2.55 (../shared/git-2.55)")
@pytest.mark.parametrize(
    "args",
    [
        ["-z", "HEAD~2..HEAD"],
        ["-z", "--boundary", "--parents", "HEAD~2..HEAD"],
        ["-z", "--objects", "HEAD~1..HEAD"],
        ["-z", "--objects", "--no-object-names", "HEAD~1..HEAD"],
        ["-z", "--objects", "HEAD:foo", "HEAD:d"],
        ["-z", "--timestamp", "HEAD"],
        ["-z", "--left-right", "HEAD"],
    ],
)
def test_nul_output_like_git_255(repo: Path, args: list[str]) -> None:
    import os
    import sys

    from oracle import run

    theirs = run([str(GIT255), "rev-list", *args], repo)
    ours = run([sys.executable, "-m", "gitodb", "rev-list", *args], repo)
    assert theirs == ours
    assert os.fspath(repo)


def test_paths_from_a_subdirectory(repo: Path) -> None:
    assert_same(repo / "d", "rev-list", "--parents", "HEAD", "--", "y", "../foo")


def test_bloom_filters_skip_diffs_same_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With changed-path filters fewer trees are compared; the commits are the same."""
    import gitodb.history.simplify as simplify

    r = tmp_path / "r"
    _build(r)
    git("commit-graph", "write", "--reachable", "--changed-paths", cwd=r)
    calls = [0]
    real = simplify.diff_trees

    def counting(*a, **k):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return real(*a, **k)

    monkeypatch.setattr(simplify, "diff_trees", counting)
    repo = Repository(str(r))
    seen = []
    for use_bloom in (True, False):
        calls[0] = 0
        walk = RevWalk(repo, paths=[b"d/y"], use_bloom=use_bloom)
        walk.add(bytes(repo.resolve("HEAD")))
        seen.append(([n.id for n in walk.commits()], calls[0]))
    (with_bloom, n_bloom), (without, n_plain) = seen
    assert with_bloom == without and len(with_bloom) == 1
    assert n_bloom < n_plain
    shutil.rmtree(r)


@pytest.mark.parametrize("paths", [["foo"], ["d"], ["bar", "other"]], ids=" ".join)
@pytest.mark.parametrize(
    "options", [[], ["--parents"], ["--full-history"], ["--sparse"], ["-3"]], ids=" ".join
)
def test_log_paths_like_git(repo: Path, paths: list[str], options: list[str]) -> None:
    """``log`` walks with the same simplification; ``%P`` shows the simplified parents."""
    assert_same(repo, "log", "--format=%H %P %s", *options, "HEAD", "--", *paths)


def test_log_file_name_argument_like_git(repo: Path) -> None:
    assert_same(repo, "log", "--oneline", "HEAD", "foo")


@pytest.mark.parametrize(
    "args",
    [
        ["--pretty=%H", "-2", "HEAD"],
        ["--pretty=oneline", "-3", "HEAD"],
        ["--format=%s%n%an", "--parents", "-3", "HEAD"],
        ["--pretty=format:%s", "HEAD", "--", "foo"],
        ["--pretty=tformat:%h %p", "--parents", "HEAD", "--", "d"],
    ],
)
def test_pretty_like_git(repo: Path, args: list[str]) -> None:
    assert_same(repo, "rev-list", *args)


@pytest.mark.skipif(not GIT255.exists(), reason="--maximal-only is Git 2.55's")
@pytest.mark.parametrize(
    "args",
    [
        ["--maximal-only", "HEAD~3", "HEAD~4", "side", "root"],
        ["--maximal-only", "HEAD~2..HEAD", "side3"],
        ["--maximal-only", "--count", "HEAD", "side"],
        ["--maximal-only", "--boundary", "HEAD~1..HEAD"],
        ["--maximal-only", "--pretty=%H", "HEAD", "side"],
    ],
)
def test_maximal_only_like_git_255(repo: Path, args: list[str]) -> None:
    import sys

    from oracle import run

    theirs = run([str(GIT255), "rev-list", *args], repo)
    assert run([sys.executable, "-m", "gitodb", "rev-list", *args], repo) == theirs


@pytest.mark.parametrize(
    "args",
    [
        ["--bisect", "HEAD"],
        ["--bisect", "HEAD~7"],
        ["--bisect-all", "HEAD", "^root"],
        ["--bisect-all", "HEAD"],
        ["--bisect-vars", "HEAD", "^root"],
        ["--bisect-vars", "HEAD~1..HEAD"],
        ["--bisect-all", "--bisect-vars", "HEAD~3", "^root"],
        ["--bisect", "--first-parent", "HEAD"],
        ["--bisect-all", "--first-parent", "HEAD"],
        ["--bisect", "HEAD", "--", "foo"],
        ["--bisect-all", "HEAD", "--", "d"],
    ],
)
def test_bisect_like_git(repo: Path, args: list[str]) -> None:
    assert_same(repo, "rev-list", *args)
