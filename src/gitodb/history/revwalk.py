"""The commit walker of ``git rev-list``: Git's revision walk, order for order.

Starting points are added with ``add`` (any object: tags are peeled, trees and
blobs are kept for ``objects``), excluded ones with ``uninteresting=True``.  The
walk follows Git's ``revision.c``:

- default order: a queue by committer date, newest first, equal dates in the
  order they were queued (``commit_list_insert_by_date``);
- with exclusions (or ``--topo-order``, or ``since`` with exclusions) the whole
  interesting set is computed first (``limit_list``, with its five-commit slop),
  then ``--topo-order``/``--date-order`` sort it (``sort_in_topological_order``);
- ``author-date`` sorts like ``--author-date-order`` (topological, newest author
  date first);
- ``since``/``until``, ``min_parents``/``max_parents``, ``max_count``/``skip`` and
  ``reverse`` act where Git applies them;
- ``objects()`` lists trees and blobs after the commits like ``--objects``:
  tags and trees given as starting points, then each commit's tree depth first,
  every object once with the first path it was reached by, and nothing that the
  trees of the boundary commits contain.

Example::

    walk = RevWalk(repo)
    walk.add(repo.resolve("main"))
    walk.add(repo.resolve("v1.0"), uninteresting=True)
    for node in walk.commits():
        print(node.id.hex())
"""

from __future__ import annotations

import gc

from gitodb.errors import GitodbError, ObjectNotFoundError, TreeDepthError
from gitodb.history import native
from gitodb.history.graph import (
    ADDED,
    BOTTOM,
    BOUNDARY,
    CHILD_SHOWN,
    SEEN,
    SHOWN,
    SYMMETRIC_LEFT,
    TREESAME,
    UNINTERESTING,
    CommitGraph,
    DateQueue,
    Node,
    relevant,
)
from gitodb.objects.tag import Tag
from gitodb.objects.tree import Tree, max_tree_depth, parse_entries

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from gitodb.history.reflogwalk import ReflogWalk
    from gitodb.history.simplify import PathLimiter
    from gitodb.refs.table import RefRange
    from gitodb.repo import Repository

SLOP = 5
# --ancestry-path: the ancestors of an --ancestry-path=<commit>, and the scratch mark
# of the descendants' search (Git's ANCESTRY_PATH and TMP_MARK)
ANCESTRY_PATH = 1 << 14
TMP_MARK = 1 << 15
ORDERS = ("default", "topo", "date", "author-date")


def _path_bytes(path: str | None) -> bytes:
    return (path or "").encode("utf-8", "surrogateescape")


def _first_interesting(parents: list[Node]) -> list[Node]:
    """The parent Git's ``expand_topo_walk`` follows under --first-parent: the first
    one not UNINTERESTING (it skips those before it looks at --first-parent)."""
    for p in parents:
        if not p.flags & UNINTERESTING:
            return [p]
    return []


class Pending:
    """A starting point as given: the object, its name, and for ``rev:path`` the path."""

    __slots__ = ("oid", "name", "path", "uninteresting", "left")

    def __init__(
        self, oid: bytes, name: str, path: str | None, uninteresting: bool, left: bool = False
    ) -> None:
        self.oid = oid
        self.name = name
        self.path = path
        self.uninteresting = uninteresting
        self.left = left


class PendingRefs:
    """Refs added as starting points at once (``RevWalk.add_refs``): a ``Pending`` per
    ref is made only when something asks for them one by one."""

    __slots__ = ("refs", "uninteresting")
    left = False  # never the left side of a symmetric range

    def __init__(self, refs: RefRange, uninteresting: bool) -> None:
        self.refs = refs
        self.uninteresting = uninteresting

    def expand(self) -> list[Pending]:
        """One ``Pending`` per ref."""
        u = self.uninteresting
        return [Pending(oid, name, None, u) for name, oid in self.refs.items()]


class RevWalk:
    """One revision walk (see the module docstring); iterate ``commits()`` once."""

    def __init__(
        self,
        repo: Repository,
        *,
        order: str = "default",
        first_parent: bool = False,
        reverse: bool = False,
        max_count: int = -1,
        skip: int = 0,
        max_age: int | None = None,
        min_age: int | None = None,
        min_parents: int = 0,
        max_parents: int = -1,
        objects: bool = False,
        edge_hint: bool = False,
        side: str | None = None,
        graph: CommitGraph | None = None,
        paths: list[bytes] | None = None,
        simplify_history: bool = True,
        dense: bool = True,
        rewrite_parents: bool = False,
        remove_empty: bool = False,
        boundary: bool = False,
        use_bloom: bool = True,
        unpacked: bool = False,
        no_kept_objects: bool = False,
        kept_on_disk: bool = False,
        bisect: str | None = None,
        children: bool = False,
        ancestry_path: bool = False,
        simplify_merges: bool = False,
        simplify_by_decoration: bool = False,
        cherry_pick: bool = False,
        cherry_mark: bool = False,
        exclude_first_parent_only: bool = False,
    ) -> None:
        if order not in ORDERS:
            raise ValueError(f"unknown order {order!r}")
        if side not in (None, "left", "right"):
            raise ValueError(f"unknown side {side!r}")
        self.repo = repo
        self.graph = graph or CommitGraph(repo)
        self.order = order
        self.first_parent = first_parent
        self.reverse = reverse
        self.max_count = max_count
        self.skip = skip
        self.max_age = max_age  # --since: commits older than this end the walk
        self.min_age = min_age  # --until: commits newer than this are not shown
        self.min_parents = min_parents
        self.max_parents = max_parents
        self.want_objects = objects
        #: --objects-edge: ``edges`` collects the excluded parents of the listed
        #: commits (each once, in the order Git prints them)
        self.edge_hint = edge_hint
        self.edges: list[bytes] = []
        self.side = side  # --left-only / --right-only of a symmetric range
        # --cherry-pick / --cherry-mark: commits whose patch is on the other side of
        # a symmetric range are dropped / marked (gitodb.history.patchid)
        self.cherry_pick = cherry_pick
        self.cherry_mark = cherry_mark
        self._pending: list[Pending | PendingRefs] = []
        self._object_pending: list[tuple[bytes, str, bytes]] = []  # (id, type, name)
        self._uninteresting_trees: list[bytes] = []
        self._shown: list[Node] = []
        self._shown_trees: list[bytes] | None = None  # native_text's shown trees
        self._walked = False
        self._generation_sort = False  # set by _handle_pending
        # Path limiting (gitodb.history.simplify): TREESAME, simplification, rewriting.
        self._simplify_options = {
            "simplify_history": simplify_history,
            "dense": dense,
            "first_parent": first_parent,
            "remove_empty": remove_empty,
            "use_bloom": use_bloom,
            "by_decoration": simplify_by_decoration,
        }
        self.paths: list[bytes] = []
        self.limiter: PathLimiter | None = None
        if paths or simplify_by_decoration:
            self.set_paths(paths or [])  # decorations prune even without paths
        self.rewrite_parents = rewrite_parents
        self.unpacked = unpacked  # --unpacked: commits in a pack are not shown
        # --no-kept-objects[=in-core|on-disk]: commits in a kept pack are not shown
        # (their trees are not walked; trees and blobs named or reached otherwise
        # are listed, as Git does).  Only ``.keep`` files can mark a pack for
        # rev-list (in-core keeps are pack-objects').
        self.no_kept_objects = no_kept_objects
        self.kept_on_disk = kept_on_disk
        # --bisect ("one") / --bisect-all ("all"): gitodb.history.bisect over the list
        self.bisect = bisect
        self.bisect_reaches = self.bisect_all = 0
        self.bisect_distance: dict[bytes, int] = {}
        self.boundary = boundary
        # --children: each listed commit's children among the listed ones (Git's
        # set_children), filled once the walk has limited its list
        self.want_children = children
        self.children: dict[bytes, list[bytes]] = {}
        # --ancestry-path[=<commit>]: only commits on a path from a bottom (the
        # commits given, else the excluded ones named) to a tip
        self.ancestry_path = ancestry_path
        self.ancestry_need_bottoms = ancestry_path  # plain --ancestry-path
        self.ancestry_bottoms: list[Node] = []
        # --simplify-merges: Git's simplify_merges over the limited list
        self.simplify_merges = simplify_merges
        # --exclude-first-parent-only: exclusion spreads down first parents only
        self.exclude_first_parent_only = exclude_first_parent_only
        # -g: the reflogs' entries instead of history (walk_reflogs)
        self.reflog: ReflogWalk | None = None
        self._reflog_dates: tuple[int | None, int | None] = (None, None)

    # -- setup -------------------------------------------------------------------
    def set_paths(self, paths: list[bytes]) -> None:
        """Limit the walk to commits changing ``paths`` (paths from the top, Git's
        pathspecs), with the simplification the constructor chose."""
        from gitodb.history.simplify import PathLimiter

        self.paths = list(paths)
        self.limiter = PathLimiter(
            self.repo,
            self.graph,
            self.paths,
            **self._simplify_options,  # type: ignore[arg-type]
        )

    def walk_reflogs(self, reflog: ReflogWalk) -> None:
        """``-g``: show the commits of ``reflog``'s entries instead of walking history
        (the commits named go to ``reflog``, see ``RevisionArgs``); ``since``/``until``
        then date the entries, not the commits.  Git's checks, in Git's order."""
        if self.reverse:
            raise GitodbError("options '--reverse' and '--walk-reflogs' cannot be used together")
        if self.order != "default" or self._limits_history():
            raise GitodbError("cannot combine --walk-reflogs with history-limiting options")
        self.reflog = reflog
        self._reflog_dates = (self.max_age, self.min_age)
        self.max_age = self.min_age = None
        self.boundary = False  # no history walked, no boundary (as Git)

    def add(
        self,
        oid: bytes,
        *,
        uninteresting: bool = False,
        name: str = "",
        path: str | None = None,
        left: bool = False,
    ) -> None:
        """Add a starting point (any object type); ``uninteresting`` excludes it;
        ``left`` marks the left side of a symmetric range (``A`` of ``A...B``)."""
        self._pending.append(Pending(oid, name, path, uninteresting, left))

    def add_refs(self, refs: RefRange, uninteresting: bool = False) -> None:
        """``add(oid, name=name, uninteresting=uninteresting)`` for each ref of
        ``refs`` (``--all``'s thousands of refs: one call, and no object per ref
        unless something asks for ``pending``)."""
        if len(refs):
            self._pending.append(PendingRefs(refs, uninteresting))

    @property
    def pending(self) -> list[Pending]:
        """The starting points as given, in order."""
        if any(isinstance(p, PendingRefs) for p in self._pending):
            out: list[Pending] = []
            for p in self._pending:
                if isinstance(p, PendingRefs):
                    out += p.expand()
                else:
                    out.append(p)
            self._pending[:] = out
        return self._pending  # type: ignore[return-value]  # expanded: Pending alone

    def _handle_pending(self, ids: list[bytes] | None = None) -> list[Node]:
        """Git's ``handle_commit`` for every pending object: the starting commits.

        With ``ids`` (a walk without exclusions or marks, for the native walk), the
        interesting commits go there as ids in the order named, repeats too, with no
        node made for them, and the list returned is empty."""
        starts: list[Node] = []
        # Git 2.55 limits the walk for --left-only/--right-only even without exclusions.
        self.limited = self.order != "default" or self._limits_history()
        # With generation numbers, Git sorts an unlimited --topo-order/--date-order walk
        # incrementally (``init_topo_walk``, and excluded commits do not limit it): its
        # in-degrees count first-parent edges only under --first-parent, where
        # ``sort_in_topological_order`` counts every parent edge within the list.
        self._generation_sort = (
            self.order != "default"
            and self.first_parent
            and not self._limits_history()
            and self.limiter is None
            and self.max_age is None
            and self.min_age is None
            and self.graph.generation_numbers_enabled()
        )
        if self.graph.file is not None and ids is not None:
            plain = not any(p.uninteresting or p.left for p in self._pending)
            if plain and self._quick_pending(ids, starts):
                return starts
        # Git flags each named object while parsing the arguments, so an object named
        # both ways is uninteresting wherever it is named.
        negative = {p.oid for p in self.pending if p.uninteresting}
        # which starts the commit-graph holds, in one native call (for thousands of
        # refs; and for one, no index of the whole file is built)
        in_graph = (
            native.graph_contains(self.graph, [p.oid for p in self.pending])
            if self.graph.file is not None
            else None
        )
        for i, p in enumerate(self.pending):
            known = bool(in_graph[i]) if in_graph is not None else None
            self._handle_one(p, known, negative, starts, ids)
        return starts

    def _quick_pending(self, ids: list[bytes], starts: list[Node]) -> bool:
        """``_handle_pending(ids)`` with nothing excluded and no left side, and a
        commit-graph: a start the graph holds only goes into ``ids`` (``--all``'s
        thousands of refs take this line, with no ``Pending`` made for them); the
        others, in their place, through the whole of ``handle_commit``.  False where
        the native core cannot say which starts the graph holds (then nothing was done)."""
        tips: list[bytes] = []
        for p in self._pending:
            if isinstance(p, PendingRefs):
                tips += p.refs.ids()
            else:
                tips.append(p.oid)
        held = native.graph_contains(self.graph, tips)
        if held is None:
            return False
        at = 0  # where the tips of item p start
        for p in self._pending:
            end = at + (len(p.refs) if isinstance(p, PendingRefs) else 1)
            done = at
            while (z := held.find(0, done, end)) >= 0:
                ids += tips[done:z]
                one = (
                    p
                    if isinstance(p, Pending)
                    else Pending(tips[z], p.refs.name(z - at), None, False)
                )
                self._handle_one(one, False, set(), starts, ids)
                done = z + 1
            ids += tips[done:end]
            at = end
        return True

    def _handle_one(
        self,
        p: Pending,
        known: bool | None,
        negative: set[bytes],
        starts: list[Node],
        ids: list[bytes] | None,
    ) -> None:
        """Git's ``handle_commit`` for one start: a commit into ``starts`` (or ``ids``),
        tags peeled, trees and blobs kept for ``objects``.  ``known``: whether the
        commit-graph holds it (None: not asked yet)."""
        oid, path = p.oid, p.path
        if oid in negative:
            p.uninteresting = True
        if known is None:
            cg = self.graph.file
            known = oid in self.graph.nodes or (cg is not None and cg.position(oid) is not None)
        elif not known:
            known = oid in self.graph.nodes
        if known:
            type_name, data = "commit", b""  # a known commit: no read
        else:
            type_name, data = self._read(oid, p.name)
        while type_name == "tag":
            tag = Tag(data, self.repo.object_format, oid)
            if self.want_objects and not p.uninteresting:
                self._object_pending.append((oid, "tag", tag.name))
            oid, path = tag.object, None
            try:
                type_name, data = self.repo.odb.read(oid)
            except ObjectNotFoundError:
                if p.uninteresting:
                    type_name = ""
                    break
                raise GitodbError(f"bad object {oid.hex()}") from None
        if type_name == "commit":
            if ids is not None and not p.left and not p.uninteresting:
                ids.append(oid)  # the native walk's seen set drops the repeats
                return
            node = self.graph.node(oid, data or None)
            if p.left:
                node.flags |= SYMMETRIC_LEFT
            if p.uninteresting:
                node.flags |= UNINTERESTING | BOTTOM  # named: a bottom of the range
                self._mark_parents_uninteresting(node)
                self.limited = True
            if not node.flags & SEEN:
                node.flags |= SEEN
                starts.append(node)
        elif type_name == "tree":
            if not self.want_objects:
                return
            if p.uninteresting:
                self._uninteresting_trees.append(oid)
            else:
                self._object_pending.append((oid, "tree", _path_bytes(path)))
        elif type_name == "blob":
            if self.want_objects and not p.uninteresting:
                self._object_pending.append((oid, "blob", _path_bytes(path)))

    def add_ancestry_commit(self, oid: bytes) -> None:
        """``--ancestry-path=<commit>``: keep only what descends from it or it reaches
        (``oid`` a commit; several widen the set)."""
        node = self.graph.node(oid)
        node.flags |= ANCESTRY_PATH
        self.ancestry_path = True
        self.ancestry_bottoms.insert(0, node)

    def _read(self, oid: bytes, name: str) -> tuple[str, bytes]:
        try:
            return self.repo.odb.read(oid)  # type: ignore[no-any-return]
        except ObjectNotFoundError:
            raise GitodbError(f"bad object {name or oid.hex()}") from None

    def _mark_parents_uninteresting(self, node: Node) -> None:
        """Git's ``mark_parents_uninteresting``: through commits already loaded."""
        graph = self.graph
        nodes = graph.nodes
        only_first = self.exclude_first_parent_only
        stack = list(node.parent_ids[:1] if only_first else node.parent_ids)
        while stack:
            oid = stack.pop()
            n = nodes.get(oid)
            if n is None:
                graph.flag(oid, UNINTERESTING)  # not parsed: its parents are unknown
                continue
            if n.flags & UNINTERESTING:
                continue
            n.flags |= UNINTERESTING
            stack.extend(n.parent_ids[:1] if only_first else n.parent_ids)

    def _process_parents(self, node: Node, queue: DateQueue) -> None:
        """Git's ``process_parents``: queue the parents not seen yet."""
        if node.flags & ADDED:
            return
        node.flags |= ADDED
        if node.flags & UNINTERESTING:
            for p in node.parents:
                p.flags |= UNINTERESTING
                self._mark_parents_uninteresting(p)
                if p.flags & SEEN:
                    continue
                p.flags |= SEEN
                queue.put(p)
                if self.exclude_first_parent_only:
                    break
            return
        if self.limiter is not None:
            self.limiter.simplify(node)  # may keep only the TREESAME parent
        passed = node.flags & SYMMETRIC_LEFT
        if self.ancestry_path:
            passed |= node.flags & ANCESTRY_PATH  # ancestors of an --ancestry-path=<c>
        for p in node.parents:
            p.flags |= passed
            if not p.flags & SEEN:
                p.flags |= SEEN
                queue.put(p)
            if self.first_parent:
                break

    # -- walking -----------------------------------------------------------------
    def _limit(self, starts: list[Node]) -> list[Node]:
        """Git's ``limit_list``: every interesting commit, in walk order."""
        if self.ancestry_need_bottoms:
            # plain --ancestry-path: the excluded commits named are bottoms too
            for n in starts:
                if n.flags & BOTTOM:
                    self.ancestry_bottoms.insert(0, n)
            if not self.ancestry_bottoms:
                raise GitodbError("--ancestry-path given but there are no bottom commits")
        limiter = self.limiter
        if limiter is not None and (self.simplify_merges or limiter.can_increase_treesame()):
            limiter.track_treesame()
        queue = DateQueue()
        for n in starts:
            queue.put(n)
        out: list[Node] = []
        date = 2**64
        slop = SLOP
        while len(queue):
            node = queue.get()
            assert node is not None
            if self.max_age is not None and node.date < self.max_age:
                node.flags |= UNINTERESTING
            self._process_parents(node, queue)
            if node.flags & UNINTERESTING:
                self._mark_parents_uninteresting(node)
                slop = self._still_interesting(queue, date, slop)
                if slop:
                    continue
                break
            if self.min_age is not None and node.date > self.min_age:
                continue
            date = node.date
            out.append(node)
        if self.cherry_pick or self.cherry_mark:
            from gitodb.history.patchid import cherry_pick_list

            cherry_pick_list(self.repo, out, self.paths, mark=self.cherry_mark)
        if self.side is not None:
            # Git's limit_left_right: the other side counts as shown already.
            for node in out:
                if (node.flags & SYMMETRIC_LEFT) != (self.side == "left") * SYMMETRIC_LEFT:
                    node.flags |= SHOWN
        if self.ancestry_path:
            self._limit_to_ancestry(out)
        if limiter is not None and limiter.can_increase_treesame():
            # parents made uninteresting may leave a merge TREESAME to the rest
            for node in out:
                if not node.flags & (UNINTERESTING | TREESAME):
                    limiter.update_treesame(node)
        return out

    def _limit_to_ancestry(self, listed: list[Node]) -> None:
        """Git's ``limit_to_ancestry``: what neither descends from a bottom nor is an
        ancestor of an ``--ancestry-path=<commit>`` becomes uninteresting."""
        bottoms = self.ancestry_bottoms
        for b in bottoms:
            b.flags |= TMP_MARK
        backwards = listed[::-1]  # parents before children, most of the time
        progress = True
        while progress:
            progress = False
            for c in backwards:
                if c.flags & (TMP_MARK | UNINTERESTING):
                    continue
                if any(p.flags & TMP_MARK for p in c.parents):
                    c.flags |= TMP_MARK
                    progress = True
        for c in listed:
            if not c.flags & (TMP_MARK | ANCESTRY_PATH):
                c.flags |= UNINTERESTING
        for c in (*listed, *bottoms):
            c.flags &= ~(TMP_MARK | ANCESTRY_PATH)

    @staticmethod
    def _still_interesting(queue: DateQueue, date: int, slop: int) -> int:
        head = queue.peek()
        if head is None:
            return 0
        if date <= head.date:
            return SLOP
        if any(not n.flags & UNINTERESTING for n in queue.nodes()):
            return SLOP
        return slop - 1

    def would_show(self, node: Node) -> bool:
        """Whether the walk shows ``node`` when it comes to it (not shown yet,
        output limits aside): what ``--graph`` draws an edge to."""
        return self._wanted(node)

    def _wanted(self, node: Node) -> bool:
        """Git's ``get_commit_action`` (the parts rev-list uses)."""
        if node.flags & (SHOWN | UNINTERESTING):
            return False
        if self.min_age is not None and node.date > self.min_age:
            return False
        if self.unpacked and isinstance(self.repo.odb.locate(node.id), tuple):
            return False
        if self.kept_on_disk and self.repo.odb.in_kept_pack(node.id):
            return False
        if self.min_parents or self.max_parents >= 0:
            n = len(node.parent_ids)
            if n < self.min_parents or (self.max_parents >= 0 and n > self.max_parents):
                return False
        if self.limiter is not None and self.limiter.dense and node.flags & TREESAME:
            # a commit that changes none of the paths; a merge tying together two
            # relevant lines stays when parents are shown
            if not self.rewrite_parents:
                return False
            return sum(1 for p in node.parents if relevant(p)) >= 2
        return True

    def _rewrite_parents(self, node: Node, queue: DateQueue | None) -> None:
        """Git's ``rewrite_parents``: each parent becomes its nearest shown ancestor."""
        limiter = self.limiter
        assert limiter is not None
        new: list[Node] = []
        for nth, p in enumerate(node.parents):
            if nth and self.first_parent:
                new.append(p)  # Git 2.55 rewrites only the first parent here
                continue
            while True:  # rewrite_one
                if queue is not None:
                    self._process_parents(p, queue)
                if p.flags & UNINTERESTING or not p.flags & TREESAME:
                    break
                if not p.parents:
                    p = None  # type: ignore[assignment]
                    break
                q = limiter.one_relevant_parent(p.parents)
                if q is None:
                    break
                p = q
            if p is not None and p not in new:
                new.append(p)
        node._parents = new
        node.parent_ids = [p.id for p in new]

    def _simplified(self, node: Node, queue: DateQueue | None) -> bool:
        """Git's ``simplify_commit``: whether to show it, parents rewritten if so."""
        if not self._wanted(node):
            return False
        if self.limiter is not None and self.limiter.dense and self.rewrite_parents:
            self._rewrite_parents(node, queue)
        return True

    def _candidates(self) -> Iterator[Node]:
        """Git's ``get_revision_1``: commits in walk order, before output limits."""
        if self.reflog is not None:
            yield from self._reflog_candidates()
            return
        starts = self._handle_pending()
        starts.sort(key=lambda n: -n.date)  # stable, as commit_list_sort_by_date
        incremental = self.want_objects and not self._limited_as_git()
        if incremental:
            # Git does not limit this walk (it sorts incrementally): the edges, and
            # the trees they exclude, come from the start commits as its first
            # exploration has marked them
            self._mark_edges_uninteresting(starts, self._explored_uninteresting(starts))
        if self.limited:
            listed = self._limit(starts)
            if self.order != "default":
                listed = self._sort_topo(listed)
            if self.simplify_merges and self.limiter is not None:
                from gitodb.history.simplify import simplify_merges

                listed = simplify_merges(self.limiter, listed, self.first_parent)
            if self.want_children:
                self._set_children(listed)
            if self.bisect:
                from gitodb.history.bisect import find_bisection

                picked, self.bisect_reaches, self.bisect_all = find_bisection(
                    listed, first_parent=self.first_parent, find_all=self.bisect == "all"
                )
                self.bisect_distance = {n.id: d for n, d in picked}
                listed = [n for n, _d in picked]
            if self.want_objects and not incremental:
                self._mark_edges_uninteresting(listed)
            for node in listed:
                if self._simplified(node, None):
                    yield node
            return
        if self.limiter is not None:
            yield from self._candidates_limited_paths(starts)
            return
        fast = self._native_candidates(starts)
        if fast is not None:
            yield from fast
            return
        queue = DateQueue()
        for n in starts:
            queue.put(n)
        while True:
            head = queue.get()
            if head is None:
                return
            if self.max_age is not None and head.date < self.max_age:
                continue
            self._process_parents(head, queue)
            if self._wanted(head):
                yield head

    def _reflog_candidates(self) -> Iterator[Node]:
        """``-g``: each entry's commit, newest entry first, if its entry's date is in
        range and the usual filters keep it; parents are not walked (only rewritten,
        for paths with ``--parents``).  Trees, blobs and tags named are still listed."""
        assert self.reflog is not None
        self._handle_pending()  # (only commits the reflogs do not hold are pending)
        since, until = self._reflog_dates
        for item in self.reflog:
            when = item.entry.time
            if (since is not None and when < since) or (until is not None and when > until):
                continue
            node = self.graph.node(item.entry.new)
            node.flags &= ~(ADDED | SEEN | SHOWN)  # a commit may come again
            if self.limiter is not None:
                self.limiter.simplify(node)
            if self._simplified(node, DateQueue()):
                yield node

    def _set_children(self, listed: list[Node]) -> None:
        """Git's ``set_children``: walking the list, each commit is put first among
        its parents' children (so a parent's children read latest-listed first)."""
        children = self.children
        for node in listed:
            for p in node.parents:
                children.setdefault(p.id, []).insert(0, node.id)

    def _candidates_limited_paths(self, starts: list[Node]) -> Iterator[Node]:
        """The unlimited walk of ``_candidates`` with paths: parents are rewritten
        walking ahead on the same queue (Git's ``rewrite_one`` merges into it)."""
        queue = DateQueue()
        for n in starts:
            queue.put(n)
        while True:
            head = queue.get()
            if head is None:
                return
            if self.max_age is not None and head.date < self.max_age:
                continue
            self._process_parents(head, queue)
            if self._simplified(head, queue):
                yield head

    def _sort_topo(self, listed: list[Node]) -> list[Node]:
        """Git's ``sort_in_topological_order`` (graph order, or by date for --date-order)."""
        # the incremental sort's first-parent edges (see _handle_pending)
        first_only = self._generation_sort
        indegree: dict[bytes, int] = {n.id: 1 for n in listed}
        for n in listed:
            for p in n.parents[:1] if first_only else n.parents:
                if indegree.get(p.id):
                    indegree[p.id] += 1
        tips = [n for n in listed if indegree[n.id] == 1]
        out: list[Node] = []
        queue = DateQueue()
        stack = list(reversed(tips))  # graph order: a LIFO stack, first tip on top
        by_date = self.order in ("date", "author-date")
        if self.order == "author-date":
            queue = DateQueue(key=self.graph.author_date)
        if by_date:
            for n in tips:
                queue.put(n)
        while True:
            node = queue.get() if by_date else (stack.pop() if stack else None)
            if node is None:
                break
            for p in _first_interesting(node.parents) if first_only else node.parents:
                d = indegree.get(p.id, 0)
                if not d:
                    continue
                indegree[p.id] = d - 1
                if d - 1 == 1:
                    if by_date:
                        queue.put(p)
                    else:
                        stack.append(p)
            indegree[node.id] = 0
            out.append(node)
        return out

    def commits(self) -> Iterator[Node]:
        """The commits of the walk, in output order (``max_count``, ``skip``, ``reverse``)."""
        if self._walked:
            raise GitodbError("a RevWalk can be iterated once")
        self._walked = True
        picked = self._limited_output()
        if self.boundary:
            picked = self._with_boundary(picked)
        if self.reverse:
            picked = iter(list(picked)[::-1])
        for node in picked:
            self._shown.append(node)
            yield node

    def _with_boundary(self, picked: Iterator[Node]) -> Iterator[Node]:
        """``--boundary``: after the commits, their parents not shown (Git's
        ``get_revision_internal``/``create_boundary_commit_list``)."""
        candidates: list[Node] = []
        for node in picked:
            for p in node.parents:
                if p.flags & (CHILD_SHOWN | SHOWN):
                    continue
                p.flags |= CHILD_SHOWN
                candidates.append(p)
            yield node
        boundary: list[Node] = []
        for p in candidates:
            if p.flags & CHILD_SHOWN and not p.flags & (SHOWN | BOUNDARY):
                p.flags |= BOUNDARY
                boundary.insert(0, p)
        for p in self._sort_topo_boundary(boundary):
            p.flags |= SHOWN
            yield p

    def _sort_topo_boundary(self, nodes: list[Node]) -> list[Node]:
        order = self.order
        try:
            if order not in ("date", "author-date"):
                self.order = "topo"
            return self._sort_topo(nodes)
        finally:
            self.order = order

    def _limited_output(self) -> Iterator[Node]:
        remaining = self.max_count
        skip = self.skip
        if remaining == 0:
            return
        for node in self._candidates():
            if skip > 0:
                skip -= 1
                continue
            node.flags |= SHOWN
            if remaining > 0:
                remaining -= 1
            yield node
            if remaining == 0:
                return  # as Git: the next commit is not looked for (nor its parents rewritten)

    # -- objects -----------------------------------------------------------------
    def _mark_edges_uninteresting(
        self, commits: list[Node], excluded: set[bytes] | None = None
    ) -> None:
        """Git's ``mark_edges_uninteresting`` over ``commits``: the trees of the
        excluded ones and of the excluded parents of the others are excluded, and
        with ``edge_hint`` those parents are the edges (each once, in order).
        ``excluded``: the excluded commits as Git knows them then (default: the
        walk's flags)."""
        edged: set[bytes] = set()

        def is_excluded(n: Node) -> bool:
            return n.id in excluded if excluded is not None else bool(n.flags & UNINTERESTING)

        for node in commits:
            # a start commit the exploration reached from an excluded one is excluded
            # too by then: its tree goes, and its parents are no edges
            if is_excluded(node):
                self._uninteresting_trees.append(node.tree)
                continue
            for p in node.parents:
                if not is_excluded(p):
                    continue
                self._uninteresting_trees.append(p.tree)
                if self.edge_hint and p.id not in edged:
                    edged.add(p.id)
                    self.edges.append(p.id)

    def _limits_history(self) -> bool:
        """Whether an option asks for the whole list before any output (Git's
        "history-limiting options": the walk is limited whatever the order)."""
        return bool(
            self.side is not None
            or self.cherry_pick
            or self.cherry_mark
            or self.bisect
            or self.want_children
            or self.ancestry_path
            or self.simplify_merges
        )

    def _limited_as_git(self) -> bool:
        """Whether Git limits this walk before listing it (``revs->limited``): an
        excluded commit limits it unless the order is topological and the commit-graph
        has generation numbers (then Git sorts incrementally)."""
        if self._limits_history():
            return True
        return self.order == "default" or not self.graph.generation_numbers_enabled()

    def _explored_uninteresting(self, starts: list[Node]) -> set[bytes]:
        """The commits Git has marked excluded once ``init_topo_walk`` has explored
        from ``starts`` down to their least generation.

        As Git's explore walk: commits leave its queue by generation, then commit
        date, then in the order queued; each one's parents are parsed
        (``process_parents``), and an excluded one marks each parent and, the parent
        now parsed, that parent's parents (``mark_parents_uninteresting``, which goes
        on through the commits parsed so far and stops at those marked already)."""
        import heapq

        f = self.graph.file
        assert f is not None  # generation numbers are enabled

        def generation(oid: bytes) -> int:
            pos = f.position(oid)
            return f.generation(pos) if pos is not None else 1 << 62  # not in the graph

        nodes = self.graph.nodes
        node_of = self.graph.node
        marked = {oid for oid, n in nodes.items() if n.flags & UNINTERESTING}
        marked.update(o for o, fl in self.graph.early_flags.items() if fl & UNINTERESTING)
        parsed = {n.id for n in starts}

        def mark_parents(parent_ids: list[bytes]) -> None:
            stack = list(parent_ids)
            while stack:
                pid = stack.pop()
                if pid in marked:
                    continue
                marked.add(pid)
                if pid in parsed:
                    stack.extend(node_of(pid).parent_ids)

        order = 0
        queue = []
        explored = set()
        for n in starts:
            if n.id not in explored:
                explored.add(n.id)
                queue.append((-generation(n.id), -n.date, order, n.id))
                order += 1
        heapq.heapify(queue)
        cutoff = min((-q[0] for q in queue), default=0)
        while queue and -queue[0][0] >= cutoff:
            oid = heapq.heappop(queue)[3]
            node = node_of(oid)
            parsed.add(oid)
            if oid in marked:
                for pid in node.parent_ids:
                    marked.add(pid)
                    parsed.add(pid)
                    mark_parents(node_of(pid).parent_ids)
            else:
                parsed.update(node.parent_ids)
            for pid in node.parent_ids:
                if pid not in explored:
                    explored.add(pid)
                    p = node_of(pid)
                    heapq.heappush(queue, (-generation(pid), -p.date, order, pid))
                    order += 1
        return marked

    def shown_trees(self) -> list[bytes]:
        """The trees of the commits shown so far, in the order shown."""
        if self._shown_trees is not None:  # native_text listed them
            return self._shown_trees
        return [n.tree for n in self._shown]

    def objects(self) -> Iterator[tuple[bytes, str, bytes]]:
        """After ``commits()``: ``(id, type, name)`` of the tags, trees and blobs to list.

        The name is the path from the top of the commit's tree (b"" for the tree
        itself), the tag's name for a tag, or the path a ``rev:path`` gave.
        """
        seen: set[bytes] = set()
        for tree in self._uninteresting_trees:
            self._mark_tree_uninteresting(tree, seen)
        pending = list(self._object_pending) + [(t, "tree", b"") for t in self.shown_trees()]
        for oid, type_name, name in pending:
            if oid in seen:
                continue
            if type_name == "tag":
                seen.add(oid)
                yield oid, "tag", name
            elif type_name == "blob":
                seen.add(oid)
                yield oid, "blob", name
            else:
                yield from self._tree_objects(oid, name, seen)

    def in_commit_order(self) -> Iterator[tuple[Node | None, list[tuple[bytes, str, bytes]]]]:
        """``--in-commit-order``: each commit with the objects listed right after it
        (the starting tags, trees and blobs after the first one, then its tree's new
        objects), as Git's ``traverse_commit_list`` does; a last ``(None, ...)`` holds
        what no commit came before (the starting objects when no commit is shown)."""
        seen: set[bytes] = set()
        pending: list[tuple[bytes, str, bytes]] = []
        started = False
        for node in self.commits():
            if not started:
                # once the walk yields, the starting objects and the uninteresting
                # trees are known
                for tree in self._uninteresting_trees:
                    self._mark_tree_uninteresting(tree, seen)
                pending = list(self._object_pending)
                started = True
            pending.append((node.tree, "tree", b""))
            yield node, list(self._pending_objects(pending, seen))
            pending = []
        if not started:
            for tree in self._uninteresting_trees:
                self._mark_tree_uninteresting(tree, seen)
            pending = list(self._object_pending)
        yield None, list(self._pending_objects(pending, seen))

    def _pending_objects(
        self, pending: list[tuple[bytes, str, bytes]], seen: set[bytes]
    ) -> Iterator[tuple[bytes, str, bytes]]:
        for oid, type_name, name in pending:
            if oid in seen:
                continue
            if type_name in ("tag", "blob"):
                seen.add(oid)
                yield oid, type_name, name
            else:
                yield from self._tree_objects(oid, name, seen)

    def _mark_tree_uninteresting(self, root: bytes, seen: set[bytes]) -> None:
        odb = self.repo.odb
        fmt = self.repo.object_format
        stack = [root]
        while stack:
            oid = stack.pop()
            if oid in seen:
                continue
            seen.add(oid)
            try:
                _t, data = odb.read(oid)
            except ObjectNotFoundError:
                continue
            for e in Tree(data, fmt, oid):
                if e.is_tree:
                    stack.append(e.id)
                elif e.object_type == "blob":
                    seen.add(e.id)

    def _tree_objects(
        self, root: bytes, name: bytes, seen: set[bytes]
    ) -> Iterator[tuple[bytes, str, bytes]]:
        """Git's ``process_tree``: the tree, then its entries depth first; a tree
        deeper than ``core.maxTreeDepth`` below ``root`` raises ``TreeDepthError``."""
        read = self.repo.odb.read
        max_depth = max_tree_depth(self.repo.config)
        rawsz = self.repo.object_format.rawsz
        seen.add(root)
        yield root, "tree", name
        # Each frame: the entries of one tree, an iterator over them, and the base path.
        # Entries already seen are dropped when a tree is opened (most are, as trees
        # share content); the loop checks again, for what an earlier sibling added.
        stack = [
            (
                iter([e for e in parse_entries(read(root)[1], rawsz) if e[2] not in seen]),
                name + b"/" if name else b"",
            )
        ]
        while stack:
            entries, base = stack[-1]
            for mode, entry_name, oid in entries:
                if oid in seen:
                    continue
                if mode == b"160000":
                    continue  # submodules are not followed
                path = base + entry_name
                seen.add(oid)
                if mode == b"40000" or mode == b"040000":
                    if len(stack) > max_depth:
                        raise TreeDepthError(TreeDepthError.MESSAGE)
                    yield oid, "tree", path
                    stack.append(
                        (
                            iter(
                                [e for e in parse_entries(read(oid)[1], rawsz) if e[2] not in seen]
                            ),
                            path + b"/",
                        )
                    )
                    break
                yield oid, "blob", path
            else:
                stack.pop()

    # -- the native core's walks (gitodb.history.native) -----------------------------
    def _native_candidates(self, starts: list[Node]) -> Iterator[Node] | None:
        """The default-order loop of ``_candidates`` in C, or None where it does not
        apply (``max_age`` ends the walk early there; flags set before the walk)."""
        if self.max_age is not None or self.graph.early_flags or self.graph.rewrites:
            return None  # (grafted parents are the Python reader's)
        got = native.commit_walk(self.graph, [n.id for n in starts], self.first_parent)
        if got is None:
            return None
        return self._native_nodes(*got)

    def _native_nodes(self, walk: Any, reader: Any) -> Iterator[Node]:
        graph = self.graph
        nodes = graph.nodes
        keep = graph.keep_raw
        wanted = self._wanted
        done = SEEN | ADDED
        # Nodes and records are only ever freed by reference count; the cyclic
        # collector would traverse every live node many times over (a tenth of a walk).
        collecting = gc.isenabled()
        gc.disable()
        try:
            while True:
                batch = walk.next(256)
                if not batch:
                    return
                for oid, parents, date, tree, raw in batch:
                    n = nodes.get(oid)
                    if n is None:
                        n = Node(graph, oid, list(parents), date, tree)
                        if keep:
                            n.raw = raw
                        nodes[oid] = n
                    n.flags |= done
                    if wanted(n):
                        yield n
        finally:
            if collecting:
                gc.enable()
            del walk
            reader.close()

    def _native_plain(self) -> bool:
        """True if the whole walk can run in C: default or topological order, no
        exclusions, limits, path limiting, grafts, nor options that look at commits
        (``native_text``, ``native_format``)."""
        return not (
            self._walked
            or self.reflog is not None
            or self.order not in ("default", "topo")
            or self.side is not None
            or self.bisect
            or self.want_children
            or self.ancestry_path
            or self.simplify_merges
            or self.limiter is not None
            or self.max_age is not None
            or self.min_age is not None
            or self.min_parents
            or self.max_parents >= 0
            or self.max_count >= 0
            or self.skip
            or self.reverse
            or self.boundary
            or self.unpacked
            or self.no_kept_objects
            or self.cherry_pick
            or self.cherry_mark
            or self.graph.early_flags
            or self.graph.rewrites
            or any(p.uninteresting or p.left for p in self._pending)
            or not native.walk_usable(self.graph)
        )

    def _native_walk(self, starts: list[bytes] | None = None) -> tuple[Any, Any]:
        """Start the C walk ``_native_plain`` allowed: ``(walk, reader)`` (from
        ``starts`` when the pending objects were handled already)."""
        self._walked = True
        # The starts need no sorting by date: the native queue orders by date, and
        # keeps equal dates in the order queued, which a stable sort keeps too.
        if starts is None:
            starts = []
            self._handle_pending(starts)
        got = native.commit_walk(self.graph, starts, self.first_parent)
        assert got is not None  # walk_usable said so
        return got

    def native_format(
        self,
        parts: list[bytes | int],
        end: bytes,
        sep: bytes,
        fallback: Callable[[bytes, bytes | None], bytes],
        abbrev: tuple[list[Any], int] | None = None,
    ) -> tuple[int, bytes, BaseException | None] | None:
        """The whole walk (default order) through a user format in the native core
        (``parts`` from ``Formatter.native_parts``, the graph keeping raw commits):
        ``(count, text, error)``, each commit followed by ``end`` or (``sep``)
        preceded by it after the first, as ``log`` prints them; a commit the C
        formatter leaves (an ``encoding`` header) is ``fallback(id, raw or None)``.
        ``abbrev``: the ``Abbreviator.native_spec`` of ``%h %t %p``.  None where it
        does not apply (see ``native_text``; ``error`` too)."""
        if not self._native_plain() or self.order != "default" or not self.graph.keep_raw:
            return None
        (count, text), error = self._run_native(
            lambda w: w.format(parts, end, sep, fallback, abbrev)
        )
        return count, text, error

    def native_text(
        self, parents: bool, want_text: bool = True, abbrev: tuple[list[Any], int] | None = None
    ) -> tuple[int, bytes, BaseException | None] | None:
        """The whole walk as rev-list lists it without per-commit options, from the
        native core: ``(count, lines, error)``, a line ``<id>`` (with ``parents``,
        then the parents' ids) per commit, the id abbreviated with ``abbrev`` (an
        ``Abbreviator.native_spec``: ``--abbrev-commit``), or None where that does not apply
        (exclusions, limits, path limiting, orders but default and topo...): then
        use ``commits()``.

        Like ``commits()`` it consumes the walk; ``objects()``/``objects_text()``
        then list the shown commits' trees.  ``error``: what ended the walk early
        (a missing or damaged parent), for the caller to raise after printing the
        lines before it, as Git prints them before it dies."""
        if not self._native_plain() or (self.order == "topo" and self.first_parent):
            return None
        if not want_text and not self.want_objects and self.graph.file is not None:
            # --count alone: the commits reached, whatever their order, over the
            # commit-graph's parent positions (no record per commit)
            self._walked = True
            starts: list[bytes] = []
            self._handle_pending(starts)
            got = native.graph_count(self.graph, starts, self.first_parent)
            if got is not None:
                return got, b"", None
            (count, text, trees), error = self._run_native(
                lambda w: w.text(parents, False, self.order == "topo", False), starts
            )
            return count, text, error
        (count, text, trees), error = self._run_native(
            lambda w: w.text(parents, self.want_objects, self.order == "topo", want_text, abbrev)
        )
        self._shown_trees = trees
        return count, text, error

    def _run_native(
        self, run: Callable[[Any], Any], starts: list[bytes] | None = None
    ) -> tuple[Any, BaseException | None]:
        """``run(native walk)``'s result and what ended the walk early (a missing or
        damaged parent), None if nothing did; the reader is closed after.  ``starts``:
        the start ids when ``_handle_pending`` has run already."""
        walk, reader = self._native_walk(starts)
        return native.run_walk(walk, reader, run)

    def objects_text(
        self, names: bool, contains: Callable[[bytes], bool]
    ) -> tuple[int, bytes] | None:
        """``objects()`` as rev-list prints it, from the native core: ``(count,
        lines)`` (``<id> <name>`` or, without ``names``, ``<id>``), or None.

        ``contains`` answers for blobs outside the packs; a blob that is nowhere
        raises ``LookupError`` (rev-list dies on it, as Git does), as does a tree
        deeper than ``core.maxTreeDepth`` (``objects()`` then stops where Git stops)."""
        r = native.reader(self.repo)
        if r is None:
            return None
        try:
            pending = list(self._object_pending) + [(t, "tree", b"") for t in self.shown_trees()]
            return r.objects_text(  # type: ignore[no-any-return]
                list(self._uninteresting_trees),
                pending,
                names,
                contains,
                max_tree_depth(self.repo.config),
            )
        finally:
            r.close()
