"""``diff-tree --check`` and ``log --check``: whitespace errors and conflict markers
in what a change adds, under ``core.whitespace`` and the ``whitespace`` and
``conflict-marker-size`` attributes, compared byte for byte (and exit status) with
the ``git`` on PATH."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitodb.errors import GitodbError
from gitodb.history.wscheck import (
    BLANK_AT_EOL,
    DEFAULT_RULE,
    INDENT_WITH_NON_TAB,
    SPACE_BEFORE_TAB,
    TAB_IN_INDENT,
    check_line,
    parse_rule,
)
from helpers import git
from oracle import assert_same

ADDED = (
    b"a \n"  # trailing space
    b"\tok\n"
    b"  \tspace before tab\n"
    b"        eight spaces\n"
    b"\t  tab then spaces\n"
    b"x\r\n"  # a CR: trailing whitespace unless cr-at-eol
    b"<<<<<<< ours\n"
    b"=======\n"
    b">>>>>>> theirs\n"
    b"<<<<<<<<<< long marker\n"
    b" \t \n"
    b"\n"
    b"\n"
)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("check") / "r"
    git("init", "-q", r)
    (r / "f.txt").write_bytes(b"keep\n")
    (r / "ends.txt").write_bytes(b"a\n\n")  # a blank line already at the end
    (r / "bin").write_bytes(b"\0 \n")
    (r / "sub").mkdir()
    (r / "sub/g.c").write_bytes(b"int x;\n")
    git("add", ".", cwd=r)
    git("commit", "-q", "-m", "one", cwd=r)
    (r / "f.txt").write_bytes(b"keep\n" + ADDED)
    (r / "ends.txt").write_bytes(b"a\n\n\n \n")  # more blank lines at the end
    (r / "bin").write_bytes(b"\0 \n  \t\n")
    (r / "sub/g.c").write_bytes(b"int x; \nint  \ty;\n")
    (r / "new.md").write_bytes(b"title  \n\n")
    (r / "no-newline").write_bytes(b"last \t")
    git("add", ".", cwd=r)
    git("commit", "-q", "-m", "two", cwd=r)
    return r


@pytest.mark.parametrize(
    "config",
    [
        [],
        ["core.whitespace=cr-at-eol"],
        ["core.whitespace=-trailing-space"],
        ["core.whitespace=-blank-at-eol,blank-at-eof"],
        ["core.whitespace=indent-with-non-tab,tabwidth=4"],
        ["core.whitespace=tab-in-indent,-space-before-tab"],
        ["core.whitespace=trail,space,cr"],  # names may be cut short
        ["core.whitespace=tabwidth=99"],  # out of range: a warning, the width stays
        ["core.whitespace=tab-in-indent,indent-with-non-tab"],  # refused
    ],
)
def test_check_matches_git(repo: Path, config: list[str]) -> None:
    pre = [x for c in config for x in ("-c", c)]
    assert_same(repo, *pre, "diff-tree", "-r", "--check", "HEAD~", "HEAD")
    assert_same(repo, *pre, "diff-tree", "--check", "HEAD")  # implies -r; the commit line


@pytest.mark.parametrize(
    "extra",
    [
        ["--exit-code"],
        ["--quiet"],
        ["-p"],  # --check prints nothing else
        ["--stat", "-M"],
        ["-a"],  # a binary file is still not checked
        ["-R"],
        ["--", "sub"],
    ],
)
def test_check_with_other_options(repo: Path, extra: list[str]) -> None:
    assert_same(repo, "diff-tree", "-r", "--check", *extra, "HEAD~", "HEAD")


def test_check_refuses_name_formats(repo: Path) -> None:
    assert_same(repo, "diff-tree", "-r", "--check", "--name-only", "HEAD~", "HEAD")


@pytest.mark.parametrize(
    "attributes",
    [
        "*.c -whitespace\n",
        "*.txt whitespace\n",  # every check but tab-in-indent
        "*.txt whitespace=tab-in-indent,-blank-at-eof\n",
        "*.txt conflict-marker-size=10\n",
        "* -diff\n",  # binary: nothing to check
    ],
)
def test_check_reads_attributes(repo: Path, tmp_path: Path, attributes: str) -> None:
    clone = tmp_path / "c"
    git("clone", "-q", repo, clone)
    (clone / ".gitattributes").write_text(attributes)
    assert_same(clone, "diff-tree", "-r", "--check", "HEAD~", "HEAD")
    # without a work tree (inside .git), the staged .gitattributes applies
    git("add", ".gitattributes", cwd=clone)
    (clone / ".gitattributes").write_text("")
    assert_same(clone, "-C", ".git", "diff-tree", "-r", "--check", "HEAD~", "HEAD")


def test_log_check(repo: Path) -> None:
    assert_same(repo, "log", "--check", "--format=%s")


def test_rules_parse_as_git() -> None:
    assert parse_rule(None) == DEFAULT_RULE
    assert parse_rule("-space-before-tab") & SPACE_BEFORE_TAB == 0
    assert parse_rule("indent,tabwidth=4") & (INDENT_WITH_NON_TAB | 0o77) == (
        INDENT_WITH_NON_TAB | 4
    )
    with pytest.raises(GitodbError, match="cannot enforce both"):
        parse_rule("tab-in-indent,indent-with-non-tab")
    rule = parse_rule("tab-in-indent")
    assert check_line(b"\tx\n", rule) == TAB_IN_INDENT
    assert check_line(b"x \n", rule) == BLANK_AT_EOL
    assert check_line(b"  \tx\n", DEFAULT_RULE) == SPACE_BEFORE_TAB


_RULE_WORDS = st.sampled_from(
    [
        "trailing-space",
        "trail",
        "space-before-tab",
        "indent-with-non-tab",
        "indent",
        "cr-at-eol",
        "blank-at-eol",
        "blank-at-eof",
        "blank",
        "tab-in-indent",
        "tab",
        "tabwidth=",
        "nope",
        "",
    ]
)
_rules = st.lists(
    st.tuples(
        st.sampled_from(["", "-", " ", ", "]), _RULE_WORDS, st.sampled_from(["", "2", "8", "99"])
    ),
    max_size=4,
).map(lambda items: ",".join(p + w + (n if w == "tabwidth=" else "") for p, w, n in items))


@settings(max_examples=25, deadline=None)
@given(_rules)
def test_random_core_whitespace_as_git(repo: Path, rules: str) -> None:
    """core.whitespace strings as Git's parse_whitespace_rule reads them (prefixes,
    negations, tab widths in and out of range, unknown words, the refused pair)."""
    assert_same(
        repo, "-c", f"core.whitespace={rules}", "diff-tree", "-r", "--check", "HEAD~", "HEAD"
    )
