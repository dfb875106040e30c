"""The native core's ``tree_pairs`` (one level of diff-tree) against its reference,
``gitodb.history.treediff.level_pairs``, on random trees: sorted and not, names
repeated, files and directories of one name, names that contain ``/``, odd modes,
malformed contents; and ``diff-tree`` on both paths against git."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitodb.errors import ObjectParseError
from gitodb.history.treediff import level_pairs
from gitodb.objects.tree import parse_entries
from helpers import git, literal_tree, run_gitodb

native = pytest.importorskip("gitodb._native")  # a pure build has only the reference

_MODES = [b"100644", b"100755", b"120000", b"40000", b"040000", b"160000", b"100664", b"7"]
_NAMES = [b"a", b"a-b", b"a.c", b"a/b", b"b", b"ab", b"\xc3\xa9", b"a b"]


def _tree(entries: list[tuple[bytes, bytes, bytes]]) -> bytes:
    return b"".join(m + b" " + n + b"\0" + o for m, n, o in entries)


def _entries(rawsz: int) -> st.SearchStrategy[list[tuple[bytes, bytes, bytes]]]:
    entry = st.tuples(
        st.sampled_from(_MODES),
        st.sampled_from(_NAMES),
        st.sampled_from([b"\x01" * rawsz, b"\x02" * rawsz, b"\x03" * rawsz]),
    )
    return st.lists(entry, max_size=8)


def same(old: bytes, new: bytes, rawsz: int, equal: bool = False) -> None:
    """Assert both give the same pairs (``equal``: the unchanged ones too), or both
    reject the input."""
    got = native.tree_pairs(old, new, rawsz, equal)
    try:
        want = level_pairs(old, new, rawsz, equal)
    except ObjectParseError:
        assert got is None
        return
    if got is None:  # the native parser hands modes of over ten digits to the reference
        entries = parse_entries(old, rawsz) + parse_entries(new, rawsz)
        assert any(len(mode) > 10 for mode, _name, _id in entries)
        return
    assert got == want


@settings(max_examples=400, deadline=None)
@given(
    rawsz=st.sampled_from([20, 32]),
    data=st.data(),
    sort_a=st.booleans(),
    sort_b=st.booleans(),
    equal=st.booleans(),
)
def test_random_trees(
    rawsz: int, data: st.DataObject, sort_a: bool, sort_b: bool, equal: bool
) -> None:
    a = data.draw(_entries(rawsz))
    b = data.draw(_entries(rawsz)) if data.draw(st.booleans()) else list(a)
    if sort_a:
        a.sort(key=lambda e: e[1] + (b"/" if e[0] in (b"40000", b"040000") else b""))
    if sort_b:
        b.sort(key=lambda e: e[1] + (b"/" if e[0] in (b"40000", b"040000") else b""))
    same(_tree(a), _tree(b), rawsz, equal)


@settings(max_examples=300, deadline=None)
@given(old=st.binary(max_size=60), new=st.binary(max_size=60))
def test_random_bytes(old: bytes, new: bytes) -> None:
    same(old, new, 20)


def test_edges() -> None:
    one, two = b"\x01" * 20, b"\x02" * 20
    file_a, dir_a = (b"100644", b"a", one), (b"40000", b"a", one)
    assert native.tree_pairs(b"", b"", 20) == []
    # A file "a" sorts before a directory "a" ("a/"), and "a-b" between them.
    same(_tree([file_a, (b"100644", b"a-b", one), dir_a]), b"", 20)
    # The same entries on both sides drop out; a spelling of the mode is a change.
    assert native.tree_pairs(_tree([file_a]), _tree([file_a]), 20) == []
    # ... unless asked for (--find-copies-harder)
    assert native.tree_pairs(_tree([file_a]), _tree([file_a]), 20, True) == [
        (b"100644", b"a", one, b"100644", one)
    ]
    same(_tree([dir_a]), _tree([(b"040000", b"a", one)]), 20)
    # A path named three times against once.
    same(_tree([(b"100644", b"x", two)] * 3), _tree([(b"100644", b"x", one)]), 20)
    # Malformed: no mode, no NUL, a short id, a mode with a non-octal digit.
    for bad in (b" a\0" + one, b"100644 a" + one, b"100644 a\0" + one[:5], b"100844 a\0" + one):
        assert native.tree_pairs(bad, b"", 20) is None
        same(bad, b"", 20)
    # A mode of eleven digits is the reference's to decide.
    long_mode = _tree([(b"10000000644", b"a", one)])
    assert native.tree_pairs(long_mode, b"", 20) is None
    assert level_pairs(long_mode, b"", 20) == [(b"10000000644", b"a", one, None, None)]
    with pytest.raises(ValueError):
        native.tree_pairs(b"", b"", 21)


@pytest.mark.parametrize("pure", ["0", "1"])
def test_diff_tree_on_both_paths(
    tmp_path: Path, pure: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``diff-tree`` prints git's bytes with the native pairing and without it."""
    repo = tmp_path / "r"
    git("init", "-q", repo)
    ids = [
        git("hash-object", "-w", "--stdin", cwd=repo, input=t).decode().strip()
        for t in (b"1\n", b"2\n")
    ]
    sub = literal_tree(repo, ("100644", "f", ids[0]))
    old = literal_tree(
        repo,
        ("100644", "a", ids[0]),
        ("100644", "a-b", ids[1]),
        ("40000", "a", sub),
        ("100644", "z", ids[0]),
    )
    new = literal_tree(
        repo,
        ("100755", "a", ids[0]),
        ("40000", "a", sub),
        ("100644", "z", ids[1]),
        ("100644", "z", ids[1]),
    )
    monkeypatch.setenv("GITODB_PURE_WALK", pure)  # the child's environment (git_env)
    cases: list[tuple[list[str], list[str]]] = [
        (["-r"], []),
        (["-r", "-t"], []),
        ([], []),
        (["-r", "-M", "--name-status"], []),
        (["-r"], ["--", "a"]),
    ]
    for opts, paths in cases:
        args = ["diff-tree", "--no-abbrev", *opts, old, new, *paths]
        want = git(*args, cwd=repo)
        got = run_gitodb(*args, cwd=repo)
        assert got.returncode == 0 and got.stdout == want, (opts, want, got)
