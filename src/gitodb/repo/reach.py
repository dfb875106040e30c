"""Commit reachability for reflog expiry: every ancestor of a set of tips."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gitodb.errors import GitodbError
from gitodb.objects import SHA1, SHA256
from gitodb.objects.commit import parse_commit_links
from gitodb.refs.peel import peel_fully


def _links(data: bytes, hexsz: int) -> tuple[bytes, list[bytes]]:
    """A commit's tree and parents, read by the object model's parser."""
    tree, parents, _end = parse_commit_links(bytes(data), SHA1 if hexsz == SHA1.hexsz else SHA256)
    return tree, parents


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
        todo.extend(p for p in _links(data, hexsz)[1] if p not in seen)
    return seen


class Completeness:
    """Whether a commit and everything it reaches (parents, trees, blobs) is present.

    ``reflog expire --stale-fix`` drops entries naming commits that are not, as Git
    does; results are remembered across entries.
    """

    def __init__(self, odb: Any, hexsz: int) -> None:
        self.odb = odb
        self.hexsz = hexsz
        self.rawsz = hexsz // 2
        self._done: dict[bytes, bool] = {}

    def _present(self, oid: bytes) -> bool:
        try:
            return bool(self.odb.contains(oid))
        except GitodbError:
            return False

    def _tree_complete(self, oid: bytes) -> bool:
        from gitodb.objects.tree import iter_tree

        todo = [oid]
        while todo:
            t = todo.pop()
            if t in self._done:
                if not self._done[t]:
                    return False
                continue
            try:
                kind, data = self.odb.read(t)
            except GitodbError:
                self._done[t] = False
                return False
            self._done[t] = True
            for e in iter_tree(data, self.rawsz):
                kind = e.object_type
                if kind == "tree":
                    todo.append(e.oid)
                elif kind == "blob" and e.oid not in self._done:
                    ok = self._present(e.oid)
                    self._done[e.oid] = ok
                    if not ok:
                        return False
        return True

    def commit_complete(self, oid: bytes) -> bool:
        """True if ``oid`` is a commit whose whole history and trees are present."""
        stack = [oid]
        seen: list[bytes] = []
        while stack:
            c = stack.pop()
            if c in self._done:
                if not self._done[c]:
                    return False
                continue
            try:
                kind, data = self.odb.read(c)
                ok = kind == "commit"
                links = _links(data, self.hexsz) if ok else None
            except GitodbError:
                ok, links = False, None
            if not ok or links is None or not self._tree_complete(links[0]):
                self._done[c] = False  # only this one: others seen may be fine
                return False
            seen.append(c)
            stack.extend(links[1])
        for s in seen:
            self._done[s] = True
        return True
