"""``gitodb reflog [show|list|exists|delete|expire]``, like ``git reflog``."""

from __future__ import annotations

import sys
import time
from typing import Any, NamedTuple

from gitodb.cli.log import dwim_ref
from gitodb.cli.options import Option, OptionParser, UsageError
from gitodb.cli.revopts import count
from gitodb.errors import GitodbError
from gitodb.refs.base import ReflogEntry
from gitodb.refs.expire import ExpiryPolicy, expiry_filter, parse_expiry
from gitodb.repo.reach import Completeness, ancestors, commit_of

_DRY_RUN = Option("n", "dry-run", "bool", "do not actually prune any entries")
_REWRITE = Option(
    None,
    "rewrite",
    "bool",
    "rewrite the old SHA1 with the new SHA1 of the entry that now precedes it",
)
_UPDATEREF = Option(
    None, "updateref", "bool", "update the reference to the value of the top reflog entry"
)
_VERBOSE = Option(None, "verbose", "bool", "print extra information on screen")

#: one parser per subcommand, as Git has; the usage lines of ``git reflog -h``
PARSERS = {
    "show": OptionParser("reflog", ["[show] [<log-options>] [<ref>]"], []),
    "list": OptionParser("reflog list", [""], []),
    "exists": OptionParser("reflog exists", ["<ref>"], []),
    "write": OptionParser("reflog write", ["<ref> <old-oid> <new-oid> <message>"], []),
    "delete": OptionParser(
        "reflog delete",
        ["[--rewrite] [--updateref]\n[--dry-run | -n] [--verbose] <ref>@{<specifier>}..."],
        [_DRY_RUN, _REWRITE, _UPDATEREF, _VERBOSE],
    ),
    "drop": OptionParser(
        "reflog drop",
        ["[--all [--single-worktree] | <refs>...]"],
        [
            Option(None, "all", "bool", "drop the reflogs of all references"),
            Option(None, "single-worktree", "bool", "drop reflogs from the current worktree only"),
        ],
    ),
    "expire": OptionParser(
        "reflog expire",
        [
            "[--expire=<time>] [--expire-unreachable=<time>]\n"
            "[--rewrite] [--updateref] [--stale-fix]\n"
            "[--dry-run | -n] [--verbose] [--all [--single-worktree] | <refs>...]"
        ],
        [
            _DRY_RUN,
            _REWRITE,
            _UPDATEREF,
            _VERBOSE,
            Option(
                None,
                "expire",
                "string",
                "prune entries older than the specified time",
                argh="timestamp",
                negatable=False,
            ),
            Option(
                None,
                "expire-unreachable",
                "string",
                "prune entries older than <time> that are not reachable from the current "
                "tip of the branch",
                argh="timestamp",
                dest="unreachable",
                negatable=False,
            ),
            Option(
                None, "stale-fix", "bool", "prune any reflog entries that point to broken commits"
            ),
            Option(None, "all", "bool", "process the reflogs of all references"),
            Option(
                None,
                "single-worktree",
                "bool",
                "limits processing to reflogs from the current worktree only",
            ),
        ],
    ),
}

#: ``git reflog -h``: every subcommand's usage
PARSER = OptionParser(
    "reflog",
    [
        "[show] [<log-options>] [<ref>]",
        "list",
        "exists <ref>",
        "write <ref> <old-oid> <new-oid> <message>",
        "delete [--rewrite] [--updateref]\n"
        "                  [--dry-run | -n] [--verbose] <ref>@{<specifier>}...",
        "drop [--all [--single-worktree] | <refs>...]",
        "expire [--expire=<time>] [--expire-unreachable=<time>]\n"
        "                  [--rewrite] [--updateref] [--stale-fix]\n"
        "                  [--dry-run | -n] [--verbose] [--all [--single-worktree] | <refs>...]",
    ],
    [],
)


class _ShowArgs(NamedTuple):
    """What ``reflog show`` was asked for."""

    fmt: str | None  #: the ``--format``, None when not given
    specs: list[str | None]  #: the reflogs named; None where ``--all`` was given
    paths: list[str]  #: after ``--``
    max_count: int  #: entries shown at most, -1 for all
    full_ids: bool = False  #: ``--no-abbrev-commit``: the default line's id in full


def _show_args(rest: list[str]) -> _ShowArgs:
    """``reflog show``'s arguments, by Git's revision-option rules (``git log -g``):
    ``--format=``/``--pretty=`` (stuck), ``--all``, ``--[no-]abbrev-commit`` (the
    default line's id in full or not; a format keeps its own), the count limits ``-<n>``,
    ``-n <n>``, ``-n<n>`` and ``--max-count[=]<n>`` (Git 2.55's integer check; the
    last one given wins, a negative one shows all), refs, ``--`` then paths; any
    other option is ``fatal: unrecognized argument``."""
    fmt: str | None = None
    specs: list[str | None] = []
    paths: list[str] = []
    max_count = -1
    full_ids = False
    i = 0
    while i < len(rest):
        arg = rest[i]
        i += 1
        if arg == "--":
            paths = rest[i:]
            break
        if arg == "--end-of-options":
            specs += rest[i:]
            break
        if arg.startswith(("--format=", "--pretty=")):
            fmt = arg.partition("=")[2]
        elif arg == "--all":
            specs.append(None)
        elif arg in ("--abbrev-commit", "--no-abbrev-commit"):
            full_ids = arg == "--no-abbrev-commit"
        elif arg in ("-n", "--max-count"):
            if i == len(rest):
                if arg == "-n":
                    raise UsageError(stderr="error: -n requires an argument\n", status=128)
                raise GitodbError("Option '--max-count' requires a value")
            max_count = count(rest[i])
            i += 1
        elif arg.startswith("--max-count="):
            max_count = count(arg.partition("=")[2])
        elif arg.startswith("-n"):
            max_count = count(arg[2:])
        elif arg[:1] == "-" and arg[1:2].isdigit():
            max_count = count(arg[1:])
        elif arg.startswith("-") and arg != "-":
            raise GitodbError(f"unrecognized argument: {arg}")
        else:
            specs.append(arg)
    return _ShowArgs(fmt, specs, paths, max_count, full_ids)


def _show(repo: Any, args: _ShowArgs) -> bytes:
    """``git reflog show``: one reflog, or several walked together as Git's reflog walk
    does: always the newest next entry, a tie to the reflog named first; at most
    ``args.max_count`` entries.

    ``--all`` stands, where it is given, for every ref that has a reflog (in ref
    order) and then HEAD.  Git's default line names each reflog as it was given (a
    full name for ``--all``); ``%gd`` in a format shortens it.
    """
    from gitodb.cli.log import reflog_lines

    fmt, specs, paths, limit, full_ids = args
    given = fmt is not None
    text = fmt or ("%H %gd: %gs" if full_ids else "%h %gd: %gs")
    if text.startswith(("format:", "tformat:")):
        text = text.split(":", 1)[1]
    walks: list[str] = []
    for spec in specs or ["HEAD"]:
        if spec is not None:
            walks.append(spec)
            continue
        refs = repo.refs
        walks += [r.name for r in refs.iter_refs() if refs.reflog_exists(r.name)]
        if refs.reflog_exists("HEAD"):
            walks.append("HEAD")
    lists = []
    for spec in walks:
        base, at, rest = spec.partition("@{")
        numbered = bool(at) and rest.endswith("}") and rest[:-1].isdigit()
        start = int(rest[:-1]) if numbered else 0
        if numbered:
            full = dwim_ref(repo.refs, base)
            count = len(repo.refs.reflog(full)) if full is not None else 0
            if full is None:
                numbered, start = False, 0  # Git names the whole argument
            elif start >= count:
                raise GitodbError(f"log for '{base}' only has {count} entries")
        lists.append(
            reflog_lines(
                repo,
                base if numbered else spec,
                text.encode("utf-8", "surrogateescape"),
                paths,
                shown=None if given else base,
                start=start,
            )
        )
    if len(lists) == 1:
        return b"".join(line for _, line in lists[0][: limit if limit >= 0 else None])
    out: list[bytes] = []
    heads = [0] * len(lists)
    while len(out) != limit:
        best = -1
        for i, entries in enumerate(lists):
            if heads[i] < len(entries) and (
                best < 0 or entries[heads[i]][0] > lists[best][heads[best]][0]
            ):
                best = i
        if best < 0:
            break
        out.append(lists[best][heads[best]][1])
        heads[best] += 1
    return b"".join(out)


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
        raise (PARSER if sub == "show" and not argv[:1] == ["show"] else PARSERS[sub]).help_exit()
    if sub in ("drop", "write", "delete"):
        return {"drop": _drop, "write": _write, "delete": _delete}[sub](rest, ctx)
    if sub in ("exists", "expire"):
        opts, rest = PARSERS[sub].parse(rest)
    if sub == "exists" and not rest:
        raise PARSERS["exists"].usage_error()
    repo = ctx.open_repository()
    refs = repo.refs
    if sub == "list":
        if rest:
            sys.stderr.write(f"error: list does not accept arguments: '{rest[0]}'\n")
            return 255
        sys.stdout.buffer.write(
            "".join(n + "\n" for n in refs.reflog_names()).encode("utf-8", "surrogateescape")
        )
        return 0
    if sub == "exists":
        return 0 if refs.reflog_exists(rest[0]) else 1
    if sub == "show":
        sys.stdout.buffer.write(_show(repo, _show_args(rest)))
        return 0
    opts.refs = rest
    return _expire(repo, opts)


def _expire(repo: Any, args: Any) -> int:
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
    opts, names = PARSERS["drop"].parse(rest)
    flags = {"all": opts.all, "single-worktree": opts.single_worktree}
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

    _opts, rest = PARSERS["write"].parse(rest)
    if len(rest) != 4:
        raise PARSERS["write"].usage_error()
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
    from gitodb.objects.approxidate import approxidate

    opts, specs = PARSERS["delete"].parse(rest)
    flags = {
        "dry-run": opts.dry_run,
        "rewrite": opts.rewrite,
        "updateref": opts.updateref,
        "verbose": opts.verbose,
    }
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
