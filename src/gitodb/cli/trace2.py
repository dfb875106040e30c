"""Git's trace2 event stream (``GIT_TRACE2_EVENT``), for the events gitodb can stand behind.

When ``GIT_TRACE2_EVENT`` names a target, Git writes one JSON object per line
describing the process.  gitodb writes the same shape for the process-level
events — ``version``, ``start`` (with ``argv``), ``cmd_name``, the ``data`` and
``region_enter``/``region_leave`` events the library recorded (``gitodb.trace2``),
``exit``, one ``counter`` per non-zero counter, ``atexit`` — and nothing it does
not measure (no timers or child events).  The counters are Git's ``fsync`` ones
(``writeout-only``, ``hardware-flush``), counted by :mod:`gitodb.durable` where
each sync is attempted, so a test that counts syncs through trace2 sees gitodb's.

Targets, as in Git: an absolute path (appended to, created if missing), a
directory (one new file per process, named by its session id), or ``1``/``true``
(standard error) and ``2``..``9`` (that file descriptor).  ``0``/``false``/empty
turn it off; anything else (Git's ``af_unix:`` sockets included) is ignored.
``GIT_TRACE2_EVENT_BRIEF`` drops the ``time`` field as Git does; ``file`` and
``line`` (Git's C source location) are never written, gitodb has none to give.
All events are written at exit in one write, so a consumer never sees a torn
line from this process.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from datetime import UTC, datetime

from gitodb import __version__, trace2

_OFF = ("", "0", "false")


def _fd(target: str) -> int | None:
    """The descriptor a target names (``1``/``true`` is standard error), or None."""
    if target == "1" or target.lower() == "true":
        return 2
    if len(target) == 1 and target.isdigit():
        return int(target)
    return None


class Session:
    """One process's trace2 session: started at entry, written at :meth:`finish`."""

    def __init__(self, target: str, argv: list[str]) -> None:
        self.target = target
        self.argv = argv
        self.command: str | None = None
        self.started = time.monotonic()
        self.brief = os.environ.get("GIT_TRACE2_EVENT_BRIEF", "").lower() in (
            "1",
            "true",
            "yes",
            "on",
        )
        now = datetime.now(UTC)
        host = hashlib.sha1(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]
        own = f"{now:%Y%m%dT%H%M%S}.{now.microsecond:06d}Z-H{host}-P{os.getpid():08x}"
        parent = os.environ.get("GIT_TRACE2_PARENT_SID")
        self.sid = f"{parent}/{own}" if parent else own
        trace2.reset()
        trace2.recording = True

    def _event(self, event: str, **fields: object) -> str:
        head: dict[str, object] = {"event": event, "sid": self.sid, "thread": "main"}
        if not self.brief:
            now = datetime.now(UTC)
            head["time"] = f"{now:%Y-%m-%dT%H:%M:%S}.{now.microsecond:06d}Z"
        head.update(fields)
        return json.dumps(head, separators=(",", ":"), ensure_ascii=False) + "\n"

    def events(self, code: int) -> str:
        """The lines Git writes for a process that exits with ``code``."""
        t_abs = round(time.monotonic() - self.started, 6)
        out = [
            self._event("version", evt="4", exe=__version__),
            self._event("start", t_abs=0.0, argv=self.argv),
        ]
        if self.command is not None:
            out.append(self._event("cmd_name", name=self.command, hierarchy=self.command))
        for event, at, nesting, fields in trace2.events():
            t = round(at - self.started, 6)
            out.append(self._event(event, repo=1, t_abs=t, t_rel=t, nesting=nesting, **fields))
        out.append(self._event("exit", t_abs=t_abs, code=code))
        for (category, name), count in trace2.counters().items():
            if count:
                out.append(self._event("counter", category=category, name=name, count=count))
        out.append(self._event("atexit", t_abs=t_abs, code=code))
        return "".join(out)

    def finish(self, code: int) -> None:
        """Write the session's events to its target; a target that fails is skipped, as Git does."""
        data = self.events(code).encode("utf-8", "surrogateescape")
        target = self.target
        try:
            fd = _fd(target)
            if fd is not None:
                os.write(fd, data)
                return
            path = target
            if os.path.isdir(path):
                path = os.path.join(path, self.sid.replace("/", "_"))
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError:
            # Git disables a target it cannot write to; tracing never fails a command.
            return


def start(argv: list[str]) -> Session | None:
    """A session when ``GIT_TRACE2_EVENT`` names a target gitodb can write, else None."""
    target = os.environ.get("GIT_TRACE2_EVENT", "")
    if target.lower() in _OFF:
        return None
    if _fd(target) is None and not os.path.isabs(target):
        return None
    return Session(target, argv)
