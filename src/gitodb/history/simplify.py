"""Path limiting and Git's history simplification for the walker (``revision.c``).

A walk limited to paths (``RevWalk(paths=[...])``) asks, for each interesting
commit, whether it is TREESAME to its parents: no change in the paths.  With the
default simplification a commit TREESAME to a parent that is still relevant
(interesting, or a bottom commit named with ``^``) keeps only that parent, so the
walk never enters the side branches that brought nothing to the paths
(``try_to_simplify_commit``).  ``full_history`` keeps every parent;
``dense=False`` (``--sparse``) shows every commit it walks; when parents are
printed (``rewrite_parents``) a shown commit's parents are rewritten to their
nearest shown ancestors (``rewrite_parents``/``rewrite_one``) and duplicates are
dropped.  A root commit is TREESAME when it has none of the paths.

The tree comparisons skip the diff when the commit-graph's changed-path Bloom
filter of a commit says none of the paths changed against its first parent, as
Git's ``check_maybe_different_in_bloom_filter`` does; the answers are the same
with and without the filters (``use_bloom=False`` turns them off).
"""

from __future__ import annotations

from gitodb.history.graph import (  # (the walk's flags live with the others in graph)
    BOUNDARY,
    CHILD_SHOWN,
    PULL_MERGE,
    TREESAME,
    UNINTERESTING,
    Node,
    relevant,
)
from gitodb.history.treediff import diff_trees
from gitodb.lazyre import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.history.graph import CommitGraph
    from gitodb.repo import Repository

__all__ = ["BOUNDARY", "CHILD_SHOWN", "PULL_MERGE", "TREESAME", "relevant"]

SAME, NEW, OLD, DIFFERENT = 0, 1, 2, 3
_GLOB = lazy(rb"[*?\[\\]")


class PathLimiter:
    """The TREESAME tests and parent simplification of one path-limited walk."""

    def __init__(
        self,
        repo: Repository,
        graph: CommitGraph,
        paths: list[bytes],
        *,
        simplify_history: bool = True,
        dense: bool = True,
        first_parent: bool = False,
        remove_empty: bool = False,
        use_bloom: bool = True,
        by_decoration: bool = False,
    ) -> None:
        self.repo = repo
        self.graph = graph
        self.paths = paths
        self.simplify_history = simplify_history
        self.dense = dense
        self.first_parent = first_parent
        self.remove_empty = remove_empty
        # per-parent TREESAME of merges, kept when limiting can make more commits
        # TREESAME (Git's revs->treesame; ``track_treesame``)
        self.treesame: dict[bytes, list[bool]] | None = None
        # --simplify-by-decoration: a commit a ref names differs from its parents;
        # without paths every other commit is TREESAME
        self.decorated = decorated_ids(repo) if by_decoration else None
        self.bloom_keys: list[list[list[int]]] | None = None
        cg = graph.file
        if use_bloom and cg is not None and cg.bloom is not None and paths:
            self._prepare_bloom(cg.bloom)

    def _prepare_bloom(self, settings: object) -> None:
        """Git's ``prepare_to_use_bloom_filter``: keys for each literal path and its
        leading directories; any wildcard turns the filters off."""
        from gitodb.history.bloom import path_key

        keys = []
        for p in self.paths:
            if _GLOB.search(p):
                return
            p = p.rstrip(b"/")
            if not p:
                return
            item = [path_key(p, settings)]  # type: ignore[arg-type]
            cut = p.rfind(b"/")
            while cut > 0:
                item.append(path_key(p[:cut], settings))  # type: ignore[arg-type]
                cut = p.rfind(b"/", 0, cut)
            keys.append(item)
        self.bloom_keys = keys

    def _bloom_says_same(self, node: Node) -> bool:
        """True when the commit's filter proves no path changed (first parent only)."""
        from gitodb.history.bloom import filter_contains

        cg = self.graph.file
        assert cg is not None and self.bloom_keys is not None
        pos = cg.position(node.id)
        if pos is None:
            return False
        data = cg.bloom_filter(pos)
        if not data:
            return False
        for item in self.bloom_keys:
            if all(filter_contains(data, key) for key in item):
                return False  # maybe changed
        return True

    def compare(self, parent: Node, node: Node, nth: int) -> int:
        """Git's ``rev_compare_tree``: SAME, NEW (paths only added), OLD, DIFFERENT."""
        if self.decorated is not None:
            if node.id in self.decorated:
                return DIFFERENT
            if not self.paths:
                return SAME
        if nth == 0 and self.bloom_keys is not None and self._bloom_says_same(node):
            return SAME
        changes = diff_trees(self.repo, parent.tree, node.tree, self.paths)
        if not changes:
            return SAME
        result = 0
        for ch in changes:
            result |= NEW if ch.old_id is None else OLD if ch.new_id is None else DIFFERENT
            if result == DIFFERENT:
                break
        return result

    def same_as_empty(self, node: Node) -> bool:
        """Git's ``rev_same_tree_as_empty``: none of the paths is in the commit."""
        return not diff_trees(self.repo, None, node.tree, self.paths)

    def simplify(self, node: Node) -> None:
        """Git's ``try_to_simplify_commit``: set TREESAME, maybe keep one parent."""
        parents = node.parents
        if not parents:
            if self.same_as_empty(node):
                node.flags |= TREESAME
            return
        if not self.dense and len(parents) == 1:
            return
        relevant_change = irrelevant_change = False
        relevant_parents = 0
        same: list[bool] | None = None
        for nth, p in enumerate(parents):
            if relevant(p):
                relevant_parents += 1
            if nth == 1:
                if self.first_parent:
                    break
                if self.treesame is not None and not node.flags & UNINTERESTING:
                    # a merge that may stay: remember which parents it is TREESAME to
                    same = self.treesame[node.id] = [False] * len(parents)
                    same[0] = not (relevant_change or irrelevant_change)
            cmp = self.compare(p, node, nth)
            if cmp == SAME:
                if not self.simplify_history or not relevant(p):
                    if same is not None:
                        same[nth] = True
                    continue
                _set_parents(node, [p])
                node.flags |= TREESAME
                return
            if cmp == NEW and self.remove_empty and self.same_as_empty(p):
                _set_parents(p, [])  # the paths begin here: its history is of no interest
            if relevant(p):
                relevant_change = True
            else:
                irrelevant_change = True
            if nth == 0:
                node.flags |= PULL_MERGE
        if (not relevant_change) if relevant_parents else (not irrelevant_change):
            node.flags |= TREESAME

    def can_increase_treesame(self) -> bool:
        """Git's ``limiting_can_increase_treesame``."""
        return self.dense and not self.simplify_history and not self.first_parent

    def track_treesame(self) -> None:
        """Remember each merge's per-parent TREESAME from now on."""
        if self.treesame is None:
            self.treesame = {}

    def update_treesame(self, node: Node) -> None:
        """Git's ``update_treesame``: a merge's TREESAME again, now that limiting
        made some parents uninteresting (only the relevant parents count, if any)."""
        same = self.treesame.get(node.id) if self.treesame is not None else None
        parents = node.parents
        if same is None or len(parents) < 2:
            return
        relevant_parents = 0
        relevant_change = irrelevant_change = False
        for p, is_same in zip(parents, same, strict=False):
            if relevant(p):
                relevant_change |= not is_same
                relevant_parents += 1
            else:
                irrelevant_change |= not is_same
        if relevant_change if relevant_parents else irrelevant_change:
            node.flags &= ~TREESAME
        else:
            node.flags |= TREESAME

    def one_relevant_parent(self, parents: list[Node]) -> Node | None:
        """Git's ``one_relevant_parent``: the parent a TREESAME commit stands for."""
        if not parents:
            return None
        if self.first_parent or len(parents) == 1:
            return parents[0]
        found = None
        for p in parents:
            if relevant(p):
                if found is not None:
                    return None
                found = p
        return found


def _set_parents(node: Node, parents: list[Node]) -> None:
    """Rewrite a commit's parents in the walk (Git edits ``commit->parents``)."""
    node._parents = parents
    node.parent_ids = [p.id for p in parents]


def decorated_ids(repo: Repository) -> set[bytes]:
    """What ``--simplify-by-decoration`` counts as decorated (Git's
    ``load_ref_decorations`` without a filter): every ref's object and, through
    tags, what they tag; HEAD's commit; the originals of ``refs/replace/``."""
    from gitodb.errors import GitodbError
    from gitodb.objects.tag import Tag

    refs = repo.refs
    odb = repo.odb
    fmt = repo.object_format
    out: set[bytes] = set()
    for ref in refs.iter_refs("refs/"):
        if ref.name.startswith("refs/replace/"):
            try:
                out.add(bytes.fromhex(ref.name[len("refs/replace/") :]))
            except ValueError:
                pass
            continue
        oid = ref.oid if ref.target is None else refs.resolve(ref.name)
        depth = 0
        while oid is not None and depth < 100:
            out.add(oid)
            try:
                type_name, data = odb.read(oid)
            except GitodbError:
                break
            if type_name != "tag":
                break
            oid = Tag(data, fmt, oid).object
            depth += 1
    head = refs.resolve("HEAD")
    if head is not None:
        out.add(head)
    return out


# -- --simplify-merges (Git's simplify_merges and its helpers) --------------------------

_TMP = 1 << 15  # the same scratch bit as revwalk's TMP_MARK, never left set


def simplify_merges(limiter: PathLimiter, listed: list[Node], first_parent: bool) -> list[Node]:
    """Git's ``simplify_merges``: rewrite each commit's parents to what they simplify
    to, drop parents that others reach, and keep only the commits that simplify to
    themselves (in ``listed``'s order)."""
    simplified: dict[bytes, Node] = {}
    todo = listed[::-1]
    while todo:
        later: list[Node] = []
        for node in todo:
            _simplify_one(limiter, node, simplified, later, first_parent)
        todo = later
    return [n for n in listed if simplified.get(n.id) is n]


def _simplify_one(
    limiter: PathLimiter,
    node: Node,
    simplified: dict[bytes, Node],
    later: list[Node],
    first_parent: bool,
) -> None:
    if node.id in simplified:
        return
    if node.flags & UNINTERESTING or not node.parents:
        simplified[node.id] = node
        return
    waiting = 0
    for p in node.parents:
        if p.id not in simplified:
            later.append(p)
            waiting += 1
        if first_parent:
            break
    if waiting:
        later.append(node)
        return
    parents = list(node.parents)
    for i, p in enumerate(parents):
        parents[i] = simplified[p.id]
        if first_parent:
            break
    _set_parents(node, parents)
    count = 1 if first_parent else _remove_duplicate_parents(limiter, node)
    if count > 1:
        marked = _mark_redundant_parents(limiter, node) + _mark_treesame_root_parents(node)
        if marked:
            marked -= _leave_one_treesame_to_parent(limiter, node)
        if marked:
            count = _remove_marked_parents(limiter, node)
    parent = None
    if count and not node.flags & UNINTERESTING and node.flags & TREESAME:
        parent = limiter.one_relevant_parent(node.parents)
    simplified[node.id] = node if parent is None else simplified[parent.id]


def _compact_treesame(limiter: PathLimiter, node: Node, nth: int) -> bool:
    """Git's ``compact_treesame``: forget parent ``nth``'s TREESAME (after it went);
    a merge that became a single-parent commit takes that parent's."""
    if not node.parents:
        node.flags &= ~TREESAME
        return False
    same = limiter.treesame.get(node.id) if limiter.treesame is not None else None
    if same is None or nth >= len(same):
        return False
    old = same.pop(nth)
    if len(same) == 1:
        if same[0] and limiter.dense:
            node.flags |= TREESAME
        else:
            node.flags &= ~TREESAME
        assert limiter.treesame is not None
        del limiter.treesame[node.id]
    return old


def _remove_duplicate_parents(limiter: PathLimiter, node: Node) -> int:
    original = list(node.parents)
    kept: list[Node] = []
    seen: set[bytes] = set()
    for i, p in enumerate(original):
        if p.id in seen:
            _set_parents(node, kept + original[i + 1 :])
            _compact_treesame(limiter, node, len(kept))
            continue
        seen.add(p.id)
        kept.append(p)
    return len(kept)


def _mark_redundant_parents(limiter: PathLimiter, node: Node) -> int:
    from gitodb.history.graph import reduce_heads

    keep = {n.id for n in reduce_heads(limiter.graph, node.parents)}
    marked = 0
    for p in node.parents:
        if p.id not in keep:
            p.flags |= _TMP
            marked += 1
    return marked


def _mark_treesame_root_parents(node: Node) -> int:
    marked = 0
    for p in node.parents:
        if not p.parents and p.flags & TREESAME:
            p.flags |= _TMP
            marked += 1
    return marked


def _leave_one_treesame_to_parent(limiter: PathLimiter, node: Node) -> int:
    """Keep the first TREESAME parent if every TREESAME parent was marked to go."""
    same = (limiter.treesame or {}).get(node.id) or []
    marked = None
    for p, is_same in zip(node.parents, same, strict=False):
        if not is_same:
            continue
        if not p.flags & _TMP:
            return 0
        if marked is None:
            marked = p
    if marked is not None:
        marked.flags &= ~_TMP
        return 1
    return 0


def _remove_marked_parents(limiter: PathLimiter, node: Node) -> int:
    original = list(node.parents)
    kept: list[Node] = []
    removed = 0
    for i, p in enumerate(original):
        if p.flags & _TMP:
            p.flags &= ~_TMP
            removed += 1
            _set_parents(node, kept + original[i + 1 :])
            _compact_treesame(limiter, node, len(kept))
            continue
        kept.append(p)
    if removed and not node.flags & TREESAME:
        limiter.update_treesame(node)
    return len(kept)
