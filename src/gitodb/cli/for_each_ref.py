"""``gitodb for-each-ref``: Git's options over ``gitodb.repo.refformat``."""

from __future__ import annotations

import os
import sys
from typing import Any

from gitodb.cli.options import as_gitodb_usage
from gitodb.cli.refopts import Usage as _Usage
from gitodb.cli.refopts import parse_options
from gitodb.errors import GitodbError

USAGE = """\
usage: git for-each-ref [--count=<count>] [--shell|--perl|--python|--tcl]
                                [(--sort=<key>)...] [--format=<format>]
                                [--include-root-refs] [--points-at=<object>]
                                [--merged[=<object>]] [--no-merged[=<object>]]
                                [--contains[=<object>]] [--no-contains[=<object>]]
                                [(--exclude=<pattern>)...] [--start-after=<marker>]
                                [ --stdin | (<pattern>...)]

    -s, --[no-]shell      quote placeholders suitably for shells
    -p, --[no-]perl       quote placeholders suitably for perl
    --[no-]python         quote placeholders suitably for python
    --[no-]tcl            quote placeholders suitably for Tcl
    --[no-]omit-empty     do not output a newline after empty formatted refs

    --[no-]count <n>      show only <n> matched refs
    --[no-]format <format>
                          format to use for the output
    --[no-]start-after <marker>
                          start iteration after the provided marker
    --[no-]color[=<when>] respect format colors
    --[no-]exclude <pattern>
                          exclude refs which match pattern
    --[no-]sort <key>     field name to sort on
    --[no-]points-at <object>
                          print only refs which points at the given object
    --merged <commit>     print only refs that are merged
    --no-merged <commit>  print only refs that are not merged
    --contains <commit>   print only refs which contain the commit
    --no-contains <commit>
                          print only refs which don't contain the commit
    --[no-]ignore-case    sorting and filtering are case insensitive
    --[no-]stdin          read reference patterns from stdin
    --[no-]include-root-refs
                          also include HEAD ref and pseudorefs

"""

#: long option -> (takes a value: "no", "yes", "optional", "lastarg"), negatable
_LONG = {
    "shell": ("no", True),
    "perl": ("no", True),
    "python": ("no", True),
    "tcl": ("no", True),
    "omit-empty": ("no", True),
    "count": ("yes", True),
    "format": ("yes", True),
    "start-after": ("yes", True),
    "color": ("optional", True),
    "exclude": ("yes", True),
    "sort": ("yes", True),
    "points-at": ("yes", True),
    "merged": ("lastarg", False),
    "no-merged": ("lastarg", False),
    "contains": ("lastarg", False),
    "no-contains": ("lastarg", False),
    "ignore-case": ("no", True),
    "stdin": ("no", True),
    "include-root-refs": ("no", True),
}
_SHORT = {"s": "shell", "p": "perl"}
_QUOTES = ("shell", "perl", "python", "tcl")


def _usage(message: str | None, usage: str = USAGE) -> int:
    if message is None:
        # -h: the usage names the program the user ran (gitodb), as every -h does
        sys.stdout.write(as_gitodb_usage(usage))
        sys.stdout.flush()
        return 129
    sys.stderr.write(f"error: {message}\n{usage}")
    return 129


def _usage_as(usage: str, message: str | None) -> int:
    return _usage(message, usage)


def _commit_arg(repo: Any, value: str, what: str) -> bytes:
    from gitodb.repo.reach import commit_of

    try:
        oid = repo.resolve(value)
    except GitodbError:
        raise _Usage(f"malformed object name {value}") from None
    commit = commit_of(repo.odb, oid, repo.object_format.hexsz)
    if commit is None:
        raise _Usage(
            f"option `{what}' must point to a commit"
            if "merged" in what
            else f"no such commit {value}"
        )
    return commit


def _want_color(when: str | None) -> bool:
    if when is None or when in ("always", "true", "yes", "on"):
        return True
    if when in ("never", "false", "no", "off"):
        return False
    if when == "auto":
        return os.isatty(1) and os.environ.get("TERM", "") != "dumb"
    raise _Usage('option `color\' expects "always", "auto", or "never"')


def run(argv: list[str], ctx: Any, *, command: str = "for-each-ref") -> int:
    """List refs in Git's ``for-each-ref`` formats (``command``: the name in usage text)."""
    usage = USAGE.replace("git for-each-ref", f"git {command}", 1)
    from gitodb.repo.refformat import (
        DEFAULT_FORMAT,
        MalformedFormatError,
        RefFilter,
        iter_lines,
    )

    try:
        opts, patterns = parse_options(argv, _LONG, _SHORT)
    except _Usage as e:
        return _usage_as(usage, e.message)
    quotes: set[str] = set()
    fmt = DEFAULT_FORMAT
    count = 0
    sort: list[str] = []
    sort_given = False
    color = os.isatty(1) and os.environ.get("TERM", "") != "dumb"
    omit_empty = use_stdin = False
    filt = RefFilter()
    reach: list[tuple[str, str | None]] = []
    points_at: list[str] = []
    for opt, value, neg in opts:
        if opt in _QUOTES:
            (quotes.discard if neg else quotes.add)(opt)
        elif opt == "omit-empty":
            omit_empty = not neg
        elif opt == "count":
            if neg:
                count = 0
                continue
            try:
                count = int(value or "")
            except ValueError:
                return _usage_as(usage, "option `count' expects a numerical value")
            if count < 0:
                return _usage_as(usage, f"invalid --count argument: `{count}'")
        elif opt == "format":
            fmt = DEFAULT_FORMAT if neg else value or ""
        elif opt == "start-after":
            filt.start_after = None if neg else value
        elif opt == "color":
            try:
                color = False if neg else _want_color(value)
            except _Usage as e:
                return _usage_as(usage, e.message)
        elif opt == "exclude":
            if neg:
                filt.excludes = []
            else:
                filt.excludes.append(value or "")
        elif opt == "sort":
            sort_given = True
            if neg:
                sort = []
            else:
                sort.append(value or "")
        elif opt == "points-at":
            if neg:
                points_at = []
            else:
                points_at.append(value or "")
        elif opt in ("merged", "no-merged", "contains", "no-contains"):
            reach.append((opt, value))
        elif opt == "ignore-case":
            filt.ignore_case = not neg
        elif opt == "stdin":
            use_stdin = not neg
        elif opt == "include-root-refs":
            filt.include_root_refs = not neg
    if len(quotes) > 1:
        return _usage_as(usage, "more than one quoting style?")
    quote_style = next(iter(quotes), "")
    repo = ctx.open_repository()
    if use_stdin:
        if patterns:
            raise GitodbError("unknown arguments supplied with --stdin")
        data = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
        patterns = [line for line in data.split("\n") if line]
    filt.patterns = patterns
    if filt.start_after is not None:
        if sort_given:
            raise GitodbError("cannot use --start-after with custom sort options")
        if patterns:
            raise GitodbError("cannot use --start-after with patterns")
    try:
        for value in points_at:
            try:
                filt.points_at.append(repo.resolve(value))
            except GitodbError:
                raise _Usage(f"malformed object name {value}") from None
        for opt, value in reach:
            oid = _commit_arg(repo, value or "HEAD", opt)
            getattr(filt, opt.replace("-", "_")).append(oid)
    except _Usage as e:
        return _usage_as(usage, e.message)
    try:
        lines = iter_lines(
            repo,
            fmt,
            filt,
            sort=sort if sort_given else None,
            quote_style=quote_style,
            color=color,
            count=count,
            omit_empty=omit_empty,
        )
    except MalformedFormatError as e:
        return _usage_as(usage, str(e))
    out = sys.stdout.buffer
    for line in lines:
        out.write(line + b"\n")
    return 0
