"""``gitodb commit-tree <tree> [(-p <parent>)...] [(-m <message>)...] [(-F <file>)...]``:
a commit object, like ``git commit-tree``; prints its id.

The message is the ``-m`` paragraphs and ``-F`` files (``-`` for standard input) in
order, else standard input.  Author and committer come from the ``GIT_*`` variables
and the configuration (``gitodb.repo.ident``); the object is written by
``ObjectWriter.write_commit_tree``.  Signing (``-S``) is not offered: gitodb does not
sign, and an option it accepted would have to; with ``commit.gpgSign`` set it
refuses (``--no-gpg-sign`` overrides it, as in Git).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from gitodb.cli import output
from gitodb.cli.options import Option, OptionParser, SimpleNamespace
from gitodb.errors import BadRevisionError, GitodbError
from gitodb.repo.ident import IdentityError, ident_line
from gitodb.repo.revparse import resolve
from gitodb.repo.write import CommitMessageError, ObjectWriter

if TYPE_CHECKING:
    from gitodb.cli.main import Context
    from gitodb.repo import Repository


def _parent(values: SimpleNamespace, value: str | None, unset: bool) -> None:
    values.parents.append(value or "")


def _message(values: SimpleNamespace, value: str | None, unset: bool) -> None:
    values.message_parts.append(("m", value or ""))


def _file(values: SimpleNamespace, value: str | None, unset: bool) -> None:
    values.message_parts.append(("F", value or ""))


PARSER = OptionParser(
    "commit-tree",
    ["<tree> [(-p <parent>)...]", "[(-p <parent>)...] [(-m <message>)...]\n"
     "[(-F <file>)...] <tree>"],
    [
        Option("p", None, "callback", "id of a parent commit object", argh="parent",
               takes_value=True, negatable=False, callback=_parent),
        Option("m", None, "callback", "commit message", argh="message", takes_value=True,
               negatable=False, callback=_message),
        Option("F", None, "callback", "read commit log message from file", argh="file",
               takes_value=True, negatable=False, callback=_file),
        Option(None, "no-gpg-sign", "bool", "do not GPG sign commit (commit.gpgSign)",
               negatable=False),
    ],
)  # fmt: skip


def _oid(repo: Repository, name: str, hint: str) -> bytes:
    """``name`` resolved as Git's ``get_oid_tree``/``get_oid_commit`` do (``hint``)."""
    try:
        return resolve(repo, name, hint)
    except BadRevisionError as e:
        output.report_ambiguity(e)
        raise GitodbError(f"not a valid object name {name}") from None


def _read_file(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    try:
        with open(name, "rb") as f:
            return f.read()
    except OSError as e:
        raise GitodbError(f"could not open '{name}' for reading: {e.strerror}") from None


def _complete_line(buf: bytearray) -> None:
    if buf and not buf.endswith(b"\n"):
        buf += b"\n"


def run(argv: list[str], ctx: Context) -> int:
    """Entry point for ``gitodb commit-tree``."""
    values = PARSER.defaults()
    values.parents, values.message_parts = [], []
    opts, args = PARSER.parse(argv, values)
    repo = ctx.open_repository()
    if not opts.no_gpg_sign and repo.config.get_bool("commit.gpgsign", False):
        # Git would sign; a commit without the signature asked for is a wrong answer
        raise GitodbError("commit.gpgSign is set, but gitodb does not sign commits")
    writer = ObjectWriter(repo)
    parents: list[bytes] = []
    for name in opts.parents:  # Git resolves and checks them as it parses the options
        oid = _oid(repo, name, "commit")
        writer.assert_type(oid, "commit")
        if oid in parents:
            sys.stderr.write(f"error: duplicate parent {oid.hex()} ignored\n")
            continue
        parents.append(oid)
    message = bytearray()
    for kind, value in opts.message_parts:
        if message:
            message += b"\n"
        if kind == "m":
            message += value.encode("utf-8", "surrogateescape")
            _complete_line(message)
        else:  # a file is taken as it is, Git completes no line after it
            message += _read_file(value)
    if len(args) != 1:
        raise GitodbError("must give exactly one tree")
    tree = _oid(repo, args[0], "tree")
    if not message:
        message += sys.stdin.buffer.read()
    try:
        author = ident_line(repo.config, "author")
        committer = ident_line(repo.config, "committer")
    except IdentityError as e:
        sys.stderr.write(e.advice + "\n")
        raise
    encoding = repo.config.get("i18n.commitencoding")
    try:
        oid = writer.write_commit_tree(
            tree, parents, bytes(message), author=author, committer=committer, encoding=encoding
        )
    except CommitMessageError as e:  # Git's error(), and exit status 1
        sys.stderr.write(f"error: {e.message}\n")
        return 1
    sys.stdout.write(oid.hex() + "\n")
    return 0
