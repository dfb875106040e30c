"""``rev-list --objects --filter=<spec>`` (and ``--missing``) against ``git rev-list``.

The repositories have blobs of several sizes at several depths, a subtree shared
by two paths (the provisional omits of ``tree:<depth>`` and ``sparse:oid``), a
sparse-checkout pattern file, annotated tags, and (in a copy) deleted objects.
Omitted ids (``~``) come out in the order Git's oidset iterates them, so the
comparisons are byte for byte.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gitodb.history.objfilter import OidSet
from gitodb.objects.filter import FilterSpecError, ObjectFilter, parse_ulong, url_encode
from helpers import git
from oracle import assert_same, run

GIT255 = Path(__file__).resolve().parents[1] / ".." / "shared" / "git-2.55" / "git" / "bin" / "git"


def _commit(repo: Path, msg: str) -> None:
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", msg, cwd=repo)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("filter") / "r"
    git("init", "-q", "-b", "main", r)
    (r / "dir1" / "deep").mkdir(parents=True)
    for n in ("sparse1", "sparse2"):
        (r / n).write_text(f"This is file: {n}\n")
        (r / "dir1" / n).write_text(f"This is file: dir1/{n}\n")
    (r / "dir1" / "deep" / "big").write_text("x" * 3000)
    _commit(r, "one")
    (r / "pattern").write_text("dir1/\n!dir1/deep/\n")
    (r / "p;at%ter+n").write_text("sparse*\n")
    shutil.copytree(r / "dir1", r / "copy")  # the same trees under a second path
    (r / "small").write_text("1\n")
    _commit(r, "two")
    (r / "large").write_text("y" * 1500)
    _commit(r, "three")
    git("tag", "-a", "-m", "tag", "v1", "HEAD~1", cwd=r)
    return r


SPECS = [
    "blob:none",
    "blob:limit=0",
    "blob:limit=3",
    "blob:limit=1k",
    "blob:limit=0x400",
    "blob:limit=2000",
    "tree:0",
    "tree:1",
    "tree:2",
    "tree:3",
    "tree:4",
    "object:type=blob",
    "object:type=tree",
    "object:type=commit",
    "object:type=tag",
    "sparse:oid=main:pattern",
    "sparse:oid=main:p;at%ter+n",
    "combine:tree:2+blob:none",
    "combine:tree:1+tree:3",
    "combine:tree%3a3+blob:limit=40+sparse:oid=main:p%3bat%25ter%2bn",
    "combine:tree:2+bl%6Fb:n%6fne",
]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize(
    "extra",
    [
        (),
        ("--filter-print-omitted",),
        ("--filter-provided-objects",),
        ("--filter-print-omitted", "--quiet"),
        ("--filter-print-omitted", "--no-object-names"),
    ],
)
def test_filter_like_git(repo: Path, spec: str, extra: tuple[str, ...]) -> None:
    assert_same(repo, "rev-list", "--objects", f"--filter={spec}", *extra, "HEAD", "v1")


@pytest.mark.parametrize(
    "args",
    [
        ("--filter=tree:1", "HEAD", "HEAD:dir1/sparse1", "HEAD:copy"),  # named: not filtered
        ("--filter=tree:1", "--filter-provided-objects", "HEAD", "HEAD:dir1/sparse1"),
        ("--filter=blob:none", "HEAD", "^HEAD~1"),
        ("--filter=blob:none", "--filter=tree:2", "HEAD"),  # repeated: combined
        ("--filter=tree:0", "--filter=blob:limit=40", "--filter=sparse:oid=main:pattern", "HEAD"),
        ("--filter=blob:none", "--no-filter", "HEAD"),
        ("--filter=tree:0", "--count", "HEAD"),
        ("--filter=object:type=blob", "--filter-print-omitted", "--all"),
    ],
)
def test_filter_options_like_git(repo: Path, args: tuple[str, ...]) -> None:
    assert_same(repo, "rev-list", "--objects", *args)


@pytest.mark.parametrize(
    "spec",
    [
        "bogus",
        "blob:limit=",
        "blob:limit=-1",
        "blob:limit=1q",
        "tree:",
        "tree:x",
        "object:type=",
        "object:type=blobs",
        "combine:",
        "combine%3Atree:2+blob:none",
        "combine:tree:asdf+blob:none",
        "combine:tree:2+sparse:@xyz",
        "combine:tree:2+sparse:`",
        "combine:tree:2+sparse:~abc",
        "combine:tree:2++blob:none",
        "sparse:path=x",
        "sparse:oid=nothing-here",
        "sparse:oid=main",  # a commit, not a blob
    ],
)
def test_bad_specs_like_git(repo: Path, spec: str) -> None:
    out = assert_same(repo, "rev-list", "--objects", f"--filter={spec}", "HEAD")
    assert out == b""


def test_filter_needs_objects(repo: Path) -> None:
    assert_same(repo, "rev-list", "--filter=blob:none", "HEAD")


def test_skipping_trace_like_git(repo: Path, tmp_path: Path) -> None:
    """``GIT_TRACE`` names each tree whose contents a filter skips (Git's lines)."""
    for spec in ("tree:0", "combine:tree:1+tree:3"):
        for extra in ([], ["--filter-print-omitted"]):
            lines = []
            for name, cmd in (("git", ["git"]), ("gitodb", ["gitodb"])):
                trace = tmp_path / f"{name}.trace"
                trace.unlink(missing_ok=True)
                env = dict(os.environ, GIT_TRACE=str(trace), GIT_TRACE_BARE="1")
                import subprocess

                full = cmd if name == "git" else [os.sys.executable, "-m", "gitodb"]
                subprocess.run(
                    [*full, "rev-list", "--objects", f"--filter={spec}", *extra, "HEAD"],
                    cwd=repo,
                    env=env,
                    capture_output=True,
                    check=True,
                )
                text = trace.read_text() if trace.exists() else ""
                lines.append([x for x in text.splitlines() if x.startswith("Skipping")])
            assert lines[0] == lines[1] and lines[0], (spec, lines)


@pytest.fixture()
def damaged(repo: Path, tmp_path: Path) -> Path:
    """A clone of ``repo`` missing one tree (``dir1`` of HEAD) and one blob."""
    r = tmp_path / "damaged"
    shutil.copytree(repo, r)  # loose objects, as committed
    for rev in ("HEAD:dir1/deep", "HEAD:large"):
        oid = git("rev-parse", rev, cwd=r).decode().strip()
        (r / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    return r


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("--quiet",),
        ("--missing=error",),
        ("--missing=allow-any",),
        ("--missing=allow-promisor",),
        ("--missing=bogus",),
        ("--missing=allow-any", "--filter=blob:none"),
        ("--missing=error", "--filter=blob:none"),
    ],
)
def test_missing_like_git(damaged: Path, args: tuple[str, ...]) -> None:
    for root in ("HEAD", "HEAD~2"):
        assert_same(damaged, "rev-list", "--objects", *args, root)


def test_missing_print_like_git(damaged: Path) -> None:
    """``--missing=print``: the ``?`` lines (a set: Git's order is its hash map's)."""
    for extra in ([], ["--filter=tree:2"], ["--filter-print-omitted", "--filter=blob:none"]):
        (rc1, out1, err1) = run(
            ["git", "rev-list", "--objects", "--missing=print", *extra, "HEAD"], damaged
        )
        (rc2, out2, err2) = run(
            [
                os.sys.executable,
                "-m",
                "gitodb",
                "rev-list",
                "--objects",
                "--missing=print",
                *extra,
                "HEAD",
            ],
            damaged,
        )
        assert (rc1, err1) == (rc2, err2)
        q1 = [x for x in out1.splitlines() if x.startswith(b"?")]
        q2 = [x for x in out2.splitlines() if x.startswith(b"?")]
        assert [x for x in out1.splitlines() if not x.startswith(b"?")] == [
            x for x in out2.splitlines() if not x.startswith(b"?")
        ]
        assert sorted(q1) == sorted(q2) and q1


@pytest.mark.skipif(not GIT255.exists(), reason="needs ../shared/git-2.55")
def test_missing_print_info_like_git_255(damaged: Path) -> None:
    args = ["rev-list", "--objects", "--missing=print-info", "HEAD~1"]
    rc1, out1, err1 = run([str(GIT255), *args], damaged)
    rc2, out2, err2 = run([os.sys.executable, "-m", "gitodb", *args], damaged)
    assert (rc1, out1, err1) == (rc2, out2, err2)
    assert b" path=copy/deep type=tree" in out1


def test_spec_parsing() -> None:
    assert parse_ulong("0x10") == 16
    assert parse_ulong("010") == 8
    assert parse_ulong("2k") == 2048
    assert parse_ulong("09") is None
    assert url_encode("main:p;at%ter+n") == "main:p%3bat%25ter%2bn"
    f = ObjectFilter.parse("blob:limit=1k", ObjectFilter.parse("tree:3"))
    assert f.spec == "combine:tree:3+blob:limit=1k"  # ":" needs no escape
    assert [p.kind for p in f.parts] == ["tree", "blob:limit"]
    with pytest.raises(FilterSpecError, match="invalid filter-spec ''"):
        ObjectFilter.parse("combine:tree:1++blob:none")


def test_oidset_iterates_like_khash() -> None:
    """Insertions, removals and growth keep khash's bucket order (checked by hand)."""
    s = OidSet()
    ids = [bytes([i, 0, 0, 0]) + bytes(16) for i in (5, 1, 9, 13, 3)]
    for oid in ids:
        assert not s.add(oid)
    assert s.add(ids[0])  # already there
    assert s.remove(ids[1]) and not s.remove(ids[1])
    assert len(s) == 4
    # 5 buckets needed -> 8: 5, 9 (at 1), 13 -> bucket 5 taken -> 6, 3
    assert [x[0] for x in s] == [9, 3, 5, 13]


@pytest.mark.skipif(not GIT255.exists(), reason="needs ../shared/git-2.55")
def test_unpacked_like_git_255(tmp_path: Path) -> None:
    """``--unpacked``: commits and objects stored in a pack are not listed (Git 2.55;
    2.39 still listed the packed trees and blobs of unpacked commits)."""
    r = tmp_path / "r"
    git("init", "-q", "-b", "main", r)
    for i in range(3):
        (r / f"f{i}").write_text(f"{i}\n")
        (r / "d").mkdir(exist_ok=True)
        (r / "d" / f"g{i}").write_text(f"g{i}\n")
        _commit(r, f"c{i}")
    git("repack", "-q", "-a", "-d", cwd=r)
    (r / "f0").write_text("new\n")
    _commit(r, "loose")
    for args in (["--objects"], [], ["--objects", "--count"], ["--objects", "--filter=blob:none"]):
        cmd = ["rev-list", "--all", "--unpacked", *args]
        theirs = run([str(GIT255), *cmd], r)
        assert run([os.sys.executable, "-m", "gitodb", *cmd], r) == theirs
        assert theirs[0] == 0


def test_indexed_objects_like_git(tmp_path: Path) -> None:
    """``--indexed-objects``: the index's blobs, then the cache-tree's valid trees."""
    r = tmp_path / "r"
    git("init", "-q", "-b", "main", r)
    (r / "two" / "deep").mkdir(parents=True)
    (r / "one").write_text("frotz\n")
    (r / "two" / "three").write_text("frotz\n")
    (r / "two" / "deep" / "x").write_text("x\n")
    _commit(r, "that")
    (r / "only-in-index").write_text("only\n")
    git("add", "only-in-index", cwd=r)  # the top tree of the cache-tree is now invalid
    for args in (
        ["--objects", "--indexed-objects"],
        ["--indexed-objects"],
        ["-1", "--objects", "HEAD", "--not", "--indexed-objects"],
        ["--objects", "--indexed-objects", "--filter=tree:1"],
    ):
        assert_same(r, "rev-list", *args)
    git("write-tree", cwd=r)  # every tree valid again
    assert_same(r, "rev-list", "--objects", "--indexed-objects")
