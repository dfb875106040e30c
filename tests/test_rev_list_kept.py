"""``rev-list --no-kept-objects[=in-core|on-disk]`` (Git's t6114-keep-packs),
compared with the ``git`` on PATH: commits in a pack with a ``.keep`` file, and
the trees and blobs the object walk starts from there, are left out."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers import commit_at, git, git_env, run_cli


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """t6114's setup: ``loose`` stays loose, ``packed`` in a pack, ``kept`` in a
    kept pack; a tag on a tree and one on a blob of the kept pack, and a loose
    commit ``again`` with the kept commit's tree."""
    path = tmp_path_factory.mktemp("kept")
    git("init", "-q", "-b", "main", path)
    for n, name in enumerate(("loose", "packed", "kept")):
        (path / f"{name}.t").write_text(name + "\n")
        git("add", f"{name}.t", cwd=path)
        commit_at(path, name, n)
        git("tag", name, cwd=path)
    git("tag", "kept-tree", "kept^{tree}", cwd=path)
    git("tag", "-a", "-m", "blob", "kept-blob", "kept:kept.t", cwd=path)
    pack = path / ".git/objects/pack/pack"
    kept = git(
        "pack-objects", "--revs", pack, cwd=path, input=b"refs/tags/kept\n^refs/tags/packed\n"
    )
    git("pack-objects", "--revs", pack, cwd=path, input=b"refs/tags/packed\n^refs/tags/loose\n")
    (path / f".git/objects/pack/pack-{kept.decode().strip()}.keep").write_bytes(b"")
    again = git("commit-tree", "-m", "again", "-p", "packed", "kept^{tree}", cwd=path)
    git("tag", "again", again.decode().strip(), cwd=path)
    return path


@pytest.mark.parametrize(
    "args",
    [
        ("--no-kept-objects", "--all"),
        ("--objects", "--no-kept-objects", "--all"),
        ("--objects", "--no-object-names", "--no-kept-objects=on-disk", "--all"),
        ("--objects", "--no-kept-objects=in-core", "--all"),
        ("--objects", "--no-kept-objects=bogus", "kept"),
        ("--objects", "--no-kept-objects", "kept-tree", "kept-blob"),
        ("--objects", "--no-kept-objects", "again", "^packed"),
        ("--objects", "--no-kept-objects", "--in-commit-order", "--all"),
        ("--objects", "--no-kept-objects", "--filter=blob:none", "--all"),
        ("--count", "--no-kept-objects", "kept"),
        ("--no-kept-objects", "--use-bitmap-index", "kept"),
    ],
)
def test_no_kept_objects_like_git(
    repo: Path, capfdbinary: pytest.CaptureFixture[bytes], args: tuple[str, ...]
) -> None:
    theirs = subprocess.run(
        ["git", "rev-list", *args], cwd=repo, capture_output=True, env=git_env(), check=False
    )
    capfdbinary.readouterr()
    status = run_cli(repo, "rev-list", *args)
    out, err = capfdbinary.readouterr()
    assert (status, out, err) == (theirs.returncode, theirs.stdout, theirs.stderr)


def test_kept_pack_leaves_objects_out(
    repo: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """The objects left out are the kept pack's (t6114's first test)."""
    capfdbinary.readouterr()
    run_cli(repo, "rev-list", "--objects", "--no-object-names", "main")
    everything = set(capfdbinary.readouterr()[0].split())
    run_cli(repo, "rev-list", "--objects", "--no-object-names", "--no-kept-objects", "main")
    without = set(capfdbinary.readouterr()[0].split())
    kept = git("rev-list", "--objects", "--no-object-names", "kept", "^packed", cwd=repo).split()
    assert kept and everything - without == set(kept)


def test_log_no_kept_objects(repo: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    theirs = git("log", "--oneline", "--no-kept-objects", "--all", cwd=repo)
    capfdbinary.readouterr()
    assert run_cli(repo, "log", "--oneline", "--no-kept-objects", "--all") == 0
    assert capfdbinary.readouterr()[0] == theirs
