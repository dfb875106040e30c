"""``gitodb rev-list``: list commits (and with ``--objects`` trees and blobs) like Git.

A thin shell over ``gitodb.history.revwalk.RevWalk`` and
``gitodb.history.revargs.RevisionArgs``.  Options follow Git 2.39 (numbers are
checked as Git 2.55 checks them: ``'1q': not an integer``); an option Git has that
gitodb does not implement is refused (exit 129), never ignored.
"""

from __future__ import annotations

import os
import sys

from gitodb.cli.options import OptionParser, UsageError
from gitodb.cli.revopts import RevSettings, without_gc
from gitodb.errors import GitodbError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from gitodb.cli.main import Context
    from gitodb.history.graph import Node
    from gitodb.history.revwalk import RevWalk

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

_PARSER: OptionParser | None = None


def parser() -> OptionParser:
    """rev-list's options (built on first use): the revision options and its own."""
    global _PARSER
    if _PARSER is None:
        from gitodb.cli.revopts import rev_list_options

        _PARSER = OptionParser("rev-list", [], rev_list_options(), literal_usage=USAGE)
    return _PARSER


def parse_args(argv: list[str], settings: RevSettings) -> list[str] | None:
    """Fill ``settings`` from ``argv`` by Git's revision-option rules; return the
    paths after ``--`` (None without ``--``).  An option rev-list does not know is
    Git's usage on stderr (exit 129)."""
    from gitodb.cli.revopts import add_revision, check

    p = parser()
    _values, unknown, paths = p.parse_revision(argv, settings, on_arg=add_revision)
    check(settings, unknown)
    settings.unknown = unknown
    return paths


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
    return without_gc(_run, argv, ctx)


def _run(argv: list[str], ctx: Context) -> int:
    settings = RevSettings()
    paths = parse_args(argv, settings)
    settings.paths = paths or []
    if settings.unknown:
        # Git reads the revisions first: a bad one is reported before the usage
        repo = ctx.open_repository()
        from gitodb.history.revwalk import RevWalk

        status = add_revisions(repo, RevWalk(repo), settings, paths is not None)
        if status:
            return status
        raise UsageError(stderr=parser().usage_text())
    # Git's rule: nothing to start from and no ref option or --stdin is a usage error,
    # unless objects are listed.
    # (--alternate-refs counts when it found a tip)
    quiet_sources = ("--not", "--exclude", "--exclude-hidden", "--alternate-refs")
    given = any(what not in quiet_sources for what, _v in settings.revs)
    alternates = any(what == "--alternate-refs" for what, _v in settings.revs)
    if not settings.walk_kwargs.get("objects") and not given and not alternates:
        _refuse_nul(settings)  # Git checks -z before the usage for no revision
        raise UsageError(stderr=parser().usage_text())
    from gitodb.history.revwalk import RevWalk

    if settings.walk_kwargs.get("boundary") and settings.maximal_only:
        raise GitodbError("options '--boundary' and '--maximal-only' cannot be used together")
    if settings.filter is not None and not settings.walk_kwargs.get("objects"):
        raise GitodbError("object filtering requires --objects")
    repo = ctx.open_repository()
    graph = None
    if settings.pretty is not None or settings.verify_objects:
        from gitodb.history.graph import CommitGraph

        # --pretty: the commits are read to be shown; --verify-objects: each commit
        # is read from the object store, not taken from the commit-graph (as Git)
        graph = CommitGraph(
            repo, keep_raw=settings.pretty is not None, use_commit_graph=not settings.verify_objects
        )
    walk = RevWalk(repo, graph=graph, **settings.walk_kwargs)  # type: ignore[arg-type]
    if settings.walk_reflogs:
        from gitodb.history.reflogwalk import ReflogWalk

        walk.walk_reflogs(ReflogWalk(repo))
    status = add_revisions(repo, walk, settings, paths is not None)
    if status:
        return status
    if settings.verify_objects:
        _verify_tips(walk)
    _refuse_nul(settings)  # after the revisions are read, as Git
    if settings.count and settings.left_right and settings.walk_kwargs.get("objects"):
        raise GitodbError("marked counting and '--objects' cannot be used together")
    # again: add_revisions takes a work-tree file name out of the revisions
    given = any(what not in quiet_sources for what, _v in settings.revs)
    if not settings.walk_kwargs.get("objects") and not given and not walk.pending:
        raise UsageError(stderr=parser().usage_text())
    limit_to_paths(repo, ctx, walk, settings.paths)
    if settings.test_bitmap or settings.use_bitmap:
        from gitodb.cli.rev_list_bitmap import bitmap_output, test_bitmap

        if settings.test_bitmap:
            return test_bitmap(repo, walk)
        answered = bitmap_output(repo, walk, settings)
        if answered is not None:
            return answered
    if settings.disk_usage is not None:
        return _disk_usage(walk, settings)
    return _output(walk, settings)


def _refuse_nul(settings: RevSettings) -> None:
    """``-z`` with an option whose output Git 2.55 cannot end with NULs: its fatal
    error (``--missing`` and ``--boundary`` are allowed)."""
    w = settings.walk_kwargs
    if settings.nul and (
        settings.graph
        or settings.pretty is not None  # --pretty, --format, --oneline
        or settings.header
        or settings.disk_usage is not None
        or settings.timestamp
        or w.get("bisect") is not None  # --bisect, --bisect-all, --bisect-vars
        or settings.use_bitmap
        or settings.left_right
        or w.get("cherry_mark")  # --cherry-mark, --cherry
        or w.get("edge_hint")  # --objects-edge
    ):
        raise GitodbError("-z option used with unsupported option")


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


def add_revisions(repo: object, walk: object, settings: RevSettings, dashdash: bool) -> int:
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
                        del settings.revs[index:]  # (no longer revisions)
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
            elif what == "--bisect":
                args.bisect_refs()
            elif what == "--ancestry-path":
                _add_ancestry_commit(repo, args, value or "")
            elif what == "--exclude-hidden":
                args.exclude_hidden(value or "")
            elif what == "--alternate-refs":
                args.alternate_refs()
            elif what == "--reflog":
                args.reflogs()
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


def _add_ancestry_commit(repo: object, args: object, name: str) -> None:
    """``--ancestry-path=<commit>``: Git's error, exit 128, if it names no commit."""
    from gitodb.cli.options import UsageError
    from gitodb.history.revargs import RevisionArgs
    from gitodb.repo.revparse import peel_to, resolve_full

    assert isinstance(args, RevisionArgs)
    message = f"error: could not get commit for --ancestry-path argument {name}\n"
    try:
        oid = resolve_full(args.repo, name).oid
    except GitodbError:
        raise UsageError(stderr=message, status=128) from None
    try:
        commit = peel_to(args.repo, oid, "commit", name)
    except GitodbError:
        type_name = args.repo.odb.read_header(oid)[0] if args.repo.odb.contains(oid) else ""
        head = f"error: object {oid.hex()} is a {type_name}, not a commit\n" if type_name else ""
        raise UsageError(stderr=head + message, status=128) from None
    args.walk.add_ancestry_commit(commit)


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


def _hash_mismatch(walk: object, oid: bytes) -> bool:
    """``--verify-objects``: read ``oid`` and check that its content hashes to it; if
    not, Git's ``error: hash mismatch <id>`` (True)."""
    from gitodb.objects.header import hash_object

    repo = walk.repo  # type: ignore[attr-defined]
    type_name, data = repo.odb.read(oid)
    if hash_object(repo.object_format, type_name, data) == oid:
        return False
    sys.stdout.flush()
    sys.stderr.write(f"error: hash mismatch {oid.hex()}\n")
    return True


def _verify_tips(walk: object) -> None:
    """``--verify-objects``: each revision given is read and its hash checked, as
    Git's ``parse_object`` does for them; a mismatch is Git's ``fatal: bad object``."""
    for p in walk.pending:  # type: ignore[attr-defined]
        if _hash_mismatch(walk, p.oid):
            raise GitodbError(f"bad object {p.name}")


class _MissingObject(Exception):
    """The quick object listing met an object that is not there."""


def _list_objects(
    walk: object, settings: RevSettings, listing: object, out: list[bytes], count: int, show: bool
) -> int:
    """Append the ``--objects`` lines to ``out``; the count so far plus the objects."""
    from gitodb.errors import GitodbError, ObjectNotFoundError
    from gitodb.history.revwalk import RevWalk

    assert isinstance(walk, RevWalk)
    names = settings.object_names
    if listing is None:
        contains = walk.repo.odb.contains
        if not settings.nul and not walk.unpacked and not settings.verify_objects:
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
                if type_name == "blob" and settings.verify_objects:
                    _hash_mismatch(walk, oid)  # reported; the blob is listed
                if walk.unpacked and _packed(walk, oid):
                    continue
                count += 1
                if show:
                    out.append(_object_line(oid, name, names, settings.nul))
        except ObjectNotFoundError:
            raise _MissingObject from None
        return count
    for oid, type_name, name in listing.objects():  # type: ignore[attr-defined]
        if walk.unpacked and _packed(walk, oid):
            continue
        if type_name == "blob" and settings.verify_objects:
            _hash_mismatch(walk, oid)  # reported; the blob is listed
        count += 1
        if show:
            out.append(_object_line(oid, name, names, settings.nul))
    return count


def _disk_usage(walk: object, settings: RevSettings) -> int:
    """``--disk-usage[=human]``: the bytes the listed objects take where they are
    stored (a pack entry, or a loose file), instead of the listing."""
    settings.object_names = settings.parents = settings.children = False
    settings.timestamp = settings.left_right = settings.abbrev_commit = False
    settings.pretty = None
    lines: list[bytes] = []
    _gather(walk, settings, lines)
    info = walk.repo.odb.info  # type: ignore[attr-defined]
    total = sum(
        info(bytes.fromhex(line.lstrip(b"-").decode())).disk_size
        for line in b"".join(lines).splitlines()
        if line
    )
    sys.stdout.write(disk_usage_line(total, settings) + "\n")
    return 0


def disk_usage_line(total: int, settings: RevSettings) -> str:
    """What ``--disk-usage[=human]`` prints for ``total`` bytes."""
    from gitodb.cli.index_pack import humanise_bytes

    return humanise_bytes(total) if settings.disk_usage == "human" else str(total)


def _output(walk: object, settings: RevSettings) -> int:
    out: list[bytes] = []
    try:
        return _gather(walk, settings, out)
    finally:
        # --objects-edge: the excluded parents of the listed commits come first, as
        # Git prints them while marking their trees, before it lists anything
        edges = b"".join(b"-%s\n" % e.hex().encode() for e in getattr(walk, "edges", ()))
        # what was listed before an error (a missing object) is printed, as Git does;
        # part by part: --objects's lines are one native buffer of megabytes, which a
        # join would copy twice more into fresh memory
        if edges:
            sys.stdout.buffer.write(edges)
        sys.stdout.buffer.writelines(out)


def _commit_line(walk: object, node: object, settings: RevSettings, is_left: bool) -> bytes:
    """One commit as rev-list shows it: timestamp, mark, id, parents, header."""
    from gitodb.history.graph import BOUNDARY, PATCHSAME

    flags = node.flags  # type: ignore[attr-defined]
    line: bytes = b"%d " % node.date if settings.timestamp else b""  # type: ignore[attr-defined]
    boundary = bool(flags & BOUNDARY)
    if settings.graph:
        mark = b""  # the graph draws the mark
    elif boundary and not settings.nul:
        mark = b"-"
    elif flags & PATCHSAME:
        mark = b"="  # --cherry-mark: the same patch is on the other side
    elif settings.left_right:
        mark = b"<" if is_left else b">"
    elif settings.walk_kwargs.get("cherry_mark"):
        mark = b"+"
    else:
        mark = b""
    line += mark
    if settings.abbrev_commit and settings.abbrev != 0:
        line += _abbreviator(walk, settings)(node.id).encode()  # type: ignore[attr-defined]
    else:
        line += node.id.hex().encode()  # type: ignore[attr-defined]
    if settings.nul and boundary:
        line += b"\0boundary=yes"  # Git 2.55 puts it before the parents
    if settings.parents:
        line += b"".join(b" " + p.hex().encode() for p in node.parent_ids)  # type: ignore[attr-defined]
    if settings.children:
        kids = walk.children.get(node.id, ())  # type: ignore[attr-defined]
        line += b"".join(b" " + c.hex().encode() for c in kids)
    if walk.bisect == "all":  # type: ignore[attr-defined]
        line += _bisect_decoration(walk, node)
    if settings.pretty is not None:
        head, body = _pretty_parts(walk, node, settings, line)
        term = b"\n"
    elif settings.header:
        head, body, term = line + b"\n", _raw_header(walk, node), b"\0"
    else:
        head, body, term = line + (b"\0" if settings.nul else b"\n"), None, b""
    if settings.graph:
        return _graph_entry(walk, node, settings, head, body, term)
    return head + (body or b"") + term


def _graph_entry(
    walk: object, node: object, settings: RevSettings, head: bytes, body: bytes | None, term: bytes
) -> bytes:
    """The commit with the graph drawn beside it, in the order Git's rev-list
    writes graph rows and text (``body`` None: only the header line is shown)."""
    out = [_graph_rows(walk, node, settings), head]
    drawer = settings.drawer
    if body is None or not body:
        rest, shown = drawer.show_remainder()
        out += (rest, b"\n") if shown else ()
        if body is not None and settings.pretty == "oneline":
            out.append(b"\n")
        return b"".join(out)
    if settings.pretty != "oneline":
        out.append(drawer.show_oneline())
    out.append(drawer.show_commit_msg(body))
    if body.endswith(b"\n"):
        out.append(drawer.show_padding())
    out.append(term)
    return b"".join(out)


def _graph_rows(walk: object, node: object, settings: RevSettings) -> bytes:
    """Feed the commit to the graph; its rows up to the commit's own."""
    from gitodb.history.graphdraw import GraphDrawer, commit_mark, graph_parents

    drawer = settings.drawer
    if drawer is None:
        drawer = settings.drawer = GraphDrawer()
    drawer.update(
        node.id,  # type: ignore[attr-defined]
        graph_parents(walk, node),  # type: ignore[arg-type]
        commit_mark(node, settings.left_right),  # type: ignore[arg-type]
    )
    rows: bytes = drawer.show_commit()
    return rows


def _pretty_parts(
    walk: object, node: object, settings: RevSettings, line: bytes
) -> tuple[bytes, bytes]:
    """``--pretty``/``--format``: the header (``<id> `` for ``oneline``, else
    ``commit <id>`` and a newline) and the formatted message."""
    from gitodb.history.pretty import Formatter, pretty_commit

    repo = walk.repo  # type: ignore[attr-defined]
    raw = repo.odb.read(node.id)[1]  # type: ignore[attr-defined]
    if settings.pretty == "oneline":
        oneline: bytes = pretty_commit("oneline", repo, node.id, raw)  # type: ignore[attr-defined]
        return line + b" ", oneline
    if settings.pretty_kind is not None:
        body: bytes = pretty_commit(
            settings.pretty_kind,
            repo,
            node.id,  # type: ignore[attr-defined]
            raw,
            abbrev=_abbreviator(walk, settings),
        )
        return b"commit " + line + b"\n", body
    if settings.formatter is None:
        # %h, %p, %t: --abbrev=<n> long (--no-abbrev: full)
        settings.formatter = Formatter(repo, settings.pretty or "", abbrev=settings.abbrev)
    text: bytes = settings.formatter.format(node.id, raw, parents=node.parent_ids)  # type: ignore[attr-defined]
    return b"commit " + line + b"\n", text


def _abbreviator(walk: object, settings: RevSettings) -> Any:
    """The ``Abbreviator`` of ``--abbrev=<n>`` (the default length without it, full
    ids with ``--no-abbrev``): the commits' ids and the ``Merge:`` line use it."""
    if settings.abbreviator is None:
        from gitodb.repo.abbrev import Abbreviator, default_abbrev

        repo = walk.repo  # type: ignore[attr-defined]
        length = default_abbrev(repo) if settings.abbrev is None else settings.abbrev
        settings.abbreviator = Abbreviator(repo, length)
    return settings.abbreviator


def _bisect_decoration(walk: object, node: object) -> bytes:
    """``--bisect-all``: `` (<refs>, dist=<n>)`` as Git decorates each commit."""
    from gitodb.history.pretty import Decorations

    deco = getattr(walk, "_bisect_decorations", None)
    if deco is None:
        deco = Decorations(walk.repo, every_ref=True)  # type: ignore[attr-defined]
        walk._bisect_decorations = deco  # type: ignore[attr-defined]
    names = list(deco.of(node.id))  # type: ignore[attr-defined]
    names.append(f"dist={walk.bisect_distance.get(node.id, 0)}")  # type: ignore[attr-defined]
    return b" (" + ", ".join(names).encode("utf-8", "surrogateescape") + b")"


def _bisect_vars(walk: object, settings: RevSettings, out: list[bytes], commits: object) -> int:
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


def _count_line(settings: RevSettings, left: int, right: int, same: int) -> bytes:
    """``--count``: the total, or by side (``--left-right``), and the commits whose
    patch is on the other side (``--cherry-mark``), as Git prints them."""
    mark = settings.walk_kwargs.get("cherry_mark")
    if settings.left_right and mark:
        return b"%d\t%d\t%d\n" % (left, right, same)
    if settings.left_right:
        return b"%d\t%d\n" % (left, right)
    if mark:
        return b"%d\t%d\n" % (left + right, same)
    return b"%d\n" % (left + right)


def _gather(walk: object, settings: RevSettings, out: list[bytes]) -> int:
    from gitodb.history.graph import PATCHSAME, SYMMETRIC_LEFT
    from gitodb.history.revwalk import RevWalk

    assert isinstance(walk, RevWalk)
    count = 0
    left = same = 0
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
    if settings.in_commit_order and walk.want_objects:
        if listing is not None or settings.maximal_only or settings.bisect_vars:
            raise GitodbError(
                "gitodb rev-list does not support --in-commit-order with filters, "
                "paths, --missing, --maximal-only or --bisect-vars"
            )
        return _gather_in_commit_order(walk, settings, out, show)
    fast = _native_listing(walk, settings, listing, show)
    if fast is not None:
        count, text, error = fast
        out.append(text)
        if error is not None:
            raise error
        commits: Iterator[Node] = iter(())
    else:
        commits = walk.commits()
    if settings.maximal_only:
        # only the commits no other listed commit reaches (by first parents with
        # --first-parent)
        listed = list(commits)
        followed = 1 if walk.first_parent else None
        below = {p for n in listed for p in n.parent_ids[:followed]}
        commits = iter([n for n in listed if n.id not in below])
    if settings.bisect_vars:
        return _bisect_vars(walk, settings, out, commits)
    for node in commits:
        if listing is not None and not listing.show_commit(node.id):
            continue
        is_left = bool(node.flags & SYMMETRIC_LEFT)
        if node.flags & PATCHSAME:
            same += 1
        elif is_left:
            left += 1
        else:
            count += 1
        if not show:
            if settings.graph and settings.count and not settings.quiet:
                out.append(_graph_rows(walk, node, settings))  # as Git: rows, no text
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
        out.append(_count_line(settings, left, count, same))
    return 0


def _native_listing(
    walk: RevWalk, settings: RevSettings, listing: object, show: bool
) -> tuple[int, bytes, BaseException | None] | None:
    """The commits' lines of a plain listing (ids, ``--abbrev-commit``, ``--parents``,
    ``--count``, ``--objects`` after them; ``--oneline``) from the native core, or None
    (``RevWalk.native_text``, ``RevWalk.native_format``)."""
    if (
        listing is not None
        or settings.timestamp
        or settings.graph
        or settings.left_right
        or settings.nul
        or settings.children
        or (settings.pretty is not None and settings.pretty != "oneline")
        or settings.header
        or settings.maximal_only
        or settings.bisect_vars
        or walk.edge_hint  # the edges are found by the Python walk
    ):
        return None
    abbreviated = settings.abbrev_commit and settings.abbrev != 0
    spec = _abbreviator(walk, settings).native_spec() if abbreviated else None
    if settings.pretty is None:
        return walk.native_text(settings.parents, want_text=show, abbrev=spec)
    if settings.parents or walk.want_objects or not show:
        return None
    from gitodb.history.pretty import oneline_parts, pretty_commit

    repo = walk.repo

    def oneline(oid: bytes, raw: bytes | None) -> bytes:  # a commit C leaves to Python
        line = _abbreviator(walk, settings)(oid) if abbreviated else oid.hex()
        raw = repo.odb.read(oid)[1] if raw is None else raw
        return line.encode() + b" " + pretty_commit("oneline", repo, oid, raw)

    return walk.native_format(oneline_parts(abbreviated), b"\n", b"", oneline, spec)


def _gather_in_commit_order(
    walk: object, settings: RevSettings, out: list[bytes], show: bool
) -> int:
    """``--objects --in-commit-order``: each commit, then the objects it brings."""
    from gitodb.history.graph import PATCHSAME, SYMMETRIC_LEFT
    from gitodb.history.revwalk import RevWalk

    assert isinstance(walk, RevWalk)
    count = left = same = 0
    names = settings.object_names
    for node, objects in walk.in_commit_order():
        if node is not None:
            is_left = bool(node.flags & SYMMETRIC_LEFT)
            if node.flags & PATCHSAME:
                same += 1
            elif is_left:
                left += 1
            else:
                count += 1
            if show:
                out.append(_commit_line(walk, node, settings, is_left))
        for oid, type_name, name in objects:
            if walk.unpacked and _packed(walk, oid):
                continue
            if type_name == "blob" and settings.verify_objects:
                _hash_mismatch(walk, oid)  # reported; the blob is listed
            count += 1
            if show:
                out.append(_object_line(oid, name, names, settings.nul))
    if settings.count:
        out.append(_count_line(settings, left, count, same))
    return 0
