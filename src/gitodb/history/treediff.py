"""What changed between two trees, the way ``git diff-tree -r --no-renames`` sees it.

Entries of the two trees are merged in Git's tree order (a directory sorts as if
its name ended in ``/``, so a file and a directory of the same name are a deletion
and an addition, never a type change).  Subdirectories present on both sides are
entered when their ids differ; a directory on one side only is listed file by
file.  Submodules are leaves.  Modes are canonical (``100644``, ``100755``,
``120000``, ``160000``), as Git's tree walk reports them.

Example::

    for change in diff_trees(repo, parent.tree, commit.tree):
        print(change.status, change.path.decode())
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from gitodb.objects.tree import S_IFMT, TreeEntry, canonical_mode, tree_sort_key

if TYPE_CHECKING:
    from gitodb.repo import Repository


class TreeChange(NamedTuple):
    """One changed path: ``status`` A, D, M or T; modes/ids None on the missing side."""

    status: str
    path: bytes
    old_mode: int | None
    new_mode: int | None
    old_id: bytes | None
    new_id: bytes | None


def _entries(repo: Repository, oid: bytes | None) -> list[TreeEntry]:
    if oid is None:
        return []
    # As stored: Git writes trees in tree order and its diff walks them as they are.
    return repo.odb.tree(oid).entries


class _Enter(NamedTuple):
    """An instruction of one level's walk: diff these two subtrees here."""

    base: bytes
    old: bytes | None
    new: bytes | None


def _level(repo: Repository, base: bytes, old: bytes | None, new: bytes | None
           ) -> Iterator[TreeChange | _Enter]:
    """The changes of one directory level, with ``_Enter`` where a subtree sorts."""
    a, b = _entries(repo, old), _entries(repo, new)
    i = j = 0
    while i < len(a) or j < len(b):
        ea = a[i] if i < len(a) else None
        eb = b[j] if j < len(b) else None
        if ea is not None and eb is not None:
            ka, kb = tree_sort_key(ea.name, ea.mode), tree_sort_key(eb.name, eb.mode)
            side = -1 if ka < kb else (1 if kb < ka else 0)
        else:
            side = -1 if eb is None else 1
        if side < 0:
            assert ea is not None
            i += 1
            if ea.is_tree:
                yield _Enter(base + ea.name + b"/", ea.id, None)
            else:
                yield TreeChange("D", base + ea.name, canonical_mode(ea.mode), None, ea.id, None)
        elif side > 0:
            assert eb is not None
            j += 1
            if eb.is_tree:
                yield _Enter(base + eb.name + b"/", None, eb.id)
            else:
                yield TreeChange("A", base + eb.name, None, canonical_mode(eb.mode), None, eb.id)
        else:
            assert ea is not None and eb is not None
            i += 1
            j += 1
            ma, mb = canonical_mode(ea.mode), canonical_mode(eb.mode)
            if ea.id == eb.id and ma == mb:
                continue
            if ea.is_tree:   # equal sort keys: both are trees
                yield _Enter(base + ea.name + b"/", ea.id, eb.id)
            else:
                status = "T" if (ma & S_IFMT) != (mb & S_IFMT) else "M"
                yield TreeChange(status, base + ea.name, ma, mb, ea.id, eb.id)


def diff_trees(repo: Repository, old: bytes | None, new: bytes | None) -> Iterator[TreeChange]:
    """The changed paths from tree ``old`` to tree ``new`` (None: the empty tree).

    Recursive, without renames, in Git's output order; no recursion in Python (a
    stack of per-level walks), so deep trees cannot exhaust the interpreter stack.
    """
    if old == new:
        return
    stack = [_level(repo, b"", old, new)]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
        elif isinstance(item, _Enter):
            stack.append(_level(repo, item.base, item.old, item.new))
        else:
            yield item
