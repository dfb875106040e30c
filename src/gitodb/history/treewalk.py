"""Listing a tree the way ``git ls-tree`` walks it (Git's ``read_tree`` with a pathspec).

Pathspec items are paths from the top, matched literally (``ls-tree`` turns
wildcards off): an item selects an entry whose path equals it, the directories
leading to it, and everything below a directory it names.  A tree is entered
when listing recursively, or when an item names something below it; a tree that
is entered is shown only with ``show_trees`` (``-t``).  ``trees_only`` (``-d``)
drops blobs.  Submodule entries are listed, never entered.

Example::

    for entry, path in list_tree(repo, repo.tree("HEAD"), ["src/"], recursive=False):
        print(entry.mode, entry.object_type, entry.id.hex(), path)
"""

from __future__ import annotations

from gitodb.errors import ObjectNotFoundError, ObjectTypeError, TreeDepthError, UnreadableTreeError
from gitodb.lazyre import lazy
from gitodb.objects.tree import (
    S_IFDIR,
    S_IFGITLINK,
    S_IFMT,
    Tree,
    TreeEntry,
    max_tree_depth,
)

_GLOB = lazy(rb"[*?[]")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

    from gitodb.repo import Repository


def _match_entry(mode: int, name: bytes, match: bytes) -> bool:
    """Git's ``match_entry`` for the part of an item below the current base."""
    plen, mlen = len(name), len(match)
    if plen > mlen:
        return False
    if mlen > plen:
        if match[plen] != 0x2F:
            return False
        # Only a directory (or a submodule named with one trailing "/") leads further.
        kind = mode & S_IFMT
        if kind != S_IFDIR and (kind != S_IFGITLINK or mlen > plen + 1):
            return False
    return match[:plen] == name


def _show_recursive(base: bytes, name: bytes, items: Sequence[bytes]) -> bool:
    """Git's ``show_recursive`` for a non-recursive listing: does an item go below?"""
    blen = len(base)
    for spec in items:
        if spec[:blen] != base:
            continue
        rest = spec[blen:]
        n = len(name)
        if len(rest) <= n or rest[n] != 0x2F or rest[:n] != name:
            continue
        return True
    return False


def list_tree(
    repo: Repository,
    tree: Tree,
    pathspec: Sequence[bytes] = (),
    *,
    recursive: bool = False,
    show_trees: bool = False,
    trees_only: bool = False,
) -> Iterator[tuple[TreeEntry, bytes]]:
    """Yield ``(entry, path from the top of tree)`` in ``git ls-tree`` order.

    A subtree that is missing or not a tree raises ``UnreadableTreeError`` where
    the listing reaches it, and one nested past ``core.maxTreeDepth``
    ``TreeDepthError``: what was yielded before is what Git lists before its error."""
    items = list(pathspec)
    yield from _walk(repo, tree, b"", items, recursive, show_trees, trees_only)


def entry_interesting(
    base: bytes, name: bytes, mode: int, items: Sequence[bytes], wildcards: bool = False
) -> int:
    """Does the entry ``name`` (``mode``) of the tree at ``base`` match a pathspec item?

    2: it and all later entries of the tree match (the tree is inside an item);
    1: it does; 0: no.  Items are paths from the top; with ``wildcards`` an item
    holding ``*?[`` is a glob as Git's pathspecs read it (``*`` crosses ``/``),
    which a directory matches while its path could still lead to a match.
    """
    blen = len(base)
    for match in items:
        if wildcards and _GLOB.search(match) is not None:
            if _glob_interesting(base + name, mode, match):
                return 1
            continue
        mlen = len(match)
        if blen >= mlen:
            if match == base[:mlen] and (
                not mlen or base[mlen : mlen + 1] == b"/" or match[-1:] == b"/"
            ):
                return 2
            continue
        if match[:blen] == base and _match_entry(mode, name, match[blen:]):
            return 1
    return 0


def _glob_interesting(path: bytes, mode: int, pattern: bytes) -> bool:
    """A glob item against one entry: the literal part leads there, or it matches."""
    literal = pattern[: _GLOB.search(pattern).start()]  # type: ignore[union-attr]
    if mode & S_IFMT == S_IFDIR:
        # A directory may hold a match when the item's literal part and its path agree.
        return (path + b"/").startswith(literal) or literal.startswith(path + b"/")
    if not path.startswith(literal):
        return False
    import fnmatch  # (with re: only for a glob pathspec)

    return fnmatch.fnmatchcase(path.decode("latin-1"), pattern.decode("latin-1"))


def _walk(
    repo: Repository,
    tree: Tree,
    base: bytes,
    items: list[bytes],
    recursive: bool,
    show_trees: bool,
    trees_only: bool,
) -> Iterator[tuple[TreeEntry, bytes]]:
    # A stack of open trees, not recursion: a deep tree cannot exhaust the
    # interpreter's stack, and core.maxTreeDepth stops it where Git stops.
    max_depth = max_tree_depth(repo.config)
    # each frame: the tree's entries, its path, whether every later entry matches
    stack: list[list[Any]] = [[iter(tree), base, not items]]
    while stack:
        frame = stack[-1]
        entries, base = frame[0], frame[1]
        for entry in entries:
            if not frame[2]:
                got = entry_interesting(base, entry.name, entry.mode, items)
                if not got:
                    continue
                frame[2] = got == 2
            kind = entry.object_type
            descend = False
            show = True
            if kind == "blob":
                show = not trees_only
            elif kind == "tree" and (
                recursive or (items and _show_recursive(base, entry.name, items))
            ):
                descend = True
                show = show_trees
            if show:
                yield entry, base + entry.name
            if descend:
                if len(stack) > max_depth:
                    raise TreeDepthError(TreeDepthError.MESSAGE)
                try:
                    subtree = repo.odb.tree(entry.id)
                except ObjectNotFoundError:
                    raise UnreadableTreeError(entry.id, missing=True) from None
                except ObjectTypeError:
                    raise UnreadableTreeError(entry.id, missing=False) from None
                stack.append([iter(subtree), base + entry.name + b"/", not items])
                break
        else:
            stack.pop()
