"""``gitodb log`` with diffs (``-p``, ``--stat``, ``--raw``, names, ``-m``, ...)
against ``git log``, on a history with merges, renames, binary files, mode and
type changes, a root commit, an empty commit and a file without a last newline."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from helpers import commit_at, git, git_env
from oracle import assert_same, both

GIT_255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"


def build(path: Path) -> Path:
    git("init", "-q", "-b", "main", path)
    w = path
    (w / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 40)))
    (w / "sub").mkdir()
    (w / "sub" / "b.c").write_text("int main(void)\n{\n\treturn 0;\n}\n")
    (w / "nonl").write_bytes(b"one\ntwo")
    git("add", ".", cwd=w)
    commit_at(w, "root", 1)
    (w / "a.txt").write_text(
        "".join(f"line {i}\n" if i % 9 else f"changed {i}\n" for i in range(1, 40))
    )
    (w / "bin.dat").write_bytes(b"\0\1\2binary")
    os.chmod(w / "sub" / "b.c", 0o755)
    git("add", ".", cwd=w)
    commit_at(w, "change a, add binary, chmod", 2)
    git("mv", "sub/b.c", "sub/renamed.c", cwd=w)
    (w / "nonl").write_bytes(b"one\ntwo\nthree")
    git("add", ".", cwd=w)
    commit_at(w, "rename b.c", 3)
    commit_at(w, "empty", 4)
    git("checkout", "-q", "-b", "side", "HEAD~2", cwd=w)
    (w / "side file").write_text("with space\n")
    (w / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 45)))
    git("add", ".", cwd=w)
    commit_at(w, "side work", 5)
    git("checkout", "-q", "main", cwd=w)
    env = dict(git_env(), GIT_AUTHOR_DATE="1700000600 +0000", GIT_COMMITTER_DATE="1700000600 +0000")
    subprocess.run(
        ["git", "merge", "-q", "--no-ff", "-m", "merge side", "side"],
        cwd=w,
        env=env,
        check=True,
        capture_output=True,
    )
    os.remove(w / "bin.dat")
    os.symlink("a.txt", w / "link")
    git("add", "-A", ".", cwd=w)
    commit_at(w, "remove binary, add link", 7)
    return path


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("logdiff") / "r")


CASES = [
    "-p",
    "-u",
    "--patch",
    "--stat",
    "--numstat",
    "--shortstat",
    "--name-only",
    "--name-status",
    "--raw",
    "--summary",
    "--compact-summary",
    "-M -p",
    "--no-renames -p",
    "--patch-with-stat",
    "--patch-with-raw",
    "-p --stat --summary",
    "-p -s",
    "-s -p",
    "--no-patch",
    "-U1 -p",
    "--unified=0",
    "-p --root",
    "-m -p",
    "-m --stat --oneline",
    "-m --name-status",
    "--first-parent -p",
    "--first-parent -m --raw",
    "--diff-merges=first-parent --stat",
    "--diff-merges=separate --oneline --name-only",
    "--diff-merges=off -p",
    "--oneline -p",
    "--oneline --stat",
    "--format=%s -p",
    "--format=%h%n%b --stat",
    "--pretty=format:%s --stat",
    "--format= -p",
    "--pretty=fuller --raw",
    "--pretty=raw -p",
    "--abbrev=12 --raw --oneline",
    "--no-abbrev --raw",
    "--full-index -p",
    "--stat=50,10",
    "--stat-width=40 --oneline",
    "-R -p",
    "--src-prefix=x/ --dst-prefix=y/ -p",
    "--no-prefix -p",
    "-p -- a.txt",
    "--stat -- sub",
    "-p --full-history -- a.txt",
    "-p --reverse",
    "-p -n 2 --skip 1",
    "--left-right --oneline -p main...side",
    "--decorate --oneline --stat",
    "--parents --oneline -p",
    # the pickaxe: only commits whose diff keeps a change; -n counts those shown
    "-Sline --oneline",
    "-Sline",
    "-Snowhere --oneline",
    "-Sline -p",
    "-Sline --stat --format=%s",
    "-Sline -n 2 --oneline",
    "-Sline -n 0",
    "-Swith --pickaxe-all --name-status --oneline",
    "--pickaxe-regex -Sli.e.4 --oneline",
    "-S return --oneline",
    "-Sline --oneline -- sub",
    "-m -Sline --oneline",
]


@pytest.mark.parametrize("args", CASES)
def test_log_diff_matches_git(repo: Path, args: str) -> None:
    assert_same(repo, "log", *args.split())


@pytest.mark.parametrize(
    "config",
    ["log.showRoot=false", "diff.renames=false", "diff.context=1", "diff.noprefix=true"],
)
def test_log_diff_config(repo: Path, config: str) -> None:
    assert_same(repo, "-c", config, "log", "-p", "--stat")


@pytest.mark.parametrize("option", ["-c", "--cc", "--diff-merges=cc", "--combined-all-paths"])
def test_combined_diffs_are_refused(repo: Path, option: str) -> None:
    _theirs, (status, out, err) = both(repo, "log", option, "-p")
    assert status == 129 and out == b""
    assert b"combined" in err


def test_name_only_after_no_patch_is_an_error(repo: Path) -> None:
    assert_same(repo, "log", "-s", "--name-only")
    assert_same(repo, "log", "-q", "--name-status")


@pytest.mark.skipif(not GIT_255.exists(), reason="needs ../shared/git-2.55")
@pytest.mark.parametrize(
    "args",
    # where Git 2.55 differs from 2.39: -s drops what came before it, -q is an -s
    # that comes first
    ["-p --no-patch --stat", "--name-only -s", "-q --raw", "--raw -q", "-q --stat"],
)
def test_log_diff_matches_git_255(repo: Path, args: str) -> None:
    import sys

    env = git_env()
    theirs = subprocess.run(
        [str(GIT_255), "log", *args.split()], cwd=repo, env=env, capture_output=True
    )
    ours = subprocess.run(
        [sys.executable, "-m", "gitodb", "log", *args.split()],
        cwd=repo,
        env=env,
        capture_output=True,
    )
    assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout)


@pytest.mark.parametrize("option", ["-p", "--stat", "--name-only"])
def test_graph_beside_diffs_is_refused(repo: Path, option: str) -> None:
    # the graph is not drawn beside diff output: refused, never drawn wrong
    from helpers import run_gitodb

    got = run_gitodb("log", "--graph", option, cwd=repo)
    assert (got.returncode, got.stdout) == (129, b"")
    assert got.stderr == b"fatal: gitodb log does not draw --graph beside diffs\n"
