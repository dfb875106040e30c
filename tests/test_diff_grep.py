"""``diff-tree -G<regex>`` and ``log -G``: the changes whose diff adds or removes a
matching line, POSIX extended regular expressions as Git reads them, compared byte
for byte with the ``git`` on PATH."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import git
from oracle import assert_same


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("grep") / "r"
    git("init", "-q", r)
    (r / "src").mkdir()
    (r / "src/a.c").write_text("int main(void) {\n\treturn 0;\n}\n")
    (r / "src/b.c").write_text("static int x = 1;\n/* needle */\n")
    (r / "bin").write_bytes(b"\0needle\n")
    (r / "notes.txt").write_text("moved needle\nother\n")
    git("add", ".", cwd=r)
    git("commit", "-q", "-m", "one", cwd=r)
    (r / "src/a.c").write_text("int main(void) {\n\treturn 1;\n}\n")
    (r / "src/b.c").write_text("static int x = 2;\n/* needle */\n")
    (r / "bin").write_bytes(b"\0needle2\n")
    (r / "notes.txt").write_text("other\nmoved needle\n")  # the needle only moves
    (r / "new.txt").write_text("Word_1 and word2\n")
    git("add", ".", cwd=r)
    git("commit", "-q", "-m", "two", cwd=r)
    (r / ".gitattributes").write_text("*.c -diff\n")
    (r / "src/b.c").write_text("static int x = 3;\n")
    git("add", ".", cwd=r)
    git("commit", "-q", "-m", "three", cwd=r)
    return r


@pytest.mark.parametrize(
    "pattern",
    [
        "return",
        "needle",  # moved in notes.txt: no added or removed line holds it
        "x = [0-9]",
        "^\treturn [[:digit:]];$",
        "[^[:alpha:][:space:]]",
        "\\<word",  # a word starting, not "Word_1" (no: _1 follows) nor inside words
        "d2\\>",
        "(int|static) +[a-z]",
        "a{2,}|1{1}",
        "\\t",  # an escaped ordinary letter is the letter
        ")",  # a ) with no ( is a literal
    ],
)
def test_grep_matches_git(repo: Path, pattern: str) -> None:
    assert_same(repo, "diff-tree", "-r", "-G" + pattern, "HEAD~2", "HEAD~")
    assert_same(repo, "diff-tree", "-r", "-p", "-G", pattern, "HEAD~2", "HEAD~")
    assert_same(repo, "log", "--format=%s", "--name-status", "-G" + pattern)


@pytest.mark.parametrize(
    "args",
    [
        ["-Gneedle", "-a"],  # the binary file is read as text
        ["-Gx = 3"],  # a -diff attribute makes src/b.c binary: not searched
        ["-Gx = 3", "-a"],
        ["-Greturn", "--pickaxe-all"],
        ["-Gneedle", "-Sneedle"],
        ["-Gneedle", "--pickaxe-regex"],
        ["-G("],
        ["-G[[:nope:]]"],
        ["-Ga{2,1}"],
        ["-S"],
    ],
)
def test_grep_options_and_errors_match_git(repo: Path, args: list[str]) -> None:
    assert_same(repo, "diff-tree", "-r", *args, "HEAD~2", "HEAD")


def test_pickaxe_before_renames_and_copies_are_told_apart(tmp_path: Path) -> None:
    """A deleted file copied twice is a copy and a rename; when the pickaxe keeps only
    the rename's pairing, Git still calls it a copy (the statuses are decided after
    the pickaxe, among the pairings it left)."""
    r = tmp_path / "r"
    git("init", "-q", r)
    (r / "src").write_text("".join(f"{i}\n" for i in range(50)))
    git("add", ".", cwd=r)
    git("commit", "-q", "-m", "one", cwd=r)
    (r / "a_copy").write_text("".join(f"{i}\n" for i in range(50)) + "needle\n")
    (r / "b_copy").write_text("".join(f"{i}\n" for i in range(50)) + "other\n")
    git("rm", "-q", "src", cwd=r)
    git("add", ".", cwd=r)
    git("commit", "-q", "-m", "two", cwd=r)
    for args in (
        ["-C"],
        ["-C", "-Gother"],
        ["-C", "-Sother"],
        ["-C", "-Gneedle"],
        ["-M", "-Gother"],
    ):
        out = assert_same(r, "diff-tree", "-r", "--name-status", *args, "HEAD~", "HEAD")
        if args == ["-C", "-Gother"]:
            assert out.startswith(b"C")
