"""Abbreviated ids shared by several objects (t1512): the kind a command asks for
settles them, ``core.disambiguate`` gives the default, and an ambiguity prints Git's
``error:`` line and ``hint:`` list of candidates, then the command's own error.
Compared with the git on PATH, on a repository with enough objects that 4-digit
prefixes collide across kinds."""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from helpers import git, git_env

COMMITS = 400


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    """Blobs, trees and commits; returns the repository and the objects of each
    4-digit prefix, as ``kind:hex`` strings."""
    path = tmp_path_factory.mktemp("ambiguous") / "r.git"
    git("init", "-q", "--bare", path)
    src = path.parent / "src"
    src.mkdir()
    for i in range(COMMITS):
        (src / str(i)).write_text(f"blob {i}\n")
    names = "\n".join(str(src / str(i)) for i in range(COMMITS)).encode()
    blobs = git("hash-object", "-w", "--stdin-paths", cwd=path, input=names).split()
    batch = "".join(f"100644 blob {b.decode()}\tf\n\n" for b in blobs).encode()
    trees = git("mktree", "--batch", cwd=path, input=batch).split()
    env = git_env()
    env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = "1112911993 -0700"
    commits = []
    for i, tree in enumerate(trees[:COMMITS]):
        commits.append(
            subprocess.run(
                ["git", "commit-tree", tree.decode(), "-m", f"c{i}"],
                cwd=path,
                env=env,
                capture_output=True,
                check=True,
            ).stdout.split()[0]
        )
    git("tag", "-a", "-m", "t", "v1", commits[0].decode(), cwd=path)
    by_prefix: dict[str, list[str]] = defaultdict(list)
    out = git("cat-file", "--batch-check", "--batch-all-objects", cwd=path)
    for line in out.decode().splitlines():
        oid, kind, _size = line.split()
        by_prefix[oid[:4]].append(f"{kind}:{oid}")
    return path, by_prefix


def _shared(by_prefix: dict[str, list[str]], *kinds: str) -> str:
    """A prefix shared by exactly one object of ``kinds[0]`` and at least one of each
    other kind."""
    for prefix, objects in sorted(by_prefix.items()):
        got = [o.split(":")[0] for o in objects]
        if got.count(kinds[0]) == 1 and all(k in got for k in kinds[1:]):
            return prefix
    pytest.skip(f"no prefix shared by {kinds} in this repository")


def _both(path: Path, *args: str, stdin: bytes = b"", config: tuple[str, ...] = ()):
    env = git_env()
    env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = "1112911993 -0700"
    runs = []
    for cmd in (["git"], [sys.executable, "-m", "gitodb"]):
        p = subprocess.run(
            [*cmd, *config, *args], cwd=path, env=env, input=stdin, capture_output=True
        )
        runs.append((p.returncode, p.stdout, p.stderr))
    return runs


def test_commit_tree_takes_the_tree_a_prefix_names(repo):
    path, by_prefix = repo
    prefix = _shared(by_prefix, "tree", "blob")
    theirs, mine = _both(path, "commit-tree", prefix, "-m", "x")
    assert mine == theirs and theirs[0] == 0


def test_commit_tree_parent_takes_the_commit(repo):
    path, by_prefix = repo
    prefix = _shared(by_prefix, "commit", "blob")
    tree = git("mktree", cwd=path, input=b"").decode().strip()
    theirs, mine = _both(path, "commit-tree", tree, "-p", prefix, "-m", "x")
    assert mine == theirs and theirs[0] == 0


@pytest.mark.parametrize(
    "args",
    [
        ["cat-file", "-t", "{p}"],
        ["cat-file", "-p", "{p}:f"],
        ["ls-tree", "{p}"],
        ["cat-file", "-t", "{p}^{{tree}}"],
        ["cat-file", "-t", "{p}~0"],
        ["commit-tree", "{p}", "-m", "x"],
    ],
    ids=lambda a: " ".join(a),
)
def test_an_ambiguity_lists_the_candidates_like_git(repo, args):
    path, by_prefix = repo
    shared = [p for p, objs in sorted(by_prefix.items()) if len(objs) >= 2]
    assert shared
    for prefix in shared:
        theirs, mine = _both(path, *(a.format(p=prefix) for a in args))
        assert mine == theirs
    if args[:2] == ["cat-file", "-t"] and "{p}" == args[2]:
        assert theirs[0] == 128 and b"hint: The candidates are:" in theirs[2]


def test_batch_check_prints_the_hints(repo):
    path, by_prefix = repo
    prefix = next(p for p, objs in sorted(by_prefix.items()) if len(objs) >= 2)
    theirs, mine = _both(path, "cat-file", "--batch-check", stdin=f"{prefix}\n".encode())
    assert mine == theirs and theirs[1] == f"{prefix} ambiguous\n".encode()


@pytest.mark.parametrize(
    "hint, kinds",
    [
        ("tree", ("tree", "blob")),
        ("blob", ("blob", "tree")),
        ("commit", ("commit", "blob")),
        ("committish", ("commit", "tree")),
        ("treeish", ("tree", "blob")),
    ],
)
def test_core_disambiguate(repo, hint, kinds):
    path, by_prefix = repo
    prefix = _shared(by_prefix, *kinds)
    theirs, mine = _both(path, "cat-file", "-t", prefix, config=("-c", f"core.disambiguate={hint}"))
    assert mine == theirs


def test_a_bad_revision_before_a_path_is_named(repo):
    path, _ = repo
    for name in ("nosuch:f", "nosuch~1:f", "nosuch^{tree}:f"):
        theirs, mine = _both(path, "cat-file", "-p", name)
        assert mine == theirs and theirs[2].startswith(b"fatal: invalid object name")
