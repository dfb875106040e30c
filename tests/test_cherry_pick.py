"""``--cherry-pick``, ``--cherry-mark``, ``--cherry`` with ``--left-only``,
``--right-only`` and ``--left-right`` on symmetric ranges: rev-list and log
against git (patch ids from ``gitodb.history.patchid``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import commit_at, git, git_env
from oracle import assert_same

GIT_255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"


def _edit(w: Path, name: str, old: str, new: str) -> None:
    p = w / name
    p.write_text(p.read_text().replace(old, new))
    git("add", name, cwd=w)


def build(path: Path) -> Path:
    git("init", "-q", "-b", "main", path)
    w = path
    (w / "f").write_text("".join(f"{i}\n" for i in range(1, 40)))
    (w / "g").write_text("g\n")
    git("add", ".", cwd=w)
    commit_at(w, "base", 1)
    git("checkout", "-q", "-b", "side", cwd=w)
    _edit(w, "f", "3\n", "three\n")
    commit_at(w, "s1: three", 2)
    _edit(w, "g", "g\n", "gee\n")
    commit_at(w, "s2: gee", 3)
    _edit(w, "f", "30\n", "thirty\n")
    commit_at(w, "s3: thirty", 4)
    commit_at(w, "s4: empty", 5)
    git("checkout", "-q", "main", cwd=w)
    _edit(w, "g", "g\n", "gee\n")
    commit_at(w, "m1: gee (picked s2)", 6)
    _edit(w, "f", "20\n", "twenty\n")
    commit_at(w, "m2: twenty", 7)
    _edit(w, "f", "3\n", "three\n")
    commit_at(w, "m3: three (picked s1, other lines moved)", 8)
    commit_at(w, "m4: empty", 9)
    (w / "h").write_text("h\n")
    git("add", "h", cwd=w)
    commit_at(w, "m5: h", 10)
    git("checkout", "-q", "-b", "merged", "side", cwd=w)
    env = dict(git_env(), GIT_AUTHOR_DATE="1700001100 +0000", GIT_COMMITTER_DATE="1700001100 +0000")
    subprocess.run(
        ["git", "merge", "-q", "--no-ff", "-m", "merge main into side", "main~1"],
        cwd=w,
        env=env,
        check=True,
        capture_output=True,
    )
    git("checkout", "-q", "main", cwd=w)
    return path


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("cherry") / "r")


RANGES = ["main...side", "side...main", "main...merged", "main~2...side"]
OPTIONS = [
    "--cherry-pick",
    "--cherry-mark",
    "--cherry",
    "--cherry-pick --left-right",
    "--cherry-mark --left-right",
    "--cherry-pick --left-only",
    "--cherry-pick --right-only",
    "--cherry-mark --right-only",
    "--cherry-mark --boundary",
    "--cherry-pick --count",
    "--cherry-mark --count",
    "--cherry-mark --count --left-right",
    "--cherry-pick --count --left-right",
    "--cherry-mark --no-merges --parents",
    "--cherry-pick --cherry",
    "--cherry-mark --topo-order",
]


@pytest.mark.parametrize("rng", RANGES)
@pytest.mark.parametrize("options", OPTIONS)
def test_rev_list_cherry_matches_git(repo: Path, options: str, rng: str) -> None:
    assert_same(repo, "rev-list", *options.split(), rng)


@pytest.mark.parametrize("paths", [["f"], ["g"], ["h", "g"]])
@pytest.mark.parametrize("options", ["--cherry-pick", "--cherry-mark --left-right", "--cherry"])
def test_rev_list_cherry_with_paths(repo: Path, options: str, paths: list[str]) -> None:
    assert_same(repo, "rev-list", *options.split(), "main...side", "--", *paths)


@pytest.mark.parametrize(
    "options",
    [
        "--cherry-mark --oneline",
        "--cherry-mark",
        "--cherry --oneline",
        "--cherry-pick --left-right --oneline",
        "--cherry-mark --left-right --format=%s",
        "--cherry-mark --oneline --stat",
        "--cherry-pick -p",
    ],
)
def test_log_cherry_matches_git(repo: Path, options: str) -> None:
    assert_same(repo, "log", *options.split(), "main...side")


def test_not_a_symmetric_range(repo: Path) -> None:
    # one side only: nothing is compared
    assert_same(repo, "rev-list", "--cherry-mark", "main")
    assert_same(repo, "rev-list", "--cherry-pick", "side", "^main")


@pytest.mark.parametrize(
    "options",
    [
        ["--cherry-pick", "--cherry-mark"],
        ["--cherry-mark", "--cherry-pick"],
        ["--cherry", "--cherry-pick"],
        ["--left-only", "--cherry"],
        ["--left-only", "--right-only"],
    ],
)
def test_incompatible_options(repo: Path, options: list[str]) -> None:
    assert_same(repo, "rev-list", *options, "main...side")


@pytest.mark.skipif(not GIT_255.exists(), reason="needs ../shared/git-2.55")
@pytest.mark.parametrize("options", [["--right-only", "--left-only"], ["--cherry", "--left-only"]])
def test_left_only_message_of_git_255(repo: Path, options: list[str]) -> None:
    # Git 2.39 says "--left-only is incompatible with --right-only or --cherry"
    args = ["rev-list", *options, "main...side"]
    theirs = subprocess.run([str(GIT_255), *args], cwd=repo, env=git_env(), capture_output=True)
    ours = subprocess.run(
        [sys.executable, "-m", "gitodb", *args], cwd=repo, env=git_env(), capture_output=True
    )
    assert (ours.returncode, ours.stderr) == (theirs.returncode, theirs.stderr)
