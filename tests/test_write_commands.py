"""mktag, mktree and commit-tree against the ``git`` on PATH, and their library calls
(``ObjectWriter.write_tag_checked``/``write_tree_entries``/``write_commit_tree``,
``gitodb.repo.ident``, ``gitodb.objects.parsedate``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitodb.errors import GitodbWarning, ObjectCheckError, ObjectNotFoundError, ObjectTypeError
from gitodb.objects.parsedate import format_date, parse_date
from gitodb.repo import Repository
from gitodb.repo.ident import strip_crud
from gitodb.repo.write import ObjectWriter, TreeInput, parse_mktree_line, utf8_or_latin1
from helpers import git, git_env


def run(
    prog: str, repo: Path, *args: str, input: bytes = b"", env: dict[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    e = git_env()
    e.update(env or {})
    cmd = ["git"] if prog == "git" else [sys.executable, "-m", "gitodb"]
    p = subprocess.run(
        [*cmd, *args], cwd=repo, input=input, capture_output=True, env=e, check=False
    )
    return p.returncode, p.stdout, p.stderr.replace(b"gitodb", b"git")


def same(repo: Path, *args: str, input: bytes = b"", env: dict[str, str] | None = None) -> None:
    assert run("gitodb", repo, *args, input=input, env=env) == run(
        "git", repo, *args, input=input, env=env
    )


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("write") / "r"
    git("init", "-q", path)
    for d in ("a", "a-", "a0"):
        (path / d).mkdir()
        (path / d / "one").write_bytes(f"{d}/one\n".encode())
    (path / "one").write_bytes(b"one\n")
    git("add", "-A", cwd=path)
    git("commit", "-q", "-m", "one", cwd=path)
    head = git("rev-parse", "HEAD", cwd=path).strip().decode()
    git("update-index", "--add", "--cacheinfo", f"160000,{head},sub", cwd=path)
    git("commit", "-q", "-m", "two", cwd=path)
    return path


def rev(repo: Path, name: str) -> str:
    return git("rev-parse", name, cwd=repo).strip().decode()


# -- mktag ---------------------------------------------------------------------------
def tag_cases(repo: Path) -> list[bytes]:
    head, tree = rev(repo, "HEAD"), rev(repo, "HEAD^{tree}")
    t = "tagger T A Gger <tagger@example.com> 1206478233 -0500\n"
    return [
        f"object {head}\ntype commit\ntag mytag\n{t}".encode(),
        f"object {head}\ntype commit\ntag mytag\n{t}\nbody\n".encode(),
        b"too short for a tag\n",
        f"xxxxxx {head}\ntype tag\ntag mytag\ntagger . <> 0 +0000\n".encode(),
        f"object {head}\nxxxx tag\ntag mytag\n{t}".encode(),
        f"object {head}\ntype tagsssssss".encode(),
        f"object {head}\ntype taggggggggg\ntag\n".encode(),
        f"object {'1' * 40}\ntype tag\ntag mytag\n{t}".encode(),
        f"object {head}\ntype tree\ntag mytag\n{t}".encode(),
        f"object {tree}\ntype tree\ntag mytag\n{t}".encode(),
        f"object {head}\ntype commit\ntag my\ttag\n{t}".encode(),
        f"object {head}\ntype commit\ntag mytag\nThis is filler\n".encode(),
        f"object {head}\ntype commit\ntag mytag\ntagger T A Gger <\n > 0 +0000\n".encode(),
        f"object {head}\ntype commit\ntag mytag\ntagger T <t> 1206478233 GMT\n".encode(),
        f"object {head}\ntype commit\ntag mytag\ntagger T <t> 1206478233 -1430\n".encode(),
        f"object {head}\ntype commit\ntag mytag\n{t}this line should not be here\n".encode(),
    ]


@pytest.mark.parametrize("case", range(16))
@pytest.mark.parametrize("strict", ["--strict", "--no-strict"])
def test_mktag_like_git(repo: Path, case: int, strict: str) -> None:
    same(repo, "mktag", strict, input=tag_cases(repo)[case])


@pytest.mark.parametrize("severity", ["ignore", "warn", "error"])
@pytest.mark.parametrize("strict", ["--strict", "--no-strict"])
def test_mktag_honours_fsck_config(repo: Path, severity: str, strict: str) -> None:
    data = tag_cases(repo)[-1]
    same(repo, "-c", f"fsck.extraHeaderEntry={severity}", "mktag", strict, input=data)


def test_mktag_usage(repo: Path) -> None:
    assert run("gitodb", repo, "mktag", "--unknown-option")[0] == 129
    same(repo, "mktag", "--end-of-options", input=tag_cases(repo)[0])


def test_write_tag_checked_api(repo: Path) -> None:
    r = Repository(repo)
    w = ObjectWriter(r)
    cases = tag_cases(repo)
    oid = w.write_tag_checked(cases[0])
    assert git("cat-file", "tag", oid.hex(), cwd=repo) == cases[0]
    with pytest.raises(ObjectCheckError) as e:
        w.write_tag_checked(cases[2])
    assert e.value.details == [
        "tag input does not pass fsck: missingObject: invalid format - expected 'object' line"
    ]
    with pytest.raises(ObjectNotFoundError):
        w.write_tag_checked(cases[7])
    with pytest.raises(ObjectTypeError):
        w.write_tag_checked(cases[8])
    with pytest.warns(GitodbWarning, match="badTagName"):  # a warning only
        assert w.write_tag_checked(cases[10], strict=False)


# -- mktree --------------------------------------------------------------------------
def test_mktree_like_git(repo: Path) -> None:
    top = git("ls-tree", "HEAD", cwd=repo)
    same(repo, "mktree", input=top)
    same(repo, "mktree", input=b"".join(sorted(top.splitlines(keepends=True), reverse=True)))
    same(repo, "mktree", input=git("ls-tree", "-r", "HEAD", cwd=repo))  # "contains slash"
    same(repo, "mktree", "-z", input=git("ls-tree", "-z", "HEAD", cwd=repo))
    same(repo, "mktree", "--batch", input=top + b"\n" + top)
    same(repo, "mktree", "--batch", input=top + b"\n")
    same(repo, "mktree", "--batch", input=b"\n\n")
    same(repo, "mktree", input=b"")
    same(repo, "mktree", input=top + b"\n")  # a blank line without --batch
    blob = rev(repo, "HEAD:one")
    for line in [
        f"100644 blob {'1' * 40}\tx\n",
        f"100644 tree {blob}\tx\n",
        f"040000 tree {blob}\tx\n",
        f"100644 bogus {blob}\tx\n",
        f"100644 blob {blob}x\n",
        f"1x0644 blob {blob}\tx\n",
        f'100644 blob {blob}\t"q\\tx"\n',
        f'100644 blob {blob}\t"bad\\q"\n',
        f"160000 commit {'2' * 40}\tgone\n",
    ]:
        same(repo, "mktree", input=line.encode())
    same(repo, "mktree", "--missing", input=f"100644 blob {'1' * 40}\tx\n".encode())


def test_mktree_api(repo: Path) -> None:
    r = Repository(repo)
    blob = bytes.fromhex(rev(repo, "HEAD:one"))
    entry = parse_mktree_line(b"100644 blob " + blob.hex().encode() + b"\tb", r.object_format)
    assert entry == TreeInput(0o100644, b"b", blob)
    oid = ObjectWriter(r).write_tree_entries([entry, TreeInput(0o100644, b"a", blob)])
    assert git("ls-tree", "--name-only", oid.hex(), cwd=repo) == b"a\nb\n"


# -- commit-tree ---------------------------------------------------------------------
ENV = {
    "GIT_AUTHOR_NAME": "Author Name",
    "GIT_AUTHOR_EMAIL": "author@email",
    "GIT_AUTHOR_DATE": "2005-05-26 23:00",
    "GIT_COMMITTER_NAME": " <Committer> Name;",
    "GIT_COMMITTER_EMAIL": "committer@email",
    "GIT_COMMITTER_DATE": "1117150200 +0200",
    "TZ": "GMT",
}


def test_commit_tree_like_git(repo: Path, tmp_path: Path) -> None:
    tree, head = rev(repo, "HEAD^{tree}"), rev(repo, "HEAD")
    msg = tmp_path / "msg"
    msg.write_bytes(b"from a file")
    same(repo, "commit-tree", tree, input=b"comment text\n", env=ENV)
    same(repo, "commit-tree", "-p", head, tree, "-m", "a", "-m", "b", env=ENV)
    same(repo, "commit-tree", tree, "-F", str(msg), "-m", "after", env=ENV)
    same(repo, "commit-tree", "-m", "before", "-F", "-", tree, input=b"stdin", env=ENV)
    same(repo, "commit-tree", tree, "-p", head, "-p", head, "-m", "dup", env=ENV)
    same(repo, "commit-tree", tree, "-p", tree, "-m", "x", env=ENV)
    same(repo, "commit-tree", head, "-m", "x", env=ENV)
    same(repo, "commit-tree", "-m", "x", env=ENV)
    same(repo, "commit-tree", tree, tree, "-m", "x", env=ENV)
    same(repo, "commit-tree", "nope", "-m", "x", env=ENV)
    same(repo, "commit-tree", tree, input=b"caf\xe9 \xed\xa0\x80\n", env=ENV)
    same(repo, "commit-tree", tree, input=b"a\0b", env=ENV)
    same(repo, "-c", "i18n.commitEncoding=ISO-8859-1", "commit-tree", tree, "-m", "x", env=ENV)
    for key, value in [
        ("GIT_AUTHOR_DATE", "junk"),
        ("GIT_AUTHOR_NAME", "<>"),
        ("GIT_AUTHOR_NAME", ""),
        ("GIT_COMMITTER_DATE", "Thu, 07 Apr 2005 22:13:13 +0200"),
        ("GIT_COMMITTER_DATE", "@1112911993 -0700"),
    ]:
        same(repo, "commit-tree", tree, "-m", "x", env={**ENV, key: value})


def test_commit_tree_refuses_signing(repo: Path) -> None:
    """No signing in gitodb, so no -S: an accepted option would have to sign."""
    tree = rev(repo, "HEAD^{tree}")
    assert run("gitodb", repo, "commit-tree", "-S", tree, "-m", "x", env=ENV)[0] == 129
    assert run("gitodb", repo, "commit-tree", "--gpg-sign", tree, "-m", "x", env=ENV)[0] == 129
    signing = ["-c", "commit.gpgSign=true", "commit-tree", tree, "-m", "x"]
    status, _out, err = run("gitodb", repo, *signing, env=ENV)
    assert (status, err) == (128, b"fatal: commit.gpgSign is set, but git does not sign commits\n")
    same(
        repo, "-c", "commit.gpgSign=true", "commit-tree", "--no-gpg-sign", tree, "-m", "x", env=ENV
    )


def test_commit_tree_identity_from_config(repo: Path) -> None:
    tree = rev(repo, "HEAD^{tree}")
    env = {k: v for k, v in ENV.items() if "NAME" not in k and "EMAIL" not in k}
    args = ["-c", "user.name=U Ser", "-c", "user.email=u@s", "-c", "committer.name=Co"]
    same(repo, *args, "commit-tree", tree, "-m", "x", env=env)


DATES = [
    "2005-05-26 23:00",
    "1112911993 -0700",
    "@1112911993 -0700",
    "Thu, 07 Apr 2005 22:13:13 +0200",
    "2005-04-07T22:13:13",
    "2005-04-07T22:13:13Z",
    "2005-04-07 22:13:13 +02:00",
    "04/07/2005 10:00 PM",
    "07.04.2005 22:13",
    "2005-04-07",
    "Apr 7 2005 10:13pm PST",
    "20050407 221313",
    "2005-04-07 22:13:13 EST",
    "garbage",
    "2100-01-01 00:00",
    "12:00 2005-04-07",
    "1 2 2005 12:00",
]


@pytest.mark.parametrize("date", DATES)
@pytest.mark.parametrize("tz", ["UTC", "America/New_York"])
def test_parse_date_like_git(tmp_path: Path, date: str, tz: str) -> None:
    """``git var GIT_COMMITTER_IDENT`` prints the date as Git parsed it."""
    env = git_env()
    env.update({"GIT_COMMITTER_DATE": date, "TZ": tz})
    p = subprocess.run(
        ["git", "var", "GIT_COMMITTER_IDENT"], cwd=tmp_path, env=env, capture_output=True
    )
    old = os.environ.get("TZ")
    os.environ["TZ"] = tz
    try:
        import time

        time.tzset()
        got = parse_date(date)
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()
    if p.returncode:
        assert got is None
    else:
        assert got is not None
        assert p.stdout.decode().split()[-2:] == format_date(*got).split()


def test_ident_and_utf8_helpers() -> None:
    assert strip_crud(b" ,<A <b> c>; ") == b"A b c"
    assert utf8_or_latin1(b"caf\xe9") == "café".encode()
    assert utf8_or_latin1("café".encode()) == "café".encode()
    assert utf8_or_latin1(b"\xef\xbf\xbe") == b"\xc3\xaf\xc2\xbf\xc2\xbe"  # U+FFFE
