"""gitattributes: patterns, precedence and macros as ``git check-attr`` answers them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gitodb.objects.attributes import AttributeStack, parse_file
from gitodb.objects.wildmatch import wildmatch
from gitodb.repo import Repository
from gitodb.repo.attributes import AttributeReader
from helpers import git_env

PATHS = [
    "a.txt",
    "b.bin",
    "dir/a.txt",
    "dir/sub/c.c",
    "dir/sub/deep/x.txt",
    "doc/readme",
    "doc/x/readme",
    "README",
    "sub/file",
    "sub/a.txt",
    "Makefile",
    "weird name.txt",
    "[x].md",
]

TOP = b"""\
# comment
*.txt text eol=crlf
*.bin binary
[attr]mine diff=mine -text myflag=yes
*.c mine
dir/** ident
/doc/readme filter=docs
doc/** -ident
**/deep/** deep
Makefile -text !eol
"weird name.txt" quoted
\\[x\\].md literal
sub/ dironly
README foo=bar
"""
SUB = b"""\
*.txt -text other
file nested
[attr]bad -text
"""
INFO = b"""\
*.txt eol=lf
"""


def _env(tmp_path: Path) -> dict[str, str]:
    env = git_env()
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    env["GIT_ATTR_NOSYSTEM"] = "1"
    return env


def _check_attr(repo: Path, env: dict[str, str], paths: list[str]) -> dict[str, dict[str, str]]:
    """``git check-attr -a`` per path: {path: {attr: value}} (set/unset/<value>)."""
    proc = subprocess.run(
        ["git", "check-attr", "-z", "-a", "--stdin"],
        cwd=repo,
        input=b"".join(p.encode() + b"\0" for p in paths),
        capture_output=True,
        env=env,
        check=True,
    )
    fields = proc.stdout.split(b"\0")
    out: dict[str, dict[str, str]] = {p: {} for p in paths}
    for i in range(0, len(fields) - 2, 3):
        out[fields[i].decode()][fields[i + 1].decode()] = fields[i + 2].decode()
    return out


def _shown(attrs: dict[str, object]) -> dict[str, str]:
    """Our attributes as check-attr -a prints them (unspecified ones are left out)."""
    words = {True: "set", False: "unset"}
    return {k: words.get(v, v) for k, v in attrs.items() if v is not None}  # type: ignore[misc]


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(r)], check=True, env=_env(tmp_path))
    (r / ".gitattributes").write_bytes(TOP)
    (r / "sub").mkdir()
    (r / "sub" / ".gitattributes").write_bytes(SUB)
    (r / ".git" / "info").mkdir(exist_ok=True)
    (r / ".git" / "info" / "attributes").write_bytes(INFO)
    return r


def test_attributes_match_git_check_attr(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = _env(tmp_path)
    for k in ("XDG_CONFIG_HOME", "GIT_ATTR_NOSYSTEM"):
        monkeypatch.setenv(k, env[k])
    expected = _check_attr(repo, env, PATHS)
    r = Repository(repo)
    reader = AttributeReader(r, r.config, work_tree=str(repo))
    for path in PATHS:
        assert _shown(reader.attributes(path)) == expected[path], path
    # the macro in a subdirectory is refused with Git's message
    assert "[attr]bad not allowed: sub/.gitattributes:3" in capsys.readouterr().err


def test_global_attributes_file_has_lowest_precedence(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _env(tmp_path)
    glob = tmp_path / "global-attrs"
    glob.write_bytes(b"*.txt eol=crlf globalflag\n*.c text\n")
    subprocess.run(
        ["git", "config", "core.attributesFile", str(glob)], cwd=repo, env=env, check=True
    )
    monkeypatch.setenv("GIT_ATTR_NOSYSTEM", "1")
    expected = _check_attr(repo, env, PATHS)
    r = Repository(repo)
    reader = AttributeReader(r, r.config, work_tree=str(repo))
    for path in PATHS:
        assert _shown(reader.attributes(path)) == expected[path], path
    assert reader.attributes("a.txt")["globalflag"] is True


def test_macro_expands_only_when_set() -> None:
    top = parse_file(b"[attr]m a b=1\nx m\ny -m\nz m -a\n", "t")
    stack = AttributeStack([top])
    assert stack.check("x") == {"m": True, "a": True, "b": "1"}
    assert stack.check("y") == {"m": False}
    # the later state on the line wins over the macro's
    assert stack.check("z") == {"a": False, "m": True, "b": "1"}
    assert stack.check("q.bin") == {}
    assert AttributeStack([parse_file(b"*.bin binary\n", "t")]).check("q.bin") == {
        "binary": True,
        "diff": False,
        "merge": False,
        "text": False,
    }


def test_negative_patterns_and_bad_names_are_refused() -> None:
    seen: list[str] = []
    f = parse_file(b"!x foo\nok bad@name\nfine yes\n", "f", warn=seen.append)
    assert [line.pattern for line in f.lines] == ["fine"]
    assert seen[0].startswith("warning: Negative patterns are ignored in git attributes")
    assert seen[1] == "bad@name is not a valid attribute name: f:2"


@pytest.mark.parametrize(
    ("pattern", "text", "pathname", "expected"),
    [
        ("*.c", "a.c", False, True),
        ("*.c", "dir/a.c", False, True),
        ("*.c", "dir/a.c", True, False),
        ("**/a.c", "a.c", True, True),
        ("**/a.c", "x/y/a.c", True, True),
        ("a/**/b", "a/b", True, True),
        ("a/**/b", "a/x/y/b", True, True),
        ("a/**", "a/x/y", True, True),
        ("a**b", "a/b", True, False),
        ("[a-c]x", "bx", True, True),
        ("[!a-c]x", "dx", True, True),
        ("[!a-c]x", "/x", True, False),
        ("[[:digit:]]", "7", True, True),
        ("\\*", "*", True, True),
        ("\\*", "a", True, False),
        ("?", "/", True, False),
        ("[a", "[a", True, False),
    ],
)
def test_wildmatch(pattern: str, text: str, pathname: bool, expected: bool) -> None:
    assert wildmatch(pattern, text, pathname=pathname) is expected


def test_attributes_from_a_tree_in_a_bare_repository(tmp_path: Path) -> None:
    # Git 2.55 reads a bare repository's attributes from attr.tree (none by default)
    env = _env(tmp_path)
    src = tmp_path / "src"
    subprocess.run(["git", "init", "-q", str(src)], check=True, env=env)
    (src / ".gitattributes").write_bytes(b"*.txt text eol=crlf\n")
    (src / "sub").mkdir()
    (src / "sub" / ".gitattributes").write_bytes(b"*.txt -text\n")
    subprocess.run(["git", "add", "."], cwd=src, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "m"], cwd=src, check=True, env=env)
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(bare)], check=True, env=env)
    r = Repository(bare)
    assert AttributeReader(r, r.config).attributes("a.txt") == {}
    r = Repository(bare, config_overrides=["attr.tree=HEAD"])
    reader = AttributeReader(r, r.config)
    assert reader.attributes("a.txt") == {"text": True, "eol": "crlf"}
    assert reader.attributes("sub/a.txt") == {"text": False, "eol": "crlf"}
