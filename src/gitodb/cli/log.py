"""``gitodb log``: commits as ``git log`` shows them (no diffs), and ``log -g``.

The walk takes rev-list's options and revision arguments (``gitodb.cli.rev_list``);
output is ``--pretty``/``--format`` (``oneline``, ``short``, ``medium`` (default),
``full``, ``fuller``, ``raw``, ``format:``/``tformat:`` and bare formats with ``%``),
``--oneline``, ``--date=<mode>``, ``--abbrev-commit``, ``--abbrev=<n>``,
``--decorate[=short|full]``.  ``-g``/``--walk-reflogs`` walks a reflog instead,
with the reflog placeholders (%gd %gD %gn %ge %gs %gN).  All formatting is
``gitodb.history.pretty``, shared with ``gitodb reflog``.
"""

from __future__ import annotations

import os
import sys

from gitodb.cli.options import Option, OptionParser, SimpleNamespace
from gitodb.errors import BadRevisionError, GitodbError
from gitodb.history.notes import NotesOptions
from gitodb.objects.datefmt import DateMode
from gitodb.refs.base import RefStore
from gitodb.refs.peel import REV_PARSE_RULES, shorten_ref

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitodb.cli.revopts import RevSettings
    from gitodb.history.pretty import Formatter

_REFLOG_CODES = frozenset({b"gd", b"gD", b"gn", b"ge", b"gs", b"gN"})


def dwim_ref(refs: RefStore, name: str) -> str | None:
    """Expand a short ref name like Git: as given, refs/, refs/tags/, refs/heads/, ..."""
    for rule in REV_PARSE_RULES:
        cand = rule.format(name)
        if refs.read(cand) is not None or refs.reflog_exists(cand):
            return cand
    return None


def user_format(text: str) -> tuple[bytes, bool]:
    """``(format, terminator)`` of a ``--format``/``--pretty`` user format:
    ``format:`` separates entries, ``tformat:`` and bare ``%`` formats end each."""
    if text.startswith("format:"):
        return text[7:].encode("utf-8", "surrogateescape"), False
    if text.startswith("tformat:"):
        text = text[8:]
    return text.encode("utf-8", "surrogateescape"), True


def walk_reflog(
    repo: Any,
    spec: str,
    fmt: bytes,
    paths: list[str] | None = None,
    formatter: Formatter | None = None,
) -> bytes:
    """The ``log -g --format=fmt`` output for ``spec`` (a ref name, maybe short).

    Entries whose new id is not a commit are skipped, but ``@{N}`` counts them.  With
    ``paths`` (what follows ``--``), only entries whose commit changes one of them
    against each of its parents are shown.
    """
    return b"".join(line for _, line in reflog_lines(repo, spec, fmt, paths, formatter))


def reflog_lines(
    repo: Any,
    spec: str,
    fmt: bytes,
    paths: list[str] | None = None,
    formatter: Formatter | None = None,
    shown: str | None = None,
    start: int = 0,
) -> list[tuple[int, bytes]]:
    """:func:`walk_reflog`'s lines, newest first, each with its entry's time (for a
    walk over several reflogs); ``shown`` replaces the shortened name ``%gd`` prints;
    ``start`` skips the newest entries (``<ref>@{<start>}``)."""
    from gitodb.history.pretty import Formatter

    refs = repo.refs
    full = dwim_ref(refs, spec)
    if full is None:
        raise BadRevisionError(
            f"ambiguous argument '{spec}': unknown revision or path not in the working tree."
        )
    short = (shorten_ref(full) if shown is None else shown).encode("utf-8", "surrogateescape")
    full_b = full.encode("utf-8", "surrogateescape")
    if formatter is None:
        formatter = Formatter(repo, fmt, extra_codes=_REFLOG_CODES)
    from gitodb.history.reflogwalk import ReflogWalk

    odb = repo.odb
    out: list[tuple[int, bytes]] = []
    walk = ReflogWalk(repo)
    walk.add_ref(full, start)
    for _ref, n, e in walk:  # the entries whose new id is a commit
        if paths and not _touches(repo, e.new, paths):
            continue
        data = odb.read(e.new)[1]
        extra = _reflog_codes(full_b, short, e, b"%d" % n, n)
        out.append((e.time, formatter.format(e.new, data, extra) + b"\n"))
    return out


def _touches(repo: Any, commit: bytes, paths: list[str]) -> bool:
    """Whether ``commit`` changes one of ``paths`` against every parent (not TREESAME)."""
    from gitodb.history.treediff import diff_trees

    odb = repo.odb
    c = odb.commit(commit)
    items = [p.encode("utf-8", "surrogateescape") for p in paths]
    trees = [odb.commit(p).tree for p in c.parents] or [None]
    return all(diff_trees(repo, t, c.tree, items) for t in trees)


class _LogOptions:
    def __init__(self) -> None:
        self.kind = "medium"  # a built-in format, or "user"
        self.user: bytes = b""
        self.terminator = True
        self.date_mode = DateMode()
        self.abbrev_commit = False
        self.abbrev: int | None = None  # None: the default length
        self.walk_reflogs = False
        self.decorate: str | None = None  # None, "short" or "full"
        self.format_given = False
        self.mailmap: bool | None = None  # --[no-]use-mailmap; None: log.mailmap
        self.color: str | None = None  # --color=<when> ("" for --color); None: config
        self.diff_args: list[str] = []  # the diff options (gitodb.cli.log_diff)
        self.merges: str | None = None  # -m / --diff-merges=
        self.quiet = False  # -q: no diff
        self.notes = NotesOptions()  # --notes[=<ref>], --no-notes, --[no-]standard-notes


def _set_pretty(o: _LogOptions, value: str) -> None:
    """Git's ``get_commit_format`` for ``--pretty=``/``--format=``: ``format:`` and
    ``tformat:`` formats, an empty one or one with ``%`` (a ``tformat:``), or a
    built-in name (or a unique prefix)."""
    o.format_given = True
    if value.startswith(("format:", "tformat:")) or not value or "%" in value:
        o.kind = "user"
        o.user, o.terminator = user_format(value)
        return
    from gitodb.cli.revopts import builtin_format

    kind = builtin_format(value)
    if kind is not None:
        o.kind = kind
        return
    if value in ("email", "mboxrd", "reference") or value.startswith("email"):
        raise GitodbError(f"gitodb log does not support --pretty={value}")
    raise GitodbError(f"invalid --pretty format: {value}")


def _decorate(values: Any, value: str | None, unset: bool) -> None:
    """``--decorate[=short|full|auto|no]``, ``--no-decorate`` (Git's ``decorate_callback``)."""
    if unset or value == "no":
        values.decorate = None
    elif value in (None, "short", "yes", "true"):
        values.decorate = "short"
    elif value == "full":
        values.decorate = "full"
    elif value == "auto":
        values.decorate = "short" if sys.stdout.isatty() else None
    else:
        raise GitodbError(f"invalid --decorate option: {value}")


def _refuse(name: str) -> Any:
    def callback(_values: Any, _value: str | None, unset: bool) -> None:
        if not unset:
            raise GitodbError(f"gitodb log does not support {name}")

    return callback


def _mailmap(values: Any, _value: str | None, unset: bool) -> None:
    values.mailmap = not unset


#: ``git log``'s own options (parse-options; what ``-h`` lists); the rest of the
#: command line is the revision options (``_revision_parser``)
PARSER = OptionParser(
    "",
    ["log [<options>] [<revision-range>] [[--] <path>...]", "show [<options>] <object>..."],
    [
        Option("q", "quiet", "bool", "suppress diff output"),
        Option(None, "source", "callback", "show source", callback=_refuse("--source")),
        Option(None, "use-mailmap", "callback", "use mail map file", callback=_mailmap),
        Option(None, "mailmap", "callback", "alias of --use-mailmap", callback=_mailmap),
        Option(
            None,
            "clear-decorations",
            "callback",
            "clear all previously-defined decoration filters",
            callback=_refuse("--clear-decorations"),
            negatable=False,
        ),
        Option(
            None,
            "decorate-refs",
            "callback",
            "only decorate refs that match <pattern>",
            argh="pattern",
            takes_value=True,
            callback=_refuse("--decorate-refs"),
        ),
        Option(
            None,
            "decorate-refs-exclude",
            "callback",
            "do not decorate refs that match <pattern>",
            argh="pattern",
            takes_value=True,
            callback=_refuse("--decorate-refs-exclude"),
        ),
        Option(
            None,
            "decorate",
            "callback",
            "decorate options",
            argh="...",
            literal_argh=True,
            takes_value=True,
            optional_value=True,
            callback=_decorate,
        ),
        Option(
            "L",
            None,
            "callback",
            "trace the evolution of line range <start>,<end> or function :<funcname> in <file>",
            argh="range:file",
            takes_value=True,
            callback=_refuse("-L"),
        ),
    ],
    keep_unknown=True,
    keep_dashdash=True,
)

_REVISION_PARSER: OptionParser | None = None


def _revision_parser() -> OptionParser:
    """The revision options (``gitodb.cli.revopts``) and log's formatting ones."""
    global _REVISION_PARSER
    if _REVISION_PARSER is not None:
        return _REVISION_PARSER
    from gitodb.cli.revopts import REVISION_OPTIONS, revision_abbrev

    def fmt(values: Any, value: str | None, _unset: bool) -> None:
        _set_pretty(values.log, value or "")

    def pretty(values: Any, value: str | None, _unset: bool) -> None:
        _set_pretty(values.log, "medium" if value is None else value)

    def oneline(values: Any, _value: str | None, _unset: bool) -> None:
        o = values.log
        o.kind, o.abbrev_commit, o.format_given = "oneline", True, True

    def date(values: Any, value: str | None, _unset: bool) -> None:
        from gitodb.objects.datefmt import parse_date_mode

        values.log.date_mode = parse_date_mode(value or "")

    def setter(attr: str, value: object) -> Any:
        def callback(values: Any, _value: str | None, _unset: bool) -> None:
            setattr(values.log, attr, value)

        return callback

    def setter_value(attr: str) -> Any:
        def callback(values: Any, value: str | None, _unset: bool) -> None:
            setattr(values.log, attr, "always" if value is None else value)

        return callback

    def abbrev(values: Any, value: str | None, _unset: bool) -> None:
        values.log.abbrev = None if value is None else revision_abbrev(value)

    def notes(values: Any, value: str | None, _unset: bool) -> None:
        values.log.notes.notes(value)

    def show_notes(values: Any, value: str | None, _unset: bool) -> None:
        values.log.notes.show_notes(value)

    def opt(short: str | None, long: str | None, callback: Any, **kw: Any) -> Option:
        return Option(short, long, "callback", callback=callback, hidden=True, **kw)

    _REVISION_PARSER = OptionParser(
        "log",
        [],
        [
            *REVISION_OPTIONS,
            opt(None, "format", fmt, takes_value=True, stuck=True),
            opt(None, "pretty", pretty, takes_value=True, optional_value=True),
            opt(None, "oneline", oneline),
            opt(None, "date", date, takes_value=True),
            opt(None, "abbrev-commit", setter("abbrev_commit", True)),
            opt(None, "no-abbrev-commit", setter("abbrev_commit", False)),
            opt(None, "abbrev", abbrev, takes_value=True, optional_value=True),
            opt(None, "no-abbrev", setter("abbrev", 0)),
            opt("g", "walk-reflogs", setter("walk_reflogs", True)),
            opt(None, "color", setter_value("color"), takes_value=True, optional_value=True),
            opt(None, "no-color", setter("color", "never")),
            opt(None, "notes", notes, takes_value=True, optional_value=True, stuck=True),
            opt(None, "show-notes", show_notes, takes_value=True, optional_value=True, stuck=True),
            opt(None, "standard-notes", lambda v, _x, _u: v.log.notes.standard(True)),
            opt(None, "no-notes", lambda v, _x, _u: v.log.notes.no_notes()),
            opt(None, "no-standard-notes", lambda v, _x, _u: v.log.notes.standard(False)),
        ],
    )
    return _REVISION_PARSER


def parse_log_args(argv: list[str]) -> tuple[_LogOptions, RevSettings, list[str] | None]:
    """log's options, then the revision options (Git's ``cmd_log_init``): the log
    options, the walk's settings and the paths after ``--`` (None without)."""
    from gitodb.cli.log_diff import split_args
    from gitodb.cli.revopts import RevSettings, add_revision, check

    o = _LogOptions()
    o.diff_args, argv, o.merges = split_args(argv)
    o_values = SimpleNamespace(decorate=None, mailmap=None, quiet=False)
    _values, rest = PARSER.parse(argv, o_values)
    o.decorate, o.mailmap, o.quiet = o_values.decorate, o_values.mailmap, o_values.quiet
    settings = RevSettings()
    settings.log = o
    _s, unknown, paths = _revision_parser().parse_revision(rest, settings, on_arg=add_revision)
    check(settings, unknown)
    settings.unknown = unknown
    for given, name in (
        (settings.count, "--count"),
        (settings.walk_kwargs.get("objects"), "--objects"),
    ):
        if given:
            raise GitodbError(f"gitodb log does not support {name}")
    return o, settings, paths


def _config_defaults(repo: Any, o: _LogOptions) -> None:
    """``format.pretty``, ``log.date``, ``log.abbrevCommit`` when no option overrides."""
    from gitodb.objects.datefmt import parse_date_mode

    cfg = repo.config
    if not o.format_given:
        value = cfg.get("format.pretty")
        if value:
            _set_pretty(o, value)
    if o.date_mode == DateMode():
        value = cfg.get("log.date")
        if value:
            o.date_mode = parse_date_mode(value)
    if not o.abbrev_commit and cfg.get_bool("log.abbrevcommit", False):
        o.abbrev_commit = True


def run(argv: list[str], ctx: Any) -> int:
    """Show commits; see ``git log``."""
    from gitodb.cli.revopts import without_gc

    return without_gc(_run, argv, ctx)


def _run(argv: list[str], ctx: Any) -> int:
    from gitodb.cli.rev_list import add_revisions, limit_to_paths
    from gitodb.history.revwalk import RevWalk

    o, settings, paths = parse_log_args(argv)
    repo = ctx.open_repository()
    _config_defaults(repo, o)
    if o.walk_reflogs:
        return _reflog_walk(repo, o, settings, paths)
    settings.paths = paths or []
    if settings.filter is not None or settings.missing or settings.print_omitted:
        raise GitodbError("gitodb log does not support object filters (--filter, --missing)")
    if not any(what not in ("--not", "--exclude") for what, _v in settings.revs):
        head = repo.refs.read("HEAD")
        if repo.refs.resolve("HEAD") is None:
            target = getattr(head, "target", None) or "HEAD"
            raise GitodbError(
                f"your current branch '{shorten_ref(target)}' does not have any commits yet"
            )
        settings.revs.append(("rev", "HEAD"))
    from gitodb.history.graph import CommitGraph

    walk = RevWalk(repo, graph=CommitGraph(repo, keep_raw=True), **settings.walk_kwargs)  # type: ignore[arg-type]
    status = add_revisions(repo, walk, settings, paths is not None)
    if status:
        return status
    if settings.unknown:  # Git reads the revisions first
        raise GitodbError(f"unrecognized argument: {settings.unknown[0]}")
    limit_to_paths(repo, ctx, walk, settings.paths)
    diff = None
    if o.diff_args or o.merges:
        from gitodb.cli.log_diff import LogDiff

        diff = LogDiff(repo, o.diff_args, o.abbrev, o.merges)
        if not diff.wanted and not diff.filters:
            diff = None
        else:
            from gitodb.repo import find_work_tree_top

            explicit = ctx.git_dir is not None or "GIT_DIR" in os.environ
            diff.bind(walk.paths, find_work_tree_top(repo, explicit_git_dir=explicit))
    colors = _graph_colors(repo, o, settings.graph)
    if colors and diff is not None:
        from gitodb.cli.options import UsageError

        raise UsageError(stderr="fatal: gitodb log does not draw --graph beside diffs\n")
    shown_limit = -1
    if diff is not None and diff.filters and walk.max_count >= 0 and not walk.reverse:
        # -n counts the commits shown, not those walked (Git gives a commit that the
        # pickaxe hides its place back)
        shown_limit, walk.max_count = walk.max_count, -1
    _show(repo, walk, o, settings, diff, colors, shown_limit)
    return diff.finish() if diff is not None else 0


def _mark(node: Any, left_right: bool, cherry_mark: bool) -> bytes:
    """Git's ``put_revision_mark``: ``- ``, ``= ``, ``< ``/``> ``, ``+ `` or nothing."""
    from gitodb.history.graph import BOUNDARY, PATCHSAME, SYMMETRIC_LEFT

    flags = node.flags
    if flags & BOUNDARY:
        return b"- "
    if flags & PATCHSAME:
        return b"= "
    if left_right:
        return b"< " if flags & SYMMETRIC_LEFT else b"> "
    if cherry_mark:
        return b"+ "
    return b""


def _show(
    repo: Any,
    walk: Any,
    o: _LogOptions,
    settings: Any,
    diff: Any = None,
    graph: bool | list[bytes] = False,
    shown_limit: int = -1,
) -> None:
    """Print the walk's commits in the chosen format, each followed by its diff
    when ``diff`` (a ``gitodb.cli.log_diff.LogDiff``) is given, or with the graph
    beside them (``graph``, ``gitodb.history.graphdraw``; a list: in these column
    colours).

    ``--parents``: after each id, its parents as the walk rewrote them;
    ``--children``: then its children; ``--left-right``/``--cherry-mark``: the
    mark before it; a merge's diff against one parent of several names it
    (``(from <parent>)``), and its header is repeated for each parent.
    ``shown_limit``: stop after that many commits shown (``-n`` with ``-S``).
    """
    from gitodb.history.graphdraw import GraphLog
    from gitodb.history.pretty import (
        Decorations,
        Formatter,
        log_mailmap,
        oneline_parts,
        pretty_commit,
    )
    from gitodb.repo.abbrev import Abbreviator, default_abbrev

    parents = settings.parents
    children = settings.children
    left_right = settings.left_right
    cherry_mark = bool(settings.walk_kwargs.get("cherry_mark"))
    first_parent = bool(settings.walk_kwargs.get("first_parent"))
    length = default_abbrev(repo) if o.abbrev is None else o.abbrev
    abbrev = Abbreviator(repo, length)
    decorations = Decorations(repo, full=o.decorate == "full") if o.decorate else None
    # log.mailmap (default true since Git 2.29) maps the built-in formats' identities.
    use_mailmap = o.mailmap
    if use_mailmap is None:
        use_mailmap = repo.config.get_bool("log.mailmap", True)
    mailmap = log_mailmap(repo) if use_mailmap else None
    odb = repo.odb
    write = sys.stdout.buffer.write
    out: list[bytes] = []
    user = o.kind == "user"
    # Git's use_terminator: oneline and tformat end each entry, the others are
    # separated by a blank line
    terminator = o.kind == "oneline" or (user and o.terminator)
    palette = graph if isinstance(graph, list) else None
    drawn = GraphLog(walk, terminator, left_right, palette) if graph else None
    # a path-limited walk's parents are the simplified ones, a grafted or shallow
    # commit's the grafted ones (Git's %P)
    limited = getattr(walk, "limiter", None) is not None or walk.graph.rewrites
    f = None
    if user:
        f = Formatter(repo, o.user, date_mode=o.date_mode, abbrev=length, decorations=decorations)
    notes = _display_notes(repo, o, f)
    if f is not None:
        if notes is not None:
            f.notes = lambda oid: notes.text(oid, raw=True)
        if f.empty and drawn is not None:
            write(b"".join(drawn.entry(n, b"", b"", True) for n in walk.commits()))
            return
        if f.empty and diff is None:
            for _node in walk.commits():
                pass
            return
        if diff is None and drawn is None and not limited and _native_log(walk, o, f, odb):
            return
    empty = user and f is not None and f.empty

    def short(oid: bytes) -> bytes:
        return (abbrev(oid) if o.abbrev_commit else oid.hex()).encode()

    if (
        o.kind == "oneline"
        and diff is None
        and drawn is None
        and not limited
        and decorations is None
        and not notes
        and not (parents or children or left_right or cherry_mark)
    ):
        # "<id> <subject>" is "%h %s" (or "%H %s"), which the native core formats
        def oneline(oid: bytes, raw: bytes | None) -> bytes:
            raw = odb.read(oid)[1] if raw is None else raw
            return short(oid) + b" " + pretty_commit("oneline", repo, oid, raw)

        spec = abbrev.native_spec() if o.abbrev_commit else None
        fast = walk.native_format(oneline_parts(spec is not None), b"\n", b"", oneline, spec)
        if fast is not None:
            write(fast[1])
            if fast[2] is not None:
                raise fast[2]
            return

    def parts(node: Any, raw: bytes, parent: bytes | None) -> tuple[bytes, bytes]:
        """Git's ``show_log`` without the separator: the entry's header and message
        (a user format's text is all message)."""
        if user:
            assert f is not None
            return b"", f.format(node.id, raw, parents=node.parent_ids if limited else None)
        # with the graph, the graph draws the mark
        shown = b"" if drawn is not None else _mark(node, left_right, cherry_mark)
        shown += short(node.id)
        if parents:
            shown += b"".join(b" " + short(p) for p in node.parent_ids)
        if children:
            shown += b"".join(b" " + short(c) for c in walk.children.get(node.id, ()))
        if parent is not None:
            shown += b" (from %s)" % short(parent)
        if decorations is not None:
            names = decorations.of(node.id)
            if names:
                shown += b" (" + ", ".join(names).encode("utf-8", "surrogateescape") + b")"
        note = notes.text(node.id) if notes else b""  # after the message, as Git's
        if o.kind == "oneline":
            return shown + b" ", pretty_commit("oneline", repo, node.id, raw) + note
        message = pretty_commit(
            o.kind, repo, node.id, raw, date_mode=o.date_mode, abbrev=abbrev, mailmap=mailmap
        )
        return b"commit " + shown + b"\n", message + note

    def header(node: Any, raw: bytes, parent: bytes | None) -> bytes:
        """The whole entry as Git prints it without the graph."""
        head, message = parts(node, raw, parent)
        if terminator and not empty:
            return head + message + b"\n"
        return head + message

    if drawn is not None:
        for node in walk.commits():
            out.append(drawn.entry(node, *parts(node, _content(odb, node), None)))
            if len(out) > 512:
                write(b"".join(out))
                out.clear()
        write(b"".join(out))
        return

    # between the message and the diff: a blank line (``---`` first with a patch
    # and its stat), except after a one-line or empty format
    gap = b""
    if diff is not None and diff.wanted and o.kind != "oneline" and not empty:
        gap = b"---\n" if diff.dashes else b"\n"
    shown_one = False
    shown = 0
    for node in walk.commits() if shown_limit != 0 else ():
        raw = _content(odb, node)
        entries = diff.parent_diffs(node, first_parent) if diff is not None else []
        any_shown = False
        for parent, text in entries:
            if text is None:
                continue  # no change: no log entry for this diff (log_tree_diff_flush)
            if shown_one and not terminator:
                out.append(b"\n")
            out.append(header(node, raw, parent))
            out.append(gap)
            out.append(text)
            shown_one = any_shown = True
        if not any_shown:
            if diff is not None and diff.filters:
                continue  # -S: no change kept, the commit is not shown
            if shown_one and not terminator:
                out.append(b"\n")
            out.append(header(node, raw, None))
            shown_one = True
        shown += 1
        if shown == shown_limit:
            break
        if len(out) > 512:
            write(b"".join(out))
            out.clear()
    write(b"".join(out))


def _display_notes(repo: Any, o: _LogOptions, f: Any) -> Any:
    """The notes to show (``history.notes.DisplayNotes``), or None: Git's log shows
    the default notes unless a format is given (or ``%N`` asks for them) or the
    notes options say otherwise."""
    return o.notes.display(repo, not o.format_given or (f is not None and f.wants_notes))


def _native_log(walk: Any, o: _LogOptions, f: Any, odb: Any) -> bool:
    """Write the walk in a user format from the native core when it can format it
    (``RevWalk.native_format``); False when the Python formatter must."""
    end = b"\n" if o.terminator else b""
    sep = b"" if o.terminator else b"\n"
    native_parts = f.native_parts()
    fast = (
        None
        if native_parts is None
        else walk.native_format(
            native_parts, end, sep, _fallback(odb, f), f.native_abbrev(native_parts)
        )
    )
    if fast is None:
        return False
    sys.stdout.buffer.write(fast[1])
    if fast[2] is not None:
        raise fast[2]
    return True


def _fallback(odb: Any, f: Any) -> Any:
    """The commits the native formatter leaves to ``f`` (``RevWalk.native_format``)."""

    def fallback(oid: bytes, raw: bytes | None) -> bytes:
        return f.format(oid, odb.read(oid)[1] if raw is None else raw)  # type: ignore[no-any-return]

    return fallback


def _graph_colors(repo: Any, o: _LogOptions, graph: bool) -> bool | list[bytes]:
    """Whether to draw the graph and, with ``--color`` (or ``color.diff``/``color.ui``
    set to always), its column colours (``log.graphColors``).  gitodb colours
    nothing else, so colour is refused where Git would colour more: built-in
    formats and ``%C`` in a user format."""
    from gitodb.cli.for_each_ref import _want_color

    when = o.color
    if when is None:
        when = repo.config.get("color.diff") or repo.config.get("color.ui") or "never"
        when = "never" if when.lower() in ("false", "no", "off", "0") else when.lower()
        when = "auto" if when in ("true", "yes", "on", "1") else when
    if not _want_color(when or None):
        return graph
    if not graph or o.kind != "user" or b"%C" in o.user:
        from gitodb.cli.options import UsageError

        raise UsageError(
            stderr="fatal: gitodb log supports colour only for --graph with a format without %C\n"
        )
    from gitodb.history.graphdraw import graph_colors

    return graph_colors(repo.config.get("log.graphColors"))


def _content(odb: Any, node: Any) -> bytes:
    """The commit's content: what the walk read (then dropped), else read now."""
    raw = node.raw
    if raw is None:
        return odb.read(node.id)[1]  # type: ignore[no-any-return]
    node.raw = None
    return raw  # type: ignore[no-any-return]


def _reflog_walk(repo: Any, o: _LogOptions, settings: RevSettings, paths: list[str] | None) -> int:
    """``log -g``: the reflogs of the refs named (HEAD by default), user formats only,
    walked by ``RevWalk`` with a ``ReflogWalk`` (its options filter the entries)."""
    from gitodb.cli.rev_list import add_revisions
    from gitodb.history.pretty import Formatter
    from gitodb.history.reflogwalk import ReflogWalk
    from gitodb.history.revwalk import RevWalk

    if settings.graph:  # it makes the walk topological: limited, as Git says
        raise GitodbError("cannot combine --walk-reflogs with history-limiting options")
    if o.kind != "user":
        if o.format_given:
            raise GitodbError("gitodb log -g supports only --format=<format>")
        o.user, o.terminator = b"%H %gd: %gs", True
    if not any(what not in ("--not", "--exclude") for what, _v in settings.revs):
        settings.revs.append(("rev", "HEAD"))
    walk = RevWalk(repo, **settings.walk_kwargs)  # type: ignore[arg-type]
    reflog = ReflogWalk(repo)
    walk.walk_reflogs(reflog)
    status = add_revisions(repo, walk, settings, paths is not None)
    if status:
        return status
    if settings.unknown:  # Git reads the revisions first
        raise GitodbError(f"unrecognized argument: {settings.unknown[0]}")
    if paths:
        walk.set_paths([p.encode("utf-8", "surrogateescape") for p in paths])
    f = Formatter(repo, o.user, date_mode=o.date_mode, abbrev=o.abbrev, extra_codes=_REFLOG_CODES)
    odb = repo.odb
    out: list[bytes] = []
    # with --date, %gd names an entry by its date (Git's get_reflog_selector)
    dated = o.date_mode if o.date_mode != DateMode() else None
    for node in walk.commits():
        item = reflog.current  # the entry that gave this commit
        assert item is not None
        out.append(f.format(node.id, odb.read(node.id)[1], _entry_codes(item, dated)) + b"\n")
    sys.stdout.buffer.write(b"".join(out))
    return 0


def _entry_codes(item: Any, dated: DateMode | None) -> Any:
    """The reflog placeholders of one walked entry; ``dated``: the selector is the
    entry's date in that mode, not its number."""
    full = item.ref.encode("utf-8", "surrogateescape")
    short = shorten_ref(item.ref).encode("utf-8", "surrogateescape")
    e, n = item.entry, item.number
    selector = b"%d" % n
    if dated is not None:
        from gitodb.objects.datefmt import show_date

        selector = show_date(e.time, e.tz_offset, dated).encode()
    return _reflog_codes(full, short, e, selector, n)


def _reflog_codes(full: bytes, short: bytes, e: Any, selector: bytes, n: int) -> Any:
    """``Formatter.format``'s ``extra`` for the reflog placeholders (%gd %gD %gN %gn
    %ge %gs) of entry ``e``, the ``n``-th of ref ``full`` (``short`` as %gd names it,
    ``selector`` what goes in its braces)."""

    def extra(code: bytes) -> bytes | None:
        if code == b"gd":
            return b"%s@{%s}" % (short, selector)
        if code == b"gD":
            return b"%s@{%s}" % (full, selector)
        if code == b"gN":
            return b"%d" % n
        if code == b"gn":
            return str(e.name).encode("utf-8", "surrogateescape")
        if code == b"ge":
            return str(e.email).encode("utf-8", "surrogateescape")
        if code == b"gs":
            return bytes(e.message)
        return None

    return extra
