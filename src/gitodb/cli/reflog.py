"""``gitodb reflog [show|list|exists|delete|expire]``, like ``git reflog``."""

from __future__ import annotations

import argparse
import re
import sys
import time
from typing import Any

from gitodb.cli.log import dwim_ref, walk_reflog
from gitodb.errors import GitodbError
from gitodb.refs.expire import ExpiryPolicy, expiry_filter, parse_expiry
from gitodb.repo.reach import ancestors, commit_of

USAGE = ("usage: git reflog [show] [<log-options>] [<ref>]\n"
         "   or: git reflog list\n   or: git reflog exists <ref>\n"
         "   or: git reflog delete <ref>@{<specifier>}...\n"
         "   or: git reflog expire [--expire=<time>] <refs>...")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"error: {message}\n{USAGE}\n")
        raise SystemExit(129)


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
    p.add_argument("--expire", default=None)
    p.add_argument("--expire-unreachable", dest="unreachable", default=None)
    p.add_argument("--all", action="store_true")
    p.add_argument("-n", "--dry-run", dest="dry_run", action="store_true")
    p.add_argument("refs", nargs="*")
    args = p.parse_args(rest)
    return _expire(repo, args)


def _expire(repo: Any, args: argparse.Namespace) -> int:
    """``reflog expire``: limits from the options, else config (``gitodb.refs.expire``)."""
    refs = repo.refs
    hexsz = repo.object_format.hexsz
    now = int(time.time())
    policy = ExpiryPolicy.from_config(repo.config, now)
    total_opt = parse_expiry(args.expire, now) if args.expire is not None else None
    unreach_opt = parse_expiry(args.unreachable, now) if args.unreachable is not None else None
    names = refs.reflog_names() if args.all else [dwim_ref(refs, r) or r for r in args.refs]
    all_tips: set[bytes] | None = None
    for name in names:
        if not refs.reflog_exists(name):
            continue
        total, unreach = policy.limits(name, total_opt, unreach_opt)
        is_reachable = None
        reach: set[bytes] | None
        if unreach > total:
            if name == "HEAD" or unreach == 0:
                if all_tips is None:
                    tips = [c for r in refs.iter_refs() if r.oid is not None
                            for c in [commit_of(repo.odb, r.oid, hexsz)] if c is not None]
                    head = refs.resolve("HEAD")
                    head_c = commit_of(repo.odb, head, hexsz) if head else None
                    all_tips = ancestors(repo.odb, tips + ([head_c] if head_c else []), hexsz)
                reach = all_tips
            else:
                tip = refs.resolve(name)
                tip_c = commit_of(repo.odb, tip, hexsz) if tip else None
                reach = ancestors(repo.odb, [tip_c], hexsz) if tip_c else None
            if reach is not None:
                is_reachable = reach.__contains__
        keep = expiry_filter(total, unreach, repo.object_format.null_oid, is_reachable)
        if args.dry_run:
            continue
        refs.rewrite_reflog(name, keep)
    return 0


def _usage() -> int:
    sys.stderr.write(USAGE + "\n")
    return 129
