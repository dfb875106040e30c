"""The commit graph as the walkers see it: commits loaded once, with flags.

``CommitGraph`` hands out ``Node`` objects (id, parents, committer date, tree) and
keeps them, so a walk reads each commit once.  Flags are bits on the node, like
the ``object.flags`` of Git's revision walk.
"""

from __future__ import annotations

import heapq
import os

from gitodb.errors import ObjectNotFoundError, ObjectTypeError
from gitodb.objects.commit import Commit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from gitodb.history.commitgraph import CommitGraphFile
    from gitodb.repo import Repository

UNINTERESTING = 1 << 0
SEEN = 1 << 1
ADDED = 1 << 2
SHOWN = 1 << 3
SYMMETRIC_LEFT = 1 << 4
BOTTOM = 1 << 5
PATCHSAME = 1 << 6  # --cherry-mark: the same change is on the other side
# Flags of the path-limited walk (gitodb.history.simplify); here so that a walk
# without paths need not import the path limiter.
TREESAME = 1 << 10
PULL_MERGE = 1 << 11
BOUNDARY = 1 << 12
CHILD_SHOWN = 1 << 13


def relevant(node: Node) -> bool:
    """Git's ``relevant_commit``: interesting, or an uninteresting bottom commit."""
    return (node.flags & (UNINTERESTING | BOTTOM)) != UNINTERESTING


class Node:
    """One commit in a walk: ``id``, ``parents`` (nodes, loaded on demand), ``date``."""

    __slots__ = ("id", "parent_ids", "date", "tree", "flags", "_parents", "graph", "raw")

    def __init__(
        self, graph: CommitGraph, oid: bytes, parent_ids: list[bytes], date: int, tree: bytes
    ) -> None:
        self.graph = graph
        self.id = oid
        self.parent_ids = parent_ids
        self.date = date
        self.tree = tree
        self.flags = graph.early_flags.pop(oid, 0) if graph.early_flags else 0
        self._parents: list[Node] | None = None
        self.raw: bytes | None = None  # the commit's content, when the graph keeps it

    @property
    def parents(self) -> list[Node]:
        """The parent commits, in order."""
        if self._parents is None:
            self._parents = [self.graph.node(p) for p in self.parent_ids]
        return self._parents

    def __repr__(self) -> str:
        return f"Node({self.id.hex()})"


class CommitGraph:
    """Loads commits of one repository as ``Node`` objects, each once.

    Commits that Git's commit-graph file holds are read from it (parents, tree,
    committer date) without opening the commit objects, unless ``core.commitGraph``
    is false or ``use_commit_graph=False``.  With ``keep_raw`` each node read from
    the objects keeps the commit's content in ``node.raw`` for its consumer.
    """

    def __init__(
        self, repo: Repository, *, use_commit_graph: bool = True, keep_raw: bool = False
    ) -> None:
        from gitodb.history.commitgraph import graph_compatible, load_commit_graph

        self.repo = repo
        self.odb = repo.odb
        self.fmt = repo.object_format
        self.nodes: dict[bytes, Node] = {}
        # keep_raw: nodes read from the objects keep their content for the caller (log
        # formats what the walk has read instead of reading it again), who drops it.
        self.keep_raw = keep_raw
        self.file: CommitGraphFile | None = None
        if use_commit_graph and repo.config.get_bool("core.commitgraph", True):
            if graph_compatible(repo):
                self.file = load_commit_graph(self.odb.objects_dir, self.fmt)
        # GIT_COMMIT_GRAPH_PARANOIA: a commit the graph holds must also exist.
        self.paranoid = os.environ.get("GIT_COMMIT_GRAPH_PARANOIA", "").lower() in (
            "1",
            "true",
            "yes",
            "on",
        )
        # Flags set on commits not loaded yet (Git flags the object before parsing it).
        self.early_flags: dict[bytes, int] = {}
        # info/grafts and the shallow file replace parents (gitodb.history.grafts);
        # with either, no commit-graph file is used, as in Git
        from gitodb.history.grafts import load_grafts

        self.grafts = load_grafts(repo)
        if self.grafts:
            self.file = None
        # Replace refs: a commit is read as its replacement says (its id stays), as
        # Git's parse_commit reads it; the commit-graph file is off then
        # (graph_compatible), and so are the native walks, which read commits as stored.
        from gitodb.repo.replace import replace_map

        self.replacements = replace_map(repo)
        #: grafts or replace refs change what commits say: only this reader knows
        self.rewrites = bool(self.grafts or self.replacements)

    def generation_numbers_enabled(self) -> bool:
        """Git's ``generation_numbers_enabled``: a commit-graph is in use and its top
        layer's first commit has a nonzero topological level."""
        f = self.file
        if f is None or not f.num_commits:
            return False
        at = f._cdat + self.fmt.rawsz + 8  # the first record's generation word
        return bool(int.from_bytes(f.data[at : at + 4], "big") >> 2)

    def flag(self, oid: bytes, flags: int) -> bool:
        """Set ``flags`` on commit ``oid``; False if it was not loaded (nothing to walk)."""
        n = self.nodes.get(oid)
        if n is None:
            self.early_flags[oid] = self.early_flags.get(oid, 0) | flags
            return False
        n.flags |= flags
        return True

    def node(self, oid: bytes, data: bytes | None = None) -> Node:
        """The node of commit ``oid``; ``ObjectNotFoundError``/``ObjectTypeError``.

        ``data``: the commit's content when the caller has read it already.
        """
        n = self.nodes.get(oid)
        if n is None:
            f = self.file
            pos = f.position(oid) if f is not None else None
            if pos is not None and self.paranoid and not self.odb.contains(oid):
                raise ObjectNotFoundError(f"object {oid.hex()} not found")
            if pos is not None:
                assert f is not None
                tree, parents, date, _level = f.commit_at(pos)
                oid_at = f.oid_at
                n = Node(self, oid, [oid_at(p) for p in parents], date, tree)
            else:
                type_name = "commit"
                if data is None or oid in self.replacements:
                    type_name, data = self._read(oid)
                if type_name != "commit":
                    raise ObjectTypeError(f"object {oid.hex()} is a {type_name}, not a commit")
                c = Commit(data, self.fmt, oid)
                grafted = self.grafts.get(oid) if self.grafts else None
                own: list[bytes] = c.parents if grafted is None else list(grafted)
                n = Node(self, oid, own, c.commit_date, c.tree)
                if self.keep_raw:
                    n.raw = data
            self.nodes[oid] = n
        return n

    def _read(self, oid: bytes) -> tuple[str, bytes]:
        """The object ``oid`` as a commit is read: through its replace ref, if any."""
        if self.replacements:
            from gitodb.repo.replace import replaced

            oid = replaced(self.replacements, oid)
        return self.odb.read(oid)

    def author_date(self, node: Node) -> int:
        """The author timestamp of ``node`` (0 when unreadable), as Git records it."""
        _t, data = self._read(node.id)
        sig = Commit(data, self.fmt, node.id).author
        return sig.timestamp if sig is not None and sig.timestamp is not None else 0

    def has_commit(self, oid: bytes) -> bool:
        """True if ``oid`` is a commit that can be read."""
        try:
            self.node(oid)
        except (ObjectNotFoundError, ObjectTypeError):
            return False
        return True


class DateQueue:
    """Git's commit queue: newest committer date first, equal dates first-in first-out."""

    __slots__ = ("_heap", "_count", "_key")

    def __init__(self, key: Callable[[Node], int] | None = None) -> None:
        self._heap: list[tuple[int, int, Node]] = []
        self._count = 0
        self._key = key  # another date than the committer date (author date)

    def put(self, node: Node) -> None:
        """Add ``node``."""
        self._count += 1
        date = node.date if self._key is None else self._key(node)
        heapq.heappush(self._heap, (-date, self._count, node))

    def get(self) -> Node | None:
        """Remove and return the next node, or None when empty."""
        if not self._heap:
            return None
        return heapq.heappop(self._heap)[2]

    def peek(self) -> Node | None:
        """The next node without removing it."""
        return self._heap[0][2] if self._heap else None

    def nodes(self) -> list[Node]:
        """Every queued node (in no particular order)."""
        return [item[2] for item in self._heap]

    def __len__(self) -> int:
        return len(self._heap)


# Flags of the merge-base painting, kept apart from the walk's flags.
PARENT1 = 1
PARENT2 = 2
STALE = 4
RESULT = 8


def _paint_down_to_common(
    graph: CommitGraph, one: Node, twos: list[Node], paint: dict[bytes, int]
) -> list[Node]:
    """Git's ``paint_down_to_common``: commits reachable from ``one`` and a ``two``,
    newest first; ``paint`` receives the flags (PARENT1/PARENT2/STALE)."""
    paint[one.id] = paint.get(one.id, 0) | PARENT1
    if not twos:
        return [one]
    queue = DateQueue()
    # How many queue entries each node has, and how many entries are not stale: Git
    # stops when every queued commit is stale.
    entries: dict[bytes, int] = {}
    live = 0

    def push(n: Node) -> None:
        nonlocal live
        queue.put(n)
        entries[n.id] = entries.get(n.id, 0) + 1
        if not paint.get(n.id, 0) & STALE:
            live += 1

    def add_flags(n: Node, flags: int) -> None:
        nonlocal live
        have = paint.get(n.id, 0)
        if flags & STALE and not have & STALE:
            live -= entries.get(n.id, 0)
        paint[n.id] = have | flags

    push(one)
    for t in twos:
        add_flags(t, PARENT2)
        push(t)
    result: list[Node] = []
    while live > 0:
        commit = queue.get()
        assert commit is not None
        entries[commit.id] -= 1
        if not paint.get(commit.id, 0) & STALE:
            live -= 1
        flags = paint.get(commit.id, 0) & (PARENT1 | PARENT2 | STALE)
        if flags == PARENT1 | PARENT2:
            if not paint[commit.id] & RESULT:
                paint[commit.id] |= RESULT
                result.append(commit)
            flags |= STALE
        for p in commit.parents:
            if paint.get(p.id, 0) & flags == flags:
                continue
            add_flags(p, flags)
            push(p)
    return _by_date(result)


def _by_date(nodes: list[Node]) -> list[Node]:
    """Stable sort, newest first (Git's ``commit_list_insert_by_date`` one by one)."""
    out: list[Node] = []
    for n in nodes:
        i = 0
        while i < len(out) and not out[i].date < n.date:
            i += 1
        out.insert(i, n)
    return out


def merge_bases(graph: CommitGraph, one: Node, twos: list[Node]) -> list[Node]:
    """Git's ``get_merge_bases_many``: the best common ancestors, newest first."""
    for t in twos:
        if t is one:
            return [one]
    paint: dict[bytes, int] = {}
    found = _paint_down_to_common(graph, one, twos, paint)
    result = _by_date([n for n in found if not paint.get(n.id, 0) & STALE])
    if len(result) <= 1:
        return result
    kept = remove_redundant(graph, result)
    return _by_date(kept)


def remove_redundant(graph: CommitGraph, nodes: list[Node]) -> list[Node]:
    """Git's ``remove_redundant``: drop commits that are ancestors of another one.

    The survivors keep their order.
    """
    redundant = [False] * len(nodes)
    for i, node in enumerate(nodes):
        if redundant[i]:
            continue
        others = [(j, n) for j, n in enumerate(nodes) if j != i and not redundant[j]]
        paint: dict[bytes, int] = {}
        _paint_down_to_common(graph, node, [n for _j, n in others], paint)
        if paint.get(node.id, 0) & PARENT2:
            redundant[i] = True
        for j, n in others:
            if paint.get(n.id, 0) & PARENT1:
                redundant[j] = True
    return [n for i, n in enumerate(nodes) if not redundant[i]]


def in_merge_bases(graph: CommitGraph, commit: Node, references: list[Node]) -> bool:
    """Git's ``in_merge_bases_many``: is ``commit`` an ancestor of (or one of) ``references``?"""
    paint: dict[bytes, int] = {}
    _paint_down_to_common(graph, commit, references, paint)
    return bool(paint.get(commit.id, 0) & PARENT2)


def reduce_heads(graph: CommitGraph, heads: list[Node]) -> list[Node]:
    """Git's ``reduce_heads``: the heads (each once) that no other head reaches."""
    unique: list[Node] = []
    seen: set[bytes] = set()
    for h in heads:
        if h.id not in seen:
            seen.add(h.id)
            unique.append(h)
    return remove_redundant(graph, unique)


def octopus_merge_bases(graph: CommitGraph, commits: list[Node]) -> list[Node]:
    """Git's ``get_octopus_merge_bases``: bases for one merge of all ``commits``."""
    if not commits:
        return []
    result = [commits[0]]
    for c in commits[1:]:
        merged: list[Node] = []
        for r in result:
            merged += merge_bases(graph, c, [r])
        result = merged
    return result


def fork_point(graph: CommitGraph, ref_name: str, commit: Node) -> Node | None:
    """Git's ``get_fork_point``: where ``commit`` forked from the history of ref
    ``ref_name`` (a full name) as its reflog remembers it; None if not found."""
    repo = graph.repo
    candidates: list[Node] = []
    seen: set[bytes] = set()

    def add(oid: bytes) -> None:
        if not any(oid) or oid in seen or not graph.has_commit(oid):
            return
        seen.add(oid)
        candidates.append(graph.node(oid))

    entries = repo.refs.reflog(ref_name)
    for i, e in enumerate(entries):
        if i == 0:
            add(e.old)
        add(e.new)
    if not candidates:
        oid = repo.refs.resolve(ref_name)
        if oid is not None:
            add(oid)
    bases = merge_bases(graph, commit, candidates)
    if len(bases) != 1 or bases[0].id not in seen:
        return None
    return bases[0]
