"""``gitodb reflog [show|list|exists|delete|expire]``, like ``git reflog``."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from gitodb.cli.log import dwim_ref, walk_reflog
from gitodb.errors import GitodbError
from gitodb.refs.base import ReflogEntry
from gitodb.refs.expire import ExpiryPolicy, expiry_filter, parse_expiry
from gitodb.repo.reach import Completeness, ancestors, commit_of

USAGE = (
    "usage: git reflog [show] [<log-options>] [<ref>]\n"
    "   or: git reflog list\n   or: git reflog exists <ref>\n"
    "   or: git reflog write <ref> <old-oid> <new-oid> <message>\n"
    "   or: git reflog delete [--rewrite] [--updateref]\n"
    "                         [--dry-run | -n] [--verbose] <ref>@{<specifier>}...\n"
    "   or: git reflog drop [--all [--single-worktree] | <refs>...]\n"
    "   or: git reflog expire [--expire=<time>] [--expire-unreachable=<time>]\n"
    "                         [--rewrite] [--updateref] [--stale-fix]\n"
    "                         [--dry-run | -n] [--verbose] [--all [--single-worktree] | "
    "<refs>...]"
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"error: {message}\n{USAGE}\n")
        raise SystemExit(129)


def run(argv: list[str], ctx: Any) -> int:
    """Dispatch the reflog subcommands."""
    sub = (
        argv[0]
        if argv
        and not argv[0].startswith("-")
        and argv[0] in ("show", "list", "exists", "delete", "expire", "drop", "write")
        else "show"
    )
    rest = argv[1:] if argv and argv[0] == sub else argv
    if rest[:1] in (["-h"], ["--help"]):
        sys.stdout.write(_SUB_USAGE.get(sub, USAGE) + "\n")
        return 129
    if sub in ("drop", "write", "delete"):
        return {"drop": _drop, "write": _write, "delete": _delete}[sub](rest, ctx)
    repo = ctx.open_repository()
    refs = repo.refs
    if sub == "list":
        if rest:
            sys.stderr.write(f"error: list does not accept arguments: '{rest[0]}'\n")
            return 129
        sys.stdout.buffer.write(
            "".join(n + "\n" for n in refs.reflog_names()).encode("utf-8", "surrogateescape")
        )
        return 0
    if sub == "exists":
        if len(rest) != 1:
            raise SystemExit(_usage())
        return 0 if refs.reflog_exists(rest[0]) else 1
    if sub == "show":
        paths: list[str] = []
        if "--" in rest:
            cut = rest.index("--")
            rest, paths = rest[:cut], rest[cut + 1 :]
        p = _Parser(prog="git reflog show", add_help=False)
        p.add_argument("--format", "--pretty", dest="format", default="%h %gd: %gs")
        p.add_argument("refs", nargs="*")
        args = p.parse_args(rest)
        fmt = (
            args.format.split(":", 1)[1]
            if args.format.startswith(("format:", "tformat:"))
            else args.format
        )
        for spec in args.refs or ["HEAD"]:
            sys.stdout.buffer.write(
                walk_reflog(repo, spec, fmt.encode("utf-8", "surrogateescape"), paths)
            )
        return 0
    p = _Parser(prog="git reflog expire", add_help=False)
    p.add_argument("--expire", default=None)
    p.add_argument("--expire-unreachable", dest="unreachable", default=None)
    p.add_argument("--all", action="store_true")
    p.add_argument("-n", "--dry-run", dest="dry_run", action="store_true")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--stale-fix", dest="stale_fix", action="store_true")
    p.add_argument("--rewrite", action="store_true")
    p.add_argument("--updateref", action="store_true")
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
                    tips = [
                        c
                        for r in refs.iter_refs()
                        if r.oid is not None
                        for c in [commit_of(repo.odb, r.oid, hexsz)]
                        if c is not None
                    ]
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
            ok: bool = keep(i, e)
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
        refs.rewrite_reflog(name, decide, rewrite=args.rewrite)
        if args.updateref:
            _update_to_last(refs, name)
    return status


def _sub_usage(sub: str, message: str | None = None) -> int:
    if message is not None:
        sys.stderr.write(f"error: {message}\n")
    sys.stderr.write(_SUB_USAGE[sub] + "\n")
    return 129


def _log_name(refs: Any, spec: str) -> str | None:
    """Git's ``dwim_log``: the full name of an existing ref with a reflog, or None."""
    for cand in (
        spec,
        f"refs/{spec}",
        f"refs/tags/{spec}",
        f"refs/heads/{spec}",
        f"refs/remotes/{spec}",
        f"refs/remotes/{spec}/HEAD",
    ):
        try:
            if refs.read(cand) is not None and refs.reflog_exists(cand):
                return cand
        except GitodbError:
            continue
    return None


def _drop(rest: list[str], ctx: Any) -> int:
    """``reflog drop [--all [--single-worktree] | <refs>...]``: delete whole reflogs."""
    from gitodb.cli.refopts import Usage, parse_options

    try:
        opts, names = parse_options(
            rest, {"all": ("no", True), "single-worktree": ("no", True)}, {}
        )
    except Usage as e:
        return _sub_usage("drop", e.message)
    flags = {o: not neg for o, _v, neg in opts}
    if flags.get("all") and names:
        sys.stderr.write("usage: references specified along with --all\n")
        return 129
    repo = ctx.open_repository()
    refs = repo.refs
    status = 0
    if flags.get("all"):
        targets = refs.reflog_names()
        if not flags.get("single-worktree"):
            targets += refs.other_worktree_reflog_names()
    else:
        targets = []
        for spec in names:
            full = _log_name(refs, spec)
            if full is None:
                sys.stderr.write(f"error: reflog could not be found: '{spec}'\n")
                status = 255
                continue
            targets.append(full)
    for name in targets:
        refs.drop_reflog(name)
    return status


def _write(rest: list[str], ctx: Any) -> int:
    """``reflog write <ref> <old-oid> <new-oid> <message>``: append one entry."""
    from gitodb.objects.format import as_oid
    from gitodb.refs.base import (
        committer_identity,
        is_root_ref,
        normalize_reflog_message,
        refname_format_ok,
    )

    if len(rest) != 4:
        return _sub_usage("write")
    name, old_hex, new_hex, message = rest
    repo = ctx.open_repository()
    if not (refname_format_ok(name) or is_root_ref(name)):
        raise GitodbError(f"invalid reference name: {name}")
    ids = []
    for which, text in (("old", old_hex), ("new", new_hex)):
        try:
            if len(text) != repo.object_format.hexsz:
                raise ValueError(text)
            oid = as_oid(repo.object_format, text)
        except (ValueError, GitodbError):
            raise GitodbError(f"invalid {which} object ID: '{text}'") from None
        if any(oid) and not repo.odb.contains(oid):
            raise GitodbError(f"{which} object '{text}' does not exist")
        ids.append(oid)
    who, email, ts, tz = committer_identity(repo.config)
    repo.refs.append_reflog(
        name, ReflogEntry(ids[0], ids[1], who, email, ts, tz, normalize_reflog_message(message))
    )
    return 0


def _update_to_last(refs: Any, name: str) -> None:
    """``--updateref``: the ref takes the new id of its newest remaining entry (no log)."""
    left = refs.reflog(name)
    ref = refs.read(name)
    if (
        left
        and any(left[-1].new)
        and ref is not None
        and ref.target is None
        and ref.oid != left[-1].new
    ):
        tx = refs.transaction()
        tx.update(name, left[-1].new, log=False, no_deref=True)
        tx.commit()


def _delete(rest: list[str], ctx: Any) -> int:
    """``reflog delete [--rewrite] [--updateref] [-n] [--verbose] <ref>@{<n>|<date>}...``."""
    from gitodb.cli.refopts import Usage, parse_options
    from gitodb.objects.approxidate import approxidate

    try:
        opts, specs = parse_options(
            rest,
            {
                "dry-run": ("no", True),
                "rewrite": ("no", True),
                "updateref": ("no", True),
                "verbose": ("no", True),
            },
            {"n": "dry-run"},
        )
    except Usage as e:
        return _sub_usage("delete", e.message)
    flags = {o: not neg for o, _v, neg in opts}
    dry_run, verbose = flags.get("dry-run", False), flags.get("verbose", False)
    if not specs:
        sys.stderr.write("error: no reflog specified to delete\n")
        return 255
    repo = ctx.open_repository()
    refs = repo.refs
    status = 0
    for spec in specs:
        at = spec.find("@{")
        if at < 0 or not spec.endswith("}"):
            sys.stderr.write(f"error: not a reflog: {spec}\n")
            status = 255
            continue
        full = _log_name(refs, spec[:at])
        if full is None:
            sys.stderr.write(f"error: no reflog for '{spec}'\n")
            status = 255
            continue
        selector = spec[at + 2 : -1]
        entries = refs.reflog(full)
        if selector.isdigit():
            idx = len(entries) - 1 - int(selector)
        else:
            when = approxidate(selector)
            idx = sum(1 for entry in entries if entry.time < when) - 1
        if idx < 0:
            continue

        def keep(i: int, e: ReflogEntry, idx: int = idx) -> bool:
            ok = i != idx
            if verbose or dry_run and not ok:
                msg = e.message.decode("utf-8", "surrogateescape")
                verb = "keep" if ok else ("would prune" if dry_run else "prune")
                sys.stdout.write(f"{verb} {msg}\n")
            return ok or dry_run

        if dry_run:
            for i, entry in enumerate(entries):
                keep(i, entry)
            continue
        refs.rewrite_reflog(full, keep, rewrite=flags.get("rewrite", False))
        if flags.get("updateref"):
            _update_to_last(refs, full)
    return status


_SUB_USAGE = {
    "show": "usage: git reflog [show] [<log-options>] [<ref>]",
    "list": "usage: git reflog list",
    "exists": "usage: git reflog exists <ref>",
    "delete": "usage: git reflog delete [--rewrite] [--updateref]\n"
    "                         [--dry-run | -n] [--verbose] <ref>@{<specifier>}...",
    "drop": "usage: git reflog drop [--all [--single-worktree] | <refs>...]",
    "write": "usage: git reflog write <ref> <old-oid> <new-oid> <message>",
    "expire": "usage: git reflog expire [--expire=<time>] [--expire-unreachable=<time>]\n"
    "                         [--rewrite] [--updateref] [--stale-fix]\n"
    "                         [--dry-run | -n] [--verbose] [--all [--single-worktree]"
    " | <refs>...]",
}


def _usage() -> int:
    sys.stderr.write(USAGE + "\n")
    return 129
