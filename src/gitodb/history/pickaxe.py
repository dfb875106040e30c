"""Git's pickaxe: ``-S<string>`` keeps the changes whose two sides hold the string a
different number of times, ``-G<regex>`` those whose diff adds or removes a line
that matches.

``pickaxe(changes, read, needle)`` filters a list of changes as Git's
``diffcore_pickaxe`` does after rename detection: a side that is missing counts
zero, an unchanged pair is never kept, and with ``all_changes`` (``--pickaxe-all``)
one kept change keeps every change.  ``regex`` (``--pickaxe-regex``) counts the
matches of a regular expression instead of the occurrences of a byte string.  An
empty needle keeps nothing, as in Git.  Patterns are POSIX extended regular
expressions, as Git compiles them (``gitodb.history.posixre``).

``grep_changes(changes, read, pattern)`` is ``-G``: each change's line diff (Git's
default diff, as ``-p`` shows it) is searched, the pattern matched against each
added and removed line; a binary side (by content, or by ``binary_path(path)``,
the attributes) keeps nothing unless ``text`` (``-a``).

For both, a submodule side reads as Git shows it (``Subproject commit <id>``);
any other side is the object's content.

Example::

    from gitodb.history.pickaxe import pickaxe
    from gitodb.history.treediff import diff_trees

    changes = diff_trees(repo, old_tree, new_tree)
    hits = pickaxe(changes, lambda oid: repo.odb.read(oid)[1], b"needle")
"""

from __future__ import annotations

import re

from gitodb.errors import GitodbError
from gitodb.history.linediff import diff_data, split_lines
from gitodb.history.patch import is_binary, side_content
from gitodb.history.posixre import PosixRegexError, translate

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
    pattern = compile_pattern(needle)
    return lambda data: sum(1 for _ in pattern.finditer(data))


def compile_pattern(pattern: bytes) -> re.Pattern[bytes]:
    """A POSIX extended regular expression, ``^`` and ``$`` at each line (Git's
    ``REG_NEWLINE``); ``GitodbError`` (Git's ``invalid regex``) if it does not compile."""
    try:
        text = translate(pattern.decode("latin-1")).encode("latin-1")
        return re.compile(text, re.MULTILINE)
    except (PosixRegexError, re.error) as e:
        raise GitodbError(f"invalid regex: {e}") from None


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

    return _kept(
        changes, lambda c: side(c.old_mode, c.old_id) != side(c.new_mode, c.new_id), all_changes
    )


def _kept(changes: list[Any], hit: Callable[[Any], bool], all_changes: bool) -> list[Any]:
    """Git's pickaxe filter: the changed pairs ``hit`` keeps, or every change once one
    is kept with ``all_changes``; an unchanged pair is never looked at."""
    kept = []
    for c in changes:
        if c.old_mode == c.new_mode and c.old_id == c.new_id:
            continue
        if hit(c):
            if all_changes:
                return list(changes)
            kept.append(c)
    return kept


def grep_changes(
    changes: list[Any],
    read: Callable[[bytes], bytes],
    pattern: bytes,
    *,
    all_changes: bool = False,
    text: bool = False,
    binary_path: Callable[[bytes], bool] | None = None,
) -> list[Any]:
    """``-G<pattern>``: the changes whose line diff adds or removes a line matching
    ``pattern`` (see the module docstring); ``binary_path(path)``: whether the
    attributes make a path binary."""
    search = compile_pattern(pattern).search

    def hit(c: Any) -> bool:
        old = side_content(c.old_mode, c.old_id, read) if c.old_mode else b""
        new = side_content(c.new_mode, c.new_id, read) if c.new_mode else b""
        if not text and (
            (c.old_mode and is_binary(old))
            or (c.new_mode and is_binary(new))
            or (binary_path is not None and any(map(binary_path, _paths(c))))
        ):
            return False
        return _changed_line_matches(old, new, search)

    return _kept(changes, hit, all_changes)


def _changed_line_matches(old: bytes, new: bytes, search: Callable[[bytes], Any]) -> bool:
    a, b = split_lines(old), split_lines(new)
    for e in diff_data(old, new):
        for line in (*a[e.i1 : e.i1 + e.n1], *b[e.i2 : e.i2 + e.n2]):
            if search(line) is not None:
                return True
    return False


def _paths(change: Any) -> tuple[bytes, ...]:
    old_path = getattr(change, "old_path", None)
    return (change.path,) if old_path is None else (old_path, change.path)
