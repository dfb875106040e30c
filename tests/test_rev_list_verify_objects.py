"""``rev-list --verify-objects``: ``--objects`` with each listed blob's hash checked;
a blob stored under another id gets Git's ``error: hash mismatch <id>`` and the
listing goes on (Git's t1450-fsck 36 and 37)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import git, run_gitodb
from oracle import assert_same
from oracle import run as oracle_run


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
    proc = run_gitodb("rev-list", "--verify-objects", "refs/heads/bogus", cwd=repo)
    assert proc.returncode == 0
    assert proc.stderr.startswith(b"error: hash mismatch ") and proc.stderr.count(b"\n") == 1
    assert len(proc.stdout.splitlines()) == 4  # commit, tree and two blobs, all listed


def _two_commits(path: Path) -> tuple[str, str]:
    git("init", "-q", "-b", "main", path)
    for name in ("one", "two"):
        (path / name).write_text(f"{name}\n")
        git("add", name, cwd=path)
        git("commit", "-q", "-m", name, cwd=path)
    head = git("rev-parse", "HEAD", cwd=path).decode().strip()
    parent = git("rev-parse", "HEAD^", cwd=path).decode().strip()
    return head, parent


def _loose(repo: Path, oid: str) -> Path:
    return repo / ".git" / "objects" / oid[:2] / oid[2:]


def test_swapped_commits(tmp_path: Path) -> None:
    """A tip whose stored content is another commit: Git's hash mismatch, then
    ``fatal: bad object HEAD`` (t1450 38); without the option nothing is noticed."""
    repo = tmp_path / "r"
    head, parent = _two_commits(repo)
    a, b = _loose(repo, head), _loose(repo, parent)
    tmp = tmp_path / "tmp"
    os.rename(a, tmp)
    os.rename(b, a)
    os.rename(tmp, b)
    assert_same(repo, "rev-list", "--verify-objects", "HEAD")
    assert_same(repo, "rev-list", "--objects", "HEAD")


@pytest.mark.parametrize("which", ["HEAD", "HEAD^"])
def test_commit_graph_is_not_trusted(tmp_path: Path, which: str) -> None:
    """A commit the commit-graph holds but whose object is garbage: with
    ``--verify-objects`` the commit is read from the store and the run fails
    (t1450 40 and 41); without it the graph answers."""
    repo = tmp_path / "r"
    _two_commits(repo)
    git("commit-graph", "write", "--reachable", cwd=repo)
    path = _loose(repo, git("rev-parse", which, cwd=repo).decode().strip())
    os.chmod(path, 0o644)
    path.write_bytes(b"garbage\n")
    run = run_gitodb("rev-list", "--verify-objects", "HEAD", cwd=repo)
    their_status = oracle_run(["git", "rev-list", "--verify-objects", "HEAD"], repo)[0]
    assert their_status != 0 and run.returncode == 128
    assert run.stderr.startswith(b"error: ") or run.stderr.startswith(b"fatal: ")
    assert run.stderr.count(b"fatal: ") == 1 and b"Traceback" not in run.stderr
