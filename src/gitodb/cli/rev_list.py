"""``gitodb rev-list``: list commits (and with ``--objects`` trees and blobs) like Git.

A thin shell over ``gitodb.history.revwalk.RevWalk`` and
``gitodb.history.revargs.RevisionArgs``.  Options follow Git 2.39 (numbers are
checked as Git 2.55 checks them: ``'1q': not an integer``); an option Git has that
gitodb does not implement is refused (exit 129), never ignored.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

from gitodb.errors import GitodbError

if TYPE_CHECKING:
    from gitodb.cli.main import Context

USAGE = """\
usage: git rev-list [<options>] <commit>... [--] [<path>...]

  limiting output:
    --max-count=<n>
    --max-age=<epoch>
    --min-age=<epoch>
    --sparse
    --no-merges
    --min-parents=<n>
    --no-min-parents
    --max-parents=<n>
    --no-max-parents
    --remove-empty
    --all
    --branches
    --tags
    --remotes
    --stdin
    --exclude-hidden=[receive|uploadpack]
    --quiet
  ordering output:
    --topo-order
    --date-order
    --reverse
  formatting output:
    --parents
    --children
    --objects | --objects-edge
    --disk-usage[=human]
    --unpacked
    --header | --pretty
    --[no-]object-names
    --abbrev=<n> | --no-abbrev
    --abbrev-commit
    --left-right
    --count
  special purpose:
    --bisect
    --bisect-vars
    --bisect-all
"""

# Options gitodb takes, by how they read a value.
_FLAGS = {
    "--all",
    "--branches",
    "--tags",
    "--remotes",
    "--not",
    "--stdin",
    "--count",
    "--parents",
    "--first-parent",
    "--merges",
    "--no-merges",
    "--no-min-parents",
    "--no-max-parents",
    "--topo-order",
    "--date-order",
    "--author-date-order",
    "--reverse",
    "--objects",
    "--no-object-names",
    "--object-names",
    "--quiet",
    "--left-right",
    "--left-only",
    "--right-only",
    "--ignore-missing",
}
_VALUED = {
    "--max-count",
    "--skip",
    "--min-parents",
    "--max-parents",
    "--since",
    "--after",
    "--until",
    "--before",
    "--max-age",
    "--min-age",
    "--glob",
    "--exclude",
}
_OPTIONAL_VALUE = {"--branches", "--tags", "--remotes"}


def _int(text: str) -> int:
    """A whole number as Git 2.55 reads counts; ``not an integer`` otherwise."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise GitodbError(f"'{text}': not an integer")
    return int(text)


def _seconds(text: str) -> int:
    """``--max-age``/``--min-age``: seconds since the epoch."""
    if not re.fullmatch(r"[0-9]+", text):
        raise GitodbError(f"'{text}': not a number of seconds since epoch")
    return int(text)


class _Usage(Exception):
    pass


class _Settings:
    """What the options ask for, gathered before the walk is built."""

    def __init__(self) -> None:
        self.walk_kwargs: dict[str, object] = {"order": "default"}
        self.count = False
        self.parents = False
        self.object_names = True
        self.quiet = False
        self.left_right = False
        self.ignore_missing = False
        self.revs: list[tuple[str, str | None]] = []  # (what, value) in order


def _split(arg: str, argv: list[str], i: int) -> tuple[str, str | None, int]:
    """``(option, value, next index)`` for one argument starting with ``-``."""
    name, eq, value = arg.partition("=")
    if name in _OPTIONAL_VALUE:
        return name, value if eq else None, i
    if name in _VALUED:
        if eq:
            return name, value, i
        if i >= len(argv):
            raise GitodbError(f"{name[2:]} requires an argument")
        return name, argv[i], i + 1
    if eq or name not in _FLAGS:
        raise _Usage(arg)
    return name, None, i


def parse_args(argv: list[str], settings: _Settings) -> list[str]:
    """Fill ``settings`` from ``argv``; return the paths after ``--`` (if any)."""
    w = settings.walk_kwargs
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            return argv[i:]
        if arg == "--end-of-options":
            # Everything after it is a revision, even when it starts with "-".
            rest = argv[i:]
            if "--" in rest:
                cut = rest.index("--")
                settings.revs += [("rev", a) for a in rest[:cut]]
                return rest[cut + 1 :]
            settings.revs += [("rev", a) for a in rest]
            return []
        if not arg.startswith("-") or arg == "-":
            settings.revs.append(("rev", arg))
            continue
        if arg == "-n":
            if i >= len(argv):
                raise GitodbError("-n requires an argument")
            w["max_count"] = _int(argv[i])
            i += 1
            continue
        if arg.startswith("-n") and len(arg) > 2:
            w["max_count"] = _int(arg[2:])
            continue
        if arg[1:2].isdigit():
            w["max_count"] = _int(arg[1:])
            continue
        name, value, i = _split(arg, argv, i)
        if name in (
            "--all",
            "--not",
            "--stdin",
            "--glob",
            "--exclude",
            "--branches",
            "--tags",
            "--remotes",
        ):
            settings.revs.append((name, value))
        elif name == "--max-count":
            w["max_count"] = _int(value or "")
        elif name == "--skip":
            w["skip"] = _int(value or "")
        elif name == "--min-parents":
            w["min_parents"] = _int(value or "")
        elif name == "--max-parents":
            w["max_parents"] = _int(value or "")
        elif name == "--no-min-parents":
            w["min_parents"] = 0
        elif name == "--no-max-parents":
            w["max_parents"] = -1
        elif name == "--merges":
            w["min_parents"] = 2
        elif name == "--no-merges":
            w["max_parents"] = 1
        elif name == "--first-parent":
            w["first_parent"] = True
        elif name == "--topo-order":
            w["order"] = "topo"
        elif name == "--date-order":
            w["order"] = "date"
        elif name == "--author-date-order":
            w["order"] = "author-date"
        elif name == "--reverse":
            w["reverse"] = not w.get("reverse", False)
        elif name == "--objects":
            w["objects"] = True
        elif name in ("--since", "--after", "--until", "--before"):
            from gitodb.objects.approxidate import approxidate

            key = "max_age" if name in ("--since", "--after") else "min_age"
            w[key] = approxidate(value or "")
        elif name in ("--max-age", "--min-age"):
            w[name[2:].replace("-", "_")] = _seconds(value or "")
        elif name == "--count":
            settings.count = True
        elif name == "--parents":
            settings.parents = True
        elif name == "--no-object-names":
            settings.object_names = False
        elif name == "--object-names":
            settings.object_names = True
        elif name == "--quiet":
            settings.quiet = True
        elif name == "--left-right":
            settings.left_right = True
        elif name == "--ignore-missing":
            settings.ignore_missing = True
        elif name in ("--left-only", "--right-only"):
            side = name[2:-5]
            if w.get("side") not in (None, side):
                raise GitodbError(
                    "options '--left-only' and '--right-only' cannot be used together"
                )
            w["side"] = side
    return []


def _unknown_revision(name: str) -> int:
    sys.stdout.flush()
    sys.stderr.write(
        f"fatal: ambiguous argument '{name}': unknown revision or path not in "
        "the working tree.\nUse '--' to separate paths from revisions, like "
        "this:\n'git <command> [<revision>...] -- [<file>...]'\n"
    )
    return 128


def run(argv: list[str], ctx: Context) -> int:
    """List commits in Git's order; see ``git rev-list``."""
    settings = _Settings()
    try:
        paths = parse_args(argv, settings)
    except _Usage:
        sys.stderr.write(USAGE)
        return 129
    if paths:
        raise GitodbError("gitodb rev-list does not limit by paths (arguments after '--')")
    # Git's rule: nothing to start from and no ref option or --stdin is a usage error,
    # unless objects are listed.
    if not settings.walk_kwargs.get("objects") and not any(
        what != "--not" and what != "--exclude" for what, _v in settings.revs
    ):
        sys.stderr.write(USAGE)
        return 129
    from gitodb.history.revwalk import RevWalk

    if settings.count and settings.left_right and settings.walk_kwargs.get("objects"):
        raise GitodbError("marked counting and '--objects' cannot be used together")
    repo = ctx.open_repository()
    walk = RevWalk(repo, **settings.walk_kwargs)  # type: ignore[arg-type]
    status = add_revisions(repo, walk, settings, "--" in argv)
    if status:
        return status
    return _output(walk, settings)


def add_revisions(repo: object, walk: object, settings: _Settings, dashdash: bool) -> int:
    """Feed the revision arguments of ``settings`` into ``walk``; 0, or the exit
    status of Git's unknown-revision message (also used by ``gitodb log``)."""
    from gitodb.history.revargs import RevisionArgs, UnknownRevisionError

    args = RevisionArgs(repo, walk)  # type: ignore[arg-type]
    try:
        for what, value in settings.revs:
            if what == "rev":
                try:
                    args.add(value or "")
                except UnknownRevisionError:
                    if not settings.ignore_missing:
                        raise
                    # --ignore-missing: a name that names nothing is as if not given.
            elif what == "--all":
                args.all()
            elif what == "--not":
                args.negate = not args.negate
            elif what == "--branches":
                args.refs_in("refs/heads/", value)
            elif what == "--tags":
                args.refs_in("refs/tags/", value)
            elif what == "--remotes":
                args.refs_in("refs/remotes/", value)
            elif what == "--glob":
                args.glob(value or "")
            elif what == "--exclude":
                args.exclude(value or "")
            elif what == "--stdin":
                _read_stdin(args)
    except UnknownRevisionError as e:
        if dashdash:
            raise GitodbError(f"bad revision '{e.message}'") from None
        return _unknown_revision(e.message)
    return 0


def _read_stdin(args: object) -> None:
    """``--stdin``: one revision per line; ``--not`` flips, ``--`` ends (Git 2.42+)."""
    from gitodb.history.revargs import RevisionArgs

    assert isinstance(args, RevisionArgs)
    saved = args.negate
    args.negate = False
    for raw in sys.stdin.buffer.read().split(b"\n"):
        line = raw.rstrip(b"\r").decode("utf-8", "surrogateescape")
        if not line:
            continue
        if line == "--":
            break
        if line == "--not":
            args.negate = not args.negate
            continue
        if line.startswith("-"):
            raise GitodbError("options not supported in --stdin mode")
        try:
            args.add(line)
        except GitodbError:
            raise GitodbError(f"bad revision '{line}'") from None
    args.negate = saved


def _output(walk: object, settings: _Settings) -> int:
    from gitodb.history.graph import SYMMETRIC_LEFT
    from gitodb.history.revwalk import RevWalk

    assert isinstance(walk, RevWalk)
    out: list[bytes] = []
    count = 0
    left = 0
    show = not settings.quiet and not settings.count
    for node in walk.commits():
        is_left = bool(node.flags & SYMMETRIC_LEFT)
        if is_left:
            left += 1
        else:
            count += 1
        if not show:
            continue
        mark = (b"<" if is_left else b">") if settings.left_right else b""
        if settings.parents:
            out.append(
                mark
                + b" ".join([node.id.hex().encode()] + [p.hex().encode() for p in node.parent_ids])
                + b"\n"
            )
        else:
            out.append(mark + node.id.hex().encode() + b"\n")
    fast = walk.objects_text(settings.object_names) if walk.want_objects else None
    if fast is not None:
        count += fast[0]
        if show:
            out.append(fast[1])
    elif walk.want_objects:
        names = settings.object_names
        for oid, _type, name in walk.objects():
            count += 1
            if not show:
                continue
            if names:
                shown = name.split(b"\n", 1)[0]
                out.append(b"%s %s\n" % (oid.hex().encode(), shown))
            else:
                out.append(oid.hex().encode() + b"\n")
    if settings.count:
        out.append(b"%d\t%d\n" % (left, count) if settings.left_right else b"%d\n" % (left + count))
    sys.stdout.buffer.write(b"".join(out))
    return 0
