"""``gitodb ls-tree``: list a tree like ``git ls-tree`` (Git 2.39's options and bytes).

A thin shell over ``gitodb.history.treewalk.list_tree``; paths are taken and shown
relative to the current directory inside a work tree, as Git does.
"""

from __future__ import annotations

import os
import sys

from gitodb.cli import output
from gitodb.cli.options import Option, OptionParser, parse_int
from gitodb.errors import (
    BadRevisionError,
    GitodbError,
    ObjectNotFoundError,
    ObjectTypeError,
    TreeDepthError,
    UnreadableTreeError,
)
from gitodb.lazyre import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

    from gitodb.cli.main import Context

MINIMUM_ABBREV = 4  # Git's shortest abbreviation
# --format's placeholders (compiled when a format is expanded: re.compile costs start-up)
_ATOM = lazy(rb"%(%|n|x[0-9a-fA-F]{2}|\(([^)]*)\)|)")


def _abbrev(values: Any, value: str | None, unset: bool) -> None:
    """Git's ``OPT__ABBREV``: no value is the default length, a small one is raised to 4."""
    if unset:
        values.abbrev = 0
    elif value is None:
        values.abbrev = None
    else:
        n = parse_int(value, "option `abbrev'")
        values.abbrev = MINIMUM_ABBREV if 0 < n < MINIMUM_ABBREV else n


PARSER = OptionParser(
    "ls-tree",
    ["[<options>] <tree-ish> [<path>...]"],
    [
        Option("d", None, "bool", "only show trees", dest="only_trees"),
        Option("r", None, "bool", "recurse into subtrees", dest="recursive"),
        Option("t", None, "bool", "show trees when recursing", dest="show_trees"),
        Option("z", None, "bool", "terminate entries with NUL byte", dest="nul"),
        # --long, --name-only/--name-status and --object-only exclude each other (cmdmode).
        Option("l", "long", "cmdmode", "include object size", dest="cmdmode", const="long"),
        Option(
            None, "name-only", "cmdmode", "list only filenames", dest="cmdmode", const="name-only"
        ),
        Option(
            None,
            "name-status",
            "cmdmode",
            "list only filenames",
            dest="cmdmode",
            const="name-status",
        ),
        Option(
            None, "object-only", "cmdmode", "list only objects", dest="cmdmode", const="object-only"
        ),
        # --no-full-name shows names relative to the cwd again (Git 2.40+).
        Option(None, "full-name", "bool", "use full path names"),
        Option(
            None,
            "full-tree",
            "bool",
            "list entire tree; not just current directory (implies --full-name)",
        ),
        Option(
            None, "format", "string", "format to use for the output", argh="format", negatable=False
        ),
        Option(
            None,
            "abbrev",
            "callback",
            "use <n> digits to display object names",
            argh="n",
            takes_value=True,
            optional_value=True,
            callback=_abbrev,
            initial=0,
        ),
    ],
)


class Options:
    """Parsed ``ls-tree`` options (``abbrev``: 0 full ids, None the default length)."""

    def __init__(self, values: Any, args: list[str]) -> None:
        self.only_trees: bool = values.only_trees
        self.recursive: bool = values.recursive
        self.show_trees: bool = values.show_trees
        self.nul: bool = values.nul
        self.cmdmode: str | None = values.cmdmode
        self.full_name: bool = values.full_name
        self.full_tree: bool = values.full_tree
        self.format: str | None = values.format
        self.abbrev: int | None = values.abbrev
        self.args = args


def parse_args(argv: list[str]) -> Options:
    """Parse options like Git's parse-options (options may follow the tree-ish)."""
    values, args = PARSER.parse(argv)
    o = Options(values, args)
    if o.only_trees and o.recursive:
        o.show_trees = True  # -d -r implies -t
    if o.format is not None and o.cmdmode is not None:
        raise PARSER.usage_fatal("--format can't be combined with other format-altering options")
    if not o.args:
        raise PARSER.usage_error()
    return o


def _work_tree_prefix(repo: Any, ctx: Context) -> tuple[str, str]:
    """``(prefix, work tree top)``: where the cwd is inside the work tree ("" at the top)."""
    from gitodb.repo import find_work_tree_top

    top = find_work_tree_top(
        repo, explicit_git_dir=ctx.git_dir is not None or "GIT_DIR" in os.environ
    )
    if top is None:
        return "", os.getcwd()
    rel = os.path.relpath(os.getcwd(), top)
    return ("" if rel == "." else rel.replace(os.sep, "/") + "/"), top


def run(argv: list[str], ctx: Context) -> int:
    """List the tree named by the first argument; see ``git ls-tree``."""
    o = parse_args(argv)
    repo = ctx.open_repository()
    try:
        oid = repo.resolve(o.args[0])
    except (BadRevisionError, ObjectNotFoundError) as e:
        output.report_ambiguity(e)
        raise GitodbError(f"Not a valid object name {o.args[0]}") from None
    try:
        tree = repo.tree(oid)
    except (BadRevisionError, ObjectNotFoundError, ObjectTypeError):
        raise GitodbError("not a tree object") from None
    prefix, top = _work_tree_prefix(repo, ctx)
    if o.full_tree:
        prefix = ""
    specs = o.args[1:] or ([prefix] if prefix else [])
    items: list[bytes] = []
    written = 0  # how much of the listing the native core wrote
    if specs:
        from gitodb.history.paths import normalize_pathspec

        items = [
            normalize_pathspec(s, prefix if o.args[1:] else "", top).encode(
                "utf-8", "surrogateescape"
            )
            for s in specs
        ]
    chomp = (
        None
        if (o.full_name or o.full_tree or not prefix)
        else prefix.encode("utf-8", "surrogateescape")
    )
    quote_fully = repo.config.get_bool("core.quotepath", True)
    hexsz = repo.object_format.hexsz
    full_ids = o.abbrev == 0 or (o.abbrev is not None and o.abbrev >= hexsz)
    if (
        o.format is None
        and not items
        and chomp is None
        and o.cmdmode in (None, "name-only")
        and full_ids
    ):
        # The whole listing in one native call; the Python listing's modules are
        # not even imported.
        listed = _native_listing(repo, tree, o, quote_fully)
        if listed is not None:
            complete, written = listed
            if complete:
                return 0
            # a bad subtree: the Python listing goes on past what was written
            # and says Git's error
    from gitodb.history.treewalk import list_tree
    from gitodb.objects.pretty import quote_path
    from gitodb.repo.abbrev import Abbreviator, default_abbrev

    abbrev = Abbreviator(repo, default_abbrev(repo) if o.abbrev is None else o.abbrev)
    term = b"\0" if o.nul else b"\n"
    out = []
    odb = repo.odb

    def name(path: bytes) -> bytes:
        from gitodb.history.paths import relative_path

        shown = relative_path(path, chomp)
        return shown if o.nul else quote_path(shown, quote_fully)

    def size_of(entry: Any) -> bytes:
        if entry.object_type != "blob":
            return b"-"
        try:
            return b"%d" % odb.read_header(entry.id)[1]
        except ObjectNotFoundError:
            return b"BAD"

    fmt = o.format.encode("utf-8", "surrogateescape") if o.format is not None else None
    listing = list_tree(
        repo, tree, items, recursive=o.recursive, show_trees=o.show_trees, trees_only=o.only_trees
    )
    entries: list[Any] = []
    listing_error = None
    try:
        entries.extend(listing)
    except (TreeDepthError, UnreadableTreeError) as e:
        listing_error = e  # Git prints what it listed, then its error, and exits with 1
    if (fmt is None and o.cmdmode not in ("name-only", "name-status")) or (
        fmt is not None and b"%(objectname)" in fmt
    ):
        abbrev.prime([entry.id for entry, _path in entries])  # the ids in one native call
    for entry, path in entries:
        if fmt is not None:
            out.append(_expand(fmt, entry, path, chomp, abbrev, size_of, quote_fully) + term)
            continue
        mode = o.cmdmode
        if mode in ("name-only", "name-status"):
            out.append(name(path) + term)
        elif mode == "object-only":
            out.append(abbrev(entry.id).encode() + term)
        elif mode == "long":
            out.append(
                b"%06o %s %s %7s\t%s%s"
                % (
                    entry.mode,
                    entry.object_type.encode(),
                    abbrev(entry.id).encode(),
                    size_of(entry),
                    name(path),
                    term,
                )
            )
        else:
            out.append(
                b"%06o %s %s\t%s%s"
                % (
                    entry.mode,
                    entry.object_type.encode(),
                    abbrev(entry.id).encode(),
                    name(path),
                    term,
                )
            )
    sys.stdout.buffer.write(b"".join(out)[written:])
    if listing_error is not None:
        sys.stderr.write(f"error: {listing_error.message}\n")
        return 1
    return 0


def _expand(
    fmt: bytes,
    entry: Any,
    path: bytes,
    chomp: bytes | None,
    abbrev: Any,
    size_of: Any,
    quote_fully: bool,
) -> bytes:
    """Expand ``--format``: %(objectmode) %(objecttype) %(objectname) %(objectsize)
    %(objectsize:padded) %(path), and %%, %n, %xNN."""
    from gitodb.history.paths import relative_path
    from gitodb.objects.pretty import quote_path

    def sub(m: re.Match[bytes]) -> bytes:
        whole = m.group(1)
        if whole == b"%":
            return b"%"
        if whole == b"n":
            return b"\n"
        if whole[:1] == b"x":
            return bytes([int(whole[1:], 16)])
        atom = m.group(2)
        if atom is None:
            rest = fmt[m.start() + 1 :].decode("utf-8", "surrogateescape")
            if rest.startswith("("):
                raise GitodbError(f"bad ls-tree format: element '{rest}' does not end in ')'")
            raise GitodbError(f"bad ls-tree format: element '{rest}' does not start with '('")
        if atom == b"objectmode":
            return b"%06o" % entry.mode
        if atom == b"objecttype":
            return str(entry.object_type).encode()
        if atom == b"objectname":
            return abbrev(entry.id).encode()  # type: ignore[no-any-return]
        if atom == b"objectsize":
            return size_of(entry)  # type: ignore[no-any-return]
        if atom == b"objectsize:padded":
            return b"%7s" % size_of(entry)
        if atom == b"path":
            # Git quotes %(path) even with -z.
            return quote_path(relative_path(path, chomp), quote_fully)
        raise GitodbError(f"bad ls-tree format: %({atom.decode('utf-8', 'surrogateescape')})")

    return _ATOM.sub(sub, fmt)


def _native_listing(repo: Any, tree: Any, o: Any, quote_fully: bool) -> tuple[bool, int] | None:
    """The listing written by the native core (full ids, no pathspec): ``(complete,
    bytes written)``, or None when it is not built.  Not complete: a bad subtree or
    ``core.maxTreeDepth`` stopped it, and the Python listing stops where Git stops."""
    from gitodb.history.native import write_ls_tree
    from gitodb.objects.tree import max_tree_depth

    return write_ls_tree(
        repo,
        tree.raw,
        sys.stdout.buffer.write,
        recursive=o.recursive,
        show_trees=o.show_trees,
        trees_only=o.only_trees,
        name_only=o.cmdmode == "name-only",
        nul=o.nul,
        quote_fully=quote_fully,
        max_depth=max_tree_depth(repo.config),
    )
