"""Commit reachability for reflog expiry: every ancestor of a set of tips."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gitodb.errors import GitodbError
from gitodb.objects.commit import parse_commit
from gitodb.refs.peel import peel_fully


def commit_of(odb: Any, oid: bytes, hexsz: int) -> bytes | None:
    """``oid`` peeled to a commit, or None if it is missing or no commit."""
    try:
        target = peel_fully(odb, oid, hexsz) or oid
        kind, _data = odb.read(target)
    except GitodbError:
        return None
    return target if kind == "commit" else None


def ancestors(odb: Any, tips: Iterable[bytes], hexsz: int) -> set[bytes]:
    """Every commit reachable from ``tips`` (tips included); missing parents are skipped."""
    seen: set[bytes] = set()
    todo = [t for t in tips]
    while todo:
        oid = todo.pop()
        if oid in seen:
            continue
        try:
            kind, data = odb.read(oid)
        except GitodbError:
            continue
        if kind != "commit":
            continue
        seen.add(oid)
        todo.extend(p for p in parse_commit(data, hexsz).parents if p not in seen)
    return seen
