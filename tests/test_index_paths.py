"""``:<path>`` and ``:<n>:<path>``: index entries (versions 2, 3, 4), against Git."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gitodb.objects.format import SHA1
from gitodb.repo.index import parse_index
from helpers import git, git_env


def ours(args: list[str], cwd: Path, stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    p = subprocess.run(
        [sys.executable, "-m", "gitodb", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=git_env(),
        timeout=300,
        check=False,
    )
    return p.returncode, p.stdout, p.stderr


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    r = tmp_path_factory.mktemp("idx") / "r"
    git("init", "-q", "-b", "main", r)
    (r / "dir/sub").mkdir(parents=True)
    for name in ("a", "ab", "abc", "dir/x", "dir/sub/y", "dir/sub/yy", "white space"):
        (r / name).write_text(f"{name}\n")
    (r / "conflict").write_text("base\n")
    git("add", ".", cwd=r)
    git("commit", "-q", "-m", "base", cwd=r)
    git("checkout", "-q", "-b", "side", cwd=r)
    (r / "conflict").write_text("side\n")
    git("commit", "-q", "-am", "side", cwd=r)
    git("checkout", "-q", "main", cwd=r)
    (r / "conflict").write_text("main\n")
    git("commit", "-q", "-am", "main", cwd=r)
    git("merge", "-q", "side", cwd=r, check=False)  # stages 1, 2, 3 of "conflict"
    (r / "new").write_text("new\n")
    git("add", "-N", "new", cwd=r)  # intent-to-add: extended flags
    blob = git("rev-parse", ":a", cwd=r).decode().strip()
    # longer than 0xFFF: its length is not in the flags, only the NUL ends it
    git("update-index", "--add", "--cacheinfo", f"100644,{blob},{LONG}", cwd=r)
    return r


LONG = "/".join(["c" * 200] * 22)


NAMES = [
    "a",
    "ab",
    "abc",
    "dir/x",
    "dir/sub/y",
    "dir/sub/yy",
    "white space",
    LONG,
    "conflict",
    "1:conflict",
    "2:conflict",
    "3:conflict",
    "new",
    "nope",
    "0:a",
    "1:a",
]


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_index_entries_like_git(repo, version):
    git("update-index", "--index-version", version, cwd=repo)
    request = "".join(f":{n}\n" for n in NAMES).encode()
    want = git("cat-file", "--batch-check", cwd=repo, input=request)
    assert ours(["cat-file", "--batch-check"], repo, request) == (0, want, b"")
    for args in (["-p", ":dir/sub/y"], ["-t", ":3:conflict"]):
        assert ours(["cat-file", *args], repo)[1] == git("cat-file", *args, cwd=repo)
    entries = parse_index((repo / ".git/index").read_bytes(), SHA1)
    assert len(entries) == len(git("ls-files", "-s", cwd=repo).splitlines())


def test_index_path_errors_like_git(repo):
    assert ours(["cat-file", "-p", ":nope"], repo) == (
        128,
        b"",
        b"fatal: path 'nope' does not exist (neither on disk nor in the index)\n",
    )
    assert ours(["cat-file", "-p", ":1:a"], repo)[2].startswith(
        b"fatal: path 'a' is in the index, but not at stage 1\n"
    )


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> Path:
    r = tmp_path_factory.mktemp("rl") / "r"
    git("init", "-q", "-b", "main", r)
    for i in (1, 2, 3):
        (r / "f").write_text(f"{i}\n")
        git("add", "f", cwd=r)
        git("commit", "-q", "-m", f"commit {i} testing:{i}", cwd=r)
    git("checkout", "-q", "-b", "foo@", cwd=r)
    (r / "f").write_text("4\n")
    git("commit", "-q", "-am", "four", cwd=r)
    for b in ("main", "foo@", "main"):
        git("checkout", "-q", b, cwd=r)
    git("config", "branch.main.remote", ".", cwd=r)
    git("config", "branch.main.merge", "refs/heads/foo@", cwd=r)
    return r


REVS = [
    "foo@@{0}:f",
    "foo@@{1}",
    "main@{2}",
    "@{1}",
    "@{-1}",
    "@{-2}",
    "HEAD@{3}",
    "main^{/testing:2}",
    "main^{/commit 1}:f",
    "main^{/!-commit}",
    "@{u}",
    "main@{upstream}",
    "main^{/nomatch}",
    "@{-9}",
    "HEAD@{1}~1",
]


def test_reflog_upstream_and_message_search_like_git(history):
    # t1006 'object reference with at-sign' / 'via commit text search'
    request = "".join(f"{n}\n" for n in REVS).encode()
    want = git("cat-file", "--batch-check", cwd=history, input=request)
    assert ours(["cat-file", "--batch-check"], history, request) == (0, want, b"")
    assert ours(["cat-file", "-t", "main@{9}"], history) == (
        128,
        b"",
        b"fatal: log for 'main' only has 3 entries\n",
    )
