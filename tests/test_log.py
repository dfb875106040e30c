"""``gitodb log`` (formats, dates, decorations, mailmap) against ``git log``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import git, git_env
from oracle import assert_same


def _commit(
    path: Path, message: bytes, date: str, author: str | None = None, encoding: str | None = None
) -> None:
    env = dict(git_env(), GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    if author:
        name, email = author.split("|")
        env.update(GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email)
    import subprocess

    args = ["git", "-c", f"i18n.commitEncoding={encoding}"] if encoding else ["git"]
    subprocess.run(
        [*args, "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-F", "-"],
        cwd=path,
        input=message,
        env=env,
        check=True,
        capture_output=True,
    )


def build(path: Path) -> Path:
    git("init", "-q", "-b", "main", path)
    _commit(path, b"root commit\n", "1000000000 +0000")
    _commit(
        path,
        b"subject line one  \nsubject two\n\n\n  body\twith tab\n\n\nmore\n\n",
        "1234567890 -0530",
        author="Old Name|old@example.com",
    )
    _commit(path, b"\tindented\ttabs\xc3\xa9\xe4\xb8\xad\tx\n", "1500000000 +0100")
    _commit(path, b"caf\xe9 latin-1\n\nbody \xe9\n", "1600000000 +1245", encoding="ISO-8859-1")
    _commit(path, b"no newline", "1700000000 -1200")
    git("tag", "v1", "HEAD~2", cwd=path)
    git("tag", "-a", "-m", "annotated", "v2", "HEAD~2", cwd=path)
    git("branch", "side", "HEAD~3", cwd=path)
    git("checkout", "-q", "side", cwd=path)
    _commit(path, b"on side\n", "1650000000 +0200")
    git("checkout", "-q", "main", cwd=path)
    git("merge", "-q", "--no-ff", "-m", "merge side", "side", cwd=path)
    (path / ".mailmap").write_text(
        "New Name <new@example.com> <old@example.com>\n"
        "# comment\n<committer-new@example.com> "
        "<committer@example.com>\n"
    )
    git("update-ref", "refs/pull/1/head", "HEAD~1", cwd=path)
    return path


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("log") / "r")


CASES = [
    [],
    ["--oneline"],
    ["--pretty=short"],
    ["--pretty=full"],
    ["--pretty=fuller"],
    ["--pretty=raw"],
    ["--pretty=oneline"],
    ["--pretty=med"],
    ["--pretty"],
    ["--format=%H %an %ae %at %s"],
    ["--format=[%s]%n[%b]%n[%B]"],
    ["--pretty=format:%h|%H|%T|%t|%P|%p"],
    ["--pretty=tformat:%h"],
    ["--format=%h|%e|%f"],
    ["--format=%an|%ae|%al|%at|%ad|%aD|%ai|%as|%cn|%ce|%ct|%cd|%ci|%cs"],
    ["--format=%aN|%aE|%aL|%cN|%cE"],
    ["--format=%d|%D"],
    ["--format=%+s|%-b|% H|%+b|x"],
    ["--format=%x00%x41%%%n%q%Cred%Creset%C(bold)"],
    ["--format="],
    ["--format=%gd|%gs"],
    ["--date=iso", "--format=%ad|%cd"],
    ["--date=rfc"],
    ["--date=short", "--pretty=fuller"],
    ["--date=raw", "--format=%ad"],
    ["--date=unix", "--format=%cd"],
    ["--date=format:%Y/%m/%d %H:%M %z %% %a", "--format=%ad"],
    ["--decorate", "--oneline"],
    ["--decorate"],
    ["--decorate=full", "--oneline", "--all"],
    ["--no-decorate", "--oneline"],
    ["-n2", "--reverse", "--oneline"],
    ["--skip=1", "-3"],
    ["--all", "--topo-order", "--format=%h %p"],
    ["--first-parent", "--oneline"],
    ["--merges", "--oneline"],
    ["--no-merges", "--format=%s"],
    ["side..main", "--oneline"],
    ["--abbrev-commit"],
    ["--abbrev=10", "--oneline"],
    ["--no-abbrev-commit", "--oneline"],
    ["--date=raw-local", "--format=%ad"],
    ["--date=iso-local", "--format=%ad|%ai"],
    ["--date=format-local:%Y %H:%M %z %%", "--format=%ad"],
    ["--date=normal"],
    ["--date=bogus"],
    ["--pretty=bogus"],
    ["nosuch"],
    ["--since=1400000000", "--oneline"],
]


@pytest.mark.parametrize("args", CASES, ids=" ".join)
def test_like_git(repo: Path, args: list[str]) -> None:
    assert_same(repo, "log", *args)


def test_mailmap_off_and_bare(repo: Path, tmp_path: Path) -> None:
    assert_same(repo, "-c", "log.mailmap=false", "log", "-2", "--skip=4")
    bare = tmp_path / "bare.git"
    git("clone", "-q", "--bare", repo, bare)
    # A bare repository reads HEAD:.mailmap; this one has none committed, so map by file.
    (tmp_path / "mm").write_text("Mapped <m@x> <author@example.com>\n")
    assert_same(bare, "-c", f"mailmap.file={tmp_path / 'mm'}", "log", "--pretty=short")


def test_config_defaults(repo: Path) -> None:
    assert_same(repo, "-c", "format.pretty=%h %s", "log")
    assert_same(repo, "-c", "log.date=iso", "log", "-1")
    assert_same(repo, "-c", "log.abbrevCommit=true", "log", "-1")


def test_unborn_head(tmp_path: Path) -> None:
    git("init", "-q", "-b", "trunk", tmp_path / "e")
    assert_same(tmp_path / "e", "log")


def test_unsupported_placeholder_is_an_error(repo: Path) -> None:
    from oracle import both

    _theirs, ours = both(repo, "log", "--format=%G?")
    assert ours[0] == 128 and b"fatal:" in ours[2]


def test_formatter_api(repo: Path) -> None:
    from gitodb.history.pretty import Formatter, split_message
    from gitodb.repo import Repository

    r = Repository(repo)
    oid = r.resolve("HEAD~2")
    data = r.odb.read(oid)[1]
    f = Formatter(r, "%h|%s|%aN", abbrev=12)
    expected = git("log", "-1", "--format=%h|%s|%aN", "--abbrev=12", "HEAD~2", cwd=repo)
    assert f.format(oid, data) + b"\n" == expected
    assert split_message(b"\n\na \nb\n\n\nbody\n") == ([b"a", b"b"], b"body\n")
    assert os.path.exists(repo / ".mailmap")


def test_reflog_walk_limited_by_paths(tmp_path: Path) -> None:
    from gitodb.cli.log import walk_reflog
    from gitodb.repo import Repository

    r = tmp_path / "r"
    git("init", "-q", "-b", "main", r)
    for name in ("a", "b", "a"):
        (r / name).write_text(name + str(len(list(r.iterdir()))))
        git("add", ".", cwd=r)
        git("commit", "-q", "-m", name, cwd=r)
    expected = git("log", "-g", "--format=%H %gd", "main", "--", "b", cwd=r)
    got = walk_reflog(Repository(r), "main", b"%H %gd", ["b"])
    assert got == expected and got.count(b"\n") == 1
