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

import sys
from typing import TYPE_CHECKING, Any

from gitodb.cli.options import abbrev_length
from gitodb.errors import BadRevisionError, GitodbError, ObjectNotFoundError
from gitodb.objects.datefmt import DateMode
from gitodb.refs.base import RefStore
from gitodb.refs.peel import shorten_ref

if TYPE_CHECKING:
    from gitodb.history.pretty import Formatter

_REFLOG_CODES = frozenset({b"gd", b"gD", b"gn", b"ge", b"gs", b"gN"})
# Options rev-list takes that mean something else (or nothing) to log.
_NOT_FOR_LOG = ("--count", "--objects", "--no-object-names", "--object-names", "--left-right")


def dwim_ref(refs: RefStore, name: str) -> str | None:
    """Expand a short ref name like Git: as given, refs/, refs/tags/, refs/heads/, ..."""
    for cand in (
        name,
        f"refs/{name}",
        f"refs/tags/{name}",
        f"refs/heads/{name}",
        f"refs/remotes/{name}",
        f"refs/remotes/{name}/HEAD",
    ):
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
    odb = repo.odb
    out: list[tuple[int, bytes]] = []
    for n, e in enumerate(reversed(refs.reflog(full))):
        if n < start:
            continue
        try:
            if not any(e.new):
                continue
            type_name, data = odb.read(e.new)
        except ObjectNotFoundError:
            continue
        if type_name != "commit":
            continue
        if paths and not _touches(repo, e.new, paths):
            continue

        def extra(code: bytes, e: Any = e, n: int = n) -> bytes | None:
            if code == b"gd":
                return b"%s@{%d}" % (short, n)
            if code == b"gD":
                return b"%s@{%d}" % (full_b, n)
            if code == b"gN":
                return b"%d" % n
            if code == b"gn":
                return str(e.name).encode("utf-8", "surrogateescape")
            if code == b"ge":
                return str(e.email).encode("utf-8", "surrogateescape")
            if code == b"gs":
                return bytes(e.message)
            return None

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


_KINDS = (("raw", 1), ("medium", 1), ("short", 1), ("full", 5), ("fuller", 5), ("oneline", 1))


def _set_pretty(o: _LogOptions, value: str) -> None:
    """Git's ``get_commit_format``: a built-in name (or a unique prefix), or a user format."""
    o.format_given = True
    if not value:
        o.kind = "medium"
        return
    if value.startswith(("format:", "tformat:")):
        o.kind = "user"
        o.user, o.terminator = user_format(value)
        return
    for name, least in _KINDS:
        if len(value) >= min(least, len(name)) and name.startswith(value):
            o.kind = name
            return
    if value in ("email", "mboxrd", "reference") or value.startswith("email"):
        raise GitodbError(f"gitodb log does not support --pretty={value}")
    if "%" in value:
        o.kind = "user"
        o.user, o.terminator = user_format(value)
        return
    raise GitodbError(f"invalid --pretty format: {value}")


def _split_log_options(argv: list[str], o: _LogOptions) -> list[str]:
    """Take log's own options out of ``argv``; the rest is for the walk."""
    from gitodb.objects.datefmt import parse_date_mode

    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--" or arg == "--end-of-options":
            rest += argv[i - 1 :]
            break
        if arg.startswith("--format="):
            o.format_given = True
            o.kind = "user"
            o.user, o.terminator = user_format(arg[9:])
        elif arg == "--pretty":
            _set_pretty(o, "medium")
        elif arg.startswith("--pretty="):
            _set_pretty(o, arg[9:])
        elif arg == "--oneline":
            o.kind = "oneline"
            o.abbrev_commit = True
            o.format_given = True
        elif arg.startswith("--date="):
            o.date_mode = parse_date_mode(arg[7:])
        elif arg == "--abbrev-commit":
            o.abbrev_commit = True
        elif arg == "--no-abbrev-commit":
            o.abbrev_commit = False
        elif arg == "--abbrev":
            o.abbrev = None
        elif arg.startswith("--abbrev="):
            o.abbrev = abbrev_length(arg[9:])
        elif arg == "--no-abbrev":
            o.abbrev = 0
        elif arg in ("-g", "--walk-reflogs"):
            o.walk_reflogs = True
        elif arg in ("--decorate", "--decorate=short", "--decorate=auto"):
            o.decorate = "short" if arg != "--decorate=auto" or sys.stdout.isatty() else None
        elif arg == "--decorate=full":
            o.decorate = "full"
        elif arg in ("--no-decorate", "--decorate=no"):
            o.decorate = None
        elif arg in ("--quiet", "-s", "--no-patch"):
            pass  # no diff is ever shown
        elif arg in _NOT_FOR_LOG:
            raise GitodbError(f"gitodb log does not support {arg}")
        else:
            rest.append(arg)
    return rest


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
    from gitodb.cli.rev_list import _Settings, _Usage, add_revisions, limit_to_paths, parse_args
    from gitodb.history.revwalk import RevWalk

    o = _LogOptions()
    rest = _split_log_options(argv, o)
    repo = ctx.open_repository()
    _config_defaults(repo, o)
    if o.walk_reflogs:
        return _reflog_walk(repo, o, rest)
    settings = _Settings()
    try:
        paths = parse_args(rest, settings)
    except _Usage as u:
        raise GitodbError(f"unrecognized argument: {u.args[0]}") from None
    settings.paths = paths
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
    status = add_revisions(repo, walk, settings, "--" in argv)
    if status:
        return status
    limit_to_paths(repo, ctx, walk, settings.paths)
    _show(repo, walk, o)
    return 0


def _show(repo: Any, walk: Any, o: _LogOptions) -> None:
    """Print the walk's commits in the chosen format."""
    from gitodb.history.pretty import Decorations, Formatter, log_mailmap, pretty_commit
    from gitodb.repo.abbrev import Abbreviator, default_abbrev

    length = default_abbrev(repo) if o.abbrev is None else o.abbrev
    abbrev = Abbreviator(repo, length)
    decorations = Decorations(repo, full=o.decorate == "full") if o.decorate else None
    # log.mailmap (default true since Git 2.29) maps the built-in formats' identities.
    mailmap = log_mailmap(repo) if repo.config.get_bool("log.mailmap", True) else None
    odb = repo.odb
    write = sys.stdout.buffer.write
    out: list[bytes] = []
    first = True
    if o.kind == "user":
        f = Formatter(repo, o.user, date_mode=o.date_mode, abbrev=length, decorations=decorations)
        if f.empty:
            for _node in walk.commits():
                pass
            return
        limited = getattr(walk, "limiter", None) is not None

        def rewritten(node: Any) -> list[bytes] | None:
            # a path-limited walk's parents are the simplified ones (Git's %P)
            return node.parent_ids if limited else None

        end = b"\n" if o.terminator else b""
        sep = b"" if o.terminator else b"\n"
        for node in walk.commits():
            text = f.format(node.id, _content(odb, node), parents=rewritten(node))
            out.append(text + end if first or not sep else sep + text)
            first = False
            if len(out) > 512:
                write(b"".join(out))
                out.clear()
        write(b"".join(out))
        return
    for node in walk.commits():
        raw = _content(odb, node)
        shown = (abbrev(node.id) if o.abbrev_commit else node.id.hex()).encode()
        decor = b""
        if decorations is not None:
            names = decorations.of(node.id)
            if names:
                decor = b" (" + ", ".join(names).encode("utf-8", "surrogateescape") + b")"
        if o.kind == "oneline":
            out.append(shown + decor + b" " + pretty_commit("oneline", repo, node.id, raw) + b"\n")
        else:
            if not first:
                out.append(b"\n")
            out.append(b"commit " + shown + decor + b"\n")
            out.append(
                pretty_commit(
                    o.kind,
                    repo,
                    node.id,
                    raw,
                    date_mode=o.date_mode,
                    abbrev=abbrev,
                    mailmap=mailmap,
                )
            )
        first = False
        if len(out) > 512:
            write(b"".join(out))
            out.clear()
    write(b"".join(out))


def _content(odb: Any, node: Any) -> bytes:
    """The commit's content: what the walk read (then dropped), else read now."""
    raw = node.raw
    if raw is None:
        return odb.read(node.id)[1]  # type: ignore[no-any-return]
    node.raw = None
    return raw  # type: ignore[no-any-return]


def _reflog_walk(repo: Any, o: _LogOptions, rest: list[str]) -> int:
    """``log -g``: the reflogs of the refs named (HEAD by default), user formats only."""
    from gitodb.history.pretty import Formatter

    if o.kind != "user":
        if o.format_given:
            raise GitodbError("gitodb log -g supports only --format=<format>")
        o.user, o.terminator = b"%H %gd: %gs", True
    specs = [a for a in rest if a != "--"]
    if any(s.startswith("-") for s in specs):
        bad = next(s for s in specs if s.startswith("-"))
        raise GitodbError(f"gitodb log -g does not support {bad}")
    f = Formatter(repo, o.user, date_mode=o.date_mode, abbrev=o.abbrev, extra_codes=_REFLOG_CODES)
    data = b"".join(walk_reflog(repo, s, o.user, formatter=f) for s in specs or ["HEAD"])
    sys.stdout.buffer.write(data)
    return 0
