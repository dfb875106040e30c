"""``gitodb pack-refs [--all] [--no-prune] [--auto] [--include <p>] [--exclude <p>]``."""

from __future__ import annotations

import sys
from typing import Any

from gitodb.cli.options import as_gitodb_usage
from gitodb.cli.refopts import Usage, parse_options
from gitodb.errors import LockError
from gitodb.refs.peel import make_peeler

USAGE = """\
usage: git pack-refs [--all] [--no-prune] [--auto] [--include <pattern>] [--exclude <pattern>]

    --[no-]all            pack everything
    --[no-]prune          prune loose refs (default)
    --[no-]auto           auto-pack refs as needed
    --[no-]include <pattern>
                          references to include
    --[no-]exclude <pattern>
                          references to exclude

"""
_LONG = {
    "all": ("no", True),
    "prune": ("no", True),
    "auto": ("no", True),
    "include": ("yes", True),
    "exclude": ("yes", True),
}


def run(argv: list[str], ctx: Any, *, command: str = "pack-refs") -> int:
    """Pack refs: files backend writes packed-refs; reftable compacts the stack.

    ``command`` is the name in the usage text (``refs optimize`` is this command).
    """
    try:
        opts, args = parse_options(argv, _LONG, {})
        if args:
            raise Usage("")
    except Usage as e:
        if e.message:
            sys.stderr.write(f"error: {e.message}\n")
        usage = USAGE.replace("git pack-refs", f"git {command}", 1)
        if e.message is None:
            sys.stdout.write(as_gitodb_usage(usage))  # -h names gitodb, as every -h does
        else:
            sys.stderr.write(usage)
        return 129
    all_refs = auto = False
    prune = True
    includes: list[str] = []
    excludes: list[str] = []
    for opt, value, neg in opts:
        if opt == "all":
            all_refs = not neg
        elif opt == "prune":
            prune = not neg
        elif opt == "auto":
            auto = not neg
        elif opt in ("include", "exclude"):
            target = includes if opt == "include" else excludes
            if neg:
                target.clear()
            else:
                target.append(value or "")
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
