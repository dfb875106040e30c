"""``gitodb for-each-ref``: Git's options over ``gitodb.repo.refformat``."""

from __future__ import annotations

import os
import sys

from gitodb.cli.options import Option, OptionParser, appender
from gitodb.errors import GitodbError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _reach(kind: str) -> Option:
    # Git's OPT_MERGED/OPT_CONTAINS: the next argument, or HEAD when last; not negatable
    # (--no-merged is an option of its own)
    help_text = {
        "merged": "print only refs that are merged",
        "no-merged": "print only refs that are not merged",
        "contains": "print only refs which contain the commit",
        "no-contains": "print only refs which don't contain the commit",
    }[kind]

    def callback(values: Any, value: str | None, unset: bool) -> None:
        values.reach.append((kind, value))

    return Option(
        None,
        kind,
        "callback",
        help_text,
        argh="commit",
        takes_value=True,
        lastarg_default=True,
        default="HEAD",
        negatable=False,
        dest="reach_" + kind.replace("-", "_"),
        callback=callback,
    )


_PAD = " " * 25
PARSER = OptionParser(
    "for-each-ref",
    [
        # Git's literal continuation lines (aligned the same under `refs list`)
        "[--count=<count>] [--shell|--perl|--python|--tcl]\n"
        f"{_PAD}[(--sort=<key>)...] [--format=<format>]\n"
        f"{_PAD}[--include-root-refs] [--points-at=<object>]\n"
        f"{_PAD}[--merged[=<object>]] [--no-merged[=<object>]]\n"
        f"{_PAD}[--contains[=<object>]] [--no-contains[=<object>]]\n"
        f"{_PAD}[(--exclude=<pattern>)...] [--start-after=<marker>]\n"
        f"{_PAD}[ --stdin | (<pattern>...)]",
    ],
    [
        Option("s", "shell", "bool", "quote placeholders suitably for shells"),
        Option("p", "perl", "bool", "quote placeholders suitably for perl"),
        Option(None, "python", "bool", "quote placeholders suitably for python"),
        Option(None, "tcl", "bool", "quote placeholders suitably for Tcl"),
        Option(None, "omit-empty", "bool", "do not output a newline after empty formatted refs"),
        Option(None, None, "group"),
        Option(None, "count", "int", "show only <n> matched refs"),
        Option(None, "format", "string", "format to use for the output", argh="format"),
        Option(
            None,
            "start-after",
            "string",
            "start iteration after the provided marker",
            argh="marker",
        ),
        Option(
            None,
            "color",
            "callback",
            "respect format colors",
            argh="when",
            takes_value=True,
            optional_value=True,
            callback=lambda values, when, unset: setattr(
                values, "color", False if unset else _want_color(when)
            ),
        ),
        Option(
            None,
            "exclude",
            "callback",
            "exclude refs which match pattern",
            argh="pattern",
            takes_value=True,
            callback=appender("exclude"),
        ),
        Option(
            None,
            "sort",
            "callback",
            "field name to sort on",
            argh="key",
            takes_value=True,
            callback=appender("sort"),
        ),
        Option(
            None,
            "points-at",
            "callback",
            "print only refs which points at the given object",
            argh="object",
            takes_value=True,
            callback=appender("points_at"),
        ),
        _reach("merged"),
        _reach("no-merged"),
        _reach("contains"),
        _reach("no-contains"),
        Option(None, "ignore-case", "bool", "sorting and filtering are case insensitive"),
        Option(None, "stdin", "bool", "read reference patterns from stdin"),
        Option(None, "include-root-refs", "bool", "also include HEAD ref and pseudorefs"),
    ],
)

_QUOTES = ("shell", "perl", "python", "tcl")


def _commit_arg(repo: Any, value: str, what: str) -> bytes:
    from gitodb.repo.reach import commit_of

    merged = "merged" in what
    try:
        oid = repo.resolve(value)
    except GitodbError:
        # Git dies for --merged (fatal, 128); --contains is an option error (129)
        if merged:
            raise GitodbError(f"malformed object name {value}") from None
        raise OptionParser.error(f"malformed object name {value}") from None
    commit = commit_of(repo.odb, oid, repo.object_format.hexsz)
    if commit is None:
        raise OptionParser.error(
            f"option `{what}' must point to a commit" if merged else f"no such commit {value}"
        )
    return commit


def _want_color(when: str | None) -> bool:
    if when is None or when in ("always", "true", "yes", "on"):
        return True
    if when in ("never", "false", "no", "off"):
        return False
    if when == "auto":
        return os.isatty(1) and os.environ.get("TERM", "") != "dumb"
    raise OptionParser.error('option `color\' expects "always", "auto", or "never"')


def run(argv: list[str], ctx: Any, *, command: str = "for-each-ref") -> int:
    """List refs in Git's ``for-each-ref`` formats (``command``: the name in usage text)."""
    parser = (
        PARSER if command == "for-each-ref" else OptionParser(command, PARSER.usage, PARSER.options)
    )
    from gitodb.repo.refformat import DEFAULT_FORMAT
    from gitodb.repo.refformat.atoms import MalformedFormatError

    values = parser.defaults()
    values.reach = []
    opts, patterns = parser.parse(argv, values)
    quotes = [q for q in _QUOTES if getattr(opts, q)]
    fmt = DEFAULT_FORMAT if opts.format is None else opts.format
    count = opts.count
    if count < 0:
        raise parser.usage_error(f"invalid --count argument: `{count}'")
    sort: list[str] = opts.sort or []
    sort_given = opts.sort is not None
    color = (
        opts.color
        if opts.color is not None
        else os.isatty(1) and os.environ.get("TERM", "") != "dumb"
    )
    omit_empty, use_stdin = opts.omit_empty, opts.stdin
    reach: list[tuple[str, str | None]] = opts.reach
    points_at: list[str] = opts.points_at or []
    if len(quotes) > 1:
        raise parser.usage_error("more than one quoting style?")
    quote_style = next(iter(quotes), "")
    repo = ctx.open_repository()
    if not (
        quotes
        or use_stdin
        or reach
        or points_at
        or opts.exclude
        or opts.ignore_case
        or opts.include_root_refs
        or opts.start_after is not None
    ):
        # every ref in a plain format: one native pass over the ref table, if it applies
        from gitodb.repo.refformat.table import render_table

        try:
            out_bytes = render_table(
                repo,
                fmt,
                patterns=patterns,
                sort=sort if sort_given else None,
                count=count,
                omit_empty=omit_empty,
            )
        except MalformedFormatError as e:
            raise parser.usage_error(str(e)) from None
        if out_bytes is not None:
            sys.stdout.buffer.write(out_bytes)
            return 0
    from gitodb.repo.refformat import RefFilter, render

    filt = RefFilter()
    filt.start_after = opts.start_after
    filt.excludes = opts.exclude or []
    filt.ignore_case = opts.ignore_case
    filt.include_root_refs = opts.include_root_refs
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
    for value in points_at:
        try:
            filt.points_at.append(repo.resolve(value))
        except GitodbError:
            raise OptionParser.error(f"malformed object name '{value}'") from None
    for opt, target in reach:
        oid = _commit_arg(repo, target or "HEAD", opt)
        getattr(filt, opt.replace("-", "_")).append(oid)
    try:
        chunks = render(
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
        raise parser.usage_error(str(e)) from None
    out = sys.stdout.buffer
    for chunk in chunks:
        out.write(chunk)
    return 0
