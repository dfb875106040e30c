"""Git notes in ``log`` and ``diff-tree`` (``--notes[=<ref>]``, ``--no-notes``,
``--[no-]standard-notes``, ``%N``, ``core.notesRef``, ``notes.displayRef``,
``GIT_NOTES_REF``), including a notes tree fanned out into directories, compared
byte for byte with the ``git`` on PATH."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import git
from oracle import assert_same


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("notes") / "r"
    git("init", "-q", r)
    for name in ("one", "two", "three"):
        (r / name).write_text(name + "\n")
        git("add", name, cwd=r)
        git("commit", "-q", "-m", name, cwd=r)
    git("notes", "add", "-m", "line1", "-m", "line3", "HEAD~2", cwd=r)
    git("notes", "--ref=other", "add", "-m", "other note", "HEAD", cwd=r)
    git("notes", "--ref=other", "add", "-m", "on one too", "HEAD~2", cwd=r)
    # a notes tree with fan-out directories, as Git writes for many notes
    head = git("rev-parse", "HEAD~1", cwd=r).strip().decode()
    blob = git("hash-object", "-w", "--stdin", cwd=r, input=b"fanned out\n\nsecond para\n").strip()
    inner = git("mktree", cwd=r, input=b"100644 blob %s\t%s\n" % (blob, head[2:].encode()))
    outer = git("mktree", cwd=r, input=b"040000 tree %s\t%s\n" % (inner.strip(), head[:2].encode()))
    commit = git("commit-tree", outer.strip().decode(), "-m", "notes", cwd=r).strip().decode()
    git("update-ref", "refs/notes/fan", commit, cwd=r)
    return r


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--oneline"],
        ["--format=short"],
        ["--format=%h%n%N%n--"],
        ["--format=%s%+N"],
        ["--notes=other"],
        ["--notes=other", "--notes"],
        ["--notes=fan"],
        ["--notes=refs/notes/*"],  # a glob
        ["--notes=notes/other", "--oneline"],
        ["--no-notes"],
        ["--no-notes", "--format=%s%N"],  # %N is left as it is
        ["--notes", "--no-notes", "--notes=other"],
        ["--show-notes=other"],
        ["--standard-notes"],
        ["--notes", "--no-standard-notes"],
        ["--notes", "--format=short"],
        ["--notes=missing"],  # Git's warning
        ["--graph", "--notes=other"],
        ["-p", "--notes=fan"],
    ],
)
def test_log_notes_as_git(repo: Path, args: list[str]) -> None:
    assert_same(repo, "log", *args)


@pytest.mark.parametrize(
    "config",
    ["core.notesRef=refs/notes/other", "notes.displayRef=refs/notes/*", "notes.displayRef=x"],
)
def test_log_notes_config_as_git(repo: Path, config: str) -> None:
    assert_same(repo, "-c", config, "log")


def test_log_notes_env_as_git(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_NOTES_REF", "refs/notes/fan")
    assert_same(repo, "log")
    monkeypatch.setenv("GIT_NOTES_DISPLAY_REF", "refs/notes/other:refs/notes/nope")
    assert_same(repo, "log", "--oneline", "--notes")
    assert os.environ["GIT_NOTES_REF"] == "refs/notes/fan"


@pytest.mark.parametrize(
    "args",
    [
        ["--pretty"],  # diff-tree shows no notes unless asked
        ["--pretty", "--notes"],
        ["--pretty=oneline", "--notes=other"],
        ["--oneline", "--notes=fan"],
        ["--format=%s%N"],  # %N asks for them
        ["--format=%s%N", "--no-notes"],
        ["--pretty=raw", "--show-notes=other"],
    ],
)
def test_diff_tree_notes_as_git(repo: Path, args: list[str]) -> None:
    for rev in ("HEAD", "HEAD~1", "HEAD~2"):
        assert_same(repo, "diff-tree", *args, rev)


def test_rev_list_leaves_percent_n(repo: Path) -> None:
    assert_same(repo, "rev-list", "--format=%N", "HEAD")
