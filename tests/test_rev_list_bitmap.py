"""``rev-list --use-bitmap-index`` and ``--test-bitmap`` against git, on pack and MIDX
bitmaps: the same counts and the same listings (ids only, bitmap order), the
plain walk where a bitmap cannot answer, and Git's messages."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers import git, git_env, run_cli

pytestmark = pytest.mark.e2e


def _commit(repo: Path, name: str, text: str) -> None:
    (repo / name).write_text(text)
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", f"{name} {text}", cwd=repo)


@pytest.fixture(scope="module", params=["pack", "midx"])
def repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp(request.param) / "repo"
    git("init", "-q", "-b", "main", repo)
    for i in range(20):
        _commit(repo, f"f{i % 4}.t", f"{i}\n")
    git("checkout", "-q", "-b", "side", "HEAD~8", cwd=repo)
    for i in range(3):
        _commit(repo, "s.t", f"s{i}\n")
    git("checkout", "-q", "main", cwd=repo)
    git("merge", "-q", "--no-edit", "-m", "merge", "side", cwd=repo)
    blob = git("hash-object", "-w", "--stdin", cwd=repo, input=b"tagged\n").decode().strip()
    git("tag", "tagged-blob", blob, cwd=repo)
    git("tag", "-a", "-m", "v", "v1", "HEAD~2", cwd=repo)
    if request.param == "pack":
        git("repack", "-adbq", cwd=repo)
    else:
        git("repack", "-adq", cwd=repo)
        git("multi-pack-index", "write", "--bitmap", cwd=repo)
    _commit(repo, "after.t", "outside the bitmap\n")  # loose: the extended index
    return repo


def _ours(repo: Path, *args: str, capsys: pytest.CaptureFixture[bytes]) -> tuple[int, bytes]:
    status = run_cli(repo, "rev-list", *args)
    return status, capsys.readouterr().out


@pytest.mark.parametrize(
    "args",
    [
        ["--count", "main"],
        ["--count", "HEAD~5..HEAD"],
        ["--count", "-n", "3", "main"],
        ["--count", "side...main"],
        ["--count", "--objects", "main"],
        ["--count", "--objects", "v1", "^side"],
        ["--count", "main", "--", "f1.t"],
        ["main"],
        ["--objects", "main"],
        ["--objects", "main", "tagged-blob"],
        ["--objects", "HEAD~3..HEAD"],
        ["--objects", "-n", "2", "main"],
        ["--all", "--objects", "--not", "side"],
        ["--topo-order", "--objects", "main"],
        ["--parents", "main"],
    ],
)
def test_bitmap_answers_as_git(
    repo: Path, args: list[str], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    want = git("rev-list", "--use-bitmap-index", *args, cwd=repo)
    status, got = _ours(repo, "--use-bitmap-index", *args, capsys=capsysbinary)
    assert status == 0
    assert got == want


@pytest.mark.parametrize("args", [["side...main"], ["--objects", "side...main"]])
def test_left_right_is_walked_with_its_marks(
    repo: Path, args: list[str], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """t5310 157: a bitmap does not know a commit's side; Git 2.55 walks (git 2.39
    answered from the bitmap and lost the marks, so the walk is the oracle)."""
    want = git("rev-list", "--left-right", *args, cwd=repo)
    assert want.startswith(b">")
    status, got = _ours(repo, "--use-bitmap-index", "--left-right", *args, capsys=capsysbinary)
    assert status == 0
    assert got == want


def test_the_listing_comes_from_the_bitmap(
    repo: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Ids only (no path names), the same set as the plain walk's."""
    _status, walked = _ours(repo, "--objects", "main", capsys=capsysbinary)
    _status, mapped = _ours(repo, "--objects", "--use-bitmap-index", "main", capsys=capsysbinary)
    assert walked != mapped
    assert all(b" " not in line for line in mapped.splitlines())
    assert sorted(mapped.split()) == sorted(line.split()[0] for line in walked.splitlines())


def test_test_bitmap(repo: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert run_cli(repo, "rev-list", "--test-bitmap", "main~1") == 0
    assert capsysbinary.readouterr().err.endswith(b"OK!\n")
    for args in (["main"], ["main", "main"]):  # main is not in the bitmap
        want = subprocess.run(
            ["git", "rev-list", "--test-bitmap", *args],
            cwd=repo,
            env=git_env(),
            capture_output=True,
        )
        status = run_cli(repo, "rev-list", "--test-bitmap", *args)
        assert (status, capsysbinary.readouterr().err) == (
            want.returncode,
            want.stderr.splitlines(keepends=True)[-1],
        )


def test_without_a_bitmap(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    repo = tmp_path / "plain"
    git("init", "-q", repo)
    _commit(repo, "a", "a\n")
    _status, got = _ours(repo, "--objects", "--use-bitmap-index", "HEAD", capsys=capsysbinary)
    assert got == git("rev-list", "--objects", "HEAD", cwd=repo)
    assert run_cli(repo, "rev-list", "--test-bitmap", "HEAD") == 128
    assert capsysbinary.readouterr().err == b"fatal: failed to load bitmap indexes\n"


@pytest.mark.parametrize(
    "args",
    [
        ["--filter=blob:none", "main"],
        ["--filter=blob:none", "main", "main:f1.t"],
        ["--filter=blob:limit=3", "main"],
        ["--filter=blob:limit=3", "main", "main:after.t"],
        ["--filter=tree:0", "main", "main:f2.t"],
        ["--filter=object:type=tag", "v1"],
        ["--filter=object:type=commit", "v1", "tagged-blob"],
        ["--filter=object:type=tree", "v1"],
        ["--filter=object:type=blob", "v1", "tagged-blob"],
        ["--filter-provided-objects", "--filter=object:type=commit", "v1", "tagged-blob"],
        ["--filter-provided-objects", "--filter=tree:0", "main", "main:f2.t"],
        ["--filter=blob:limit=4", "--filter=object:type=blob", "v1"],
        ["--filter=blob:none", "HEAD~3..HEAD"],
    ],
)
def test_the_bitmap_answers_object_filters(
    repo: Path, args: list[str], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Git's ``filter_bitmap`` (t6113): the filtered bitmap answer, the same set as
    git's and as the walk's, and ids only (it came from the bitmap)."""
    want = git("rev-list", "--use-bitmap-index", "--objects", *args, cwd=repo)
    status, got = _ours(repo, "--use-bitmap-index", "--objects", *args, capsys=capsysbinary)
    assert status == 0
    assert sorted(got.split(b"\n")) == sorted(want.split(b"\n"))
    _status, walked = _ours(repo, "--objects", "--no-object-names", *args, capsys=capsysbinary)
    assert sorted(got.split()) == sorted(walked.split())
    assert all(b" " not in line for line in got.splitlines())
    status, count = _ours(
        repo, "--use-bitmap-index", "--count", "--objects", *args, capsys=capsysbinary
    )
    assert (status, count) == (0, b"%d\n" % len(got.split()))


def test_a_depth_filter_is_walked(repo: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """``tree:1`` (and sparse filters) need the walk: names and the walk's order."""
    args = ["--objects", "--filter=tree:1", "main"]
    want = git("rev-list", *args, cwd=repo)
    assert _ours(repo, "--use-bitmap-index", *args, capsys=capsysbinary) == (0, want)


def test_unpacked_from_the_bitmap(repo: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """``--unpacked``: the bitmap answer without what is packed (Git 2.55's
    t6113 14; Git 2.39 ignored --unpacked there)."""
    status, got = _ours(
        repo, "--use-bitmap-index", "--objects", "--all", "--unpacked", capsys=capsysbinary
    )
    assert status == 0
    want = git("rev-list", "--objects", "--no-object-names", "main^..main", cwd=repo)
    assert sorted(got.split()) == sorted(want.split()) and got.count(b" ") == 0
    assert _ours(repo, "--use-bitmap-index", "--all", "--unpacked", capsys=capsysbinary) == (
        0,
        git("rev-parse", "main", cwd=repo),
    )
