"""``refs verify``: Git 2.55's reftable checks and its severities (``--strict``, ``fsck.<id>``).

Reftable repositories are made by ``gitodb refs migrate`` from one the ``git`` on
PATH builds; damaged tables are written with gitodb's table writer.  Expected
lines are what Git 2.55 printed for the same damage (recorded here; with
``../shared`` present, ``test_same_as_git_255`` also compares directly).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gitodb.refs.verify import table_name_ok
from gitodb.reftable.records import RefRecord
from gitodb.reftable.writer import TableWriter
from helpers import GIT_ENV, git, run_cli

GIT255 = Path(__file__).resolve().parents[2] / "shared" / "git-2.55" / "git" / "bin" / "git"
ZERO = "0" * 40

#: Git 2.55's verdict on each name in tables.list (``table_has_valid_name``)
NAMES = [
    ("foo.ref", False),
    ("0x1-0x2.ref", False),
    ("0x1-0x2-abc.txt", False),
    ("0x1-0x2-abc.log", True),
    ("1-2-3.ref", True),
    ("-1-2-3.ref", True),
    ("0x1-0x2-0x3.ref", True),
    ("0x1-0x2-3g.ref", False),
    ("1-2-3.ref.", False),
    ("+1-2-3.ref", True),
    ("--1-2-3.ref", False),
    ("0x-1-2.ref", False),
    ("0xg-1-2.ref", False),
    ("1-2-.ref", True),
    ("-.ref", False),
    ("--.ref", True),
    ("---.ref", False),
    ("1-2-3.REF", False),
    ("1-2-3.refs", False),
    ("0x000000000001-0x000000000002-ffffffffffffffff.ref", True),
    ("0x1-0x2-10000000000000000.ref", False),
    ("ffffffffffffffff-0-0.log", True),
    ("10000000000000000-0-0.log", False),
    ("1-0000000000000000000000000001-2.ref", True),
    ("0X1-0X2-0X3.ref", True),
    ("1--2-3.ref", True),
]


@pytest.mark.parametrize(("name", "valid"), NAMES)
def test_table_names_as_git_reads_them(name: str, valid: bool) -> None:
    assert table_name_ok(name) is valid


@pytest.fixture(autouse=True)
def _identity(git_identity: None) -> None:
    """Every test runs with the test identity alone (``conftest.git_identity``)."""


def _out(capfd: pytest.CaptureFixture[str], repo: Path, *args: str) -> tuple[int, str]:
    capfd.readouterr()
    status = run_cli(repo, *args)
    out, err = capfd.readouterr()
    assert out == ""
    return status, err


def _reftable_repo(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    git("init", "-q", "-b", "main", repo)
    git("-C", repo, "commit", "-q", "--allow-empty", "-m", "one")
    head = git("-C", repo, "rev-parse", "HEAD").decode().strip()
    assert _out(capfd, repo, "refs", "migrate", "--ref-format=reftable") == (0, "")
    return repo, head


def _add_table(stack: Path, name: str, refs: list[RefRecord], ui: int = 50) -> None:
    stack.mkdir(parents=True, exist_ok=True)
    (stack / name).write_bytes(TableWriter().write(refs, [], ui, ui))
    with open(stack / "tables.list", "a") as f:
        f.write(name + "\n")


def _table(ui: int) -> str:
    return f"0x{ui:012x}-0x{ui:012x}-0123abcd.ref"


def test_bad_table_name_is_a_warning(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo, head = _reftable_repo(tmp_path, capfd)
    assert _out(capfd, repo, "refs", "verify") == (0, "")
    stack = repo / ".git" / "reftable"
    first = (stack / "tables.list").read_text().split()[0]
    shutil.copy(stack / first, stack / "foo.ref")
    (stack / "tables.list").write_text(f"foo.ref\n{first}\n")
    warning = "foo.ref: badReftableTableName: invalid reftable table name\n"
    assert _out(capfd, repo, "refs", "verify") == (0, "warning: " + warning)
    assert _out(capfd, repo, "refs", "verify", "--strict") == (255, "error: " + warning)
    assert _out(capfd, repo, "refs", "verify", "--verbose") == (
        0,
        f"Checking references consistency\nChecking table: foo.ref\nwarning: {warning}"
        f"Checking table: {first}\n",
    )
    assert _out(capfd, repo, "-c", "fsck.badReftableTableName=error", "refs", "verify") == (
        255,
        "error: " + warning,
    )
    # an explicit setting wins over --strict, as in Git
    assert _out(
        capfd, repo, "-c", "fsck.badreftabletablename=warn", "refs", "verify", "--strict"
    ) == (0, "warning: " + warning)
    assert _out(capfd, repo, "-c", "fsck.badReftableTableName=ignore", "refs", "verify") == (0, "")
    assert _out(capfd, repo, "-c", "fsck.badReftableTableName=info", "refs", "verify") == (
        128,
        "fatal: Unknown fsck message type: 'info'\n",
    )
    assert _out(capfd, repo, "-c", "fsck.bogus=warn", "refs", "verify") == (
        128,
        "fatal: Unhandled message id: bogus\n",
    )


def test_record_checks(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo, head = _reftable_repo(tmp_path, capfd)
    oid = bytes.fromhex(head)
    stack = repo / ".git" / "reftable"
    _add_table(
        stack,
        _table(50),
        [
            RefRecord(b"refs/heads/a..b", 50, 1, oid),  # Git 2.55 does not check names here
            RefRecord(b"refs/heads/s", 50, 3, target=b"bad..x"),
            RefRecord(b"refs/heads/t", 50, 3, target=b"foo/bar"),
            RefRecord(b"refs/heads/u", 50, 2, oid, b"\0" * 20),  # nor peeled ids
            RefRecord(b"refs/heads/v", 50, 3, target=b"HEAD"),
            RefRecord(b"refs/heads/w", 50, 3, target=b"refs/../x"),
            RefRecord(b"refs/heads/y", 50, 1, b"\0" * 20),
            RefRecord(b"refs/heads/z", 50, 1, b"\0" * 20),
        ],
    )
    # a newer table hides z's zero id and deletes y: only the merged view is checked
    _add_table(
        stack,
        _table(51),
        [RefRecord(b"refs/heads/y", 51, 0), RefRecord(b"refs/heads/z", 51, 1, oid)],
        51,
    )
    _add_table(stack, _table(52), [RefRecord(b"refs/heads/zero", 52, 1, b"\0" * 20)], 52)
    assert _out(capfd, repo, "refs", "verify") == (
        255,
        "error: refs/heads/s: badReferentName: points to invalid refname 'bad..x'\n"
        "warning: refs/heads/t: symrefTargetIsNotARef: points to non-ref target 'foo/bar'\n"
        "error: refs/heads/w: badReferentName: points to invalid refname 'refs/../x'\n"
        f"error: refs/heads/zero: badRefOid: points to invalid object ID '{ZERO}'\n",
    )
    # a bad referent that is only a warning goes on to the not-a-ref check
    assert _out(
        capfd,
        repo,
        "-c",
        "fsck.badReferentName=warn",
        "-c",
        "fsck.badRefOid=ignore",
        "-c",
        "fsck.symrefTargetIsNotARef=error",
        "refs",
        "verify",
    ) == (
        255,
        "warning: refs/heads/s: badReferentName: points to invalid refname 'bad..x'\n"
        "error: refs/heads/s: symrefTargetIsNotARef: points to non-ref target 'bad..x'\n"
        "error: refs/heads/t: symrefTargetIsNotARef: points to non-ref target 'foo/bar'\n"
        "warning: refs/heads/w: badReferentName: points to invalid refname 'refs/../x'\n",
    )


def test_worktree_stacks(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo, head = _reftable_repo(tmp_path, capfd)
    wt = repo / ".git" / "worktrees" / "wt" / "reftable"
    _add_table(wt, "bar.ref", [RefRecord(b"HEAD", 50, 3, target=b"refs/heads/a..b")])
    first = (repo / ".git" / "reftable" / "tables.list").read_text().split()[0]
    assert _out(capfd, repo, "refs", "verify", "--verbose") == (
        255,
        f"Checking references consistency\nChecking table: {first}\n"
        "Checking references consistency\nChecking table: bar.ref\n"
        "warning: bar.ref: badReftableTableName: invalid reftable table name\n"
        "error: worktrees/wt/HEAD: badReferentName: points to invalid refname "
        "'refs/heads/a..b'\n",
    )


def test_unreadable_table_is_an_error(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Git 2.55 crashes here (SIGSEGV); gitodb names the table and fails."""
    repo, _ = _reftable_repo(tmp_path, capfd)
    stack = repo / ".git" / "reftable"
    first = (stack / "tables.list").read_text().split()[0]
    with open(stack / first, "r+b") as f:
        f.write(b"XXXX")
    status, err = _out(capfd, repo, "refs", "verify")
    assert status == 255
    assert err.startswith(f"error: {first}: badReftableTable: ") and err.count("\n") == 1
    with open(stack / "tables.list", "a") as f:
        f.write(_table(9) + "\n")
    status, err = _out(capfd, repo, "refs", "verify")
    assert status == 255 and f"error: {_table(9)}: badReftableTable: " in err


def test_files_severities_and_wording(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    git("init", "-q", "-b", "main", repo)
    git("-C", repo, "commit", "-q", "--allow-empty", "-m", "one")
    head = git("-C", repo, "rev-parse", "HEAD").decode().strip()
    heads = repo / ".git" / "refs" / "heads"
    (heads / "trail").write_text(f"{head}\n\n")
    # Git 2.55: anything after the id but one LF is "garbage", blanks too
    assert _out(capfd, repo, "refs", "verify") == (
        0,
        "warning: refs/heads/trail: trailingRefContent: has trailing garbage: '\n\n'\n",
    )
    (heads / "trail").unlink()
    (heads / "badc").write_text("zzz\n")
    assert _out(capfd, repo, "refs", "verify") == (
        255,
        "error: refs/heads/badc: badRefContent: zzz\n",
    )
    assert _out(capfd, repo, "-c", "fsck.badRefContent=warn", "refs", "verify", "--strict") == (
        0,
        "warning: refs/heads/badc: badRefContent: zzz\n",
    )
    assert _out(capfd, repo, "-c", "fsck.badRefContent=ignore", "refs", "verify") == (0, "")
    (heads / "badc").unlink()
    (heads / "s").write_text("ref: bad..x\n")
    assert _out(capfd, repo, "refs", "verify") == (
        255,
        "error: refs/heads/s: badReferentName: points to invalid refname 'bad..x'\n",
    )
    assert _out(capfd, repo, "-c", "fsck.badReferentName=warn", "refs", "verify") == (
        0,
        "warning: refs/heads/s: badReferentName: points to invalid refname 'bad..x'\n"
        "warning: refs/heads/s: symrefTargetIsNotARef: points to non-ref target 'bad..x'\n",
    )


@pytest.mark.skipif(not GIT255.exists(), reason="needs Git 2.55")
def test_same_as_git_255(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo, head = _reftable_repo(tmp_path, capfd)
    stack = repo / ".git" / "reftable"
    first = (stack / "tables.list").read_text().split()[0]
    shutil.copy(stack / first, stack / "0x1-0x2-3g.ref")
    (stack / "tables.list").write_text(f"0x1-0x2-3g.ref\n{first}\n")
    _add_table(
        stack,
        _table(50),
        [
            RefRecord(b"refs/heads/s", 50, 3, target=b"bad..x"),
            RefRecord(b"refs/heads/z", 50, 1, b"\0" * 20),
        ],
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    for args in (
        ["refs", "verify", "--verbose"],
        ["refs", "verify", "--strict"],
        ["-c", "fsck.badReferentName=warn", "refs", "verify"],
    ):
        theirs = subprocess.run(
            [str(GIT255), *args], cwd=repo, env=env, capture_output=True, check=False
        )
        status, err = _out(capfd, repo, *args)
        assert (status, err) == (theirs.returncode, theirs.stderr.decode()), args


def test_files_worktrees_and_root_refs(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Git 2.55 checks each linked worktree's own refs (``worktrees/<id>/...``) after
    the main ones, and stops at the first root ref with an error."""
    repo = tmp_path / "repo"
    git("init", "-q", "-b", "main", repo)
    git("-C", repo, "commit", "-q", "--allow-empty", "-m", "one")
    git("-C", repo, "worktree", "add", "-q", tmp_path / "wt")
    wt = repo / ".git" / "worktrees" / "wt"
    (wt / "refs" / "bisect").mkdir(parents=True)
    (wt / "refs" / "bisect" / "bad").write_text("zzz\n")
    (wt / "FOO_HEAD").write_text("ref: refs/heads/a..b\n")
    status, err = _out(capfd, repo, "refs", "verify", "--verbose")
    assert status == 255
    assert err.endswith(
        "Checking packed-refs file .git/packed-refs\n"
        "Checking references consistency\n"
        "Checking worktrees/wt/refs/bisect/bad\n"
        "error: worktrees/wt/refs/bisect/bad: badRefContent: zzz\n"
        "Checking worktrees/wt/FOO_HEAD\n"
        "error: worktrees/wt/FOO_HEAD: badReferentName: points to invalid refname "
        "'refs/heads/a..b'\n"
    )
    shutil.rmtree(wt / "refs" / "bisect")
    (wt / "FOO_HEAD").unlink()
    (repo / ".git" / "FOO_HEAD").write_text("0000\n")
    (repo / ".git" / "BAR_HEAD").write_text("0000\n")
    status, err = _out(capfd, repo, "refs", "verify")
    assert status == 255
    assert err in (
        "error: FOO_HEAD: badRefContent: 0000\n",
        "error: BAR_HEAD: badRefContent: 0000\n",
    )


def test_head_target_and_zero_ids(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Git 2.55 (what ``git fsck`` runs as ``refs verify``, t1450): a HEAD, the main
    one or a worktree's, that names no branch is ``badHeadTarget`` (and its other
    checks are skipped); a loose ref whose id is all zeros is ``badRefOid``, unless
    its content is already reported (then Git does not get that far)."""
    repo = tmp_path / "repo"
    git("init", "-q", "-b", "main", repo)
    git("-C", repo, "commit", "-q", "--allow-empty", "-m", "one")
    git("-C", repo, "worktree", "add", "-q", tmp_path / "wt")
    gitdir = repo / ".git"
    cases = [
        (
            gitdir / "HEAD",
            f"{ZERO}\n",
            f"error: HEAD: badRefOid: points to invalid object ID '{ZERO}'\n",
        ),
        (
            gitdir / "HEAD",
            f"{ZERO}  x\n",
            "warning: HEAD: trailingRefContent: has trailing garbage: '  x\n'\n",
        ),
        (
            gitdir / "HEAD",
            "ref: refs/tags/x\n",
            "error: HEAD: badHeadTarget: HEAD points to non-branch 'refs/tags/x'\n",
        ),
        (
            gitdir / "HEAD",
            "ref: refs/funny/../x",
            "warning: HEAD: refMissingNewline: misses LF at the end\n"
            "error: HEAD: badHeadTarget: HEAD points to non-branch 'refs/funny/../x'\n",
        ),
        (
            gitdir / "ORIG_HEAD",
            f"{ZERO}\n",
            f"error: ORIG_HEAD: badRefOid: points to invalid object ID '{ZERO}'\n",
        ),
        (
            gitdir / "refs" / "heads" / "z",
            f"{ZERO}",
            "warning: refs/heads/z: refMissingNewline: misses LF at the end\n",
        ),
        (
            gitdir / "refs" / "heads" / "z",
            f"{ZERO}\n",
            f"error: refs/heads/z: badRefOid: points to invalid object ID '{ZERO}'\n",
        ),
        (gitdir / "refs" / "heads" / "s", "ref: refs/tags/x\n", ""),  # only HEAD must name a branch
        (
            gitdir / "worktrees" / "wt" / "HEAD",
            "ref: refs/funny/place\n",
            "error: worktrees/wt/HEAD: badHeadTarget: "
            "HEAD points to non-branch 'refs/funny/place'\n",
        ),
        (
            gitdir / "worktrees" / "wt" / "HEAD",
            f"{ZERO}\n",
            f"error: worktrees/wt/HEAD: badRefOid: points to invalid object ID '{ZERO}'\n",
        ),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    for path, content, want in cases:
        before = path.read_bytes() if path.exists() else None
        path.write_text(content)
        status = 255 if "error:" in want else 0
        assert _out(capfd, repo, "refs", "verify") == (status, want), content
        if GIT255.exists():
            theirs = subprocess.run(
                [str(GIT255), "refs", "verify"], cwd=repo, env=env, capture_output=True, check=False
            )
            assert (theirs.returncode, theirs.stderr.decode()) == (status, want), content
        if before is None:
            path.unlink()
        else:
            path.write_bytes(before)
    # reftable: the same HEAD check on the stack's symref
    rt, _head = _reftable_repo(tmp_path / "rt", capfd)
    stack = rt / ".git" / "reftable"
    _add_table(stack, _table(60), [RefRecord(b"HEAD", 60, 3, target=b"refs/funny/place")], 60)
    assert _out(capfd, rt, "refs", "verify") == (
        255,
        "error: HEAD: badHeadTarget: HEAD points to non-branch 'refs/funny/place'\n",
    )
