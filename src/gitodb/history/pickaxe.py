"""Git's pickaxe (``-S<string>``): keep the changes whose two sides hold the string a
different number of times.

``pickaxe(changes, read, needle)`` filters a list of changes as Git's
``diffcore_pickaxe`` does after rename detection: a side that is missing counts
zero, an unchanged pair is never kept, and with ``all_changes`` (``--pickaxe-all``)
one kept change keeps every change.  ``regex`` (``--pickaxe-regex``) counts the
matches of a regular expression instead of the occurrences of a byte string.  An
empty needle keeps nothing, as in Git.  A submodule side reads as Git shows it
(``Subproject commit <id>``); any other side is the object's content.

Example::

    from gitodb.history.pickaxe import pickaxe
    from gitodb.history.treediff import diff_trees

    changes = diff_trees(repo, old_tree, new_tree)
    hits = pickaxe(changes, lambda oid: repo.odb.read(oid)[1], b"needle")
"""

from __future__ import annotations

import re

from gitodb.errors import GitodbError
from gitodb.history.patch import side_content

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def compile_needle(needle: bytes, regex: bool) -> Callable[[bytes], int]:
    """How many times ``needle`` occurs in a side: non-overlapping occurrences of the
    bytes, or matches of the pattern with ``regex`` (``GitodbError`` for a pattern
    that does not compile, Git's ``invalid regex`` message)."""
    if not regex:
        return lambda data: data.count(needle)
    try:
        pattern = re.compile(needle, re.MULTILINE)
    except re.error as e:
        raise GitodbError(f"invalid regex: {e}") from None
    return lambda data: sum(1 for _ in pattern.finditer(data))


def pickaxe(
    changes: list[Any],
    read: Callable[[bytes], bytes],
    needle: bytes,
    *,
    regex: bool = False,
    all_changes: bool = False,
) -> list[Any]:
    """The changes whose old and new sides hold ``needle`` a different number of
    times (see the module docstring); ``read(oid)`` gives an object's content."""
    if not needle:
        return []
    count = compile_needle(needle, regex)

    def side(mode: int | None, oid: bytes | None) -> int:
        # a missing side holds nothing (even a pattern that matches empty text)
        return 0 if mode is None or oid is None else count(side_content(mode, oid, read))

    kept = []
    for c in changes:
        if c.old_mode == c.new_mode and c.old_id == c.new_id:
            continue  # unchanged: the counts cannot differ
        if side(c.old_mode, c.old_id) != side(c.new_mode, c.new_id):
            if all_changes:
                return list(changes)
            kept.append(c)
    return kept
