"""``rev-list --verify-objects``: ``--objects`` with each listed blob's hash checked;
a blob stored under another id gets Git's ``error: hash mismatch <id>`` and the
listing goes on (Git's t1450-fsck 36 and 37)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env
from oracle import assert_same


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp(request.param) / "r"
    git("init", "-q", "-b", "main", f"--object-format={request.param}", r)
    (r / "a").write_text("a\n")
    git("add", "a", cwd=r)
    git("commit", "-q", "-m", "one", cwd=r)
    git("tag", "-a", "-m", "t", "v1", cwd=r)
    # A blob moved to the loose path of another id: read back, it hashes to its own.
    sha = git("hash-object", "-w", "--stdin", cwd=r, input=b"blob\n").decode().strip()
    bad = sha[:2] + "f" * (len(sha) - 2)
    objects = r / ".git" / "objects"
    os.rename(objects / sha[:2] / sha[2:], objects / bad[:2] / bad[2:])
    git("update-index", "--add", "--cacheinfo", f"100644,{bad},foo", cwd=r)
    tree = git("write-tree", cwd=r).decode().strip()
    commit = git("commit-tree", tree, cwd=r, input=b"bogus\n").decode().strip()
    git("update-ref", "refs/heads/bogus", commit, cwd=r)
    git("read-tree", "--reset", "main", cwd=r)
    return r


@pytest.mark.parametrize(
    "args",
    [
        ["--verify-objects", "main"],
        ["--verify-objects", "--all"],
        ["--verify-objects", "refs/heads/bogus"],
        ["--verify-objects", "--no-object-names", "refs/heads/bogus"],
        ["--verify-objects", "--in-commit-order", "refs/heads/bogus"],
        ["--verify-objects", "--count", "--all"],
        ["--verify-objects", "main..bogus"],
    ],
    ids=" ".join,
)
def test_like_git(repo: Path, args: list[str]) -> None:
    assert_same(repo, "rev-list", *args)


def test_the_mismatch_is_reported(repo: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gitodb", "rev-list", "--verify-objects", "refs/heads/bogus"],
        cwd=repo,
        env=git_env(),
        capture_output=True,
    )
    assert proc.returncode == 0
    assert proc.stderr.startswith(b"error: hash mismatch ") and proc.stderr.count(b"\n") == 1
    assert len(proc.stdout.splitlines()) == 4  # commit, tree and two blobs, all listed
