"""What changed between two trees, the way ``git diff-tree`` sees it.

``diff_trees(repo, old, new)`` compares two trees (ids; None is the empty tree)
and returns ``TreeChange`` records in Git's output order: entries are matched by
name, a directory compared as if its name ended in ``/`` (so a file ``d`` and a
directory ``d`` are a deletion and an addition), modes canonicalised like
Git's ``decode_tree_entry``.  Status letters are Git's: ``A`` added, ``D``
deleted, ``M`` modified (content or mode), ``T`` type changed (file, symlink,
submodule).  ``recursive`` descends into changed directories (``-r``);
``show_trees`` also reports the directories it descends into (``-t``).
``paths`` limits the comparison like a diff pathspec: a path names itself,
everything below it and the directories leading to it; with wildcards
(``*?[``) it is matched as Git's pathspec globs (``*`` crosses ``/``).

``commit_changes(repo, commit)`` is the diff of a commit against a parent
(its first by default; the empty tree for a root commit).

Example::

    for ch in commit_changes(repo, repo.resolve("HEAD")):
        print(ch.status, ch.path.decode())
"""

from __future__ import annotations

from operator import itemgetter

from gitodb.errors import ObjectTypeError, TreeDepthError
from gitodb.history.treewalk import entry_interesting
from gitodb.objects.tree import S_IFDIR, S_IFMT, canonical_mode, max_tree_depth, parse_entries
from gitodb.types import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from gitodb.repo import Repository

_MODES: dict[bytes, int] = {}  # mode text -> canonical mode


class TreeChange(NamedTuple):
    """One changed path: ``status`` (A/D/M/T), the path from the top of the trees,
    modes and ids on both sides (None on the side where the path is missing)."""

    status: str
    path: bytes
    old_mode: int | None
    new_mode: int | None
    old_id: bytes | None
    new_id: bytes | None

    def reversed(self) -> TreeChange:
        """The same change seen from the other side (``-R``)."""
        status = {"A": "D", "D": "A"}.get(self.status, self.status)
        return TreeChange(status, self.path, self.new_mode, self.old_mode, self.new_id, self.old_id)


Change = TreeChange  # the name diff-tree's code uses


class _Enter(NamedTuple):
    """Within one level's changes: compare these two subtrees here."""

    base: bytes
    old: bytes | None
    new: bytes | None


def _mode(text: bytes) -> int:
    m = _MODES.get(text)
    if m is None:
        m = _MODES[text] = canonical_mode(int(text, 8))
    return m


_Side = tuple[int, bytes, bytes]  # (canonical mode, name, id)
_name_of = itemgetter(1)  # an entry's name


class _Differ:
    """One comparison's settings; ``run`` fills ``out`` in Git's order.

    Each directory level is compared on its own and yields changes and ``_Enter``
    marks in order; a stack of levels replaces recursion, so a deep tree cannot
    exhaust the interpreter's stack.
    """

    def __init__(
        self, repo: Repository, recursive: bool, show_trees: bool, paths: Sequence[bytes]
    ) -> None:
        self.read = repo.odb.read
        self.rawsz = repo.object_format.rawsz
        self.recursive = recursive or show_trees
        self.show_trees = show_trees
        self.paths = list(paths)
        self.out: list[TreeChange] = []
        self.max_depth = max_tree_depth(repo.config)

    def entries(self, oid: bytes | None) -> list[tuple[bytes, bytes, bytes]]:
        if oid is None:
            return []
        type_name, data = self.read(oid)
        if type_name != "tree":
            raise ObjectTypeError(f"object {oid.hex()} is a {type_name}, not a tree")
        return parse_entries(data, self.rawsz)

    def run(self, old: bytes | None, new: bytes | None) -> None:
        out = self.out
        stack = [iter(self.level(old, new, b""))]
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
            elif isinstance(item, _Enter):
                if len(stack) > self.max_depth:
                    raise TreeDepthError(TreeDepthError.MESSAGE)
                stack.append(iter(self.level(item.old, item.new, item.base)))
            else:
                out.append(item)

    def level(self, old: bytes | None, new: bytes | None, base: bytes) -> list[TreeChange | _Enter]:
        if old == new:
            return []
        a = self.entries(old)
        b = self.entries(new)
        # Entries equal on both sides (the common case) drop out in C; only the rest
        # are keyed, sorted and compared.  A tree naming one path twice (damaged,
        # but found in real history) would lose entries to the set and the keys:
        # such a level is walked entry by entry instead, as Git does.
        sa = set(a)
        sb = set(b)
        if len(set(map(_name_of, a))) != len(a) or len(set(map(_name_of, b))) != len(b):
            return self.merge_level(a, b, base)
        changed: dict[bytes, list[_Side | None]] = {}
        for side, only in ((0, sa.difference(sb)), (1, sb.difference(sa))):
            for mode_text, name, oid in only:
                mode = _mode(mode_text)
                key = name + b"/" if mode & S_IFMT == S_IFDIR else name
                slot = changed.get(key)
                if slot is None:
                    slot = changed[key] = [None, None]
                slot[side] = (mode, name, oid)
        paths = self.paths
        items: list[TreeChange | _Enter] = []
        for key in sorted(changed):
            one, two = changed[key]
            entry = one or two
            assert entry is not None
            if paths and not entry_interesting(base, entry[1], entry[0], paths, True):
                continue
            self.pair(one, two, base, items)
        return items

    def merge_level(
        self, a: list[tuple[bytes, bytes, bytes]], b: list[tuple[bytes, bytes, bytes]], base: bytes
    ) -> list[TreeChange | _Enter]:
        """``level`` for trees with duplicate names: Git's walk of both entry lists
        side by side in their stored order, the lesser key taken first (a deletion or
        an addition), equal keys paired."""
        sides = [[(_mode(m), name, oid) for m, name, oid in t] for t in (a, b)]
        keys = [[name + b"/" if m & S_IFMT == S_IFDIR else name for m, name, _ in t] for t in sides]
        one, two = sides
        paths = self.paths
        items: list[TreeChange | _Enter] = []
        i = j = 0
        while i < len(one) or j < len(two):
            if j == len(two) or (i < len(one) and keys[0][i] < keys[1][j]):
                pair: tuple[_Side | None, _Side | None] = (one[i], None)
                i += 1
            elif i == len(one) or keys[0][i] > keys[1][j]:
                pair = (None, two[j])
                j += 1
            else:
                pair = (one[i], two[j])
                i += 1
                j += 1
            entry = pair[0] or pair[1]
            assert entry is not None
            if paths and not entry_interesting(base, entry[1], entry[0], paths, True):
                continue
            self.pair(pair[0], pair[1], base, items)
        return items

    def pair(
        self, one: _Side | None, two: _Side | None, base: bytes, items: list[TreeChange | _Enter]
    ) -> None:
        recursive = self.recursive
        if one is not None and two is not None:
            m1, name, id1 = one
            m2, _n, id2 = two
            if m1 == m2 and id1 == id2:
                return  # only the mode's spelling differed (zero-padded)
            path = base + name
            if m1 == S_IFDIR and m2 == S_IFDIR:
                if not recursive or self.show_trees:
                    items.append(TreeChange("M", path, m1, m2, id1, id2))
                if recursive:
                    items.append(_Enter(path + b"/", id1, id2))
                return
            status = "M" if m1 & S_IFMT == m2 & S_IFMT else "T"
            items.append(TreeChange(status, path, m1, m2, id1, id2))
            return
        if one is not None:
            m, name, oid = one
            path = base + name
            if m != S_IFDIR or not recursive or self.show_trees:
                items.append(TreeChange("D", path, m, None, oid, None))
            if m == S_IFDIR and recursive:
                items.append(_Enter(path + b"/", oid, None))
            return
        assert two is not None
        m, name, oid = two
        path = base + name
        if m != S_IFDIR or not recursive or self.show_trees:
            items.append(TreeChange("A", path, None, m, None, oid))
        if m == S_IFDIR and recursive:
            items.append(_Enter(path + b"/", None, oid))


def diff_trees(
    repo: Repository,
    old: bytes | None,
    new: bytes | None,
    paths: Sequence[bytes] = (),
    *,
    recursive: bool = True,
    show_trees: bool = False,
) -> list[TreeChange]:
    """The changes from tree ``old`` to tree ``new`` (binary ids, None: empty tree).

    ``paths`` are paths from the top (see the module docstring).  Raises
    ``ObjectNotFoundError`` for a missing tree, ``ObjectTypeError`` for a non-tree.
    """
    d = _Differ(repo, recursive, show_trees, paths)
    d.run(old, new)
    return d.out


def commit_changes(
    repo: Repository,
    commit: bytes,
    parent: int = 0,
    paths: Sequence[bytes] = (),
    *,
    recursive: bool = True,
    show_trees: bool = False,
) -> list[TreeChange]:
    """The changes commit ``commit`` made over its parent number ``parent`` (0: the
    first); a root commit is compared with the empty tree.

    ``IndexError`` if the commit has no such parent (but has parents).
    """
    odb = repo.odb
    c = odb.commit(commit)
    parents = c.parents
    old: bytes | None = None
    if parents:
        old = odb.commit(parents[parent]).tree
    return diff_trees(repo, old, c.tree, paths, recursive=recursive, show_trees=show_trees)
