"""``%(describe)``: the nearest tag of a commit, as ``git describe`` names it.

Git's algorithm (``builtin/describe.c``): tags (annotated ones, or all with
``tags``) name their peeled commits, the most recently tagged annotated tag
winning when several name one commit; a commit that has a name is described by it;
otherwise the history is walked newest first, up to ten candidate tags are
collected with the number of commits each does not reach, and the closest one
gives ``<tag>-<depth>-g<abbreviated id>``.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gitodb.errors import GitodbError
from gitodb.objects.tag import Tag
from gitodb.refs.wildmatch import wildmatch

if TYPE_CHECKING:
    from gitodb.repo import Repository

MAX_CANDIDATES = 10
_SEEN = 1


@dataclass
class _Candidate:
    name: str
    depth: int
    within: int
    order: int


class Describer:
    """Describes commits of one repository; the tag names are read once per option set."""

    def __init__(self, repo: Repository) -> None:
        self.repo = repo
        self._names: dict[
            tuple[bool, tuple[str, ...], tuple[str, ...]], dict[bytes, tuple[int, str, int]]
        ] = {}
        self._commits: dict[bytes, tuple[int, list[bytes]]] = {}

    def _commit(self, oid: bytes) -> tuple[int, list[bytes]]:
        got = self._commits.get(oid)
        if got is None:
            c = self.repo.odb.commit(oid)
            got = self._commits[oid] = (c.commit_date, c.parents)
        return got

    def _peel(self, oid: bytes) -> tuple[bytes, int | None]:
        """``(peeled id, tagger date of the first tag or None if not annotated)``."""
        date = None
        cur = oid
        for _ in range(64):
            kind, data = self.repo.odb.read(cur)
            if kind != "tag":
                return cur, date
            tag = Tag(data, self.repo.object_format)
            if date is None:
                t = tag.tagger
                date = t.timestamp if t is not None and t.timestamp is not None else 0
            cur = tag.object
        return cur, date

    def names(
        self, tags: bool, match: tuple[str, ...], exclude: tuple[str, ...]
    ) -> dict[bytes, tuple[int, str, int]]:
        """peeled commit -> ``(priority, name, tag date)``: 2 annotated, 1 lightweight."""
        key = (tags, match, exclude)
        got = self._names.get(key)
        if got is not None:
            return got
        names: dict[bytes, tuple[int, str, int]] = {}
        for ref in self.repo.refs.iter_refs("refs/tags/"):
            path = ref.name[len("refs/tags/") :]
            if any(wildmatch(p, path) for p in exclude):
                continue
            if match and not any(wildmatch(p, path) for p in match):
                continue
            oid = ref.oid if ref.target is None else self.repo.refs.resolve(ref.name)
            if oid is None:
                continue
            try:
                peeled, date = self._peel(oid)
            except GitodbError:
                continue
            prio = 2 if date is not None else 1
            old = names.get(peeled)
            if old is None or old[0] < prio or (old[0] == prio == 2 and old[2] < (date or 0)):
                names[peeled] = (prio, path, date or 0)
        self._names[key] = names
        return names

    def describe(
        self,
        oid: bytes,
        *,
        tags: bool = False,
        abbrev: int | None = None,
        match: tuple[str, ...] = (),
        exclude: tuple[str, ...] = (),
    ) -> str | None:
        """The description of ``oid`` (a commit or a tag of one), or None if none fits."""
        from gitodb.repo.abbrev import Abbreviator, default_abbrev

        commit, _ = self._peel(oid)
        names = self.names(tags, match, exclude)

        def usable(n: tuple[int, str, int] | None) -> bool:
            return n is not None and (tags or n[0] == 2)

        exact = names.get(commit)
        if exact is not None and usable(exact):
            return exact[1]
        flags: dict[bytes, int] = {commit: _SEEN}
        queue: list[tuple[int, int, bytes]] = []
        counter = 0

        def push(c: bytes) -> None:
            nonlocal counter
            counter += 1
            heapq.heappush(queue, (-self._commit(c)[0], counter, c))

        push(commit)
        matches: list[_Candidate] = []
        annotated = 0
        seen_commits = 0
        gave_up_on: bytes | None = None
        while queue:
            _, _, c = heapq.heappop(queue)
            seen_commits += 1
            n = names.get(c)
            if n is not None:
                if not usable(n):
                    pass
                elif len(matches) < MAX_CANDIDATES:
                    within = 1 << (len(matches) + 1)
                    matches.append(_Candidate(n[1], seen_commits - 1, within, len(matches)))
                    flags[c] = flags.get(c, 0) | within
                    if n[0] == 2:
                        annotated += 1
                else:
                    gave_up_on = c
                    break
            cf = flags.get(c, 0)
            for m in matches:
                if not cf & m.within:
                    m.depth += 1
            if annotated and not queue:
                best_depth: int | None = None
                best_within = 0
                for m in matches:
                    if best_depth is None or m.depth < best_depth:
                        best_depth, best_within = m.depth, m.within
                    elif m.depth == best_depth:
                        best_within |= m.within
                if cf & best_within == best_within:
                    break
            for p in self._commit(c)[1]:
                if not flags.get(p, 0) & _SEEN:
                    push(p)
                flags[p] = flags.get(p, 0) | cf
        if not matches:
            return None
        matches.sort(key=lambda m: (m.depth, m.order))
        best = matches[0]
        if gave_up_on is not None:
            push(gave_up_on)
        depth = best.depth + self._finish_depth(queue, flags, best.within)
        if abbrev == 0:
            return best.name
        length = default_abbrev(self.repo) if abbrev is None else abbrev
        return f"{best.name}-{depth}-g{Abbreviator(self.repo, length)(commit)}"

    def _finish_depth(
        self, queue: list[tuple[int, int, bytes]], flags: dict[bytes, int], within: int
    ) -> int:
        """Git's ``finish_depth_computation``: commits still to count for the best tag."""
        extra = 0
        counter = 1 << 40  # after every entry already queued
        while queue:
            _, _, c = heapq.heappop(queue)
            cf = flags.get(c, 0)
            if cf & within:
                if all(flags.get(q[2], 0) & within for q in queue):
                    break
            else:
                extra += 1
            for p in self._commit(c)[1]:
                if not flags.get(p, 0) & _SEEN:
                    counter += 1
                    heapq.heappush(queue, (-self._commit(p)[0], counter, p))
                flags[p] = flags.get(p, 0) | cf
        return extra
