"""``reflog show`` with several reflogs and ``--all`` (t1460 runs ``git reflog --all``),
the name as given in the default line, and ``<ref>@{N}``: compared with the git on PATH."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env

CASES = [
    [],
    ["refs/heads/side"],
    ["heads/side"],
    ["side"],
    ["--all"],
    ["--all", "refs/heads/side"],
    ["HEAD", "--all"],
    ["HEAD", "refs/heads/master", "--format=%gd_%gD_%gs"],
    ["--all", "--format=%gd|%gD|%gs"],
    ["refs/tags/t1"],
    ["master@{0}"],
    ["master@{1}"],
    ["HEAD@{2}"],
    ["master@{3}"],
    ["master@{9}"],
    ["side@{1}", "master"],
    # the count limits (t1421): of one reflog, and of several walked together
    ["-2"],
    ["-n", "1"],
    ["-n1", "side"],
    ["--max-count=2", "--all"],
    ["--all", "-3"],
    ["-1", "-2"],
    ["-0"],
    ["-n", "-1"],
    ["--max-count", "1", "side"],
    # t3200: the default line's id in full; a format keeps its %h
    ["--no-abbrev-commit", "side"],
    ["--no-abbrev-commit", "--abbrev-commit", "-2"],
    ["--no-abbrev-commit", "--format=%h %H", "-1"],
]

GIT_255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """master and side move in turn (side's entries 50 s after master's), plus a tag
    and a ref without reflogs and a stash-like extra reflog."""
    path = tmp_path_factory.mktemp("reflogs") / "repo"
    git("init", "-q", "-b", "master", path)
    env = git_env()
    for i in (1, 2, 3):
        for args, when in (
            (["commit", "-q", "--allow-empty", "-m", f"m{i}"], 1000000000 + i * 100),
            (["update-ref", "-m", f"side{i}", "refs/heads/side", "HEAD"], 1000000050 + i * 100),
        ):
            env["GIT_COMMITTER_DATE"] = f"{when} +0000"
            subprocess.run(["git", *args], cwd=path, env=env, check=True)
    git("tag", "t1", cwd=path)
    git("update-ref", "refs/foo/bar", "HEAD", cwd=path)
    env["GIT_COMMITTER_DATE"] = "1000000350 +0000"  # a tie with side's newest entry
    subprocess.run(
        ["git", "update-ref", "--create-reflog", "-m", "tie", "refs/heads/tie", "HEAD"],
        cwd=path,
        env=env,
        check=True,
    )
    return path


@pytest.mark.parametrize("args", CASES, ids=" ".join)
def test_reflog_show_like_git(repo: Path, args: list[str]) -> None:
    env = git_env()
    theirs = subprocess.run(["git", "reflog", *args], cwd=repo, env=env, capture_output=True)
    mine = subprocess.run(
        [sys.executable, "-m", "gitodb", "reflog", *args],
        cwd=repo,
        env=env,
        capture_output=True,
    )
    assert (mine.returncode, mine.stdout) == (theirs.returncode, theirs.stdout)
    if theirs.returncode:
        assert mine.stderr.splitlines()[0] == theirs.stderr.splitlines()[0]


@pytest.mark.skipif(not GIT_255.exists(), reason="needs ../shared/git-2.55")
@pytest.mark.parametrize(
    "args", [["-n", "x"], ["-3x"], ["--max-count=1q"], ["-n"], ["--max-count"]]
)
def test_reflog_show_bad_count_like_git_255(repo: Path, args: list[str]) -> None:
    """Git 2.55 checks the count as a whole integer (2.39 read ``atoi``)."""
    env = git_env()
    theirs = subprocess.run([GIT_255, "reflog", *args], cwd=repo, env=env, capture_output=True)
    mine = subprocess.run(
        [sys.executable, "-m", "gitodb", "reflog", *args], cwd=repo, env=env, capture_output=True
    )
    assert (mine.returncode, mine.stdout, mine.stderr) == (
        theirs.returncode,
        theirs.stdout,
        theirs.stderr,
    )
