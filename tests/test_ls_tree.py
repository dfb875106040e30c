"""``gitodb ls-tree`` against ``git ls-tree`` (bytes, stderr and exit status)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import git
from oracle import assert_same

NAMES = [
    "plain",
    "with space",
    'quo"te',
    "tab\there",
    "caf\u00e9",
    "a[a]",
    "a*",
    "aa",
    "a-b",
    "a.b",
]


def build(path: Path, object_format: str) -> Path:
    git("init", "-q", f"--object-format={object_format}", path)
    for n in NAMES:
        (path / n).write_text(n + "\n")
    (path / "dir" / "sub" / "deep").mkdir(parents=True)
    (path / "dir" / "f").write_text("f\n")
    (path / "dir" / "sub" / "g").write_text("g" * 5000)
    (path / "dir" / "sub" / "deep" / "h").write_text("h\n")
    (path / "dir2").mkdir()
    (path / "dir2" / "x").write_text("x\n")
    (path / "a").mkdir()
    (path / "a" / "b").write_text("ab\n")
    (path / "exe").write_text("#!/bin/sh\n")
    os.chmod(path / "exe", 0o755)
    os.symlink("plain", path / "link")
    git("add", ".", cwd=path)
    head = "1" * (64 if object_format == "sha256" else 40)
    git("update-index", "--add", "--cacheinfo", f"160000,{head},submod", cwd=path)
    git("commit", "-q", "-m", "c", cwd=path)
    git("tag", "-a", "-m", "t", "v1", cwd=path)
    return path


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp(request.param) / "r", request.param)


OPTION_SETS = [
    [],
    ["-r"],
    ["-t"],
    ["-r", "-t"],
    ["-d"],
    ["-d", "-r"],
    ["-l"],
    ["--long", "-r"],
    ["-z"],
    ["-r", "-z"],
    ["--name-only"],
    ["--name-status", "-r"],
    ["--object-only", "-r"],
    ["--full-name"],
    ["--full-tree"],
    ["--abbrev"],
    ["--abbrev=5", "-r"],
    ["--abbrev=2"],
    ["--no-abbrev"],
    [
        "-r",
        "--format=%(objectmode) %(objecttype) %(objectname) %(objectsize) "
        "%(objectsize:padded)|%(path)%x00%%%n",
    ],
    ["-r", "-z", "--format=[%(path)]"],
    ["-rtz", "-l"],
]
PATHS = [
    [],
    ["."],
    ["dir"],
    ["dir/"],
    ["dir/sub"],
    ["dir/sub/"],
    ["dir/sub/g"],
    ["a"],
    ["a[a]"],
    ["a*"],
    ["a/b"],
    ["dir", "dir2/"],
    ["nope"],
    ["dir/s"],
    ["submod"],
    ["submod/"],
    ["dir/../dir2"],
]


@pytest.mark.parametrize("opts", OPTION_SETS, ids=" ".join)
def test_options_at_top(repo: Path, opts: list[str]) -> None:
    for paths in PATHS:
        assert_same(repo, "ls-tree", *opts, "HEAD", *paths)


SUB_PATHS = [
    [],
    ["."],
    [".."],
    ["../a"],
    ["f"],
    ["sub"],
    ["sub/"],
    ["../dir2"],
    [":/a"],
    [":(top)dir"],
    [":(literal)sub"],
]


@pytest.mark.parametrize(
    "opts",
    [
        [],
        ["-r"],
        ["--full-name"],
        ["--full-tree"],
        ["-r", "-t"],
        ["--name-only"],
        ["--format=%(path)"],
        ["-d"],
    ],
    ids=" ".join,
)
def test_from_a_subdirectory(repo: Path, opts: list[str]) -> None:
    for paths in SUB_PATHS:
        assert_same(repo / "dir", "ls-tree", *opts, "HEAD", *paths)
        assert_same(repo / "dir" / "sub", "ls-tree", *opts, "HEAD", *paths)


@pytest.mark.parametrize(
    "args",
    [
        ["HEAD^{tree}"],
        ["v1"],
        ["HEAD:dir"],
        ["HEAD:plain"],
        ["nope"],
        [],
        ["HEAD", ""],
        ["HEAD", "../x"],
        ["HEAD", ":(icase)a"],
        ["-l", "--name-only", "HEAD"],
        ["--name-only", "--object-only", "HEAD"],
        ["--format=%(path)", "-l", "HEAD"],
        ["--format=%(bogus)", "HEAD"],
        ["--format=%q", "HEAD"],
        ["--format=%(path", "HEAD"],
        ["--bogus", "HEAD"],
        ["-q", "HEAD"],
        ["HEAD", "--", "dir"],
        ["--full", "HEAD"],
        ["--full-name", "--no-full-name", "HEAD"],
    ],
)
def test_errors_and_names(repo: Path, args: list[str]) -> None:
    assert_same(repo, "ls-tree", *args)


def test_quote_path_off(repo: Path) -> None:
    assert_same(repo, "-c", "core.quotepath=false", "ls-tree", "-r", "HEAD")


def test_bare_repository(repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git("clone", "-q", "--bare", repo, bare)
    assert_same(bare, "ls-tree", "-r", "-l", "HEAD")
    assert_same(bare, "ls-tree", "HEAD", "dir/")
