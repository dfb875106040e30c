"""``-O<orderfile>``: a diff's files in the order of a list of patterns (Git's
``diffcore_order``).

The order file holds one pattern a line (empty lines and lines starting with ``#``
are skipped; the rest are kept as they are).  A change goes with the first pattern
that matches its path or one of the directories leading to it (``wildmatch``
without special slashes), changes with no match last, and each group keeps the
diff's own order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gitodb.errors import GitodbError


def read_orderfile(path: str) -> list[str]:
    """The patterns of the order file at ``path`` (Git's ``prepare_order``);
    ``GitodbError`` with Git's message when it cannot be read."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise GitodbError(f"failed to read orderfile '{path}': {e.strerror}") from None
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # the newline that ends the last line
    return [
        line.decode("utf-8", "surrogateescape")
        for line in lines
        if line and not line.startswith(b"#")
    ]


def order_changes(changes: Sequence[Any], patterns: Sequence[str]) -> list[Any]:
    """``changes`` sorted by the first of ``patterns`` each one's path matches."""
    from gitodb.objects.wildmatch import wildmatch

    def rank(change: Any) -> int:
        path = change.path.decode("utf-8", "surrogateescape")
        for i, pattern in enumerate(patterns):
            p = path
            while p:
                if wildmatch(pattern, p):
                    return i
                p = p.rpartition("/")[0]
        return len(patterns)

    return sorted(changes, key=rank)  # stable: the diff's order within a rank
