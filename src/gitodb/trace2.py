"""What the library tells Git's trace2 event stream: counters, data and regions.

Git's commands report a few facts through trace2 that scripts (and Git's own
tests) read back: how many syncs of each kind were attempted (``fsync``
counters), where a reverse index came from (``load_midx_revindex``), which parts
of a write ran (regions such as ``writing_lookup_table``).  The storage layers
record them here, where they are, and ``gitodb.cli.trace2`` writes them out at
exit when ``GIT_TRACE2_EVENT`` asks for them.  Counters are always kept (they
are cheap); data and regions only while :data:`recording` is on.
"""

from __future__ import annotations

import time

#: whether data events and regions are kept (the CLI turns it on for a session)
recording = False
#: ``(category, name) -> count``, in the order declared or first counted
_counters: dict[tuple[str, str], int] = {}
#: ``(event, monotonic time, nesting, fields)`` in the order they happened
_events: list[tuple[str, float, int, dict[str, object]]] = []
_nesting = 1


def count(category: str, name: str, n: int = 1) -> None:
    """Add ``n`` to the counter ``name`` of ``category`` (``n=0`` declares it, which
    fixes where it is written among the counters)."""
    key = (category, name)
    _counters[key] = _counters.get(key, 0) + n


def counters() -> dict[tuple[str, str], int]:
    """A copy of the counters: ``(category, name) -> count``."""
    return dict(_counters)


def data(category: str, key: str, value: object) -> None:
    """A ``data`` event (Git's ``trace2_data_string``/``_intmax``)."""
    if recording:
        _events.append(
            ("data", time.monotonic(), _nesting, {"category": category, "key": key, "value": value})
        )


def data_json(category: str, key: str, value: dict[str, object]) -> None:
    """A ``data_json`` event (Git's ``trace2_data_json``): ``value`` is a JSON object."""
    if recording:
        _events.append(
            (
                "data_json",
                time.monotonic(),
                _nesting,
                {"category": category, "key": key, "value": value},
            )
        )


class region:  # a class, not contextlib's decorator: contextlib is not on start-up
    """``region_enter`` and ``region_leave`` events around the ``with`` block."""

    __slots__ = ("category", "label", "entered")

    def __init__(self, category: str, label: str) -> None:
        self.category = category
        self.label = label
        self.entered = False

    def __enter__(self) -> None:
        global _nesting
        if not recording:
            return
        self.entered = True
        _events.append(
            (
                "region_enter",
                time.monotonic(),
                _nesting,
                {"category": self.category, "label": self.label},
            )
        )
        _nesting += 1

    def __exit__(self, *exc: object) -> None:
        global _nesting
        if not self.entered:
            return
        _nesting -= 1
        _events.append(
            (
                "region_leave",
                time.monotonic(),
                _nesting,
                {"category": self.category, "label": self.label},
            )
        )


def events() -> list[tuple[str, float, int, dict[str, object]]]:
    """The data and region events recorded so far."""
    return list(_events)


def reset() -> None:
    """Zero every counter and forget every event (a new command run in the same
    process)."""
    global _nesting
    for key in _counters:
        _counters[key] = 0
    _events.clear()
    _nesting = 1
