"""``diff-tree -M`` and ``-C``: exact renames, basename matches, copies and
similarity scores as Git's, compared byte for byte with the ``git`` on PATH."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitodb.history.renames import MAX_SCORE, parse_rename_score, similarity, span_counts
from helpers import git, run_gitodb
from oracle import assert_same, both, run

CORPUS = Path(__file__).resolve().parents[2] / "shared/corpus/libgit2.git"
GIT255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"


def gitodb(*args: str, cwd: Path, stdin: bytes | None = None) -> bytes:
    r = run_gitodb(*args, cwd=cwd, stdin=stdin)
    assert r.returncode == 0, r.stderr
    return r.stdout


def lines(n: int, tag: str = "") -> str:
    return "".join(f"line {i} {tag}\n" for i in range(n))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("rn") / "r"
    git("init", "-q", r)
    files = {
        "exact.txt": lines(30, "exact"),
        "dup1": "same\n",
        "dup2": "same\n",
        "d/moved.c": lines(80, "moved"),
        "edit.txt": lines(100, "edit"),
        "crlf.txt": lines(40, "crlf").replace("\n", "\r\n"),
        "bin.dat": "\0" + lines(60, "bin"),
        "small": "a\nb\nc\n",
        "far.txt": lines(20, "far"),
        "twin_a": lines(50, "twin"),
        "twin_b": lines(50, "twin") + "tail\n",
        "empty": "",
    }
    for name, text in files.items():
        (r / name).parent.mkdir(parents=True, exist_ok=True)
        (r / name).write_bytes(text.encode())
    git("add", ".", cwd=r)
    git("commit", "-q", "-m", "one", cwd=r)
    moves = {
        "exact.txt": "sub/exact.txt",
        "dup1": "x/dup1",
        "d/moved.c": "e/moved.c",
        "edit.txt": "edited.txt",
        "crlf.txt": "crlf2.txt",
        "bin.dat": "bin2.dat",
        "small": "small2",
        "far.txt": "far2.txt",
        "twin_a": "t/twin",
        "twin_b": "t/twin2",
        "empty": "empty2",
    }
    for old, new in moves.items():
        (r / new).parent.mkdir(parents=True, exist_ok=True)
        git("mv", old, new, cwd=r)
    (r / "e/moved.c").write_text(lines(80, "moved").replace("line 7 ", "line seven "))
    (r / "edited.txt").write_text(lines(100, "edit")[: 40 * 14] + lines(30, "new"))
    (r / "crlf2.txt").write_bytes(lines(40, "crlf").encode())  # CRLF -> LF: same spans
    (r / "small2").write_text("a\nB\nc\n")
    (r / "far2.txt").write_text(lines(20, "other"))
    (r / "t/twin2").write_text(lines(50, "twin") + "tail2\n")
    git("add", "-A", ".", cwd=r)
    git("commit", "-q", "-m", "two", cwd=r)
    return r


@pytest.mark.parametrize(
    "args",
    [
        ["-r", "-M"],
        ["-r", "-M", "--name-status"],
        ["-r", "-M", "--name-only"],
        ["-r", "-M", "-z"],
        ["-r", "-M", "-R"],
        ["-r", "-M90%"],
        ["-r", "-M2"],
        ["-r", "-M.75"],
        ["-r", "--find-renames=60%"],
        ["-r", "--find-renames"],
        ["-r", "-M", "-l1"],
        ["-M"],
    ],
)
def test_renames_match_git(repo: Path, args: list[str]) -> None:
    theirs = git("diff-tree", *args, "HEAD~", "HEAD", cwd=repo)
    assert gitodb("diff-tree", *args, "HEAD~", "HEAD", cwd=repo) == theirs
    if args == ["-r", "-M"]:
        assert theirs.count(b"\tR") == 0 and theirs.count(b" R") >= 6  # renames were found


def test_rename_scores() -> None:
    assert parse_rename_score("5") == parse_rename_score("50%") == MAX_SCORE // 2
    assert parse_rename_score("100%") == parse_rename_score("1.0") == MAX_SCORE
    assert parse_rename_score("1") == MAX_SCORE // 10  # digits are a fraction: 0.1
    assert parse_rename_score(".9") == MAX_SCORE * 9 // 10
    assert similarity(b"x\n" * 10, b"x\n" * 10, 0) == MAX_SCORE
    assert similarity(b"a" * 100, b"a" * 10, 30000) == 0  # sizes too far apart
    # CR before LF does not count in text, but does in binary
    assert span_counts(b"ab\r\n") == span_counts(b"ab\n")
    assert span_counts(b"\0ab\r\n") != span_counts(b"\0ab\n")


@pytest.mark.skipif(not CORPUS.exists(), reason="needs ../shared/corpus")
def test_renames_in_libgit2_history() -> None:
    revs = git("rev-list", "--first-parent", "HEAD", cwd=CORPUS).split()
    hits = []
    out = git("diff-tree", "--stdin", "-r", "-M", cwd=CORPUS, input=b"\n".join(revs) + b"\n")
    commit = None
    for line in out.split(b"\n"):
        if len(line) == 40:
            commit = line
        elif b" R" in line[:120] and commit is not None and commit not in hits:
            hits.append(commit)
    assert len(hits) >= 10
    stdin = b"\n".join(hits[:10]) + b"\n"
    for args in (["-r", "-M"], ["-r", "-M30%", "--name-status"]):
        theirs = git("diff-tree", "--stdin", *args, cwd=CORPUS, input=stdin)
        assert gitodb("diff-tree", "--stdin", *args, cwd=CORPUS, stdin=stdin) == theirs


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Copies of every kind: of an unchanged file, of a modified one (its old and its
    new content), of a deleted one (twice: one copy, one rename), of a symlink and of
    a directory, with renames beside them."""
    r = tmp_path_factory.mktemp("cp") / "r"
    git("init", "-q", r)
    for name in ("d/a", "d/e/b", "f/c", "top", "gone"):
        (r / name).parent.mkdir(parents=True, exist_ok=True)
        (r / name).write_text(lines(40, name))
    (r / "e1").write_text("same\n")
    (r / "link").symlink_to("top")
    git("add", ".", cwd=r)
    git("commit", "-q", "-m", "one", cwd=r)
    (r / "d2/e").mkdir(parents=True)
    (r / "d2/e/b").write_text(lines(40, "d/e/b"))  # an unchanged file, copied
    (r / "f/c2").write_text(lines(40, "f/c"))
    (r / "g").write_text(lines(40, "f/c") + "more\n")  # a near copy of it
    (r / "top").write_text(lines(40, "top") + "change\n")
    (r / "top2").write_text(lines(40, "top"))  # the old content of a modified file
    (r / "top3").write_text(lines(40, "top") + "change\n")  # ... and its new one
    (r / "link2").symlink_to("top")
    (r / "d/a").write_text(lines(40, "d/a").replace("line 3 ", "LINE 3 "))
    (r / "d2/a").write_text(lines(40, "d/a"))
    git("rm", "-q", "e1", "gone", cwd=r)
    (r / "e1b").write_text("same\n")  # a deleted file, twice
    (r / "e1c").write_text("same\n")
    (r / "gone2").write_text(lines(40, "gone") + "x\n")
    git("add", "-A", ".", cwd=r)
    git("commit", "-q", "-m", "two", cwd=r)
    return r


@pytest.mark.parametrize(
    "args",
    [
        ["-r", "-C"],
        ["-r", "-C", "-C"],
        ["-r", "--find-copies-harder"],
        ["-r", "-C", "--find-copies-harder", "--name-status"],
        ["-C", "-C"],  # not recursive: a directory is copied whole
        ["-C"],
        ["-r", "-C", "-M"],  # -M after -C: renames only
        ["-r", "-M", "-C"],
        ["-r", "-C30"],
        ["-r", "--find-copies=90%"],
        ["-r", "--find-copies"],
        ["-r", "-C", "-C", "-R"],
        ["-r", "-C", "-C", "-z"],
        ["-r", "-C", "-C", "-p"],
        ["-r", "-C", "--stat"],
        ["-r", "-C", "-C", "--summary"],
        ["-r", "-C", "-C", "--", "d", "f"],
        ["-C", "-C", "--", "d2"],
        ["-r", "--find-copies-harder", "--no-renames"],
        # the rename limit: skipped, or -C -C falling back to -C, with Git's warnings
        ["-r", "-C", "-l1"],
        ["-r", "-C", "-C", "-l1"],
        ["-r", "-C", "-C", "-l3"],
        ["-r", "-M", "-l1"],
    ],
)
def test_copies_match_git(copies: Path, args: list[str]) -> None:
    theirs = assert_same(copies, "diff-tree", *args, "HEAD~", "HEAD")
    if args == ["-r", "-C", "-C"]:
        assert theirs.count(b" C100\t") >= 4 and theirs.count(b" R") >= 1


@pytest.mark.parametrize("arg", ["-Mx", "-M50%x", "-C5.5.5", "--find-copies=1y", "-Cfoo"])
def test_bad_rename_score_is_a_usage_error(copies: Path, arg: str) -> None:
    theirs, ours = both(copies, "diff-tree", "-r", arg, "HEAD~", "HEAD")
    assert ours == theirs and ours[0] == 129 and ours[1] == b""


def test_unchanged_files_never_reach_the_output(copies: Path) -> None:
    """With --find-copies-harder the tree diff reports unchanged files (``=``) as copy
    sources; nothing to pair (no additions) or pairs found, they are left out."""
    head = git("rev-parse", "HEAD^{tree}", cwd=copies).strip().decode()
    for old, new in (("HEAD^{tree}", head), (head, "HEAD~^{tree}")):
        theirs = git("diff-tree", "-r", "-C", "-C", old, new, cwd=copies)
        assert gitodb("diff-tree", "-r", "-C", "-C", old, new, cwd=copies) == theirs
        assert b" =\t" not in theirs


@pytest.mark.skipif(not CORPUS.exists(), reason="needs ../shared/corpus")
def test_copies_in_libgit2_history() -> None:
    revs = git("rev-list", "--first-parent", "HEAD", cwd=CORPUS)
    out = git("diff-tree", "--stdin", "-r", "-C", cwd=CORPUS, input=revs)
    hits = []
    commit = None
    for line in out.split(b"\n"):
        if len(line) == 40:
            commit = line
        elif b" C" in line[:120] and commit is not None and commit not in hits:
            hits.append(commit)
    assert len(hits) >= 5
    stdin = b"\n".join(hits) + b"\n"
    for args in (["-r", "-C"], ["-r", "-C", "-C", "--name-status"]):
        theirs = git("diff-tree", "--stdin", *args, cwd=CORPUS, input=stdin)
        assert gitodb("diff-tree", "--stdin", *args, cwd=CORPUS, stdin=stdin) == theirs


@pytest.mark.parametrize(
    "args",
    [
        ["-C"],
        ["-C", "-C", "-p"],
        ["--find-copies-harder", "--stat"],
        ["-l1"],  # log finds renames by default: the limit warns at the end
        ["-C", "-C", "-l3"],
        ["-l", "1"],
        ["-c", "diff.renames=copies"],
    ],
)
def test_log_copies_match_git(copies: Path, args: list[str]) -> None:
    if args[0] == "-c":  # a config setting: before the command
        cmd = [*args, "log", "--format=%s", "--name-status"]
    else:
        cmd = ["log", "--format=%s", "--name-status", *args]
    assert_same(copies, *cmd)


@pytest.mark.parametrize("arg", ["-lx", "-l", "-l1k", "-l0x2", "-l-1", "-l99999999999", "-l2g"])
def test_rename_limit_values_as_git(copies: Path, arg: str) -> None:
    """``-l`` is an integer option: C's number syntax and a k/m/g unit, Git 2.55's
    errors (2.39 takes decimal digits only and says "expects a numerical value")."""
    for cmd in (["diff-tree", "-r", "-C", arg, "HEAD~", "HEAD"], ["log", "--name-status", arg]):
        theirs, ours = both(copies, *cmd)
        if GIT255.exists():
            assert ours == run([str(GIT255), *cmd], copies), cmd
        if arg in ("-lx", "-l", "-l-1"):  # where 2.39 agrees
            assert ours[:2] == theirs[:2], cmd


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(["-M", "-C", "--find-renames=", "--find-copies="]),
    st.text("0123456789.%x", max_size=5),
)
def test_random_rename_scores_as_git(copies: Path, option: str, value: str) -> None:
    """Scores as Git's parse_rename_score reads them (digits as a fraction, a dot, a
    percent sign) and its error for anything after them."""
    assert_same(copies, "diff-tree", "-r", "--name-status", option + value, "HEAD~", "HEAD")
