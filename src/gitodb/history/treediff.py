"""What changed between two trees, the way ``git diff-tree`` sees it.

``diff_trees(repo, old, new)`` compares two trees (ids; None is the empty tree)
and returns ``TreeChange`` records in Git's output order: entries are matched by
name, a directory compared as if its name ended in ``/`` (so a file ``d`` and a
directory ``d`` are a deletion and an addition), modes canonicalised like
Git's ``decode_tree_entry``.  Status letters are Git's: ``A`` added, ``D``
deleted, ``M`` modified (content or mode), ``T`` type changed (file, symlink,
submodule); with ``unchanged=True`` also ``=`` for an entry that is the same on both
sides (Git's unmodified pairs under ``--find-copies-harder``: copy sources for
``renames.detect_renames``, which leaves them out of its result).  ``recursive``
descends into changed directories (``-r``); ``show_trees`` also reports the
directories it descends into (``-t``).
``paths`` limits the comparison like a diff pathspec: a path names itself,
everything below it and the directories leading to it; with wildcards
(``*?[``) it is matched as Git's pathspec globs (``*`` crosses ``/``).

Each directory level is paired by the native core's ``tree_pairs`` when it is
built (``history.native``: not with ``GITODB_PURE_WALK``), else by ``level_pairs``, the Python
reference it is tested against; both walk the two entry lists side by side as Git
does, so a damaged tree that names a path twice is compared entry by entry.

``commit_changes(repo, commit)`` is the diff of a commit against a parent
(its first by default; the empty tree for a root commit).

Example::

    for ch in commit_changes(repo, repo.resolve("HEAD")):
        print(ch.status, ch.path.decode())
"""

from __future__ import annotations

from gitodb.errors import ObjectTypeError, TreeDepthError
from gitodb.history import native
from gitodb.history.treewalk import entry_interesting
from gitodb.objects.header import OBJ_TREE, TYPE_NAMES
from gitodb.objects.tree import (
    S_IFDIR,
    S_IFMT,
    canonical_mode,
    max_tree_depth,
    parse_entries,
    tree_sort_key,
)
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
#: one level's differing pair: (mode text, name, id) of each side, None where missing
Pair = tuple[bytes | None, bytes, bytes | None, bytes | None, bytes | None]


def level_pairs(old: bytes, new: bytes, rawsz: int, same: bool = False) -> list[Pair]:
    """The entries of two tree contents that differ, paired as Git walks them: both
    lists side by side in their stored order, the lesser key first (a directory's
    key is its name and ``/``), equal keys paired; a pair whose entries are the same
    bytes is left out, unless ``same``.  A tree naming a path twice is compared entry
    by entry like any other.  ``ObjectParseError`` for a malformed tree.

    The reference for the native core's ``tree_pairs`` (the differential tests
    compare the two).
    """
    sides = []
    for data in (old, new):
        entries = parse_entries(data, rawsz) if data else []
        keys = [tree_sort_key(n, _mode(m)) for m, n, _ in entries]
        sides.append((entries, keys))
    (a, ka), (b, kb) = sides
    out: list[Pair] = []
    i = j = 0
    while i < len(a) or j < len(b):
        if j == len(b) or (i < len(a) and ka[i] < kb[j]):
            out.append((a[i][0], a[i][1], a[i][2], None, None))
            i += 1
        elif i == len(a) or ka[i] > kb[j]:
            out.append((None, b[j][1], None, b[j][0], b[j][2]))
            j += 1
        else:
            if same or a[i] != b[j]:
                out.append((a[i][0], a[i][1], a[i][2], b[j][0], b[j][2]))
            i += 1
            j += 1
    return out


class _Differ:
    """One comparison's settings; ``run`` fills ``out`` in Git's order.

    Each directory level is compared on its own and yields changes and ``_Enter``
    marks in order; a stack of levels replaces recursion, so a deep tree cannot
    exhaust the interpreter's stack.
    """

    def __init__(
        self,
        repo: Repository,
        recursive: bool,
        show_trees: bool,
        paths: Sequence[bytes],
        unchanged: bool = False,
    ) -> None:
        self.read = repo.odb.read
        #: the native core's object reader (``close()``d by ``diff_trees``) and level
        #: pairing, or None
        self.reader = native.reader(repo)
        self.tree_pairs = native.tree_pairs_function()
        self.rawsz = repo.object_format.rawsz
        self.recursive = recursive or show_trees
        self.show_trees = show_trees
        self.paths = list(paths)
        self.unchanged = unchanged  # report "=" entries too
        self.out: list[TreeChange] = []
        self.max_depth = max_tree_depth(repo.config)

    def tree_data(self, oid: bytes | None) -> bytes:
        if oid is None:
            return b""
        data: bytes
        if self.reader is not None:
            type_number, data = self.reader.read(oid)
            if type_number == OBJ_TREE:
                return data
            type_name = TYPE_NAMES[type_number]
        else:
            type_name, data = self.read(oid)
        if type_name != "tree":
            raise ObjectTypeError(f"object {oid.hex()} is a {type_name}, not a tree")
        return data

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
        if old == new and not self.unchanged:
            return []
        a = self.tree_data(old)
        b = a if new == old else self.tree_data(new)  # (unchanged: --find-copies-harder)
        pairs = None
        if self.tree_pairs is not None:
            pairs = self.tree_pairs(a, b, self.rawsz, self.unchanged)
        if pairs is None:
            pairs = level_pairs(a, b, self.rawsz, self.unchanged)
        paths = self.paths
        items: list[TreeChange | _Enter] = []
        for mode_a, name, id_a, mode_b, id_b in pairs:
            one = None if mode_a is None or id_a is None else (_mode(mode_a), name, id_a)
            two = None if mode_b is None or id_b is None else (_mode(mode_b), name, id_b)
            mode = one[0] if one is not None else two[0] if two is not None else 0
            if paths and not entry_interesting(base, name, mode, paths, True):
                continue
            self.pair(one, two, base, items)
        return items

    def pair(
        self, one: _Side | None, two: _Side | None, base: bytes, items: list[TreeChange | _Enter]
    ) -> None:
        recursive = self.recursive
        if one is not None and two is not None:
            m1, name, id1 = one
            m2, _n, id2 = two
            path = base + name
            if m1 == m2 and id1 == id2:  # the same (or only the mode's spelling differs)
                if self.unchanged:
                    if m1 == S_IFDIR and recursive:
                        items.append(_Enter(path + b"/", id1, id2))
                    else:
                        items.append(TreeChange("=", path, m1, m2, id1, id2))
                return
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
    unchanged: bool = False,
) -> list[TreeChange]:
    """The changes from tree ``old`` to tree ``new`` (binary ids, None: empty tree).

    ``paths`` are paths from the top (see the module docstring); ``unchanged``: the
    entries that did not change too, as ``=`` (see the module docstring).  Raises
    ``ObjectNotFoundError`` for a missing tree, ``ObjectTypeError`` for a non-tree.
    """
    d = _Differ(repo, recursive, show_trees, paths, unchanged)
    try:
        d.run(old, new)
    finally:
        if d.reader is not None:
            d.reader.close()
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
