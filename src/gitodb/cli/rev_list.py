"""``gitodb rev-list``: list commits (and with ``--objects`` trees and blobs) like Git.

A thin shell over ``gitodb.history.revwalk.RevWalk`` and
``gitodb.history.revargs.RevisionArgs``.  Options follow Git 2.39 (numbers are
checked as Git 2.55 checks them: ``'1q': not an integer``); an option Git has that
gitodb does not implement is refused (exit 129), never ignored.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING

from gitodb.errors import GitodbError
from gitodb.objects.filter import ObjectFilter

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
    "--no-filter",
    "--filter-provided-objects",
    "--filter-print-omitted",
    "--full-history",
    "--simplify-history",
    "--dense",
    "--sparse",
    "--remove-empty",
    "--boundary",
    "--timestamp",
    "--header",
    "--unpacked",
    "--maximal-only",
    "--bisect",
    "--bisect-all",
    "--bisect-vars",
    "--indexed-objects",
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
    "--filter",
    "--missing",
    "--format",
}
_OPTIONAL_VALUE = {"--branches", "--tags", "--remotes", "--pretty"}


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
        self.filter: ObjectFilter | None = None  # --filter (repeated: combined)
        self.filter_provided = False
        self.print_omitted = False
        self.missing: str | None = None  # --missing=<action>, None when not given
        self.timestamp = False
        self.maximal_only = False
        self.bisect_vars = False
        self.pretty: str | None = None  # "oneline", or a user format
        self.formatter: object = None
        self.header = False
        self.nul = False  # -z
        self.paths: list[str] = []  # pathspecs (after "--", or names of files)


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
        if arg == "-z":
            settings.nul = True
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
            "--indexed-objects",
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
            w["rewrite_parents"] = True
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
        elif name == "--full-history":
            w["simplify_history"] = False
        elif name == "--simplify-history":
            w["simplify_history"] = True
        elif name in ("--dense", "--sparse"):
            w["dense"] = name == "--dense"
        elif name == "--remove-empty":
            w["remove_empty"] = True
        elif name == "--boundary":
            w["boundary"] = True
        elif name in ("--bisect", "--bisect-all", "--bisect-vars"):
            if name == "--bisect-all":
                w["bisect"] = "all"
            else:
                w.setdefault("bisect", "one")
            if name == "--bisect-vars":
                settings.bisect_vars = True
        elif name == "--maximal-only":
            settings.maximal_only = True
        elif name in ("--pretty", "--format"):
            text = value if value is not None else "medium"
            if text.startswith(("format:", "tformat:")):
                text = text.partition(":")[2]
            elif text == "oneline" or (name == "--pretty" and "%" not in text):
                if text != "oneline":
                    raise GitodbError(f"gitodb rev-list does not support --pretty={text}")
            settings.pretty = text
        elif name == "--unpacked":
            w["unpacked"] = True
        elif name == "--timestamp":
            settings.timestamp = True
        elif name == "--header":
            settings.header = True
        elif name == "--filter":
            settings.filter = ObjectFilter.parse(value or "", settings.filter)
        elif name == "--no-filter":
            settings.filter = None
        elif name == "--filter-provided-objects":
            settings.filter_provided = True
        elif name == "--filter-print-omitted":
            settings.print_omitted = True
        elif name == "--missing":
            from gitodb.history.objfilter import MISSING_ACTIONS

            # Git ignores a value it does not know (the default, "error", stays)
            if value in MISSING_ACTIONS:
                settings.missing = value
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
    settings.paths = paths
    # Git's rule: nothing to start from and no ref option or --stdin is a usage error,
    # unless objects are listed.
    if not settings.walk_kwargs.get("objects") and not any(
        what != "--not" and what != "--exclude" for what, _v in settings.revs
    ):
        sys.stderr.write(USAGE)
        return 129
    from gitodb.history.revwalk import RevWalk

    if settings.walk_kwargs.get("boundary") and settings.maximal_only:
        raise GitodbError("options '--boundary' and '--maximal-only' cannot be used together")
    if settings.nul and (settings.timestamp or settings.header or settings.left_right):
        raise GitodbError("-z option used with unsupported option")
    if settings.filter is not None and not settings.walk_kwargs.get("objects"):
        raise GitodbError("object filtering requires --objects")
    if settings.count and settings.left_right and settings.walk_kwargs.get("objects"):
        raise GitodbError("marked counting and '--objects' cannot be used together")
    repo = ctx.open_repository()
    walk = RevWalk(repo, **settings.walk_kwargs)  # type: ignore[arg-type]
    status = add_revisions(repo, walk, settings, "--" in argv)
    if status:
        return status
    limit_to_paths(repo, ctx, walk, settings.paths)
    return _output(walk, settings)


def limit_to_paths(repo: object, ctx: Context, walk: object, paths: list[str]) -> None:
    """Give the walk its pathspecs (relative to the current directory, as Git reads
    them); used by ``gitodb log`` too."""
    if not paths:
        return
    from gitodb.cli.ls_tree import _work_tree_prefix
    from gitodb.history.paths import normalize_pathspec
    from gitodb.history.revwalk import RevWalk

    assert isinstance(walk, RevWalk)
    prefix, top = _work_tree_prefix(repo, ctx)
    walk.set_paths(
        [normalize_pathspec(p, prefix, top).encode("utf-8", "surrogateescape") for p in paths]
    )


def add_revisions(repo: object, walk: object, settings: _Settings, dashdash: bool) -> int:
    """Feed the revision arguments of ``settings`` into ``walk``; 0, or the exit
    status of Git's unknown-revision message (also used by ``gitodb log``)."""
    from gitodb.history.revargs import RevisionArgs, UnknownRevisionError

    args = RevisionArgs(repo, walk)  # type: ignore[arg-type]
    try:
        for index, (what, value) in enumerate(settings.revs):
            if what == "rev":
                try:
                    args.add(value or "")
                except UnknownRevisionError:
                    if not dashdash and value and os.path.lexists(value):
                        # Git: a name of a file in the work tree begins the paths; it
                        # and every argument after it limit the walk
                        settings.paths = [v or "" for w, v in settings.revs[index:] if w == "rev"]
                        break
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
            elif what == "--indexed-objects":
                _add_index_objects(repo, args)
    except UnknownRevisionError as e:
        if dashdash:
            raise GitodbError(f"bad revision '{e.message}'") from None
        return _unknown_revision(e.message)
    return 0


def _add_index_objects(repo: object, args: object) -> None:
    """``--indexed-objects``: every blob of the index, then the cache-tree's valid
    trees, each with its path (Git's ``add_index_objects_to_pending``)."""
    from gitodb.history.revargs import RevisionArgs
    from gitodb.repo.index import index_path, read_cache_tree, read_index

    assert isinstance(args, RevisionArgs)
    path = index_path(args.repo)
    fmt = args.repo.object_format
    for e in read_index(path, fmt):
        if e.mode & 0o170000 == 0o160000:
            continue  # submodules
        args.walk.add(
            e.oid, uninteresting=args.negate, path=e.path.decode("utf-8", "surrogateescape")
        )
    for tree_path, oid in read_cache_tree(path, fmt):
        args.walk.add(
            oid, uninteresting=args.negate, path=tree_path.decode("utf-8", "surrogateescape")
        )


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


def _packed(walk: object, oid: bytes) -> bool:
    """``--unpacked``: whether the object is in a pack (and so not listed)."""
    return isinstance(walk.repo.odb.locate(oid), tuple)  # type: ignore[attr-defined]


def _object_line(oid: bytes, name: bytes, names: bool, nul: bool) -> bytes:
    if nul:
        return oid.hex().encode() + b"\0" + (b"path=" + name + b"\0" if names and name else b"")
    if names:
        return b"%s %s\n" % (oid.hex().encode(), name.split(b"\n", 1)[0])
    return oid.hex().encode() + b"\n"


class _MissingObject(Exception):
    """The quick object listing met an object that is not there."""


def _list_objects(
    walk: object, settings: _Settings, listing: object, out: list[bytes], count: int, show: bool
) -> int:
    """Append the ``--objects`` lines to ``out``; the count so far plus the objects."""
    from gitodb.errors import GitodbError, ObjectNotFoundError
    from gitodb.history.revwalk import RevWalk

    assert isinstance(walk, RevWalk)
    names = settings.object_names
    if listing is None:
        contains = walk.repo.odb.contains
        if not settings.nul and not walk.unpacked:
            try:
                fast = walk.objects_text(names, contains)
            except (LookupError, GitodbError):
                # the reference loop below prints what Git prints before the error
                fast = None
            if fast is not None:
                if show:
                    out.append(fast[1])
                return count + fast[0]
        try:
            for oid, type_name, name in walk.objects():
                if type_name == "blob" and not contains(oid):
                    raise _MissingObject
                if walk.unpacked and _packed(walk, oid):
                    continue
                count += 1
                if show:
                    out.append(_object_line(oid, name, names, settings.nul))
        except ObjectNotFoundError:
            raise _MissingObject from None
        return count
    for oid, _type, name in listing.objects():  # type: ignore[attr-defined]
        if walk.unpacked and _packed(walk, oid):
            continue
        count += 1
        if show:
            out.append(_object_line(oid, name, names, settings.nul))
    return count


def _output(walk: object, settings: _Settings) -> int:
    out: list[bytes] = []
    try:
        return _gather(walk, settings, out)
    finally:
        # what was listed before an error (a missing object) is printed, as Git does
        sys.stdout.buffer.write(b"".join(out))


def _commit_line(walk: object, node: object, settings: _Settings, is_left: bool) -> bytes:
    """One commit as rev-list shows it: timestamp, mark, id, parents, header."""
    from gitodb.history.simplify import BOUNDARY

    flags = node.flags  # type: ignore[attr-defined]
    line: bytes = b"%d " % node.date if settings.timestamp else b""  # type: ignore[attr-defined]
    boundary = bool(flags & BOUNDARY)
    if boundary and not settings.nul:
        line += b"-"
    elif settings.left_right:
        line += b"<" if is_left else b">"
    line += node.id.hex().encode()  # type: ignore[attr-defined]
    if settings.nul and boundary:
        line += b"\0boundary=yes"  # Git 2.55 puts it before the parents
    if settings.parents:
        line += b"".join(b" " + p.hex().encode() for p in node.parent_ids)  # type: ignore[attr-defined]
    if walk.bisect == "all":  # type: ignore[attr-defined]
        line += _bisect_decoration(walk, node)
    if settings.pretty is not None:
        return _pretty_line(walk, node, settings, line)
    line += b"\0" if settings.nul else b"\n"
    if settings.header:
        line += _raw_header(walk, node) + b"\0"
    return line


def _pretty_line(walk: object, node: object, settings: _Settings, line: bytes) -> bytes:
    """``--pretty``/``--format``: ``oneline``, or ``commit <id>`` and the user format."""
    from gitodb.history.pretty import Formatter, pretty_commit

    repo = walk.repo  # type: ignore[attr-defined]
    raw = repo.odb.read(node.id)[1]  # type: ignore[attr-defined]
    if settings.pretty == "oneline":
        oneline: bytes = pretty_commit("oneline", repo, node.id, raw)  # type: ignore[attr-defined]
        return line + b" " + oneline + b"\n"
    if settings.formatter is None:
        settings.formatter = Formatter(repo, settings.pretty or "")
    text: bytes = settings.formatter.format(node.id, raw, parents=node.parent_ids)  # type: ignore[attr-defined]
    return b"commit " + line + b"\n" + text + b"\n"


def _bisect_decoration(walk: object, node: object) -> bytes:
    """``--bisect-all``: `` (<refs>, dist=<n>)`` as Git decorates each commit."""
    from gitodb.history.pretty import Decorations

    deco = getattr(walk, "_bisect_decorations", None)
    if deco is None:
        deco = Decorations(walk.repo)  # type: ignore[attr-defined]
        walk._bisect_decorations = deco  # type: ignore[attr-defined]
    names = list(deco.of(node.id))  # type: ignore[attr-defined]
    names.append(f"dist={walk.bisect_distance.get(node.id, 0)}")  # type: ignore[attr-defined]
    return b" (" + ", ".join(names).encode("utf-8", "surrogateescape") + b")"


def _bisect_vars(walk: object, settings: _Settings, out: list[bytes], commits: object) -> int:
    """``--bisect-vars``: the shell variables ``git bisect`` reads (with
    ``--bisect-all``, the commits and a ``------`` line first)."""
    from gitodb.history.bisect import estimate_steps

    listed = list(commits)  # type: ignore[call-overload]
    if not listed:
        return 1
    reaches, total = walk.bisect_reaches, walk.bisect_all  # type: ignore[attr-defined]
    if walk.bisect == "all":  # type: ignore[attr-defined]
        out.extend(_commit_line(walk, n, settings, False) for n in listed)
        out.append(b"------\n")
    cnt = max(total - reaches, reaches)
    out.append(b"bisect_rev='%s'\n" % listed[0].id.hex().encode())
    out.append(b"bisect_nr=%d\n" % (cnt - 1))
    out.append(b"bisect_good=%d\n" % (total - reaches - 1))
    out.append(b"bisect_bad=%d\n" % (reaches - 1))
    out.append(b"bisect_all=%d\n" % total)
    out.append(b"bisect_steps=%d\n" % estimate_steps(total))
    return 0


def _raw_header(walk: object, node: object) -> bytes:
    """``--header``: the commit's headers as stored, a blank line and the message
    indented by four spaces."""
    data: bytes = walk.repo.odb.read(node.id)[1]  # type: ignore[attr-defined]
    head, _sep, message = data.partition(b"\n\n")
    body = b"".join(b"    " + m + b"\n" for m in message.split(b"\n")) if message else b""
    if message.endswith(b"\n"):
        body = body[: -len(b"    \n")]
    return head + b"\n\n" + body


def _gather(walk: object, settings: _Settings, out: list[bytes]) -> int:
    from gitodb.history.graph import SYMMETRIC_LEFT
    from gitodb.history.revwalk import RevWalk

    assert isinstance(walk, RevWalk)
    count = 0
    left = 0
    show = not settings.quiet and not settings.count
    listing = None
    if walk.want_objects and (
        settings.filter is not None
        or settings.missing is not None
        or settings.print_omitted
        or walk.paths
    ):
        from gitodb.history.objfilter import FilteredObjects, MissingObjects

        listing = FilteredObjects(
            walk,
            settings.filter,
            filter_provided=settings.filter_provided,
            collect_omits=settings.print_omitted,
            missing=MissingObjects(settings.missing or "error"),
        )
    commits = walk.commits()
    if settings.maximal_only:
        # only the commits no other listed commit reaches
        listed = list(commits)
        below = {p for n in listed for p in n.parent_ids}
        commits = iter([n for n in listed if n.id not in below])
    if settings.bisect_vars:
        return _bisect_vars(walk, settings, out, commits)
    for node in commits:
        if listing is not None and not listing.show_commit(node.id):
            continue
        is_left = bool(node.flags & SYMMETRIC_LEFT)
        if is_left:
            left += 1
        else:
            count += 1
        if not show:
            continue
        out.append(_commit_line(walk, node, settings, is_left))
    if walk.want_objects:
        mark_out, mark_count = len(out), count
        try:
            count = _list_objects(walk, settings, listing, out, count, show)
        except _MissingObject:
            # Git checks that every listed object exists: list again the careful way,
            # which stops where Git stops, with Git's message
            from gitodb.history.objfilter import FilteredObjects

            del out[mark_out:]
            listing = FilteredObjects(walk, None)
            count = _list_objects(walk, settings, listing, out, mark_count, show)
    if listing is not None:
        out += listing.omitted_lines()
        out += listing.missing.lines(settings.nul)
    if settings.count:
        out.append(b"%d\t%d\n" % (left, count) if settings.left_right else b"%d\n" % (left + count))
    return 0
