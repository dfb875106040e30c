"""Walking reflogs instead of history (Git's ``reflog-walk.c``): ``-g``, ``reflog show``.

A ``ReflogWalk`` holds the reflogs named (``<ref>``, ``<ref>@{<n>}``,
``<ref>@{<date>}``, ``@{<n>}`` for the current branch) and yields their entries
newest first, several reflogs interleaved by entry time (a tie goes to the reflog
named first).  An entry whose new id is null or not a commit is skipped, but keeps
its number (``<ref>@{<n>}`` counts every entry).  ``RevWalk`` takes one in place of
its history walk (``RevWalk.walk_reflogs``); ``reflog_ids`` is ``--reflog``, every
id the reflogs mention, as revisions.
"""

from __future__ import annotations

from typing import NamedTuple

from gitodb.errors import ObjectNotFoundError
from gitodb.refs.peel import REV_PARSE_RULES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gitodb.refs.base import ReflogEntry
    from gitodb.repo import Repository

__all__ = ["ReflogItem", "ReflogWalk", "dwim_log", "reflog_ids"]


class ReflogItem(NamedTuple):
    """One entry of a walk: the reflog's ref, the entry's number (``@{n}``) and it."""

    ref: str
    number: int
    entry: ReflogEntry


def dwim_log(repo: Repository, name: str) -> str | None:
    """Git's ``dwim_log``: the one ref of ``name``'s expansions that has a reflog
    (None if none does, or if several do)."""
    refs = repo.refs
    found = [r.format(name) for r in REV_PARSE_RULES if refs.reflog_exists(r.format(name))]
    return found[0] if len(found) == 1 else None


class _Log:
    """One reflog being walked: its entries (oldest first) and the next one's index."""

    def __init__(self, ref: str, entries: list[ReflogEntry], next_index: int) -> None:
        self.ref = ref
        self.entries = entries
        self.index = next_index


class ReflogWalk:
    """The reflogs of a ``-g`` walk; ``add`` them, then iterate once."""

    def __init__(self, repo: Repository) -> None:
        self.repo = repo
        self.logs: list[_Log] = []
        self._read: dict[str, tuple[str, list[ReflogEntry]]] = {}
        self.current: ReflogItem | None = None  # the entry last yielded

    def add(self, name: str) -> bool:
        """Git's ``add_reflog_for_walk``: walk ``name``'s reflog (``<ref>@{<n>}``
        from its n-th entry, ``<ref>@{<date>}`` from the newest entry at or before
        the date).  False, and nothing added, if it has no reflog (Git says nothing)."""
        branch, at, selector = name.partition("@{")
        number: int | None = 0
        when = 0
        if at:
            digits = selector[:-1] if selector.endswith("}") else ""
            if digits.isascii() and digits.isdigit():
                number = int(digits)
            else:
                from gitodb.objects.approxidate import approxidate

                number, when = (
                    None,
                    approxidate(selector[:-1] if selector.endswith("}") else selector),
                )
        else:
            branch = name
        got = self._reflog(branch)
        if got is None:
            return False
        ref, entries = got
        if number is None:
            # the newest entry not newer than the date (Git's get_reflog_recno_by_time)
            index = next(
                (i for i in range(len(entries) - 1, -1, -1) if entries[i].time <= when), -1
            )
            if index < 0:
                return False
        else:
            index = len(entries) - 1 - number
        self.logs.append(_Log(ref, entries, index))
        return True

    def add_ref(self, ref: str, number: int = 0) -> None:
        """Walk the reflog of the full ref name ``ref`` from its ``number``-th entry."""
        entries = self.repo.refs.reflog(ref)
        self.logs.append(_Log(ref, entries, len(entries) - 1 - number))

    def _reflog(self, branch: str) -> tuple[str, list[ReflogEntry]] | None:
        cached = self._read.get(branch)
        if cached is not None:
            return cached
        refs = self.repo.refs
        ref: str | None = branch
        if not branch:
            head = refs.read("HEAD")
            ref = getattr(head, "target", None) or ("HEAD" if head is not None else None)
            if ref is None:
                from gitodb.errors import GitodbError

                raise GitodbError("no current branch")
        entries = refs.reflog(ref) if ref else []
        if not entries:
            ref = dwim_log(self.repo, branch)
            entries = refs.reflog(ref) if ref is not None else []
        if ref is None or not entries:
            return None
        self._read[branch] = (ref, entries)
        return ref, entries

    def _next_commit(self, log: _Log) -> bool:
        """Move ``log`` to its next entry whose new id is a commit; False at its end."""
        odb = self.repo.odb
        while log.index >= 0:
            new = log.entries[log.index].new
            if any(new):
                try:
                    if odb.read_header(new)[0] == "commit":
                        return True
                except ObjectNotFoundError:
                    pass
            log.index -= 1
        return False

    def __iter__(self) -> Iterator[ReflogItem]:
        """The entries newest first across the reflogs (Git's ``next_reflog_entry``);
        ``current`` is the one just yielded."""
        while True:
            best: _Log | None = None
            for log in self.logs:
                if not self._next_commit(log):
                    continue
                if best is None or log.entries[log.index].time > best.entries[best.index].time:
                    best = log
            if best is None:
                self.current = None
                return
            item = ReflogItem(
                best.ref, len(best.entries) - 1 - best.index, best.entries[best.index]
            )
            best.index -= 1
            self.current = item
            yield item


def reflog_ids(repo: Repository) -> Iterator[tuple[str, bytes]]:
    """``--reflog``: ``(ref, id)`` for the old then the new id of every entry of
    every reflog, oldest entry first, null ids left out; the refs' reflogs in name
    order, then HEAD's (as Git's ``add_reflogs_to_pending`` reads a files store)."""
    refs = repo.refs
    names = [n for n in refs.reflog_names() if n != "HEAD"]
    for name in names + (["HEAD"] if refs.reflog_exists("HEAD") else []):
        for e in refs.reflog(name):
            for oid in (e.old, e.new):
                if any(oid):
                    yield name, oid
