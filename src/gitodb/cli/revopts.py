"""The revision options of ``rev-list`` and ``log``, declared once (Git's ``revision.c``).

Git reads these with ``setup_revisions``, not ``parse-options``: exact names, values
stuck or next (``OptionParser.parse_revision``).  ``REVISION_OPTIONS`` are the ones
both commands take; each command adds its own and parses into a ``RevSettings``,
whose ``walk_kwargs`` build the ``RevWalk`` and whose ``revs`` are the revision
arguments and ref pseudo-options in the order given (``add_revisions`` in
``gitodb.cli.rev_list`` feeds them to the walk).
"""

from __future__ import annotations

from gitodb.cli.options import Option, SimpleNamespace
from gitodb.errors import GitodbError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["RevSettings", "REVISION_OPTIONS", "count", "revision_abbrev", "seconds"]


def count(text: str) -> int:
    """A whole number as Git 2.55 reads counts; ``not an integer`` otherwise."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not (digits.isascii() and digits.isdigit()):  # [+-]?[0-9]+, without re
        raise GitodbError(f"'{text}': not an integer")
    return int(text)


def revision_abbrev(text: str) -> int:
    """The ``<n>`` of rev-list's ``--abbrev=<n>`` as ``revision.c`` reads it: C's
    ``strtoul`` (leading blanks, a sign, the digits that follow, nothing is an error)
    stored in an ``int``; below 4 means 4, a negative ``int`` the full id (0 here,
    as ``--no-abbrev``).  Not ``abbrev_length``: Git's parse-options reading differs."""
    rest = text.lstrip(" \t\n\v\f\r")
    sign = rest[:1] if rest[:1] in ("+", "-") else ""
    rest = rest[len(sign) :]
    digits = rest[: len(rest) - len(rest.lstrip("0123456789"))]
    n = min(int(digits or "0"), 2**64 - 1)  # strtoul saturates
    if sign == "-":
        n = -n % 2**64  # and negates in unsigned arithmetic
    n %= 2**32  # the int it is stored in
    if n >= 2**31:
        return 0
    return max(n, 4)


def seconds(text: str) -> int:
    """``--max-age``/``--min-age``: seconds since the epoch."""
    if not (text.isascii() and text.isdigit()):  # [0-9]+
        raise GitodbError(f"'{text}': not a number of seconds since epoch")
    return int(text)


class RevSettings(SimpleNamespace):
    """What the options ask for, gathered before the walk is built."""

    def __init__(self) -> None:
        super().__init__()
        self.walk_kwargs: dict[str, object] = {"order": "default"}
        self.count = False
        self.parents = False
        self.children = False
        self.object_names = True
        self.quiet = False
        self.left_right = False
        self.ignore_missing = False
        self.revs: list[tuple[str, str | None]] = []  # (what, value) in order
        self.filter: Any = None  # --filter (repeated: combined)
        self.filter_provided = False
        self.print_omitted = False
        self.missing: str | None = None  # --missing=<action>, None when not given
        self.timestamp = False
        self.maximal_only = False
        self.walk_reflogs = False  # -g: walk the reflogs of the commits named
        self.in_commit_order = False  # --objects listed after each commit
        self.use_bitmap = False  # --use-bitmap-index
        self.test_bitmap = False  # --test-bitmap
        self.bisect_vars = False
        self.pretty: str | None = None  # "oneline", or a user format
        self.pretty_kind: str | None = None  # a built-in format other than oneline
        self.abbrev: int | None = None  # --abbrev=<n>; None: the default, 0: full ids
        self.abbrev_commit = False  # --abbrev-commit (--oneline): the commits' own ids
        self.abbreviator: Any = None  # the Abbreviator of ``abbrev``, made on first use
        self.formatter: object = None
        self.header = False
        self.nul = False  # -z
        self.paths: list[str] = []  # pathspecs (after "--", or names of files)
        self.hidden_section: str | None = None  # a pending --exclude-hidden=<section>
        self.rejected: list[tuple[str, str]] = []  # (error, option) Git leaves unknown
        self.unknown: list[str] = []  # options the command does not know
        self.disk_usage: str | None = None  # --disk-usage: "bytes" or "human"
        self.verify_objects = False  # --verify-objects: each listed blob's hash checked
        self.graph = False  # --graph (gitodb.history.graphdraw)
        self.drawer: Any = None  # its GraphDrawer, once the first commit is shown


#: the built-in formats and the shortest prefix that names each (Git's table order)
_KINDS = (("raw", 1), ("medium", 1), ("short", 1), ("full", 5), ("fuller", 5), ("oneline", 1))


def builtin_format(value: str) -> str | None:
    """Git's ``get_commit_format`` lookup: the built-in format ``value`` names (a
    unique prefix will do), else None."""
    for name, least in _KINDS:
        if len(value) >= min(least, len(name)) and name.startswith(value):
            return name
    return None


def check(settings: RevSettings, unknown: list[str]) -> None:
    """The checks ``setup_revisions`` makes once every option is read; the ref
    options it refused are printed (``error: ...``) and join ``unknown``."""
    import sys

    for message, arg in settings.rejected:
        sys.stderr.write(f"error: {message}\n")
        unknown.insert(0, arg)
    settings.rejected = []
    if settings.graph:
        # the graph is drawn over rewritten parents, in topological order unless
        # another order is asked for
        w = settings.walk_kwargs
        w["rewrite_parents"] = True
        if w.get("order", "default") == "default":
            w["order"] = "topo"
    # --simplify-merges rewrites parents too: Git names the option that asks for it
    if settings.walk_kwargs.get("rewrite_parents") and settings.children:
        raise GitodbError("options '--parents' and '--children' cannot be used together")
    if settings.graph and settings.walk_kwargs.get("reverse"):
        raise GitodbError("options '--graph' and '--reverse' cannot be used together")


def add_revision(values: Any, arg: str) -> None:
    """A revision argument (``on_arg`` of ``parse_revision``)."""
    values.revs.append(("rev", arg))


def _walk(key: str, value: object) -> Any:
    def callback(values: Any, _value: str | None, _unset: bool) -> None:
        values.walk_kwargs[key] = value

    return callback


def _verify_objects(values: Any, _value: str | None, _unset: bool) -> None:
    """``--verify-objects``: ``--objects``, and each listed blob is read and its hash
    checked (trees and tags are read by the walk itself)."""
    values.walk_kwargs["objects"] = True
    values.verify_objects = True


def _objects_edge(values: Any, _value: str | None, _unset: bool) -> None:
    """``--objects-edge``: ``--objects``, and the excluded commits that border the
    listed ones printed first (``-<id>``), as pack-objects wants for a thin pack."""
    values.walk_kwargs["objects"] = True
    values.walk_kwargs["edge_hint"] = True


def _walk_int(key: str, read: Any = count) -> Any:
    def callback(values: Any, value: str | None, _unset: bool) -> None:
        values.walk_kwargs[key] = read(value or "")

    return callback


_REF_OPTIONS = ("--all", "--branches", "--tags", "--remotes", "--glob")


def _pseudo(name: str) -> Any:
    """A ref pseudo-option (``--all``, ``--glob=<g>``, ``--not``...): kept in order.

    A ref option uses up a pending ``--exclude-hidden``; ``--branches``, ``--tags``
    and ``--remotes`` refuse one (Git prints its error and then treats the option
    as one it does not know)."""

    def callback(values: Any, value: str | None, _unset: bool) -> None:
        if name in _REF_OPTIONS:
            if values.hidden_section is not None and name != "--all" and name != "--glob":
                values.rejected.append(
                    (
                        f"options '--exclude-hidden' and '{name}' cannot be used together",
                        name if value is None else f"{name}={value}",
                    )
                )
                return
            values.hidden_section = None
        values.revs.append((name, value))

    return callback


def _date(key: str) -> Any:
    def callback(values: Any, value: str | None, _unset: bool) -> None:
        from gitodb.objects.approxidate import approxidate

        values.walk_kwargs[key] = approxidate(value or "")

    return callback


def _reverse(values: Any, _value: str | None, _unset: bool) -> None:
    w = values.walk_kwargs
    w["reverse"] = not w.get("reverse", False)


def _parents(values: Any, _value: str | None, _unset: bool) -> None:
    values.parents = True
    values.walk_kwargs["rewrite_parents"] = True


def _children(values: Any, _value: str | None, _unset: bool) -> None:
    values.children = True
    values.walk_kwargs["children"] = True


def _side(side: str) -> Any:
    def callback(values: Any, _value: str | None, _unset: bool) -> None:
        w = values.walk_kwargs
        if w.get("side") not in (None, side):
            # Git 2.55's words (--cherry also asks for the right side)
            if side == "left":
                raise GitodbError(
                    "options '--left-only' and '--right-only/--cherry' cannot be used together"
                )
            raise GitodbError("options '--right-only' and '--left-only' cannot be used together")
        w["side"] = side

    return callback


def _cherry(which: str) -> Any:
    """``--cherry-pick``, ``--cherry-mark`` and ``--cherry`` (``--right-only
    --cherry-mark --no-merges``), with Git's checks in Git's order."""

    def callback(values: Any, _value: str | None, _unset: bool) -> None:
        w = values.walk_kwargs
        if which == "pick":
            if w.get("cherry_mark"):
                raise GitodbError(
                    "options '--cherry-pick' and '--cherry-mark' cannot be used together"
                )
            w["cherry_pick"] = True
            return
        if which == "mark":
            if w.get("cherry_pick"):
                raise GitodbError(
                    "options '--cherry-mark' and '--cherry-pick' cannot be used together"
                )
            w["cherry_mark"] = True
            return
        if w.get("side") == "left":
            raise GitodbError("options '--cherry' and '--left-only' cannot be used together")
        w["cherry_mark"] = True
        w["side"] = "right"
        w["max_parents"] = 1

    return callback


def _bisect(mode: str, vars_: bool = False, refs: bool = False) -> Any:
    def callback(values: Any, _value: str | None, _unset: bool) -> None:
        w = values.walk_kwargs
        if mode == "all":
            w["bisect"] = "all"
        else:
            w.setdefault("bisect", "one")
        if vars_:
            values.bisect_vars = True
        if refs:
            # the revision option --bisect also starts from the bisection refs
            values.revs.append(("--bisect", None))

    return callback


def _exclude_hidden(values: Any, value: str | None, _unset: bool) -> None:
    from gitodb.history.revargs import HIDDEN_SECTIONS

    if value not in HIDDEN_SECTIONS:
        raise GitodbError(f"unsupported section for hidden refs: {value}")
    if values.hidden_section is not None:
        raise GitodbError("--exclude-hidden= passed more than once")
    values.hidden_section = value
    values.revs.append(("--exclude-hidden", value))


def _ancestry_path(values: Any, value: str | None, _unset: bool) -> None:
    w = values.walk_kwargs
    w["simplify_history"] = False  # as Git: every parent is followed
    if value is None:
        w["ancestry_path"] = True  # the bottoms are the excluded commits named
    else:
        values.revs.append(("--ancestry-path", value))


def _graph(values: Any, _value: str | None, unset: bool) -> None:
    """``--graph`` (``--no-graph``); what it implies is set in ``check``."""
    values.graph = not unset


def _simplify_merges(values: Any, _value: str | None, _unset: bool) -> None:
    """``--simplify-merges``: topological order (unless another sort is asked for),
    parents rewritten, every parent followed."""
    w = values.walk_kwargs
    w["simplify_merges"] = True
    w["rewrite_parents"] = True
    w["simplify_history"] = False
    if w.get("order", "default") == "default":
        w["order"] = "topo"


def _simplify_by_decoration(values: Any, value: str | None, unset: bool) -> None:
    """``--simplify-by-decoration``: ``--simplify-merges`` where what a ref names
    is what changed."""
    _simplify_merges(values, value, unset)
    values.walk_kwargs["simplify_by_decoration"] = True


def _no_kept_objects(values: Any, value: str | None, _unset: bool) -> None:
    """``--no-kept-objects[=in-core|on-disk]``: as Git, a value it does not know
    still turns the option on, with no kind of kept pack to leave out."""
    w = values.walk_kwargs
    w["no_kept_objects"] = True
    if value is None or value == "on-disk":
        w["kept_on_disk"] = True


def _opt(long: str, callback: Any, *, value: bool = False, **kw: Any) -> Option:
    return Option(
        None, long, "callback", callback=callback, takes_value=value, dest=None, hidden=True, **kw
    )


#: the options ``rev-list`` and ``log`` both read, as ``revision.c`` spells them
REVISION_OPTIONS: list[Option] = [
    # revisions and ref pseudo-options, kept in order
    _opt("all", _pseudo("--all")),
    _opt("branches", _pseudo("--branches"), value=True, optional_value=True),
    _opt("tags", _pseudo("--tags"), value=True, optional_value=True),
    _opt("remotes", _pseudo("--remotes"), value=True, optional_value=True),
    _opt("glob", _pseudo("--glob"), value=True),
    _opt("exclude", _pseudo("--exclude"), value=True),
    _opt("exclude-hidden", _exclude_hidden, value=True),
    _opt("alternate-refs", _pseudo("--alternate-refs")),
    _opt("reflog", _pseudo("--reflog")),
    _opt("not", _pseudo("--not")),
    _opt("stdin", _pseudo("--stdin")),
    _opt("indexed-objects", _pseudo("--indexed-objects")),
    # limiting
    Option(
        "n",
        "max-count",
        "callback",
        callback=_walk_int("max_count"),
        takes_value=True,
        missing="-n requires an argument",
        hidden=True,
    ),
    _opt("skip", _walk_int("skip"), value=True),
    _opt("min-parents", _walk_int("min_parents"), value=True, stuck=True),
    _opt("max-parents", _walk_int("max_parents"), value=True, stuck=True),
    _opt("no-min-parents", _walk("min_parents", 0)),
    _opt("no-max-parents", _walk("max_parents", -1)),
    _opt("merges", _walk("min_parents", 2)),
    _opt("no-merges", _walk("max_parents", 1)),
    _opt("first-parent", _walk("first_parent", True)),
    _opt("exclude-first-parent-only", _walk("exclude_first_parent_only", True)),
    _opt("since", _date("max_age"), value=True),
    _opt("after", _date("max_age"), value=True),
    _opt("until", _date("min_age"), value=True),
    _opt("before", _date("min_age"), value=True),
    _opt("max-age", _walk_int("max_age", seconds), value=True),
    _opt("min-age", _walk_int("min_age", seconds), value=True),
    _opt("left-only", _side("left")),
    _opt("right-only", _side("right")),
    _opt("boundary", _walk("boundary", True)),
    _opt("unpacked", _walk("unpacked", True)),
    _opt("no-kept-objects", _no_kept_objects, value=True, optional_value=True),
    # history simplification
    _opt("full-history", _walk("simplify_history", False)),
    _opt("simplify-history", _walk("simplify_history", True)),
    _opt("dense", _walk("dense", True)),
    _opt("sparse", _walk("dense", False)),
    _opt("remove-empty", _walk("remove_empty", True)),
    _opt("simplify-merges", _simplify_merges),
    _opt("simplify-by-decoration", _simplify_by_decoration),
    _opt("ancestry-path", _ancestry_path, value=True, optional_value=True),
    # ordering
    _opt("topo-order", _walk("order", "topo")),
    _opt("date-order", _walk("order", "date")),
    _opt("author-date-order", _walk("order", "author-date")),
    _opt("reverse", _reverse),
    # what is shown
    _opt("objects", _walk("objects", True)),
    _opt("objects-edge", _objects_edge),
    _opt("verify-objects", _verify_objects),
    _opt("parents", _parents),
    _opt("children", _children),
    Option(None, "ignore-missing", "bool", hidden=True),
    Option(None, "count", "bool", hidden=True),
    Option(None, "left-right", "bool", hidden=True),
    # special purpose
    _opt("bisect", _bisect("one", refs=True)),
    # patch ids and the graph
    _opt("cherry-pick", _cherry("pick")),
    _opt("cherry-mark", _cherry("mark")),
    _opt("cherry", _cherry("cherry")),
    _opt("graph", lambda v, x, _u: _graph(v, x, False)),
    _opt("no-graph", lambda v, x, _u: _graph(v, x, True)),
]


#: options ``rev-list`` reads itself, after ``setup_revisions`` (``builtin/rev-list.c``)
def rev_list_options() -> list[Option]:
    """The revision options plus rev-list's own."""

    def _filter(values: Any, value: str | None, _unset: bool) -> None:
        from gitodb.objects.filter import ObjectFilter  # (only when --filter is given)

        values.filter = ObjectFilter.parse(value or "", values.filter)

    def _no_filter(values: Any, _value: str | None, _unset: bool) -> None:
        values.filter = None

    def _missing(values: Any, value: str | None, _unset: bool) -> None:
        from gitodb.history.objfilter import MISSING_ACTIONS

        # Git ignores a value it does not know (the default, "error", stays)
        if value in MISSING_ACTIONS:
            values.missing = value

    def _pretty(values: Any, value: str | None, _unset: bool, name: str) -> None:
        text = value if value is not None else "medium"
        values.pretty_kind = None
        if text.startswith(("format:", "tformat:")):
            text = text.partition(":")[2]
        elif name == "pretty" and "%" not in text:
            kind = builtin_format(text or "medium")
            if kind is None:
                if text in ("email", "mboxrd", "reference") or text.startswith("email"):
                    raise GitodbError(f"gitodb rev-list does not support --pretty={text}")
                raise GitodbError(f"invalid --pretty format: {text}")
            if kind != "oneline":
                values.pretty_kind = kind  # "commit <id>", the format, a blank line
            text = kind
        values.pretty = text

    def _oneline(values: Any, _value: str | None, _unset: bool) -> None:
        # Git: --pretty=oneline --abbrev-commit
        values.pretty, values.pretty_kind, values.abbrev_commit = "oneline", None, True

    def _abbrev(values: Any, value: str | None, _unset: bool) -> None:
        values.abbrev = None if value is None else revision_abbrev(value)

    def _disk_usage(values: Any, value: str | None, _unset: bool) -> None:
        if value not in (None, "human"):
            raise GitodbError(
                f"invalid value for '--disk-usage=<format>': '{value}', "
                "the only allowed format is 'human'"
            )
        values.disk_usage = value or "bytes"

    def flag(long: str, dest: str, value: bool = True) -> Option:
        return Option(None, long, "const", dest=dest, const=value, hidden=True)

    return [
        *REVISION_OPTIONS,
        flag("object-names", "object_names"),
        flag("no-object-names", "object_names", False),
        flag("quiet", "quiet"),
        flag("timestamp", "timestamp"),
        flag("header", "header"),
        flag("maximal-only", "maximal_only"),
        Option("g", "walk-reflogs", "const", dest="walk_reflogs", const=True, hidden=True),
        flag("in-commit-order", "in_commit_order"),
        flag("use-bitmap-index", "use_bitmap"),
        flag("test-bitmap", "test_bitmap"),
        flag("filter-provided-objects", "filter_provided"),
        flag("filter-print-omitted", "print_omitted"),
        Option("z", None, "const", dest="nul", const=True, hidden=True),
        _opt("bisect-all", _bisect("all")),
        _opt("bisect-vars", _bisect("one", True)),
        _opt("filter", _filter, value=True, stuck=True),
        _opt("no-filter", _no_filter),
        _opt("disk-usage", _disk_usage, value=True, optional_value=True),
        _opt("missing", _missing, value=True, stuck=True),
        _opt(
            "pretty",
            lambda v, x, u: _pretty(v, x, u, "pretty"),
            value=True,
            optional_value=True,
        ),
        _opt("format", lambda v, x, u: _pretty(v, x, u, "format"), value=True, stuck=True),
        _opt("oneline", _oneline),
        flag("abbrev-commit", "abbrev_commit"),
        flag("no-abbrev-commit", "abbrev_commit", False),
        _opt("abbrev", _abbrev, value=True, optional_value=True, stuck=True),
        _opt("no-abbrev", lambda v, _x, _u: setattr(v, "abbrev", 0)),
    ]


def without_gc(run: Any, argv: list[str], ctx: Any) -> int:
    """``run(argv, ctx)`` with the cyclic garbage collector off (rev-list and log).

    A walk allocates thousands of refs, records and lines and frees none of them in
    cycles: the collector would only traverse them again and again.
    """
    import gc

    collecting = gc.isenabled()
    gc.disable()
    try:
        return int(run(argv, ctx))
    finally:
        if collecting:
            gc.enable()
