"""``gitodb ls-tree``: list a tree like ``git ls-tree`` (Git 2.39's options and bytes).

A thin shell over ``gitodb.history.treewalk.list_tree``; paths are taken and shown
relative to the current directory inside a work tree, as Git does.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, Any

from gitodb.errors import BadRevisionError, GitodbError, ObjectNotFoundError, ObjectTypeError

if TYPE_CHECKING:
    from gitodb.cli.main import Context

USAGE = """\
usage: git ls-tree [<options>] <tree-ish> [<path>...]

    -d                    only show trees
    -r                    recurse into subtrees
    -t                    show trees when recursing
    -z                    terminate entries with NUL byte
    -l, --long            include object size
    --name-only           list only filenames
    --name-status         list only filenames
    --object-only         list only objects
    --full-name           use full path names
    --full-tree           list entire tree; not just current directory (implies --full-name)
    --format <format>     format to use for the output
    --abbrev[=<n>]        use <n> digits to display object names

"""

# --long, --name-only/--name-status and --object-only exclude each other (Git's cmdmode).
_LONG_NAMES = ("long", "name-only", "name-status", "object-only")
_LONG_OPTIONS = ("long", "name-only", "name-status", "object-only", "full-name", "full-tree",
                 "format", "abbrev")
_NEGATABLE = {"full-name": ("full_name", False), "full-tree": ("full_tree", False),
              "format": ("format", None), "abbrev": ("abbrev", 0)}
_ATOM = re.compile(rb"%(%|n|x[0-9a-fA-F]{2}|\(([^)]*)\)|)")


class _Usage(Exception):
    def __init__(self, message: str | None, show_usage: bool = True,
                 usage_to_stdout: bool = False) -> None:
        self.message = message
        self.show_usage = show_usage
        self.usage_to_stdout = usage_to_stdout


class Options:
    """Parsed ``ls-tree`` options."""

    def __init__(self) -> None:
        self.only_trees = False
        self.recursive = False
        self.show_trees = False
        self.nul = False
        self.cmdmode: str | None = None
        self.full_name = False
        self.full_tree = False
        self.format: str | None = None
        self.abbrev: int | None = 0    # 0: full ids; None: the default length
        self.args: list[str] = []


def _set_cmdmode(o: Options, mode: str, shown: str) -> None:
    if o.cmdmode is not None and o.cmdmode != mode:
        what = "switch" if len(shown) == 1 else "option"
        raise _Usage(f"error: {what} `{shown}' is incompatible with --{o.cmdmode}",
                     show_usage=False)
    o.cmdmode = mode


def _parse_abbrev(value: str | None, hexsz: int = 64) -> int | None:
    if value is None:
        return None
    try:
        n = int(value, 10)
    except ValueError:
        raise _Usage("error: option `abbrev' expects a numerical value") from None
    if n and n < 4:
        n = 4
    return n


def _expand_long(name: str) -> str:
    """Git's unambiguous abbreviations of long options."""
    if name in _LONG_OPTIONS:
        return name
    hits = [o for o in _LONG_OPTIONS if o.startswith(name)]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        # Git prints the usage of an ambiguous option to stdout.
        raise _Usage(f"error: ambiguous option: {name} (could be --{hits[0]} or --{hits[1]})",
                     usage_to_stdout=True)
    raise _Usage(f"error: unknown option `{name}'")


def parse_args(argv: list[str]) -> Options:
    """Parse options like Git's parse-options (options may follow the tree-ish)."""
    o = Options()
    i = 0
    only_args = False
    while i < len(argv):
        arg = argv[i]
        i += 1
        if only_args or not arg.startswith("-") or arg == "-":
            o.args.append(arg)
            continue
        if arg == "--":
            only_args = True
            continue
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if name.startswith("no-") and name[3:] in _NEGATABLE:
                if eq:
                    raise _Usage(f"error: option `{name}' takes no value")
                # --no-full-name shows names relative to the cwd again (Git 2.40+).
                setattr(o, _NEGATABLE[name[3:]][0], _NEGATABLE[name[3:]][1])
                continue
            name = _expand_long(name)
            if name == "format":
                if not eq:
                    if i >= len(argv):
                        raise _Usage("error: option `format' requires a value")
                    value = argv[i]
                    i += 1
                o.format = value
                continue
            if name == "abbrev":
                o.abbrev = _parse_abbrev(value if eq else None)
                continue
            if eq:
                raise _Usage(f"error: option `{name}' takes no value")
            if name in _LONG_NAMES:
                _set_cmdmode(o, name, name)
            elif name == "full-name":
                o.full_name = True
            elif name == "full-tree":
                o.full_tree = True
            continue
        for ch in arg[1:]:
            if ch == "d":
                o.only_trees = True
            elif ch == "r":
                o.recursive = True
            elif ch == "t":
                o.show_trees = True
            elif ch == "z":
                o.nul = True
            elif ch == "l":
                _set_cmdmode(o, "long", "l")
            elif ch == "h":
                raise _Usage(None)
            else:
                raise _Usage(f"error: unknown switch `{ch}'")
    if o.only_trees and o.recursive:
        o.show_trees = True   # -d -r implies -t
    if o.format is not None and o.cmdmode is not None:
        raise _Usage("fatal: --format can't be combined with other format-altering options")
    if not o.args:
        raise _Usage(None)
    return o


def _work_tree_prefix(repo: Any, ctx: Context) -> tuple[str, str]:
    """``(prefix, work tree top)``: where the cwd is inside the work tree ("" at the top)."""
    from gitodb.repo import find_work_tree_top

    top = find_work_tree_top(repo, explicit_git_dir=ctx.git_dir is not None
                             or "GIT_DIR" in os.environ)
    if top is None:
        return "", os.getcwd()
    rel = os.path.relpath(os.getcwd(), top)
    return ("" if rel == "." else rel.replace(os.sep, "/") + "/"), top


def run(argv: list[str], ctx: Context) -> int:
    """List the tree named by the first argument; see ``git ls-tree``."""
    try:
        o = parse_args(argv)
    except _Usage as u:
        if u.message:
            sys.stderr.write(u.message + "\n")
        if u.show_usage:
            if u.message and u.message.startswith("fatal:"):
                sys.stderr.write("\n")   # usage_msg_opt leaves a blank line
            to_stdout = u.usage_to_stdout or (u.message is None and "-h" in argv)
            (sys.stdout if to_stdout else sys.stderr).write(USAGE)
        return 129
    from gitodb.history.paths import normalize_pathspec
    from gitodb.history.treewalk import list_tree
    from gitodb.objects.pretty import quote_path
    from gitodb.repo.abbrev import Abbreviator, default_abbrev

    repo = ctx.open_repository()
    try:
        oid = repo.resolve(o.args[0])
    except (BadRevisionError, ObjectNotFoundError):
        raise GitodbError(f"Not a valid object name {o.args[0]}") from None
    try:
        tree = repo.tree(oid)
    except (BadRevisionError, ObjectNotFoundError, ObjectTypeError):
        raise GitodbError("not a tree object") from None
    prefix, top = _work_tree_prefix(repo, ctx)
    if o.full_tree:
        prefix = ""
    specs = o.args[1:] or ([prefix] if prefix else [])
    items = [normalize_pathspec(s, prefix if o.args[1:] else "", top).encode(
        "utf-8", "surrogateescape") for s in specs]
    chomp = None if (o.full_name or o.full_tree or not prefix) else prefix.encode(
        "utf-8", "surrogateescape")
    abbrev = Abbreviator(repo, default_abbrev(repo) if o.abbrev is None else o.abbrev)
    quote_fully = repo.config.get_bool("core.quotepath", True)
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
    for entry, path in list_tree(repo, tree, items, recursive=o.recursive,
                                 show_trees=o.show_trees, trees_only=o.only_trees):
        if fmt is not None:
            out.append(_expand(fmt, entry, path, chomp, abbrev, size_of, quote_fully) + term)
            continue
        mode = o.cmdmode
        if mode in ("name-only", "name-status"):
            out.append(name(path) + term)
        elif mode == "object-only":
            out.append(abbrev(entry.id).encode() + term)
        elif mode == "long":
            out.append(b"%06o %s %s %7s\t%s%s" % (entry.mode, entry.object_type.encode(),
                                                 abbrev(entry.id).encode(), size_of(entry),
                                                 name(path), term))
        else:
            out.append(b"%06o %s %s\t%s%s" % (entry.mode, entry.object_type.encode(),
                                             abbrev(entry.id).encode(), name(path), term))
    sys.stdout.buffer.write(b"".join(out))
    return 0


def _expand(fmt: bytes, entry: Any, path: bytes, chomp: bytes | None, abbrev: Any,
            size_of: Any, quote_fully: bool) -> bytes:
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
            rest = fmt[m.start() + 1:].decode("utf-8", "surrogateescape")
            if rest.startswith("("):
                raise GitodbError(f"bad ls-tree format: element '{rest}' does not end in ')'")
            raise GitodbError(f"bad ls-tree format: element '{rest}' does not start with '('")
        if atom == b"objectmode":
            return b"%06o" % entry.mode
        if atom == b"objecttype":
            return entry.object_type.encode()
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
