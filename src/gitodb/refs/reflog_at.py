"""``<ref>@{<n>}`` and ``<ref>@{<date>}``: the value a ref had, from its reflog (Git's
``read_ref_at``).

``value_at_index(store, "refs/heads/main", 2)`` is ``main@{2}``: the new id of the
third newest entry; ``@{<count of entries>}`` is the old id of the oldest one (unless it is null).
``value_at_time(store, name, ts)`` is ``main@{<date>}``: the new id of the newest
entry made at or before ``ts``; before the first entry it is that entry's old id
(Git warns "log for '<ref>' only goes back to <date>", returned here as ``note``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gitodb.errors import RefError
from gitodb.objects.datefmt import DateMode, show_date
from gitodb.refs.base import RefStore


@dataclass(frozen=True)
class ReflogValue:
    """The id found, and Git's warning about the lookup if it prints one."""

    oid: bytes
    note: str | None = None


def value_at_index(store: RefStore, name: str, n: int) -> ReflogValue:
    """``name@{n}``; ``RefError`` when the reflog is shorter (Git's wording)."""
    entries = store.reflog(name)
    if not entries:
        raise RefError(f"log for '{name}' is empty")
    if n < len(entries):
        return ReflogValue(entries[len(entries) - 1 - n].new)
    if n == len(entries) and any(entries[0].old):
        return ReflogValue(entries[0].old)
    raise RefError(f"log for '{name}' only has {len(entries)} entries")


def value_at_time(store: RefStore, name: str, when: int, shown: str | None = None) -> ReflogValue:
    """``name@{<date>}`` for the Unix time ``when``; ``shown`` is the ref as the user
    wrote it, which Git's warning names (default: ``name``)."""
    entries = store.reflog(name)
    if not entries:
        raise RefError(f"log for '{shown or name}' is empty")
    for e in reversed(entries):
        if e.time <= when:
            return ReflogValue(e.new)
    first = entries[0]
    oid = first.old if any(first.old) else first.new
    date = show_date(first.time, first.tz_offset, DateMode("rfc"))
    return ReflogValue(oid, note=f"log for '{shown or name}' only goes back to {date}")
