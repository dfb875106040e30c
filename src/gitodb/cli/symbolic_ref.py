"""``gitodb symbolic-ref [-m <msg>] [-q] [--short] [-d] <name> [<ref>]``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from gitodb.cli.options import Option, OptionParser
from gitodb.errors import GitodbError, RefError, RefHookVetoError
from gitodb.refs.base import refname_format_ok
from gitodb.refs.peel import shorten_ref

PARSER = OptionParser(
    "symbolic-ref",
    [
        "[-m <reason>] <name> <ref>",
        "[-q] [--short] [--no-recurse] <name>",
        "--delete [-q] <name>",
    ],
    [
        Option("q", "quiet", "bool", "suppress error message for non-symbolic (detached) refs"),
        Option("d", "delete", "bool", "delete symbolic ref"),
        Option(None, "short", "bool", "shorten ref output"),
        Option(None, "recurse", "bool", "recursively dereference (default)"),
        Option("m", None, "string", "reason of the update", argh="reason"),
    ],
)


def run(argv: list[str], ctx: Any) -> int:
    """Read, set or delete a symbolic ref."""
    values = PARSER.defaults()
    values.recurse = True
    opts, pos = PARSER.parse(argv, values)
    msg: str | None = opts.m
    quiet, short, delete, no_recurse = opts.quiet, opts.short, opts.delete, not opts.recurse
    repo = ctx.open_repository()
    refs = repo.refs
    if delete:
        if len(pos) != 1:
            raise PARSER.usage_error()
        ref = refs.read(pos[0])
        if ref is None or ref.target is None:
            if quiet:
                return 1
            raise GitodbError(f"Cannot delete {pos[0]}, not a symbolic ref")
        if pos[0] == "HEAD":
            raise GitodbError("deleting 'HEAD' is not allowed")
        return _write(lambda: refs.delete_ref(pos[0], None, msg, no_deref=True))
    if len(pos) == 1:
        ref = refs.read(pos[0])
        if ref is None or ref.target is None:
            if quiet:
                return 1
            raise GitodbError(f"ref {pos[0]} is not a symbolic ref")
        target = ref.target
        if not no_recurse:
            for _ in range(5):
                nxt = refs.read(target)
                if nxt is None or nxt.target is None:
                    break
                target = nxt.target
        sys.stdout.write((shorten_ref(target) if short else target) + "\n")
        return 0
    if len(pos) == 2:
        if pos[0] == "HEAD" and not pos[1].startswith("refs/"):
            raise GitodbError("Refusing to point HEAD outside of refs/")
        if not refname_format_ok(pos[1], allow_onelevel=True):
            raise GitodbError(f"Refusing to set '{pos[0]}' to invalid ref '{pos[1]}'")
        return _write(lambda: refs.set_symref(pos[0], pos[1], msg))
    raise PARSER.usage_error()


def _write(change: Callable[[], None]) -> int:
    """Git reports a failed symref update with ``error:`` and exit status 1."""
    try:
        change()
    except RefHookVetoError:
        raise  # Git dies of a veto
    except RefError as e:
        sys.stderr.write(f"error: {e}\n")
        return 1
    return 0
