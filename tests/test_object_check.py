"""Commit/tree/tag checks of hash-object against ``git hash-object -t <type>`` (Git 2.39)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gitodb.errors import ObjectCheckError, ObjectParseError
from gitodb.objects import SHA1, SHA256
from gitodb.objects.check import ObjectChecker, check_object
from gitodb.objects.tree import parse_entries
from helpers import git, git_env

T1 = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # the empty tree
C1 = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"
NUL20 = b"\0" * 20


def git_verdict(repo: Path, type_name: str, *contents: bytes) -> tuple[int, bytes, bytes]:
    """``git hash-object -t <type>`` on files holding ``contents``: (status, stdout, stderr)."""
    paths = []
    for i, data in enumerate(contents):
        p = repo / f"in{i}"
        p.write_bytes(data)
        paths.append(p.name)
    proc = subprocess.run(
        ["git", "hash-object", "-t", type_name, *paths],
        cwd=repo,
        capture_output=True,
        env=git_env(),
    )
    return proc.returncode, proc.stdout, proc.stderr


def our_verdict(fmt, type_name: str, *contents: bytes) -> tuple[int, bytes]:  # type: ignore[no-untyped-def]
    """The same through ObjectChecker: (status, the stderr bytes the CLI prints)."""
    checker = ObjectChecker(fmt)
    try:
        for data in contents:
            checker.check(type_name, data)
    except ObjectCheckError as e:
        text = "".join(f"error: {d}\n" for d in e.details) + f"fatal: {e.message}\n"
        return 128, text.encode()
    return 0, b""


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("check")
    git("init", "-q", r)
    return r


COMMITS = [
    f"tree {T1}\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\nmsg\n".encode(),
    f"tree {T1}\nparent {C1}\nx".encode(),
    f"tree {T1}\nparent {C1}\n".encode(),  # nothing after the parent line
    f"tree {T1}\nparent {C1}\nparent {C1}\nz".encode(),
    f"tree {T1}\nparent {C1[:39]}g\nz".encode(),
    f"tree {T1}\nparent {T1}\nz".encode(),  # the tree id again as a parent
    # the tree id as a parent, refused before the bad last parent line is read
    f"tree {T1}\nparent {T1}\nparent {C1}\n".encode(),
    f"tree {T1}\nparent {C1}\nparent {T1}\n".encode(),
    f"tree {T1}\n".encode(),
    f"tree {T1}\nz".encode(),
    f"tree {T1.upper()}\nz".encode(),
    f"tree {T1[:-1]}\nz".encode(),
    f"tree {T1[:-1]}x\nz".encode(),
    f"tree  {T1}\nz".encode(),
    b"",
    b"blob",
    b"tree " + b"0" * 40 + b"\r\nz",
]

TREES = [
    b"",
    b"100644 a\0" + NUL20,
    b"100644 a\0" + NUL20 + b"40000 b\0" + NUL20,
    b"100644 \0" + NUL20,
    b" 100644 a\0" + NUL20,
    b"10064x a\0" + NUL20,
    b"100644a\0" + NUL20,
    b"100644 a" + NUL20,
    b"100644 a\0" + NUL20[:-1],
    b"100644 a\0" + NUL20 + b"1",
    b"100644 a\0" + NUL20 + b"100644 b\0" + NUL20 + b"\0",
    b"9 a\0" + NUL20,
    b"0 a\0" + NUL20,
    b"100644 a\0b\0" + NUL20,
]

TAGS = [
    f"object {C1}\ntype commit\ntag v1\ntagger A <a@b> 1 +0000\n\nmsg\n".encode(),
    f"object {C1}\ntype commit\ntag v1\n".encode(),
    f"object {C1}\ntype commit\ntag v1".encode(),
    f"object {C1}\ntype bogus\ntag v1\n".encode(),
    f"object {C1}\ntype blob\0xx\ntag v1\n".encode(),
    f"object {C1}\ntype commitcommitcommitcommit\ntag v1\n".encode(),
    f"object {C1}\ntype tree\ntag \n".encode(),
    f"object {C1}\ntype tree\ntagger v1\n".encode(),
    f"object {C1}\ntype tree\n".encode(),
    f"object {C1[:-1]}\ntype tree\ntag v1\n".encode(),
    f"object {C1.upper()}\ntype tree\ntag v1\n".encode(),
    f"object  {C1}\ntype tree\ntag v1\n".encode(),
    b"",
]


@pytest.mark.parametrize("data", COMMITS)
def test_commit_checks_match_git(repo: Path, data: bytes) -> None:
    status, out, err = git_verdict(repo, "commit", data)
    assert our_verdict(SHA1, "commit", data) == (status, err)


@pytest.mark.parametrize("data", TREES)
def test_tree_checks_match_git(repo: Path, data: bytes) -> None:
    status, out, err = git_verdict(repo, "tree", data)
    assert our_verdict(SHA1, "tree", data) == (status, err)


@pytest.mark.parametrize("data", TAGS)
def test_tag_checks_match_git(repo: Path, data: bytes) -> None:
    status, out, err = git_verdict(repo, "tag", data)
    assert our_verdict(SHA1, "tag", data) == (status, err)


def test_ids_remember_their_type_across_objects(repo: Path) -> None:
    """Git's object table: an id used as a tree in one file cannot be a parent in the next."""
    first = f"tree {C1}\nz".encode()
    second = f"tree {T1}\nparent {C1}\nz".encode()
    status, _out, err = git_verdict(repo, "commit", first, second)
    assert status == 128 and b"is a tree, not a commit" in err
    assert our_verdict(SHA1, "commit", first, second) == (status, err)
    tag = f"object {C1}\ntype blob\ntag x\n".encode()
    status, _out, err = git_verdict(repo, "tag", tag, tag.replace(b"blob", b"tree"))
    assert our_verdict(SHA1, "tag", tag, tag.replace(b"blob", b"tree")) == (status, err)


def test_sha256_uses_its_own_lengths(tmp_path: Path) -> None:
    git("init", "-q", "--object-format=sha256", tmp_path)
    t = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
    good = f"tree {t}\nz".encode()
    bad = f"tree {t[:40]}\nz".encode()
    for data in (good, bad):
        status, _out, err = git_verdict(tmp_path, "commit", data)
        assert our_verdict(SHA256, "commit", data) == (status, err)
    tree = b"100644 a\0" + b"\0" * 32
    assert git_verdict(tmp_path, "tree", tree)[0] == 0
    check_object(SHA256, "tree", tree)
    with pytest.raises(ObjectCheckError, match="too-short tree object"):
        check_object(SHA256, "tree", b"100644 a\0" + NUL20)


def test_blobs_and_other_types_are_not_checked() -> None:
    check_object(SHA1, "blob", b"\0\xff anything")
    check_object(SHA1, "frob", b"anything")


tree_entry = st.tuples(
    st.sampled_from([b"100644", b"40000", b"1", b"", b"8", b"10 0"]),
    st.binary(max_size=4),
    st.binary(min_size=18, max_size=22),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(tree_entry, max_size=3))
# a mode with a space: the names as written are equal, the names as parsed are not
@example(entries=[(b"10 0", b"\x01", b"\0" * 18), (b"100644", b"\x01", b"\0" * 20)])
def test_tree_check_differential_fuzz(
    repo: Path, entries: list[tuple[bytes, bytes, bytes]]
) -> None:
    data = b"".join(mode + b" " + name + b"\0" + oid for mode, name, oid in entries)
    status, _out, err = git_verdict(repo, "tree", data)
    # the names as the tree parses (a mode with a space shifts where names start)
    try:
        names = [name for _m, name, _o in parse_entries(data, 20)]
    except ObjectParseError:
        names = []
    if len(set(names)) != len(names) and status == 0:
        # Git 2.55 runs fsck here and refuses duplicates; the oracle (2.39) does not
        assert our_verdict(SHA1, "tree", data) == (128, DUPLICATE_ENTRIES)
        return
    assert our_verdict(SHA1, "tree", data) == (status, err)


DUPLICATE_ENTRIES = (
    b"error: object fails fsck: duplicateEntries: contains duplicate file "
    b"entries\nfatal: refusing to create malformed object\n"
)


def test_duplicate_tree_entries_are_refused_like_git_255() -> None:
    entry = b"100644 file\0" + b"\x11" * 20
    assert our_verdict(SHA1, "tree", entry + entry) == (128, DUPLICATE_ENTRIES)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.sampled_from(
            [
                f"tree {T1}",
                f"parent {C1}",
                f"parent {T1}",
                "author x",
                "",
                "tree 12",
                f"object {C1}",
                "type commit",
                "type blob",
                "tag v",
                "tagger",
            ]
        ),
        max_size=5,
    ),
    st.booleans(),
    st.sampled_from(["commit", "tag"]),
)
def test_commit_and_tag_check_differential_fuzz(
    repo: Path, lines: list[str], final_nl: bool, type_name: str
) -> None:
    data = "\n".join(lines).encode() + (b"\n" if final_nl else b"")
    status, _out, err = git_verdict(repo, type_name, data)
    assert our_verdict(SHA1, type_name, data) == (status, err)


@settings(max_examples=200, deadline=None)
@given(
    st.binary(max_size=200),
    st.sampled_from(["commit", "tree", "tag"]),
    st.sampled_from([SHA1, SHA256]),
)
def test_check_fuzz_raises_only_check_errors(data: bytes, type_name: str, fmt) -> None:  # type: ignore[no-untyped-def]
    try:
        check_object(fmt, type_name, data)
    except ObjectCheckError as e:
        assert e.message in (
            "corrupt commit",
            "corrupt tag",
            "too-short tree object",
            "refusing to create malformed object",
            "malformed mode in tree entry",
            "empty filename in tree entry",
        )
