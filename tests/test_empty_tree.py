"""The empty tree exists whether it is stored or not, as Git reads it (its one
"cached object"): cat-file in every mode, walks over a commit of it, and
index-pack's connectivity check all take it as present, in both formats."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gitodb.objects.format import SHA1, SHA256
from gitodb.repo import Repository
from helpers import git, git_env, run_cli

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("fmt", [SHA1, SHA256])
def test_the_constant_is_the_hash_of_an_empty_tree(tmp_path: Path, fmt: object) -> None:
    git("init", "-q", f"--object-format={fmt.name}", tmp_path)  # type: ignore[attr-defined]
    want = git("hash-object", "-t", "tree", "/dev/null", cwd=tmp_path).decode().strip()
    assert fmt.empty_tree.hex() == want  # type: ignore[attr-defined]


@pytest.fixture(params=["sha1", "sha256"])
def empty_repo(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    git("init", "-q", f"--object-format={request.param}", repo)
    return repo


def _both(repo: Path, args: list[str], stdin: bytes, capsysbinary: pytest.CaptureFixture[bytes]):  # type: ignore[no-untyped-def]
    want = subprocess.run(["git", *args], cwd=repo, input=stdin, capture_output=True, env=git_env())
    import io
    import sys

    real = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        status = run_cli(repo, *args)
    finally:
        sys.stdin = real
    got = capsysbinary.readouterr()
    return (want.returncode, want.stdout), (status, got.out)


def test_cat_file_reads_the_unstored_empty_tree(
    empty_repo: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    tree = Repository(empty_repo).object_format.empty_tree.hex()
    assert not list((empty_repo / ".git/objects").glob(f"{tree[:2]}/*"))
    for args in (["-t", tree], ["-s", tree], ["-p", tree], ["-e", tree], ["tree", tree]):
        want, got = _both(empty_repo, ["cat-file", *args], b"", capsysbinary)
        assert got == want, args
    fmt = "%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase)"
    for args in (["--batch"], ["--batch-check"], [f"--batch-check={fmt}"]):
        want, got = _both(empty_repo, ["cat-file", *args], tree.encode() + b"\n", capsysbinary)
        assert got == want, args
    want, got = _both(
        empty_repo, ["cat-file", "--batch-all-objects", "--batch-check"], b"", capsysbinary
    )
    assert got == want == (0, b"")  # present, but not stored: not listed
    repo = Repository(empty_repo)
    assert repo.odb.contains(tree)
    assert repo.odb.read(tree) == ("tree", b"")
    assert repo.odb.info(tree).disk_size == 0


def test_a_commit_of_the_empty_tree(
    empty_repo: Path, capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path
) -> None:
    tree = Repository(empty_repo).object_format.empty_tree.hex()
    commit = git("commit-tree", tree, "-m", "empty", cwd=empty_repo).decode().strip()
    git("update-ref", "refs/heads/main", commit, cwd=empty_repo)
    for args in (["rev-list", "--objects", "--all"], ["ls-tree", "-r", "main"]):
        want, got = _both(empty_repo, args, b"", capsysbinary)
        assert got == want, args
    # index-pack --strict: a pack of the commit alone is complete
    pack = git("pack-objects", "-q", "--stdout", cwd=empty_repo, input=commit.encode() + b"\n")
    fmt = Repository(empty_repo).object_format.name
    target = tmp_path / "target.git"
    git("init", "-q", "--bare", f"--object-format={fmt}", target)
    want, got = _both(target, ["index-pack", "--strict", "--stdin"], pack, capsysbinary)
    assert got[0] == want[0] == 0
