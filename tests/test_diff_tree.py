"""``gitodb diff-tree`` and ``gitodb.history.treediff`` against ``git diff-tree``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import git, literal_tree
from oracle import assert_same


def build(path: Path, object_format: str) -> Path:
    """Three commits covering every kind of change: A/D/M/T, file<->directory,
    mode-only, symlinks, submodules, quoted names, nested directories."""
    git("init", "-q", f"--object-format={object_format}", path)
    (path / "d" / "e").mkdir(parents=True)
    (path / "a").write_text("a\n")
    (path / "d" / "b").write_text("b\n")
    (path / "d" / "e" / "c").write_text("c\n")
    (path / "gone").mkdir()
    (path / "gone" / "x").write_text("x\n")
    os.symlink("a", path / "l")
    git("add", ".", cwd=path)
    sub = "1" * (64 if object_format == "sha256" else 40)
    git("update-index", "--add", "--cacheinfo", f"160000,{sub},sm", cwd=path)
    git("commit", "-q", "-m", "one", cwd=path)
    (path / "a").write_text("a2\n")
    (path / "l").unlink()
    (path / "l").write_text("now a file\n")
    (path / "d" / "e" / "c").unlink()
    (path / "d" / "e").rmdir()
    (path / "d" / "e").write_text("e is a file\n")
    (path / "f" / "g").mkdir(parents=True)
    (path / "f" / "g" / "h").write_text("h\n")
    os.chmod(path / "d" / "b", 0o755)
    (path / "gone" / "x").unlink()
    (path / "gone").rmdir()
    git("add", "-A", cwd=path)
    (path / "sm").write_text("submodule became a file\n")
    git("add", "sm", cwd=path)
    git("commit", "-q", "-m", "two", cwd=path)
    (path / 'sp "q"').write_text("q\n")
    (path / "tab\there").write_text("t\n")
    (path / "caf\u00e9").write_text("c\n")
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "three", cwd=path)
    # A merge, so -m and the merge rule are exercised.
    git("checkout", "-q", "-b", "side", "HEAD~1", cwd=path)
    (path / "side").write_text("s\n")
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "side", cwd=path)
    git("checkout", "-q", "-", cwd=path)
    git("merge", "-q", "--no-edit", "side", cwd=path)
    return path


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp(request.param) / "r", request.param)


ROOT = "HEAD~3"
CASES = [
    ["HEAD~1"],
    ["-r", "HEAD~1"],
    ["-t", "HEAD~2"],
    ["-r", "-t", "HEAD~2"],
    ["-r", "HEAD~2"],
    [ROOT],
    ["--root", ROOT],
    ["--root", "-r", ROOT],
    ["-r", "--name-status", "HEAD~2"],
    ["--name-only", "HEAD~2"],
    ["-r", "-z", "HEAD~1"],
    ["-z", "--name-status", "-r", "HEAD~1"],
    ["-z", "--name-only", "HEAD~2"],
    ["-r", ROOT, "HEAD"],
    ["-r", "-R", ROOT, "HEAD"],
    ["-r", f"{ROOT}..HEAD"],
    ["-r", "HEAD", f"^{ROOT}"],
    ["HEAD~2", "--", "d/e"],
    ["-r", "HEAD~2", "--", "d/e"],
    ["-r", "HEAD~2", "--", "d/*"],
    ["-r", "HEAD~2", "--", "f/"],
    ["-r", "HEAD~2", "--", "d", "a"],
    ["--abbrev", "-r", "HEAD~2"],
    ["--abbrev=10", "-r", "HEAD~2"],
    ["--no-commit-id", "HEAD~2"],
    ["HEAD"],
    ["-m", "HEAD"],
    ["-m", "-r", "HEAD"],
    ["--quiet", "HEAD~2"],
    ["--exit-code", "HEAD~2"],
    ["--exit-code", "HEAD", "HEAD"],
    ["--always", "HEAD", "HEAD"],
    ["--always", ROOT],  # a root commit without --root: its header alone
    ["--always", "--pretty=oneline", ROOT],
    ["HEAD^{tree}"],
    ["--bogus", "HEAD"],
    [],
    ["nosuch"],
    ["-r", "HEAD~2", "a"],
    ["-r", "HEAD~2", "--", "nope"],
    ["v1", "HEAD"],
    # the pickaxe: -S implies -r; --pickaxe-all keeps every change once one matches
    ["-Sa2", "HEAD~2"],
    ["-r", "-S", "e is", "HEAD~2"],
    ["-r", "-Snot there", "HEAD~2"],
    ["-r", "-Sa2", "--pickaxe-all", "HEAD~2"],
    ["-r", "--pickaxe-regex", "-S[ae]2?$", "HEAD~2"],
    ["-r", "-R", "-Sa2", "HEAD~2"],
    ["-r", "-p", "-Sa2", "HEAD~2"],
    ["-r", "--exit-code", "-Sa2", "HEAD~2"],
    ["-r", "--quiet", "-Snot there", "HEAD~2"],
    ["-r", "-Ssubmodule", "HEAD~2"],
    ["-r", "-S", "HEAD~2"],
    ["-S"],
]


@pytest.mark.parametrize("args", CASES, ids=" ".join)
def test_like_git(repo: Path, args: list[str]) -> None:
    if "v1" in args and not (repo / ".git/refs/tags/v1").exists():
        git("tag", "-a", "-m", "t", "v1", ROOT, cwd=repo)
    assert_same(repo, "diff-tree", *args)


def test_stdin(repo: Path) -> None:
    ids = git("rev-list", "--parents", "HEAD", cwd=repo).decode().split("\n")
    trees = [
        git("rev-parse", f"{r}^{{tree}}", cwd=repo).decode().strip() for r in ("HEAD~2", "HEAD")
    ]
    lines = [ln for ln in ids if ln]
    first_parent = [" ".join(ln.split()[:2]) for ln in lines]
    blob = git("rev-parse", "HEAD:a", cwd=repo).decode().strip()
    text = (
        "\n".join(
            lines
            + first_parent
            + [" ".join(trees), trees[0], "not an id", blob, lines[0].split()[0] + " junk"]
        )
        + "\n"
    )
    for opts in ([], ["-r"], ["-r", "-m", "--root"], ["-r", "-z", "--name-status"]):
        assert_same(repo, "diff-tree", "--stdin", *opts, input=text.encode())


def test_subdirectory_paths(repo: Path) -> None:
    assert_same(repo / "d", "diff-tree", "-r", "HEAD~2", "--", "e")
    assert_same(repo / "d", "diff-tree", "-r", "HEAD~2", "--", "../a")


def test_library(repo: Path) -> None:
    from gitodb.history.treediff import TreeChange, commit_changes, diff_trees
    from gitodb.repo import Repository

    r = Repository(repo)
    head2 = r.resolve("HEAD~2")
    changes = commit_changes(r, head2)
    raw = git("diff-tree", "-r", "--no-commit-id", "HEAD~2", cwd=repo).decode().splitlines()
    assert [c.path.decode() for c in changes] == [ln.split("\t")[1] for ln in raw]
    assert {c.status for c in changes} == {"A", "D", "M", "T"}
    assert all(isinstance(c, TreeChange) for c in changes)
    deleted = next(c for c in changes if c.status == "D")
    assert deleted.new_mode is None and deleted.new_id is None and deleted.old_id
    # Non-recursive: directories are reported as one change.
    top = diff_trees(r, r.commit("HEAD~3").tree, r.commit("HEAD~2").tree, recursive=False)
    assert [c.path for c in top] == [b"a", b"d", b"f", b"gone", b"l", b"sm"]
    # The root commit against the empty tree; a limited path.
    root = commit_changes(r, r.resolve("HEAD~3"), paths=[b"d"])
    assert [c.path for c in root] == [b"d/b", b"d/e/c"]
    assert all(c.status == "A" and c.old_id is None and c.old_mode is None for c in root)


def test_trees_naming_a_path_twice(tmp_path: Path) -> None:
    """Damaged trees that name one path several times (the real-world case of Git's
    t4058): each entry is compared in turn, as Git walks them, and a rename of a
    path onto itself, unchanged, is no change."""
    repo = tmp_path / "r"
    git("init", "-q", repo)

    def blob(text: str) -> str:
        return git("hash-object", "-w", "--stdin", cwd=repo, input=text.encode()).decode().strip()

    one, two = blob("one\n"), blob("two\n")
    inner_a = literal_tree(repo, ("100644", "inner", one))
    inner_b = literal_tree(repo, *[("100644", "inner", two)] * 3)
    inner_all = literal_tree(repo, ("100644", "inner", one), *[("100644", "inner", two)] * 3)
    twice = literal_tree(repo, ("40000", "outer", inner_a), ("40000", "outer", inner_b))
    once = literal_tree(repo, ("40000", "outer", inner_all))
    plain = literal_tree(repo, ("100644", "renamed", one))
    for old, new in ((twice, once), (once, twice), (twice, plain), (plain, twice)):
        for opts in (["-r"], ["-M", "-r"], ["-r", "-t"], [], ["-r", "--name-status", "-M"]):
            assert_same(repo, "diff-tree", "--no-abbrev", *opts, old, new)
    assert assert_same(repo, "diff-tree", "-r", twice, once).count(b"\touter/inner\n") == 6
