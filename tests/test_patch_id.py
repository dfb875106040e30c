"""Patch ids: ``gitodb patch-id`` against ``git patch-id``, and the library's commit
patch id against the one Git computes internally (``format-patch --base``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from helpers import commit_at, git, git_env
from oracle import assert_same

GIT_255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"


def build(path: Path, object_format: str = "sha1") -> Path:
    git("init", "-q", f"--object-format={object_format}", "-b", "main", path)
    w = path
    (w / "f").write_text("".join(f"{i}\n" for i in range(1, 30)))
    (w / "g").write_bytes(b"x  y\n\tz")
    git("add", ".", cwd=w)
    commit_at(w, "root", 1)
    (w / "f").write_text("".join(f"{i}\n" if i % 7 else f"  {i} changed\t\n" for i in range(1, 30)))
    _commit_all(w, "whitespace and lines", 2)
    (w / "bin").write_bytes(b"\0binary\1")
    (w / "h").write_text("new\n")
    _commit_all(w, "binary and new file", 3)
    os.chmod(w / "f", 0o755)
    (w / "g").write_bytes(b"x y\n\tz\nmore")
    _commit_all(w, "mode change and no newline", 4)
    os.remove(w / "h")
    (w / "bin").write_bytes(b"\0binary\2")
    _commit_all(w, "delete and binary change", 5)
    (w / "f").write_text("".join(f"{i}\n" for i in range(1, 35)))
    _commit_all(w, "last", 6)
    return path


def _commit_all(w: Path, message: str, n: int) -> None:
    git("add", "-A", ".", cwd=w)
    commit_at(w, message, n)


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("pid") / "r", request.param)


@pytest.mark.parametrize("option", [None, "--stable", "--unstable", "--verbatim"])
@pytest.mark.parametrize(
    "source",
    [
        ["log", "-p"],
        ["log", "-p", "--full-index"],
        ["log", "-p", "--stat", "--format=%H"],
        ["show", "HEAD~2"],
        ["format-patch", "--stdout", "HEAD~4"],
        ["diff", "HEAD~5", "HEAD"],
        ["log", "-p", "-U0", "--reverse"],
    ],
)
def test_patch_id_matches_git(repo: Path, option: str | None, source: list[str]) -> None:
    patches = git(*source, cwd=repo)
    args = ["patch-id"] + ([option] if option else [])
    out = assert_same(repo, *args, input=patches)
    assert out  # something was hashed


@pytest.mark.parametrize("config", ["patchid.stable=true", "patchid.verbatim=true"])
def test_patch_id_config(repo: Path, config: str) -> None:
    patches = git("log", "-p", cwd=repo)
    assert_same(repo, "-c", config, "patch-id", input=patches)
    assert_same(repo, "-c", config, "patch-id", "--unstable", input=patches)


def test_patch_id_odd_input(repo: Path) -> None:
    # no commit line, a hunk cut short, text after the patch, a second patch
    text = (
        b"diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n"
        b"trailing words\ndiff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-q\n+r\n"
        b"\\ No newline at end of file\n"
    )
    for opt in ([], ["--stable"], ["--verbatim"]):
        assert_same(repo, "patch-id", *opt, input=text)
    assert_same(repo, "patch-id", input=b"")


def test_patch_id_usage(repo: Path) -> None:
    # the help says "patch ID" in Git 2.55, "patch-id" in 2.39: compared below
    assert_same(repo, "patch-id", "--bogus", input=b"", stderr=False)
    assert_same(repo, "patch-id", "not-an-option", input=b"")


@pytest.mark.skipif(not GIT_255.exists(), reason="needs ../shared/git-2.55")
def test_patch_id_modes_conflict_like_git_255(repo: Path) -> None:
    import sys

    for args in (["--stable", "--unstable"], ["--verbatim", "--stable"], ["--bogus"], ["-h"]):
        theirs = subprocess.run(
            [str(GIT_255), "patch-id", *args], cwd=repo, env=git_env(), capture_output=True
        )
        ours = subprocess.run(
            [sys.executable, "-m", "gitodb", "patch-id", *args],
            cwd=repo,
            env=git_env(),
            capture_output=True,
        )
        assert (ours.returncode, ours.stdout, ours.stderr) == (
            theirs.returncode,
            theirs.stdout.replace(b"git patch-id", b"gitodb patch-id"),
            theirs.stderr.replace(b"git patch-id", b"gitodb patch-id"),
        )


def test_commit_patch_id_is_gits_internal_one(repo: Path) -> None:
    from gitodb.history.patchid import CommitPatchIds, commit_patch_id
    from gitodb.repo import Repository

    # format-patch --base lists the patch ids of the commits between the base and
    # the patches, computed the way rev-list --cherry-pick computes them
    out = git("format-patch", "--stdout", "--base=HEAD~5", "HEAD~1..HEAD", cwd=repo)
    prerequisites = [
        line.split()[1].decode()
        for line in out.splitlines()
        if line.startswith(b"prerequisite-patch-id: ")
    ]
    assert len(prerequisites) == 4
    r = Repository(repo)
    ours = [commit_patch_id(r, f"HEAD~{n}") for n in (4, 3, 2, 1)]
    assert [p.hex() for p in ours if p is not None] == prerequisites
    # a commit whose diff has no binary file gives what git patch-id gives for
    # `git show` without renames or the indent heuristic
    shown = git("show", "--no-renames", "--no-indent-heuristic", "HEAD", cwd=repo)
    theirs = git("patch-id", "--stable", cwd=repo, input=shown).split()[0].decode()
    assert CommitPatchIds(r).patch_id(r.resolve("HEAD")).hex() == theirs  # type: ignore[union-attr]


def test_merge_has_no_patch_id(tmp_path: Path) -> None:
    from gitodb.history.patchid import commit_patch_id
    from gitodb.repo import Repository

    w = tmp_path / "m"
    git("init", "-q", "-b", "main", w)
    commit_at(w, "a", 1)
    git("checkout", "-q", "-b", "side", cwd=w)
    commit_at(w, "b", 2)
    git("checkout", "-q", "main", cwd=w)
    commit_at(w, "c", 3)
    git("merge", "-q", "--no-ff", "-m", "m", "side", cwd=w)
    r = Repository(w)
    assert commit_patch_id(r, "HEAD") is None
    assert commit_patch_id(r, "HEAD^2") == bytes(20)  # an empty change: all zeros, as Git
