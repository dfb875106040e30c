"""``gitodb rev-list`` against ``git rev-list`` (bytes and exit status).

The repositories have branches, merges and an octopus, runs of equal commit
dates (the tie-break of Git's date queue), a commit dated before its parent
(clock skew, which the five-commit slop of ``limit_list`` is about), annotated
tags of tags, tags of trees and blobs, remote-tracking refs, and SHA-256.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gitodb.history.graph import CommitGraph, merge_bases
from gitodb.history.revwalk import RevWalk
from gitodb.repo import Repository
from helpers import git, git_env
from oracle import assert_same, both


def _git_at(repo: Path, date: int, *args: str) -> None:
    env = git_env()
    env["GIT_AUTHOR_DATE"] = f"{date} +0000"
    env["GIT_COMMITTER_DATE"] = f"{date} +0000"
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _commit(repo: Path, date: int, name: str) -> None:
    (repo / f"{name}.t").write_text(name + "\n")
    (repo / "dir").mkdir(exist_ok=True)
    (repo / "dir" / f"{name}.d").write_text(name * 3)
    _git_at(repo, date, "add", ".")
    _git_at(repo, date, "commit", "-q", "-m", name)


def build(path: Path, object_format: str) -> Path:
    git("init", "-q", f"--object-format={object_format}", "-b", "main", path)
    t = 1700000000
    for i in range(4):
        _commit(path, t + i * 10, f"m{i}")
    git("branch", "side", cwd=path)
    git("branch", "other", cwd=path)
    for i in range(3):
        _commit(path, t + 100, f"main{i}")  # equal dates on main
    git("checkout", "-q", "side", cwd=path)
    for i in range(3):
        _commit(path, t + 100, f"side{i}")  # ... and the same dates on side
    git("checkout", "-q", "other", cwd=path)
    _commit(path, t + 50, "o1")
    _commit(path, t + 20, "skewed")  # older than its parent
    _commit(path, t + 60, "o2")
    git("checkout", "-q", "main", cwd=path)
    _git_at(path, t + 200, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    _git_at(path, t + 210, "merge", "-q", "--no-ff", "-m", "octopus", "other", "side~1")
    _commit(path, t + 220, "after")
    _git_at(path, t + 230, "tag", "-a", "-m", "v1", "v1", "main~1")
    _git_at(path, t + 230, "tag", "-a", "-m", "outer", "v1-outer", "v1")
    _git_at(path, t + 230, "tag", "-a", "-m", "tree", "tree-tag", "main^{tree}")
    blob = git("rev-parse", "main:m0.t", cwd=path).decode().strip()
    _git_at(path, t + 230, "tag", "-a", "-m", "blob", "blob-tag", blob)
    git("tag", "light", "side~2", cwd=path)
    git("update-ref", "refs/remotes/origin/main", "main~2", cwd=path)
    git("update-ref", "refs/remotes/origin/feature", "other", cwd=path)
    git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main", cwd=path)
    git("checkout", "-q", "-b", "root2", cwd=path)
    git("checkout", "-q", "--orphan", "lonely", cwd=path)
    _commit(path, t + 5, "lonely")
    git("checkout", "-q", "main", cwd=path)
    return path


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp(request.param) / "r", request.param)


REVS = [
    ["HEAD"],
    ["--all"],
    ["main"],
    ["side", "other"],
    ["other", "side"],
    ["side..main"],
    ["^side", "main"],
    ["main", "--not", "side", "other"],
    ["side...main"],
    ["main...other"],
    ["other...side"],
    ["main~3..other"],
    ["v1"],
    ["v1-outer"],
    ["..side"],
    ["side.."],
    ["main^@"],
    ["main^!"],
    ["main~1^2"],
    ["--branches"],
    ["--branches=s*"],
    ["--branches=sid"],
    ["--tags"],
    ["--tags=v1*"],
    ["--remotes"],
    ["--remotes=origin"],
    ["--glob=heads/*"],
    ["--glob=refs/tags"],
    ["--exclude=s*", "--branches"],
    ["--exclude=refs/heads/*", "--all"],
    ["--all", "--not", "--branches=side"],
    ["--exclude=main", "--branches", "--branches"],
    ["lonely", "main"],
]
OPTIONS = [
    [],
    ["--topo-order"],
    ["--date-order"],
    ["--reverse"],
    ["--parents"],
    ["--first-parent"],
    ["--merges"],
    ["--no-merges"],
    ["--min-parents=3"],
    ["--max-parents=0"],
    ["-n", "3"],
    ["--max-count=2", "--skip=2"],
    ["-4"],
    ["--skip=1", "--reverse", "-n2"],
    ["--count"],
    ["--topo-order", "--reverse"],
    ["--first-parent", "--topo-order", "--parents"],
    ["--author-date-order"],
    ["--since=1700000150"],
    ["--until=@1700000100"],
    ["--since=2023-11-14T22:15:00Z"],
    ["--until=2023-11-14 23:14:10 +01:00"],
    ["--since=yesterday"],
    ["--until=Nov 14 2023 22:15:10 UTC"],
    ["--max-age=1700000030", "--topo-order"],
    ["--min-age=1700000200"],
    ["--no-min-parents", "--merges", "--no-max-parents"],
    ["--left-right"],
    ["--left-right", "--parents", "--topo-order"],
    ["--left-right", "--count"],
]


# The revisions that exercise the orders and limits most (ties, skew, merges, ranges).
CORE_REVS = [
    ["--all"],
    ["side", "other"],
    ["side..main"],
    ["main", "--not", "side", "other"],
    ["side...main"],
    ["other...side"],
    ["lonely", "main"],
    ["v1-outer"],
]


def test_revisions_match_git(repo: Path) -> None:
    for revs in REVS:
        assert_same(repo, "rev-list", *revs)
        assert_same(repo, "rev-list", "--topo-order", "--parents", *revs)


@pytest.mark.parametrize("opts", OPTIONS, ids=" ".join)
def test_walks_match_git(repo: Path, opts: list[str]) -> None:
    for revs in CORE_REVS:
        assert_same(repo, "rev-list", *opts, *revs)


@pytest.mark.parametrize(
    "opts",
    [
        ["--objects"],
        ["--objects", "--no-object-names"],
        ["--objects", "--count"],
        ["--objects", "--topo-order"],
        ["--objects", "--reverse", "-n3"],
        ["--objects", "--object-names", "--first-parent"],
    ],
    ids=" ".join,
)
def test_objects_match_git(repo: Path, opts: list[str]) -> None:
    for revs in CORE_REVS + [
        ["tree-tag"],
        ["blob-tag"],
        ["main^{tree}"],
        ["main:dir"],
        ["main", "^main~2^{tree}"],
        ["v1", "^v1"],
        ["--tags"],
    ]:
        assert_same(repo, "rev-list", *opts, *revs)


def test_stdin(repo: Path) -> None:
    assert_same(repo, "rev-list", "--stdin", input=b"main\n^side\n")
    assert_same(repo, "rev-list", "other", "--stdin", "--topo-order", input=b"side...main\n")
    theirs, ours = both(repo, "rev-list", "--stdin", input=b"--bogus\n")
    assert ours[:2] == theirs[:2] == (128, b"")
    assert ours[2] == b"fatal: options not supported in --stdin mode\n"


@pytest.mark.parametrize(
    "args", [[], ["nope"], ["nope", "--"], ["main", "--bogus"], ["--not"], ["main..nope"]]
)
def test_errors_match_git(repo: Path, args: list[str]) -> None:
    assert_same(repo, "rev-list", *args)


@pytest.mark.parametrize("args", [["--max-count=1q"], ["-1q"], ["-n", "1q"], ["-n1q"]])
def test_not_an_integer(repo: Path, args: list[str]) -> None:
    # Git 2.55's wording (t6005 "--max-count all forms"; Git 2.39 words it otherwise);
    # our own check.
    _theirs, ours = both(repo, "rev-list", *args, "HEAD")
    assert ours == (128, b"", b"fatal: '1q': not an integer\n")


def test_unsupported_options_are_errors(repo: Path) -> None:
    for args in (["--since=last christmas", "HEAD"],):
        _theirs, ours = both(repo, "rev-list", *args)
        assert ours[0] in (128, 129) and ours[1] == b"", args


def test_once_unsupported_options_match_git(repo: Path) -> None:
    # refused above until the walker had them (tests/test_rev_list_options.py)
    assert_same(repo, "rev-list", "--simplify-merges", "HEAD")
    assert_same(repo, "rev-list", "--ancestry-path", "HEAD")
    assert_same(repo, "rev-list", "--graph", "HEAD")
    assert_same(repo, "rev-list", "--cherry-pick", "HEAD")


def test_boundary_and_paths_match_git(repo: Path) -> None:
    # once refused above; now the walker has them (tests/test_rev_list_paths.py)
    assert_same(repo, "rev-list", "--boundary", "main", "^side")
    assert_same(repo, "rev-list", "--parents", "HEAD", "--", "m0.t")


def test_library_walk_and_merge_bases(repo: Path) -> None:
    r = Repository(repo)
    walk = RevWalk(r, order="topo")
    walk.add(r.resolve("main"))
    walk.add(r.resolve("side"), uninteresting=True)
    got = [n.id.hex() for n in walk.commits()]
    assert got == git("rev-list", "--topo-order", "main", "^side", cwd=repo).decode().split()
    g = CommitGraph(r)
    bases = merge_bases(g, g.node(r.resolve("other")), [g.node(r.resolve("side"))])
    assert [b.id.hex() for b in bases] == git(
        "merge-base", "--all", "other", "side", cwd=repo
    ).decode().split()


def test_from_a_subdirectory_and_bare(repo: Path, tmp_path: Path) -> None:
    assert_same(repo / "dir", "rev-list", "--objects", "main~2")
    bare = tmp_path / "b.git"
    git("clone", "-q", "--mirror", repo, bare)
    assert os.path.isdir(bare)
    assert_same(bare, "rev-list", "--all", "--objects")


def test_end_of_options(tmp_path: Path) -> None:
    repo = tmp_path / "eoo"
    git("init", "-q", repo)
    _commit(repo, 1700000000, "one")
    git("update-ref", "refs/heads/--output=yikes", "HEAD", cwd=repo)
    assert assert_same(repo, "rev-list", "--end-of-options", "--output=yikes")
    assert not (repo / "yikes").exists()


@pytest.mark.parametrize(
    "opts",
    [
        ["--left-only"],
        ["--right-only", "--date-order"],
        ["--left-only", "--objects"],
        ["--right-only", "--count"],
    ],
    ids=" ".join,
)
def test_one_side_of_symmetric_ranges(repo: Path, opts: list[str]) -> None:
    for revs in (["side...main"], ["other...side"], ["main...other"], ["main~1...side~1"]):
        assert_same(repo, "rev-list", *opts, *revs)


def test_left_only_of_unrelated_histories(repo: Path) -> None:
    # Git 2.55 keeps to one side even when the sides share no commit (2.39 did not).
    theirs, ours = both(repo, "rev-list", "--left-only", "lonely...main")
    lonely = git("rev-list", "lonely", cwd=repo)
    assert ours == (0, lonely, b"")
    assert theirs[1] != lonely  # the Git on PATH lists both sides
    _t, ours = both(repo, "rev-list", "--right-only", "--count", "lonely...main")
    assert ours[1] == b"%d\n" % len(git("rev-list", "main", cwd=repo).split())


def test_ignore_missing(repo: Path) -> None:
    assert_same(repo, "rev-list", "--ignore-missing", "0" * 40)
    assert_same(repo, "rev-list", "--ignore-missing", "nosuch", "main")
    assert_same(repo, "rev-list", "nosuch", "main")


@pytest.mark.parametrize("graph", [False, True], ids=["objects", "commit-graph"])
def test_replaced_commits_are_walked_as_their_replacements(tmp_path: Path, graph: bool) -> None:
    # t6050 37: `git replace --convert-graft-file` turns a graft into a replacement
    # commit without parents; walks read each commit through its replace ref (the id
    # printed stays the original's), and a commit-graph is not used then.
    repo = tmp_path / "r"
    git("init", "-q", repo)
    for i in range(5):
        (repo / "f").write_text(f"{i}\n")
        git("add", "f", cwd=repo)
        git("commit", "-q", "-m", f"c{i}", cwd=repo)
    cut = git("rev-parse", "HEAD~2", cwd=repo).strip().decode()
    (repo / ".git/info/grafts").write_text(cut + "\n")
    git("replace", "--convert-graft-file", cwd=repo)
    # and one whose message and tree change
    old = git("cat-file", "commit", "HEAD~1", cwd=repo).replace(b"\nc3\n", b"\nREPLACED\n")
    new = git("hash-object", "-t", "commit", "-w", "--stdin", cwd=repo, input=old).strip()
    git("replace", "HEAD~1", new.decode(), cwd=repo)
    if graph:
        git("commit-graph", "write", "--reachable", cwd=repo)
    for args in (
        ["rev-list", "HEAD"],
        ["rev-list", "--objects", "--all"],
        ["rev-list", "--count", "HEAD"],
        ["rev-list", "--topo-order", "--parents", "HEAD"],
        ["log", "--format=%H %P %s"],
        ["merge-base", "--all", "HEAD", cut],
    ):
        assert_same(repo, *args)
    assert git("rev-list", "--count", "HEAD", cwd=repo).strip() == b"3"
