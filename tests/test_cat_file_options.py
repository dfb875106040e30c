"""cat-file on the shared option parser, with Git 2.55's layout and messages, and the
library calls the command is a shell over (``gitodb.repo.batch``, ``gitodb.repo.catfile``).

Usage texts are Git 2.55's, recorded in ``tests/data/cat-file-255`` (the ``git`` on
PATH is 2.39, whose cat-file has other options); gitodb prints them with its own name.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gitodb.cli.options import Option, OptionParser, UsageError
from gitodb.objects.filter import ObjectFilter
from gitodb.repo import Repository
from gitodb.repo.batch import BatchOptions, run_batch
from gitodb.repo.catfile import object_header, peeled_content, pretty_content
from gitodb.repo.revparse import resolve_full
from helpers import DATA, as_gitodb, git, run_cli

RECORDED = DATA / "cat-file-255"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("catfile") / "r"
    git("init", "-q", path)
    (path / "a").write_bytes(b"hello\n")
    (path / "d").mkdir()
    (path / "d" / "b").write_bytes(b"x" * 100)
    git("add", "-A", cwd=path)
    git("commit", "-q", "-m", "one", cwd=path)
    git("tag", "-a", "-m", "tagged", "v1", cwd=path)
    return path


@pytest.mark.parametrize(
    "args, stream, recorded",
    [
        (["-h"], "out", "h.out"),
        (["--help-all"], "out", "help-all.out"),
        ([], "err", "no-args.err"),
        (["-e"], "err", "e.err"),
        (["--foo"], "err", "unknown.err"),
        (["--bat"], "out", "ambiguous.out"),
        (["--bat"], "err", "ambiguous.err"),
    ],
)
def test_usage_text_is_git_255s(
    repo: Path,
    capfdbinary: pytest.CaptureFixture[bytes],
    args: list[str],
    stream: str,
    recorded: str,
) -> None:
    capfdbinary.readouterr()
    assert run_cli(repo, "cat-file", *args) == 129
    got = capfdbinary.readouterr()
    want = as_gitodb((RECORDED / recorded).read_bytes())
    assert (got.out if stream == "out" else got.err) == want


def test_alias_shows_dots_only_after_parsing(
    repo: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Git 2.55 lists ``--[no-]mailmap ...`` in the usage a command prints once its
    options are parsed, ``--[no-]mailmap`` in ``-h`` and in a parse error's."""
    capfdbinary.readouterr()
    run_cli(repo, "cat-file", "-e")
    assert b"    --[no-]mailmap ...    alias of --use-mailmap\n" in capfdbinary.readouterr().err
    run_cli(repo, "cat-file", "--foo")
    assert b"    --[no-]mailmap        alias of --use-mailmap\n" in capfdbinary.readouterr().err


@pytest.mark.parametrize(
    "args, first",
    [
        (["-t", "-s"], b"error: options '-s' and '-t' cannot be used together\n"),
        (
            ["--textconv", "--filters"],
            b"error: options '--filters' and '--textconv' cannot be used together\n",
        ),
        (["-pt", "HEAD"], b"error: options '-t' and '-p' cannot be used together\n"),
        (
            ["--batch=%(objectname)", "--batch-command"],
            b"error: only one batch option may be specified\n",
        ),
        (["--no-batch"], b"error: unknown option `no-batch'\n"),
        (["--batch-all-objects", "--batch-check", "x"], b"fatal: batch modes take no arguments\n"),
        (
            ["--filter=blob:none", "-p", "HEAD"],
            b"usage: objects filter only supported in batch mode\n",
        ),
        (["--path"], b"error: option `path' requires a value\n"),
    ],
)
def test_option_errors_like_git_255(
    repo: Path, capfdbinary: pytest.CaptureFixture[bytes], args: list[str], first: bytes
) -> None:
    capfdbinary.readouterr()
    assert run_cli(repo, "cat-file", *args) == 129
    err = capfdbinary.readouterr().err
    assert err.split(b"\n", 1)[0] + b"\n" == first


def test_historical_and_negated_options_parse(
    repo: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    capfdbinary.readouterr()
    assert run_cli(repo, "cat-file", "--allow-unknown-type", "--no-mailmap", "-t", "HEAD") == 0
    assert capfdbinary.readouterr().out == b"commit\n"
    # a later --no-filter drops an earlier --filter; abbreviations resolve
    assert (
        run_cli(
            repo, "cat-file", "--filter=blob:none", "--no-filter", "--batch-ch", stdin=b"HEAD:a\n"
        )
        == 0
    )
    blob = git("rev-parse", "HEAD:a", cwd=repo).strip()
    assert capfdbinary.readouterr().out == blob + b" blob 6\n"


def test_parser_layouts_differ_only_where_git_did() -> None:
    """The 2.39 layout (every other command) is unchanged by the 2.55 additions."""
    options = [
        Option("a", None, "cmdmode", "mode a", dest="mode", const="a"),
        Option("b", None, "cmdmode", "mode b", dest="mode", const="b"),
        Option(None, "path", "string", "a path", argh="blob|tree", literal_argh=True),
    ]
    old = OptionParser("x", ["[<options>]"], options)
    new = OptionParser("x", ["[<options>]"], options, layout="2.55")
    assert "    --path blob|tree      a path\n" in old.usage_text()
    assert "    --[no-]path blob|tree a path\n" in new.usage_text()
    with pytest.raises(UsageError) as e:
        old.parse(["-a", "-b"])
    assert e.value.stderr == "error: switch `b' is incompatible with -a\n"
    with pytest.raises(UsageError) as e:
        new.parse(["-a", "-b"])
    assert e.value.stderr == "error: options '-b' and '-a' cannot be used together\n"
    with pytest.raises(ValueError):
        OptionParser("x", [], [], layout="2.40")


# -- the library calls ----------------------------------------------------------------
def test_single_object_calls(repo: Path) -> None:
    r = Repository(repo)
    head = resolve_full(r, "HEAD")
    assert object_header(r, head) == ("commit", len(git("cat-file", "commit", "HEAD", cwd=repo)))
    assert pretty_content(r, resolve_full(r, "HEAD^{tree}")) == git(
        "cat-file", "-p", "HEAD^{tree}", cwd=repo
    )
    # <type> <object> peels a tag to the commit and a commit to its tree
    tag = resolve_full(r, "v1")
    assert peeled_content(r, tag, "tree") == git("cat-file", "tree", "HEAD", cwd=repo)
    assert peeled_content(r, tag, "blob") is None


def test_run_batch_as_a_library_call(repo: Path) -> None:
    r = Repository(repo)
    out = io.BytesIO()
    names = b"HEAD:a\nnope\nHEAD:d/b\n"
    run_batch(r, BatchOptions("batch"), io.BytesIO(names), out)
    assert out.getvalue() == git("cat-file", "--batch", cwd=repo, input=names)
    every = io.BytesIO()
    run_batch(
        r, BatchOptions("batch-check", all_objects=True, unordered=False), io.BytesIO(), every
    )
    assert every.getvalue() == git("cat-file", "--batch-check", "--batch-all-objects", cwd=repo)
    filtered = io.BytesIO()
    run_batch(
        r,
        BatchOptions("batch-check", object_filter=ObjectFilter.parse("blob:none")),
        io.BytesIO(b"HEAD:a\nHEAD\n"),
        filtered,
    )
    blob = git("rev-parse", "HEAD:a", cwd=repo).strip()
    assert filtered.getvalue().split(b"\n")[0] == blob + b" excluded"
    with pytest.raises(ValueError):
        BatchOptions("batch-everything")
    with pytest.raises(ValueError):
        run_batch(r, BatchOptions("batch", transform="textconv"), io.BytesIO(), io.BytesIO())
