"""``gitodb reflog [show|list|exists|delete|expire]``, like ``git reflog``."""

from __future__ import annotations

import argparse
import re
import sys
import time
from typing import Any

from gitodb.cli.log import dwim_ref, walk_reflog
from gitodb.errors import GitodbError
from gitodb.refs.base import ReflogEntry
from gitodb.refs.expire import ExpiryPolicy, expiry_filter, parse_expiry
from gitodb.repo.reach import Completeness, ancestors, commit_of

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
    if rest[:1] in (["-h"], ["--help"]):
        sys.stdout.write(_SUB_USAGE.get(sub, USAGE) + "\n")
        return 129
    repo = ctx.open_repository()
    refs = repo.refs
    if sub == "list":
        if rest:
            sys.stderr.write(f"error: list does not accept arguments: '{rest[0]}'\n")
            return 129
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
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--stale-fix", dest="stale_fix", action="store_true")
    p.add_argument("--single-worktree", dest="single_worktree", action="store_true")
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
    status = 0
    if args.all:
        names = refs.reflog_names()
        if not args.single_worktree:
            names += refs.other_worktree_reflog_names()
    else:
        names = []
        for spec in args.refs:
            full = dwim_ref(refs, spec)
            if full is None or not refs.reflog_exists(full):
                sys.stderr.write(f"error: reflog could not be found: '{spec}'\n")
                status = 1
                continue
            names.append(full)
    complete = Completeness(repo.odb, hexsz) if args.stale_fix else None
    null = repo.object_format.null_oid
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
        keep = expiry_filter(total, unreach, null, is_reachable)

        def decide(i: int, e: ReflogEntry, keep: Any = keep) -> bool:
            ok = keep(i, e)
            if ok and complete is not None:
                ok = all(o == null or complete.commit_complete(o) for o in (e.old, e.new))
            if args.verbose or (args.dry_run and not ok):
                msg = e.message.decode("utf-8", "surrogateescape")
                verb = "keep" if ok else ("would prune" if args.dry_run else "prune")
                sys.stdout.write(f"{verb} {msg}\n")
            return ok or args.dry_run

        if args.dry_run:
            for i, e in enumerate(refs.reflog(name)):
                decide(i, e)
            continue
        refs.rewrite_reflog(name, decide)
    return status


_SUB_USAGE = {
    "show": "usage: git reflog [show] [<log-options>] [<ref>]",
    "list": "usage: git reflog list",
    "exists": "usage: git reflog exists <ref>",
    "delete": "usage: git reflog delete [--rewrite] [--updateref]\n"
              "                         [--dry-run | -n] [--verbose] <ref>@{<specifier>}...",
    "expire": "usage: git reflog expire [--expire=<time>] [--expire-unreachable=<time>]\n"
              "                         [--stale-fix] [--dry-run | -n] [--verbose]\n"
              "                         [--all [--single-worktree] | <refs>...]",
}


def _usage() -> int:
    sys.stderr.write(USAGE + "\n")
    return 129
