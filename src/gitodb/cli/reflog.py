"""``gitodb reflog [show|list|exists|delete|expire]``, like ``git reflog``."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from gitodb.cli.log import dwim_ref, walk_reflog
from gitodb.errors import GitodbError

USAGE = ("usage: git reflog [show] [<log-options>] [<ref>]\n"
         "   or: git reflog list\n   or: git reflog exists <ref>\n"
         "   or: git reflog delete <ref>@{<specifier>}...\n"
         "   or: git reflog expire [--expire=<time>] <refs>...")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"error: {message}\n{USAGE}\n")
        raise SystemExit(129)


def _expire_time(value: str) -> int:
    import time
    if value in ("now", "all"):
        return 1 << 62
    if value == "never":
        return 0
    try:
        return int(value.lstrip("@"))
    except ValueError:
        m = re.fullmatch(r"(\d+)\.?(second|minute|hour|day|week)s?\.?ago", value)
        if not m:
            raise GitodbError(f"invalid date format: {value}") from None
        unit = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}
        return int(time.time()) - int(m.group(1)) * unit[m.group(2)]


def run(argv: list[str], ctx: Any) -> int:
    """Dispatch the reflog subcommands."""
    sub = argv[0] if argv and not argv[0].startswith("-") and argv[0] in (
        "show", "list", "exists", "delete", "expire") else "show"
    rest = argv[1:] if argv and argv[0] == sub else argv
    repo = ctx.open_repository()
    refs = repo.refs
    if sub == "list":
        if rest:
            raise SystemExit(_usage())
        sys.stdout.buffer.write("".join(n + "\n" for n in refs.reflog_names()).encode(
            "utf-8", "surrogateescape"))
        return 0
    if sub == "exists":
        if len(rest) != 1:
            raise SystemExit(_usage())
        return 0 if refs.reflog_exists(rest[0]) else 1
    if sub == "show":
        p = _Parser(prog="git reflog show", add_help=False)
        p.add_argument("--format", "--pretty", dest="format", default="%h %gd: %gs")
        p.add_argument("refs", nargs="*")
        args = p.parse_args(rest)
        fmt = args.format.split(":", 1)[1] if args.format.startswith(
            ("format:", "tformat:")) else args.format
        for spec in args.refs or ["HEAD"]:
            sys.stdout.buffer.write(walk_reflog(repo, spec, fmt.encode("utf-8",
                                                                        "surrogateescape")))
        return 0
    if sub == "delete":
        if not rest:
            raise GitodbError("no reflog specified to delete")
        for spec in rest:
            m = re.fullmatch(r"(.+)@\{(\d+)\}", spec)
            if not m:
                raise GitodbError(f"not a reflog: {spec}")
            full = dwim_ref(refs, m.group(1))
            if full is None or not refs.reflog_exists(full):
                raise GitodbError(f"reflog could not be found: '{m.group(1)}'")
            count = len(refs.reflog(full))
            idx = count - 1 - int(m.group(2))
            refs.rewrite_reflog(full, lambda i, _e, idx=idx: i != idx)
        return 0
    p = _Parser(prog="git reflog expire", add_help=False)
    p.add_argument("--expire", default="90.days.ago")
    p.add_argument("--all", action="store_true")
    p.add_argument("refs", nargs="*")
    args = p.parse_args(rest)
    before = _expire_time(args.expire)
    names = refs.reflog_names() if args.all else [dwim_ref(refs, r) or r for r in args.refs]
    for name in names:
        if refs.reflog_exists(name):
            refs.expire_reflog(name, before)
    return 0


def _usage() -> int:
    sys.stderr.write(USAGE + "\n")
    return 129
