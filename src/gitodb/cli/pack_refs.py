"""``gitodb pack-refs [--all] [--no-prune] [--auto] [--include <p>] [--exclude <p>]``."""

from __future__ import annotations

import sys
from typing import Any

from gitodb.cli.options import Option, OptionParser, appender
from gitodb.errors import LockError
from gitodb.refs.peel import make_peeler

PARSER = OptionParser(
    "pack-refs",
    ["[--all] [--no-prune] [--auto] [--include <pattern>] [--exclude <pattern>]"],
    [
        Option(None, "all", "bool", "pack everything"),
        Option(None, "prune", "bool", "prune loose refs (default)", default=True),
        Option(None, "auto", "bool", "auto-pack refs as needed"),
        Option(
            None,
            "include",
            "callback",
            "references to include",
            argh="pattern",
            takes_value=True,
            callback=appender("include"),
        ),
        Option(
            None,
            "exclude",
            "callback",
            "references to exclude",
            argh="pattern",
            takes_value=True,
            callback=appender("exclude"),
        ),
    ],
)


def run(argv: list[str], ctx: Any, *, command: str = "pack-refs") -> int:
    """Pack refs: files backend writes packed-refs; reftable compacts the stack.

    ``command`` is the name in the usage text (``refs optimize`` is this command).
    """
    parser = (
        PARSER if command == "pack-refs" else OptionParser(command, PARSER.usage, PARSER.options)
    )
    values = parser.defaults()
    values.prune = True
    opts, args = parser.parse(argv, values)
    if args:
        raise parser.usage_error()
    all_refs, prune, auto = opts.all, opts.prune, opts.auto
    includes: list[str] = opts.include or []
    excludes: list[str] = opts.exclude or []
    repo = ctx.open_repository()
    refs = repo.refs
    refs.peeler = make_peeler(repo.odb, repo.object_format.hexsz)
    try:
        refs.pack_refs(
            all_refs=all_refs, prune=prune, includes=includes, excludes=excludes, auto=auto
        )
    except LockError as e:
        status = getattr(e, "exit_status", None)
        if status is None:
            raise
        sys.stderr.write(f"error: {e.message}\n")
        return int(status)
    return 0
