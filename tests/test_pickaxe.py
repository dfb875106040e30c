"""``gitodb.history.pickaxe``: Git's ``-S`` filter on a list of changes (the CLI is
compared with git in ``test_diff_tree``)."""

from __future__ import annotations

import pytest

from gitodb.errors import GitodbError
from gitodb.history.pickaxe import grep_changes, pickaxe
from gitodb.history.treediff import TreeChange

A, B, C, D = b"\1" * 20, b"\2" * 20, b"\3" * 20, b"\4" * 20
BLOBS = {A: b"one needle\n", B: b"needle needle\n", C: b"nothing\n", D: b"needle, moved\n"}


def _read(oid: bytes) -> bytes:
    return BLOBS[oid]


def test_counts_differ() -> None:
    modified = TreeChange("M", b"m", 0o100644, 0o100644, A, B)  # 1 -> 2
    same_count = TreeChange("M", b"s", 0o100644, 0o100644, A, D)  # 1 -> 1
    added = TreeChange("A", b"a", None, 0o100644, None, C)  # 0 -> 0
    deleted = TreeChange("D", b"d", 0o100644, None, A, None)  # 1 -> 0
    changes = [modified, same_count, added, deleted]
    assert pickaxe(changes, _read, b"needle") == [modified, deleted]
    assert pickaxe(changes, _read, b"needle", all_changes=True) == changes
    assert pickaxe(changes, _read, b"absent", all_changes=True) == []
    assert pickaxe(changes, _read, b"") == []
    assert pickaxe(changes, _read, rb"ne+dle\b", regex=True) == [modified, deleted]


def test_submodules_read_as_git_shows_them() -> None:
    sub = TreeChange("M", b"sm", 0o160000, 0o160000, A, B)
    assert pickaxe([sub], _read, b"Subproject") == []  # once on each side
    assert pickaxe([sub], _read, A.hex().encode()) == [sub]


def test_bad_regex() -> None:
    with pytest.raises(GitodbError, match="invalid regex"):
        pickaxe([TreeChange("A", b"a", None, 0o100644, None, C)], _read, b"(", regex=True)


def test_grep_looks_at_changed_lines_only() -> None:
    """-G: a change is kept when a line it adds or removes matches; a line that stays
    (here "nothing", or "needle" moved within a file) does not count."""
    blobs = {
        A: b"keep\nneedle here\n",
        B: b"keep\nneedle there\n",
        C: b"keep\n",
        D: b"\0binary needle\n",
    }
    edited = TreeChange("M", b"e", 0o100644, 0o100644, A, B)
    added = TreeChange("A", b"a", None, 0o100644, None, C)
    binary = TreeChange("A", b"b", None, 0o100644, None, D)
    changes = [edited, added, binary]
    assert grep_changes(changes, blobs.__getitem__, b"needle") == [edited]
    assert grep_changes(changes, blobs.__getitem__, b"th?ere$") == [edited]
    assert grep_changes(changes, blobs.__getitem__, b"^keep") == [added]
    assert grep_changes(changes, blobs.__getitem__, b"binary", text=True) == [binary]
    assert grep_changes(changes, blobs.__getitem__, b"binary") == []
    assert grep_changes(changes, blobs.__getitem__, b"[[:alpha:]]+ here") == [edited]
    assert grep_changes(changes, blobs.__getitem__, b"keep", all_changes=True) == changes
    with pytest.raises(GitodbError, match=r"invalid regex: Unmatched \( or \\\("):
        grep_changes(changes, blobs.__getitem__, b"(")
