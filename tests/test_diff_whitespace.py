"""``diff-tree`` and ``log`` with ``-w``, ``-b``, ``--ignore-space-at-eol`` and
``--ignore-cr-at-eol``: patches, stats and exit codes as Git's, on random files with
whitespace-only edits; the raw listing as Git 2.55's (2.39 still lists a file whose
only change is ignored whitespace)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitodb.history.linediff import (
    WS_ALL,
    WS_AT_EOL,
    WS_CHANGE,
    WS_CR_AT_EOL,
    whitespace_key,
)
from helpers import git
from oracle import assert_same, both, run

GIT255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"
_WORDS = [b"foo", b"bar", b"{", b"}", b"if (x)", b"return y;", b"", b"  ", b"\t"]


def _line(rng: random.Random) -> bytes:
    indent = rng.choice([b"", b" ", b"  ", b"\t", b"    ", b"\t\t"])
    middle = rng.choice([b"", b" x", b"  x", b"\tx"])
    tail = rng.choice([b"", b"", b" ", b"\t", b"\r"])
    return indent + rng.choice(_WORDS) + middle + tail + b"\n"


def _respace(rng: random.Random, line: bytes) -> bytes:
    """The line with only its whitespace changed (indent, a run, the end, a CR)."""
    body = line.rstrip(b"\n")
    how = rng.choice(["indent", "tail", "run", "cr"])
    if how == "indent":
        body = rng.choice([b" ", b"\t", b"  "]) + body.lstrip(b" \t")
    elif how == "tail":
        body += rng.choice([b" ", b"\t", b"  "])
    elif how == "run":
        body = body.replace(b" ", b"  ", 1) if b" " in body else body + b" "
    else:
        body += b"\r"
    return body + b"\n"


def _edit(rng: random.Random, lines: list[bytes]) -> list[bytes]:
    out: list[bytes] = []
    for line in lines:
        r = rng.random()
        if r < 0.15:
            out.append(_respace(rng, line))
        elif r < 0.2:
            out.append(_line(rng))
        elif r < 0.3:
            out += [line, _line(rng)]
        elif r >= 0.35:  # else the line is deleted
            out.append(line)
    return out


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 files edited at random, most edits whitespace only (some last lines
    without a newline), plus: a whitespace-only edit beside a mode change, one in a
    rename, one in a binary file, and empty files added and deleted."""
    r = tmp_path_factory.mktemp("ws") / "r"
    git("init", "-q", r)
    rng = random.Random(7)
    (r / "d").mkdir()
    pairs = []
    for _ in range(60):
        a = [_line(rng) for _ in range(rng.randint(0, 30))]
        b = _edit(rng, a)
        if b and rng.random() < 0.2:
            b[-1] = b[-1].rstrip(b"\n")
        if a and rng.random() < 0.1:
            a[-1] = a[-1].rstrip(b"\n")
        pairs.append((a, b))
    for i, (a, _b) in enumerate(pairs):
        (r / f"d/f{i:02d}").write_bytes(b"".join(a))
    (r / "mode").write_text("x\n")
    (r / "moved").write_text("".join(f"{i}\n" for i in range(30)))
    (r / "bin").write_bytes(b"bin\0ary\n")
    (r / "gone").write_bytes(b"")
    git("add", ".", cwd=r)
    git("commit", "-q", "-m", "one", cwd=r)
    for i, (_a, b) in enumerate(pairs):
        (r / f"d/f{i:02d}").write_bytes(b"".join(b))
    (r / "mode").write_text("x \n")
    (r / "mode").chmod(0o755)
    git("mv", "moved", "moved2", cwd=r)
    (r / "moved2").write_text("".join(f"{i}{' ' if i == 5 else ''}\n" for i in range(30)))
    (r / "bin").write_bytes(b"bin\0ary \n")
    (r / "gone").unlink()
    (r / "new").write_bytes(b"")
    git("add", "-A", ".", cwd=r)
    git("commit", "-q", "-m", "two", cwd=r)
    return r


FLAGS = [
    ["-w"],
    ["-b"],
    ["--ignore-space-at-eol"],
    ["--ignore-cr-at-eol"],
    ["--ignore-all-space", "--ignore-space-change"],
    ["-b", "--ignore-cr-at-eol"],
]


@pytest.mark.parametrize("flags", FLAGS)
@pytest.mark.parametrize(
    "fmt", [["-p"], ["-p", "-M"], ["-p", "-U0"], ["-p", "-U1", "--no-indent-heuristic"], ["--stat"]]
)
def test_patches_and_stats_match_git(repo: Path, flags: list[str], fmt: list[str]) -> None:
    args = ["diff-tree", "-r", *fmt, *flags, "HEAD~", "HEAD"]
    assert_same(repo, *args)


@pytest.mark.parametrize("flags", FLAGS)
def test_numstat_and_exit_code_match_git(repo: Path, flags: list[str]) -> None:
    for extra in (["--numstat"], ["--exit-code", "-p", "--", "d/f00", "d/f01", "d/f02"]):
        args = ["diff-tree", "-r", *extra, *flags, "HEAD~", "HEAD"]
        assert_same(repo, *args)


@pytest.mark.parametrize("flags", FLAGS[:3])
def test_raw_leaves_out_ignored_changes(repo: Path, flags: list[str]) -> None:
    """Git 2.55: a modification that is only ignored whitespace is no change at all,
    in the raw listing too; each file 2.39 still lists and gitodb leaves out has an
    empty patch under the same options, and every one kept that is not a plain text
    edit (mode change, rename, binary, an empty file renamed) stays."""
    args = ["diff-tree", "-r", "-M", *flags, "HEAD~", "HEAD"]
    _theirs, ours = both(repo, *args)
    if GIT255.exists():
        assert ours == run([str(GIT255), *args], repo)
    listed = {line.split(b"\t")[-1] for line in ours[1].splitlines()}
    every = {line.split(b"\t")[-1] for line in git(*args, cwd=repo).splitlines()}
    assert {b"mode", b"moved2", b"bin", b"new"} <= listed < every  # new: gone, renamed
    for path in every - listed:
        patch = git("diff-tree", "-r", "-p", *flags, "HEAD~", "HEAD", "--", path.decode(), cwd=repo)
        assert patch == b"", path


def test_log_with_whitespace_options(repo: Path) -> None:
    for args in (["log", "-p", "-w"], ["log", "--stat", "-b"], ["log", "-p", "--ignore-cr-at-eol"]):
        assert_same(repo, *args)


_SPACE = b" \t\n\v\f\r"


def _recmatch(l1: bytes, l2: bytes, flags: int) -> bool:
    """Git's ``xdl_recmatch``, transcribed from its documented behaviour, as the
    reference for ``whitespace_key``."""
    if l1 == l2:
        return True
    i1 = i2 = 0
    s1, s2 = len(l1), len(l2)
    if flags & WS_ALL:
        while True:
            while i1 < s1 and l1[i1] in _SPACE:
                i1 += 1
            while i2 < s2 and l2[i2] in _SPACE:
                i2 += 1
            if i1 >= s1 or i2 >= s2:
                break
            if l1[i1] != l2[i2]:
                return False
            i1 += 1
            i2 += 1
    elif flags & WS_CHANGE:
        while i1 < s1 and i2 < s2:
            if l1[i1] in _SPACE and l2[i2] in _SPACE:
                while i1 < s1 and l1[i1] in _SPACE:
                    i1 += 1
                while i2 < s2 and l2[i2] in _SPACE:
                    i2 += 1
                continue
            if l1[i1] != l2[i2]:
                return False
            i1 += 1
            i2 += 1
    elif flags & WS_AT_EOL:
        while i1 < s1 and i2 < s2 and l1[i1] == l2[i2]:
            i1 += 1
            i2 += 1
    elif flags & WS_CR_AT_EOL:
        while i1 < s1 and i2 < s2 and l1[i1] == l2[i2]:
            i1 += 1
            i2 += 1

        def optional_cr(line: bytes, i: int) -> bool:
            s = len(line)
            complete = s > 0 and line[-1] == 10
            if complete:
                s -= 1
            return s == i or (complete and s == i + 1 and line[i] == 13)

        return optional_cr(l1, i1) and optional_cr(l2, i2)
    else:
        return False
    return all(c in _SPACE for c in l1[i1:]) and all(c in _SPACE for c in l2[i2:])


_lines = st.binary(max_size=8).map(lambda b: bytes(b" \t\rab\n"[x % 6] for x in b))


@given(_lines, _lines, st.sampled_from([WS_ALL, WS_CHANGE, WS_AT_EOL, WS_CR_AT_EOL]))
def test_whitespace_key_equals_when_git_matches(l1: bytes, l2: bytes, flags: int) -> None:
    key = whitespace_key(flags)
    assert key is not None
    assert (key(l1) == key(l2)) == _recmatch(l1, l2, flags)
