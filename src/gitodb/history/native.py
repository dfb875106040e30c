"""The native core's history walks (``_native/histwalk.inc``) for one repository.

``reader(repo)`` builds the C object reader over the repository's packs: it reads
OFS_DELTA chains through the one delta-base cache and the compression layer's
inflate, and hands everything else (loose objects, REF_DELTA, large or damaged
entries, ids in no pack) to ``ObjectDatabase.read``, which raises the typed errors.
``commit_walk(graph, starts, first_parent)`` is the default-order commit walk on
it, with the commit-graph's records when the graph has one usable layer.  The reader
inflates through the chosen backend's C API where the compression layer names one
(``compress.native_inflate()``: the linked zlib, or libdeflate in its binding's
shared object), else through its binding; the native cache costs no Python call.

The pure-Python walk in ``gitodb.history.revwalk`` is the reference and the
fallback: these return None when the native core is not built or when
``GITODB_PURE_WALK=1`` (the differential tests compare the two).
"""

from __future__ import annotations

import os

from gitodb import compress
from gitodb.errors import ObjectNotFoundError
from gitodb.objects.header import TYPE_NUMBERS
from gitodb.objects.tree import parse_entries

try:
    from gitodb._native import commit_walk as _commit_walk
    from gitodb._native import graph_contains as _graph_contains
    from gitodb._native import graph_count as _graph_count
    from gitodb._native import odb_reader as _odb_reader
    from gitodb._native import tree_pairs as _tree_pairs
except ImportError:  # built without the native core
    _commit_walk = _odb_reader = _graph_contains = _graph_count = None  # type: ignore[assignment]
    _tree_pairs = None  # type: ignore[assignment]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from gitodb.history.graph import CommitGraph
    from gitodb.repo import Repository


# How much of what one reader caches it leaves in the delta-base cache.  A walk reads
# each object once, so a cached object serves only as the base of deltas read after
# it, which are the same tree or file in nearby commits.  On libgit2.git (73,500 trees,
# 61,000 of them deltas) the bases live together at any moment total under 1 MiB; 8 MiB
# of the walk's newest entries keep 98% of the base hits that the whole 96 MiB cache
# gives, and the walk no longer faults in and clears 90 MB of fresh pages.
WALK_CACHE_BUDGET = 8 * 1024 * 1024


def enabled() -> bool:
    """True when the native walks are built and not turned off (``GITODB_PURE_WALK``)."""
    if _odb_reader is None:
        return False
    return os.environ.get("GITODB_PURE_WALK", "").lower() not in ("1", "true", "yes", "on")


def tree_pairs_function() -> Callable[[bytes, bytes, int, bool], Any] | None:
    """The native core's ``tree_pairs`` (one level of a tree diff, see
    ``treediff.level_pairs``), or None where the native walks are off."""
    return _tree_pairs if enabled() else None


def reader(repo: Repository) -> Any | None:
    """A native ``OdbReader`` over ``repo``'s packs (``close()`` it), or None."""
    if not enabled():
        return None
    odb = repo.odb
    rawsz = repo.object_format.rawsz
    packs: list[Any] = []
    cache = odb.cache
    for p in odb.packs:
        # Only v2 indexes sharing the database's cache; others are read by Python.
        if p.idx.version != 2 or p.cache is not cache:
            continue
        packs.append((p.buf, p.data_end, p.key_base, p.idx._buf, p.idx.count))
    read = odb.read

    def fallback(oid: bytes, missing_ok: bool) -> tuple[int, bytes] | None:
        try:
            type_name, data = read(oid)
        except ObjectNotFoundError:
            if missing_ok:
                return None
            raise
        return TYPE_NUMBERS[type_name], data

    def bad_tree(data: bytes) -> None:
        parse_entries(data, rawsz)  # raises Git's error for the malformed entry

    kind = compress.native_inflate()
    native = None if kind is None else (kind, compress.native_inflate_library())
    return _odb_reader(
        packs, rawsz, compress.inflate, native, cache, fallback, bad_tree, WALK_CACHE_BUDGET
    )


def _graph_layout(graph: CommitGraph) -> tuple[Any, int, int, int, int, int, int] | None:
    """The chunks of a single-layer commit-graph for the C walk, or None."""
    f = graph.file
    if f is None or graph.paranoid or f.base is not None or f.num_commits_in_base:
        return None
    edge = f._edge
    return (
        f.data,
        f.num_commits,
        f._oidl,
        f._cdat,
        edge[0] if edge is not None else -1,
        edge[1] if edge is not None else 0,
        f._fanout_off,
    )


def graph_contains(graph: CommitGraph, ids: list[bytes]) -> bytes | None:
    """For each of ``ids``, 1 if the graph's commit-graph file holds it, else 0; None
    where the native core does not apply (no single usable layer: ask the file)."""
    layout = _graph_layout(graph) if _graph_contains is not None and enabled() else None
    if layout is None:
        return None
    return _graph_contains(layout, graph.fmt.rawsz, ids)


def graph_count(graph: CommitGraph, starts: list[bytes], first_parent: bool) -> int | None:
    """How many commits ``starts`` reach (first parents only with ``first_parent``),
    over the commit-graph's parent positions alone; None where that does not apply
    (no single usable layer, a start outside it, a damaged record): walk instead."""
    layout = _graph_layout(graph) if _graph_count is not None and enabled() else None
    if layout is None:
        return None
    return _graph_count(layout, graph.fmt.rawsz, starts, first_parent)


def walk_usable(graph: CommitGraph) -> bool:
    """True if ``commit_walk(graph, ...)`` will not return None (decide before the
    walk's set-up changes state the Python walk would need)."""
    if _commit_walk is None or not enabled():
        return False
    return graph.file is None or _graph_layout(graph) is not None


def commit_walk(
    graph: CommitGraph, starts: list[bytes], first_parent: bool
) -> tuple[Any, Any] | None:
    """``(walk, reader)``: the native default-order walk from ``starts`` (queue
    order) and the reader it reads with (``close()`` it after), or None.

    The walk's ``next(n)`` gives up to n ``(id, parents, date, tree, raw or None)`` in
    walk order; ``raw`` when ``graph.keep_raw``.  Commits a fast parse does not
    accept, or that the graph does not hold usably, come from ``graph.node``.
    """
    if _commit_walk is None or graph.file is not None and _graph_layout(graph) is None:
        return None  # a commit-graph chain (or paranoia): the Python walk reads it
    r = reader(graph.repo)
    if r is None:
        return None

    def commit_fallback(oid: bytes) -> tuple[list[bytes], int, bytes, bytes | None]:
        n = graph.node(oid)
        return n.parent_ids, n.date, n.tree, n.raw

    try:
        return _commit_walk(
            r, starts, first_parent, graph.keep_raw, commit_fallback, _graph_layout(graph)
        ), r
    except BaseException:
        r.close()
        raise


def run_walk(walk: Any, reader: Any, run: Callable[[Any], Any]) -> tuple[Any, BaseException | None]:
    """``run(walk)``'s result and what ended the walk early (a missing or damaged
    parent), None if nothing did; ``reader`` is closed after.  The cyclic collector is
    off meanwhile: the walk's records are freed by reference count, and it would only
    traverse them again and again while the walk makes them."""
    import gc

    error: BaseException | None = None
    collecting = gc.isenabled()
    gc.disable()
    try:
        result = run(walk)
        try:
            walk.next(1)  # the walk is done: raises what ended it early, if anything
        except Exception as e:
            error = e
    finally:
        if collecting:
            gc.enable()
        del walk
        reader.close()
    return result, error


def ls_tree_text(
    repo: Repository,
    tree_data: bytes,
    *,
    recursive: bool,
    show_trees: bool,
    trees_only: bool,
    name_only: bool,
    nul: bool,
    quote_fully: bool,
    max_depth: int,
) -> bytes | None:
    """``git ls-tree`` of a tree's content (no pathspec, full ids; the default line,
    or ``name_only``), or None: not built, or a subtree missing, not a tree,
    malformed or deeper than ``max_depth`` (``treewalk.list_tree`` then lists it and
    raises Git's error)."""
    return _ls_tree(  # type: ignore[no-any-return]
        repo, tree_data, recursive, show_trees, trees_only, name_only, nul, quote_fully, max_depth
    )


def write_ls_tree(
    repo: Repository,
    tree_data: bytes,
    write: Callable[[bytes], object],
    *,
    recursive: bool,
    show_trees: bool,
    trees_only: bool,
    name_only: bool,
    nul: bool,
    quote_fully: bool,
    max_depth: int,
) -> tuple[bool, int] | None:
    """``ls_tree_text``'s listing given to ``write`` in chunks as it is made:
    ``(complete, bytes written)``, or None when the native core is not built.  When
    not complete, what was listed before a bad subtree is written, and
    ``treewalk.list_tree`` goes on from there and raises Git's error."""
    return _ls_tree(  # type: ignore[no-any-return]
        repo,
        tree_data,
        recursive,
        show_trees,
        trees_only,
        name_only,
        nul,
        quote_fully,
        max_depth,
        write,
    )


def _ls_tree(repo: Repository, *args: Any) -> Any:
    """The native reader's ``ls_tree(*args)`` on a reader opened for it, or None
    when the native core is not built."""
    r = reader(repo)
    if r is None:
        return None
    try:
        return r.ls_tree(*args)
    finally:
        r.close()
