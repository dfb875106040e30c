"""The reftable ref backend: refs and reflogs in ``reftable/`` (see ``gitodb.reftable``).

A transaction becomes one new table: every ref it changes and every reflog
entry it writes share one update index.  Deleting a ref also writes log
tombstones for its reflog, like Git.  Reflog messages are stored normalised,
truncated to ``block_size / 2`` bytes (Git 2.45+ does this, even mid-character),
with a trailing newline.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

from gitodb.durable import DEFAULT_POLICY, FsyncPolicy
from gitodb.objects.format import ObjectFormat
from gitodb.refs.base import (
    PlannedWrite,
    Ref,
    ReflogEntry,
    RefStore,
    RefTransaction,
    committer_identity,
    is_root_ref,
)
from gitodb.reftable.records import LogRecord, RefRecord
from gitodb.reftable.stack import Stack
from gitodb.reftable.writer import WriteOptions

_ENC = "utf-8"
_ERR = "surrogateescape"


def _name(b: bytes) -> str:
    return b.decode(_ENC, _ERR)


def _bytes(s: str) -> bytes:
    return s.encode(_ENC, _ERR)


def _to_ref(rec: RefRecord) -> Ref:
    if rec.value_type == 3:
        return Ref(_name(rec.name), target=_name(rec.target or b""))
    return Ref(_name(rec.name), oid=rec.oid, peeled=rec.peeled)


def _is_exists_marker(g: LogRecord) -> bool:
    """Git's "reflog exists" record left by expiry: null ids, time 0, no message."""
    return g.time == 0 and not g.message and not g.name and g.old == g.new and not any(g.new)


class ReftableRefStore(RefStore):
    """Refs in the reftable stack of ``git_dir/reftable``."""

    def __init__(self, git_dir: str | os.PathLike[str], fmt: ObjectFormat,
                 config: object | None = None) -> None:
        self.git_dir = Path(git_dir)
        self.fmt = fmt
        self.config = config
        get_int = getattr(config, "get_int", None)
        block_size = (get_int("reftable.blocksize", 4096) if get_int else 4096) or 4096
        interval = (get_int("reftable.restartinterval", 16) if get_int else 16) or 16
        self.options = WriteOptions(block_size=block_size, restart_interval=interval, fmt=fmt)
        auto = os.environ.get("GIT_TEST_REFTABLE_AUTOCOMPACTION", "true").lower() not in (
            "false", "0", "no", "off")
        fsync = FsyncPolicy.from_config(config) if config is not None else DEFAULT_POLICY
        self.stack = Stack(self.git_dir / "reftable", self.options, auto_compact=auto,
                           fsync=fsync)

    # -- reading ----------------------------------------------------------
    def read(self, name: str) -> Ref | None:
        rec = self.stack.read_ref(_bytes(name))
        return _to_ref(rec) if rec is not None else None

    def iter_refs(self, prefix: str = "") -> Iterator[Ref]:
        p = _bytes(prefix)
        scan = p if p.startswith(b"refs/") else b"refs/"
        for rec in self.stack.iter_refs(scan):
            if rec.name.startswith(p):
                yield _to_ref(rec)

    def iter_root_refs(self) -> Iterator[Ref]:
        for rec in self.stack.iter_refs():
            if rec.name >= b"refs/":
                break  # root refs are upper case and sort before "refs/"
            name = _name(rec.name)
            if "/" not in name and is_root_ref(name):
                yield _to_ref(rec)

    # -- transactions -----------------------------------------------------
    def _prepare(self, tx: RefTransaction) -> object:
        fd = self.stack.lock()
        try:
            self.stack.reload()
            plan = self.plan(tx)
        except BaseException:
            self.stack.unlock(fd)
            raise
        return plan, fd

    def _abort(self, tx: RefTransaction, prepared: object) -> None:
        _plan, fd = cast(tuple[list[PlannedWrite], int], prepared)
        self.stack.unlock(fd)

    def _commit(self, tx: RefTransaction, prepared: object) -> None:
        plan, fd = cast(tuple[list[PlannedWrite], int], prepared)
        ui = self.stack.next_update_index()
        refs, logs = self._records(plan, ui)
        self.stack.commit_locked(fd, refs, logs, ui)

    def _records(self, plan: list[PlannedWrite], ui: int) -> tuple[list[RefRecord],
                                                                   list[LogRecord]]:
        name, email, ts, tz = committer_identity(self.config)
        limit = self.options.block_size // 2
        refs: list[RefRecord] = []
        logs: dict[tuple[bytes, int], LogRecord] = {}
        for w in plan:
            bname = _bytes(w.name)
            if w.ref is None:
                refs.append(RefRecord(bname, ui, 0))
                for g in self.stack.iter_logs(bname):
                    logs[(bname, g.update_index)] = LogRecord(bname, g.update_index, 0)
                continue
            if w.ref.target is not None:
                refs.append(RefRecord(bname, ui, 3, target=_bytes(w.ref.target)))
            elif w.ref.peeled is not None:
                refs.append(RefRecord(bname, ui, 2, w.ref.oid, w.ref.peeled))
            else:
                refs.append(RefRecord(bname, ui, 1, w.ref.oid))
            msg = w.message[:limit]
            msg = msg + b"\n" if msg else msg
            for logname, old, new in w.logs:
                key = _bytes(logname)
                logs[(key, ui)] = LogRecord(key, ui, 1, old, new, _bytes(name), _bytes(email),
                                            ts, tz, msg)
        return refs, list(logs.values())

    # -- reflogs ----------------------------------------------------------
    def _entries(self, name: str) -> list[LogRecord]:
        return [g for g in self.stack.iter_logs(_bytes(name)) if not _is_exists_marker(g)]

    def reflog(self, name: str) -> list[ReflogEntry]:
        out = []
        for g in reversed(self._entries(name)):
            msg = g.message[:-1] if g.message.endswith(b"\n") else g.message
            out.append(ReflogEntry(g.old, g.new, _name(g.name), _name(g.email), g.time,
                                   g.tz_offset, msg))
        return out

    def reflog_exists(self, name: str) -> bool:
        return next(iter(self.stack.iter_logs(_bytes(name))), None) is not None

    def reflog_names(self) -> list[str]:
        return [_name(n) for n in self.stack.log_refnames()]

    def rewrite_reflog(self, name: str, keep: Callable[[int, ReflogEntry], bool]) -> int:
        bname = _bytes(name)
        dropped = 0

        def build(stack: Stack, ui: int) -> tuple[list[RefRecord], list[LogRecord]]:
            nonlocal dropped
            recs = [g for g in stack.iter_logs(bname) if not _is_exists_marker(g)]
            entries = self.reflog(name)
            tomb = []
            for i, e in enumerate(entries):
                if not keep(i, e):
                    g = recs[len(recs) - 1 - i]
                    tomb.append(LogRecord(bname, g.update_index, 0))
            dropped = len(tomb)
            if tomb and len(tomb) == len(recs):
                # keep an empty reflog, like Git's expiry does
                tomb.append(LogRecord(bname, ui, 1, self.fmt.null_oid, self.fmt.null_oid))
            return [], tomb

        self.stack.modify(build)
        return dropped

    def pack_refs(self, all_refs: bool = True, prune: bool = True) -> None:
        """Compact the whole stack into one table (``git pack-refs`` on reftable)."""
        self.stack.compact()
