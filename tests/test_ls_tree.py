"""``gitodb ls-tree`` against ``git ls-tree`` (bytes, stderr and exit status)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitodb.history import native
from gitodb.repo import Repository
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


def _damaged(path: Path, object_format: str) -> Path:
    """A packed repository whose tree names, after ~100 KB of listing, a subtree that
    is missing and one that is a blob (the native listing writes, then stops)."""
    git("init", "-q", f"--object-format={object_format}", path)
    many = path / "many"
    many.mkdir()
    for i in range(1500):
        (many / f"file-with-a-long-name-{i:05d}").write_text(f"{i}\n")
    (path / "zz-gone").mkdir()
    (path / "zz-gone" / "f").write_text("gone\n")
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "c", cwd=path)
    gone = git("rev-parse", "HEAD:zz-gone", cwd=path).decode().strip()
    blob = git("rev-parse", "HEAD:many/file-with-a-long-name-00000", cwd=path).decode().strip()
    kept = [
        line.split()[0]
        for line in git("rev-list", "--objects", "--all", cwd=path).decode().splitlines()
        if line.split()[0] != gone
    ]
    # the top tree with a last entry "zzz-not-a-tree": mode 040000, a blob's id
    top = git("cat-file", "tree", "HEAD^{tree}", cwd=path)
    raw = top + b"40000 zzz-not-a-tree\0" + bytes.fromhex(blob)
    bad_tree = (
        git("hash-object", "-t", "tree", "--literally", "-w", "--stdin", cwd=path, input=raw)
        .decode()
        .strip()
    )
    git("update-ref", "refs/tags/bad", bad_tree, cwd=path)
    kept.append(bad_tree)
    git(
        "pack-objects",
        "-q",
        path / ".git" / "objects" / "pack" / "pack",
        cwd=path,
        input=("\n".join(kept) + "\n").encode(),
    )
    git("prune-packed", cwd=path)
    loose = path / ".git" / "objects" / gone[:2] / gone[2:]
    loose.unlink()
    return path


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
@pytest.mark.parametrize("opts", [["-r"], ["-r", "-t"], ["-r", "-z"], ["-r", "--name-only"]])
def test_a_bad_subtree_is_listed_up_to_it_then_an_error(
    tmp_path: Path, object_format: str, opts: list[str]
) -> None:
    """Git lists what comes before a missing subtree or a blob named as a tree,
    prints ``error: Could not read X`` / ``error: Object X not a tree`` and exits 1."""
    repo = _damaged(tmp_path / "r", object_format)
    assert_same(repo, "ls-tree", *opts, "HEAD")
    assert_same(repo, "ls-tree", *opts, "bad")


@pytest.mark.skipif(not native.enabled(), reason="native core not built")
def test_the_native_listing_writes_in_chunks_and_says_where_it_stopped(tmp_path: Path) -> None:
    path = _damaged(tmp_path / "r", "sha1")
    repo = Repository(path)
    options = dict(
        recursive=True,
        show_trees=False,
        trees_only=False,
        name_only=False,
        nul=False,
        quote_fully=True,
        max_depth=4096,
    )
    listing = git("ls-tree", "-r", "HEAD", cwd=path, check=False)
    for rev in ("HEAD", "bad"):
        chunks: list[bytes] = []
        tree = repo.tree(rev)
        result = native.write_ls_tree(repo, tree.raw, chunks.append, **options)
        complete, written = result
        assert not complete  # both trees end in a bad subtree
        assert written == sum(map(len, chunks)) > 64 * 1024
        assert all(len(c) < 65 * 1024 for c in chunks)
        assert b"".join(chunks) == listing[:written] and listing[written:] == b""
    good = repo.tree("HEAD:many")
    chunks = []
    assert native.write_ls_tree(repo, good.raw, chunks.append, **options) == (
        True,
        sum(map(len, chunks)),
    )
    assert b"".join(chunks) == native.ls_tree_text(repo, good.raw, **options)
