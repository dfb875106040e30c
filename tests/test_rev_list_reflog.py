"""``rev-list -g``/``--walk-reflogs`` and ``--reflog`` (rev-list and log) against
git (``gitodb.history.reflogwalk``): the entries' commits newest entry first,
several reflogs interleaved by entry time, dates and paths filtering entries."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import commit_at, git, git_env
from oracle import assert_same


def _git_at(w: Path, n: int, *args: str) -> None:
    """A git command whose reflog entry is dated like ``commit_at(n)``."""
    date = f"{1700000000 + n * 100} +0000"
    env = dict(git_env(), GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    subprocess.run(["git", *args], cwd=w, env=env, check=True, capture_output=True)


def _commit_file(w: Path, name: str, n: int) -> None:
    (w / name).write_text(name + "\n")
    git("add", name, cwd=w)
    commit_at(w, name, n)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """t1414's history: one, two on main; side from one with three and an evil
    merge of main that also changes one.t; a tag; HEAD's reflog has a checkout."""
    w = tmp_path_factory.mktemp("reflogwalk")
    git("init", "-q", "-b", "main", w)
    git("config", "core.logAllRefUpdates", "true", cwd=w)
    _commit_file(w, "one.t", 1)
    _commit_file(w, "two.t", 2)
    _git_at(w, 3, "checkout", "-q", "-b", "side", "HEAD^")
    _commit_file(w, "three.t", 4)
    _git_at(w, 5, "merge", "-q", "--no-commit", "main")
    (w / "one.t").write_text("one\nevil\n")
    git("add", "one.t", cwd=w)
    _git_at(w, 6, "commit", "-q", "--no-edit")
    _git_at(w, 7, "tag", "-a", "-m", "t", "vt", "HEAD")
    return w


@pytest.mark.parametrize(
    "args",
    [
        ["-g", "HEAD"],
        ["--walk-reflogs", "HEAD", "main", "side"],
        ["-g", "--parents", "-1", "HEAD"],  # t1414 7: true parents
        ["-g", "--no-merges", "HEAD"],
        ["-g", "--max-parents=0", "HEAD"],
        ["-g", "-n2", "--skip=1", "HEAD"],
        ["-g", "--count", "HEAD"],
        ["-g", "--timestamp", "HEAD"],
        ["-g", "--left-right", "--first-parent", "HEAD"],
        ["-g", "HEAD@{1}"],
        ["-g", "@{1}"],
        ["-g", "HEAD@{9}"],
        ["-g", "HEAD@{2023-11-14 22:19:10 +0000}"],
        ["-g", "HEAD@{1979-01-01}", "HEAD"],
        ["-g", "--since=1700000250", "--until=1700000450", "HEAD"],  # entry dates
        ["-g", "--all"],
        ["-g", "--branches"],
        ["-g", "HEAD", "--", "one.t"],
        ["-g", "--parents", "HEAD", "--", "one.t"],  # parents rewritten
        ["-g", "--full-history", "HEAD", "--", "one.t"],
        ["-g", "--objects", "vt", "HEAD"],
        ["-g", "--objects", "--in-commit-order", "HEAD"],
        ["-g", "--header", "-1", "HEAD"],
        ["-g", "--boundary", "HEAD"],
        ["-g", "HEAD~1"],  # no reflog: nothing
        ["-g", "nosuch"],
        ["-g", "^HEAD~1", "HEAD"],
        ["-g", "main..side"],
        ["-g", "--not", "HEAD"],
        ["-g", "--reverse", "HEAD"],
        ["-g", "--topo-order", "HEAD"],
        ["-g", "--children", "HEAD"],
        ["-g", "one.t"],
        ["--reflog"],
        ["--reflog", "--objects"],
        ["-g", "--reflog"],
    ],
)
def test_rev_list_walk_reflogs(repo: Path, args: list[str]) -> None:
    assert_same(repo, "rev-list", *args)


def test_rev_list_file_name_alone_is_usage(repo: Path) -> None:
    """A work-tree file and no revision: Git's usage, exit 129 (was: an empty walk)."""
    assert_same(repo, "rev-list", "one.t")


@pytest.mark.parametrize(
    "args",
    [
        ["--reflog", "--format=%H %s"],
        ["--reflog", "--oneline", "--all"],
        ["--reflog", "--no-merges", "--format=%h"],
    ],
)
def test_log_reflog(repo: Path, args: list[str]) -> None:
    assert_same(repo, "log", *args)


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--no-merges"],  # t1414 4-6, 8-10: the walk's options filter the entries
        ["--", "one.t"],
        ["-1"],
        ["HEAD", "main", "side"],  # interleaved by entry time
        ["--date=unix", "HEAD", "main", "side"],  # %gd names entries by date
        ["--since=1700000250", "--until=1700000450"],
        ["HEAD@{1979-01-01}", "HEAD"],
        ["--all"],
    ],
)
def test_log_walk_reflogs_options(repo: Path, args: list[str]) -> None:
    assert_same(repo, "log", "-g", "--format=%gd %gs", *args)


def test_reflog_pruned_commit_warns(tmp_path: Path) -> None:
    """``--reflog`` leaves out an id that is gone, with Git's warning once a reflog."""
    w = tmp_path / "r"
    git("init", "-q", "-b", "main", w)
    commit_at(w, "a", 1)
    commit_at(w, "b", 2)
    gone = git("rev-parse", "HEAD", cwd=w).decode().strip()
    git("reset", "-q", "--hard", "HEAD^", cwd=w)
    obj = w / ".git" / "objects" / gone[:2] / gone[2:]
    obj.unlink()
    assert_same(w, "rev-list", "--reflog")


GIT_255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"


@pytest.mark.skipif(not GIT_255.exists(), reason="needs ../shared/git-2.55")
@pytest.mark.parametrize(
    "args",
    [
        ["--maximal-only", "master", "t"],
        ["--maximal-only", "--first-parent", "master", "t"],  # t6600 50
        ["--first-parent", "--exclude-first-parent-only", "master", "^t"],
        ["--exclude-first-parent-only", "t", "^master"],
        [
            "--maximal-only",
            "--first-parent",
            "--exclude-first-parent-only",
            "master",
            "t",
            "^HEAD~1",
        ],
    ],
)
def test_maximal_only_and_exclude_first_parent_only(tmp_path: Path, args: list[str]) -> None:
    """Git 2.55's ``--maximal-only`` (by first parents with ``--first-parent``) and
    ``--exclude-first-parent-only`` (exclusion spreads down first parents only)."""
    w = tmp_path / "r"
    git("init", "-q", "-b", "master", w)
    commit_at(w, "a", 1)
    commit_at(w, "b", 2)
    git("checkout", "-q", "-b", "t", "HEAD^", cwd=w)
    commit_at(w, "x", 3)
    commit_at(w, "y", 4)
    git("checkout", "-q", "master", cwd=w)
    _git_at(w, 5, "merge", "-q", "--no-ff", "-m", "m", "t")
    commit_at(w, "z", 6)
    theirs = subprocess.run(
        [str(GIT_255), "rev-list", *args], cwd=w, env=git_env(), capture_output=True
    )
    ours = subprocess.run(
        [sys.executable, "-m", "gitodb", "rev-list", *args],
        cwd=w,
        env=git_env(),
        capture_output=True,
    )
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        theirs.returncode,
        theirs.stdout,
        theirs.stderr,
    )
