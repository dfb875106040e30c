"""The reftable ref backend: refs and reflogs in ``reftable/`` (see ``gitodb.reftable``).

A transaction becomes one new table: every ref it changes and every reflog
entry it writes share one update index.  Deleting a ref also writes log
tombstones for its reflog, like Git.  Reflog messages are stored normalised,
truncated to ``block_size / 2`` bytes (Git 2.45+ does this, even mid-character),
with a trailing newline.
"""

from __future__ import annotations

import os

from gitodb.errors import LockError, RefError
from gitodb.lazymod import lazy_module
from gitodb.objects.format import ObjectFormat
from gitodb.purepath import pure
from gitodb.refs.base import (
    PSEUDO_REFS,
    PlannedWrite,
    Ref,
    ReflogEntry,
    RefStore,
    RefTransaction,
    committer_identity,
    is_root_ref,
)
from gitodb.refs.loose import read_ref_file
from gitodb.refs.table import RefTable, overlay, table_of
from gitodb.refs.table import native as native_table
from gitodb.refs.worktree import CURRENT, OTHER, locate
from gitodb.reftable.options import WriteOptions
from gitodb.reftable.records import LogRecord, RefRecord
from gitodb.reftable.stack import Stack
from gitodb.types import cached_property, cast

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from gitodb import durable, lockfile
    from gitodb.durable import FsyncPolicy
    from gitodb.lockfile import LockFile
else:
    # core.fsync is read when a ref is first written, and lock files are made only
    # for writing: listings need neither
    durable = lazy_module("gitodb.durable", globals(), "durable")
    lockfile = lazy_module("gitodb.lockfile", globals(), "lockfile")

_ENC = "utf-8"
_ERR = "surrogateescape"


class CompactionLockError(LockError):
    """Compaction failed the way Git reports with ``error:`` and the reftable error code
    as exit status: ``tables.list.lock`` taken (``REFTABLE_LOCK_ERROR``, 251), or a
    record too big for the block size (246)."""

    exit_status = 251


def _name(b: bytes) -> str:
    return b.decode(_ENC, _ERR)


def _bytes(s: str) -> bytes:
    return s.encode(_ENC, _ERR)


_new_tuple = tuple.__new__


def _to_ref(rec: RefRecord) -> Ref:
    # tuple.__new__ with the fields in order: a NamedTuple's keyword __new__ costs
    # about a microsecond, paid per ref by every listing
    if rec.value_type == 3:
        return _new_tuple(Ref, (_name(rec.name), None, _name(rec.target or b""), None))
    return _new_tuple(Ref, (rec.name.decode(_ENC, _ERR), rec.oid, None, rec.peeled))


def _is_exists_marker(g: LogRecord) -> bool:
    """Git's "reflog exists" record left by expiry: null ids, time 0, no message."""
    return g.time == 0 and not g.message and not g.name and g.old == g.new and not any(g.new)


class _Prepared:
    """A prepared reftable transaction: its plan, the stacks it holds locked, and per
    stack the encoded table (update index, bytes, max index; None: nothing to add)."""

    def __init__(
        self,
        plan: list[PlannedWrite],
        locks: list[tuple[Stack, LockFile]],
        tables: list[str | None] | None = None,
        stacks: list[Stack] | None = None,
    ) -> None:
        self.plan = plan
        self.locks = locks
        self.tables: list[str | None] = [] if tables is None else tables
        self.stacks: list[Stack] = [] if stacks is None else stacks

    def release(self) -> None:
        """Unlock, and remove written tables that did not get listed."""
        for _stack, lock in self.locks:
            lock.rollback()
        for st, name in zip(self.stacks, self.tables, strict=False):
            if name is not None:
                st.discard_table(name)


class ReftableRefStore(RefStore):
    """Refs in the reftable stack of ``git_dir/reftable``.

    In a linked worktree, ``worktree_dir/reftable`` holds its per-worktree refs (HEAD,
    pseudorefs, ``refs/bisect/``...), as Git does; ``worktrees/<id>/<ref>`` names
    reach another worktree's stack.
    """

    def __init__(
        self,
        git_dir: str | os.PathLike[str],
        fmt: ObjectFormat,
        config: object | None = None,
        *,
        worktree_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        # str paths: reading refs needs no pathlib (``git_dir`` is the Path, on first use)
        self.gitdir = pure(os.fspath(git_dir))
        self.fmt = fmt
        self.config = config
        get_int = getattr(config, "get_int", None)
        get_ulong = getattr(config, "get_ulong", get_int)
        block_size = (get_ulong("reftable.blocksize", 4096) if get_ulong else 4096) or 4096
        interval = (get_ulong("reftable.restartinterval", 16) if get_ulong else 16) or 16
        # Git dies on these while reading its config, in these words
        if block_size > 16777215:
            raise RefError("reftable block size cannot exceed 16MB")
        if interval > 65535:
            raise RefError("reftable block size cannot exceed 65535")
        self.lock_timeout = get_int("reftable.locktimeout", 100) if get_int else 100
        get_bool = getattr(config, "get_bool", None)
        # reftable.indexObjects=false: no object index (Git's skip_index_objects)
        index_objects = get_bool("reftable.indexobjects", True) if get_bool else True
        self.options = WriteOptions(
            block_size=block_size, restart_interval=interval, fmt=fmt, write_obj_index=index_objects
        )
        self.auto_compact = os.environ.get(
            "GIT_TEST_REFTABLE_AUTOCOMPACTION", "true"
        ).lower() not in ("false", "0", "no", "off")
        if get_bool is not None and not get_bool("reftable.autocompaction", True):
            self.auto_compact = False
        self.stack = self._open_stack(os.path.join(self.gitdir, "reftable"))
        #: the worktree's own git directory (the common one for the main worktree)
        self.owndir = pure(os.fspath(worktree_dir)) if worktree_dir is not None else self.gitdir
        self.worktree_stack = (
            self._open_stack(os.path.join(self.owndir, "reftable"))
            if worktree_dir is not None
            else None
        )
        self._other: dict[str, Stack] = {}

    @cached_property
    def git_dir(self) -> Path:
        """The common git directory."""
        from pathlib import Path

        return Path(self.gitdir)

    @cached_property
    def fsync(self) -> FsyncPolicy:
        """``core.fsync``'s policy for this store's writes (read at the first write)."""
        if self.config is None:
            return durable.DEFAULT_POLICY
        return durable.FsyncPolicy.from_config(self.config)

    @cached_property
    def file_mode(self) -> int:
        """The mode of the reftable files written: Git's calc_shared_perm(0666 & ~umask)
        for ``core.sharedRepository`` (worked out at the first write)."""
        raw_all = getattr(self.config, "get_raw_all", None)
        shared = raw_all("core.sharedrepository") if raw_all is not None else []
        return lockfile.shared_file_mode(
            lockfile.parse_shared_repository(shared[-1] if shared else None, present=bool(shared))
        )

    def close(self) -> None:
        """Unmap every table of this worktree's, the main and other worktrees' stacks."""
        for st in (self.stack, self.worktree_stack, *self._other.values()):
            if st is not None:
                st.close()

    def _open_stack(self, directory: str) -> Stack:
        return Stack(
            directory,
            self.options,
            auto_compact=self.auto_compact,
            lock_timeout_ms=self.lock_timeout,
            fsync=lambda: self.fsync,  # read at the stack's first write
            file_mode=lambda: self.file_mode,  # worked out at the first write
        )

    def _route(self, name: str) -> tuple[Stack, bytes]:
        """The stack that stores ``name`` and the name it has there."""
        kind, rel = locate(name)
        if kind == CURRENT and self.worktree_stack is not None:
            return self.worktree_stack, _bytes(rel)
        if kind == OTHER:
            wt_id, _, rest = rel.partition("/")
            st = self._other.get(wt_id)
            if st is None:
                st = self._open_stack(os.path.join(self.gitdir, "worktrees", wt_id, "reftable"))
                self._other[wt_id] = st
            return st, _bytes(rest)
        return self.stack, _bytes(rel)

    # -- reading ----------------------------------------------------------
    def read(self, name: str) -> Ref | None:
        if name in PSEUDO_REFS:
            # Git's refs_read_special_head: files in the git directory on every backend
            return read_ref_file(os.path.join(self.owndir, name), name, self.fmt)
        stack, stored = self._route(name)
        rec = stack.read_ref(stored)
        if rec is None:
            return None
        ref = _to_ref(rec)
        return Ref(name, oid=ref.oid, target=ref.target, peeled=ref.peeled)

    def iter_refs(self, prefix: str = "") -> Iterator[Ref]:
        p = _bytes(prefix)
        scan = p if p.startswith(b"refs/") else b"refs/"
        wt = self.worktree_stack
        if wt is None:
            for rec in self.stack.iter_refs(scan):
                if rec.name.startswith(p):
                    yield _to_ref(rec)
            return
        merged = [
            _to_ref(r)
            for r in self.stack.iter_refs(scan)
            if r.name.startswith(p) and locate(_name(r.name))[0] != CURRENT
        ]
        merged += [
            _to_ref(r)
            for r in wt.iter_refs(scan)
            if r.name.startswith(p) and locate(_name(r.name))[0] == CURRENT
        ]
        yield from sorted(merged, key=lambda r: _bytes(r.name))

    def ref_table(self, broken: list[str] | None = None) -> RefTable | None:
        """Every ref under ``refs/`` as a ``RefTable``: the oldest table's refs in one
        native pass, the newer tables' records (few, after compaction) and the
        symbolic refs resolved over it; None in a linked worktree, without the native
        core, or for a damaged table (``iter_refs`` reports it).  Refs a newer table
        sets have no peeled id in the table."""
        if self.worktree_stack is not None or not native_table:
            return None
        readers = self.stack.readers
        rawsz = self.fmt.rawsz
        if not readers:
            return table_of([], rawsz)
        base = readers[0].ref_table_parts()
        if base is None:
            return None
        parts, symrefs, _deleted = base
        # name -> its id, None (deleted), or True (a symbolic ref: resolved below)
        pending: dict[bytes, bytes | bool | None] = dict.fromkeys(symrefs, True)
        for r in readers[1:]:
            for rec in r.iter_refs(b"refs/"):
                t = rec.value_type
                pending[rec.name] = None if t == 0 else True if t == 3 else rec.oid
        names = sorted(pending)
        ids: list[bytes | None] = []
        for n in names:
            v = pending[n]
            if v is True:
                try:
                    resolved = self.resolve_ref(_name(n))
                except RefError:
                    if broken is None:
                        raise
                    resolved = None
                v = resolved[1] if resolved is not None else None
            ids.append(v if isinstance(v, bytes) else None)
        return overlay(RefTable(parts, rawsz), names, ids)

    def iter_root_refs(self) -> Iterator[Ref]:
        stack = self.worktree_stack or self.stack
        for rec in stack.iter_refs():
            if rec.name >= b"refs/":
                break  # root refs are upper case and sort before "refs/"
            name = _name(rec.name)
            if "/" not in name and is_root_ref(name):
                yield _to_ref(rec)

    # -- transactions -----------------------------------------------------
    def _stacks_for(self, tx: RefTransaction) -> list[Stack]:
        stacks = {id(self.stack): self.stack}
        if self.worktree_stack is not None:
            stacks[id(self.worktree_stack)] = self.worktree_stack
        for u in tx.updates:
            st = self._route(u.name)[0]
            stacks[id(st)] = st
        # one global lock order (by directory) so two writers cannot deadlock
        return sorted(stacks.values(), key=lambda st: st.dirname)

    def _write_tables(self, plan: list[PlannedWrite], prep: _Prepared) -> None:
        """Encode and write (unlisted) one table per stack for ``plan``."""
        from gitodb.reftable.writer import EntryTooLargeError  # here: reading never writes

        for st, name in zip(prep.stacks, prep.tables, strict=False):
            if name is not None:
                st.discard_table(name)
        prep.tables = []
        for st in prep.stacks:
            ui = st.next_update_index()
            try:
                enc = st.encode(*self._records(plan, ui, st), ui)
            except EntryTooLargeError:
                raise RefError("reftable: transaction failure: entry too large") from None
            prep.tables.append(st.write_table(enc[0], ui, enc[1]) if enc is not None else None)

    def _prepare(self, tx: RefTransaction) -> object:
        """Plan and encode the new tables first, then lock; if no stack changed
        meanwhile the encoded tables are used as they are, so the lock is held only
        for the final writes (many writers then rarely wait past the lock timeout).
        Otherwise plan and encode again under the locks."""
        stacks = self._stacks_for(tx)
        for st in stacks:
            st.reload()
        prep = _Prepared(self.plan(tx), [], stacks=stacks)  # a failing check needs no lock
        try:
            seen = [list(st.names) for st in stacks]
            self._write_tables(prep.plan, prep)
            for st in stacks:
                try:
                    prep.locks.append((st, st.lock()))
                except LockError as e:
                    # Git's reftable backend: REFTABLE_LOCK_ERROR, in these words
                    err = LockError("cannot lock references", details=e.details)
                    err.path = e.path
                    raise err from None
                st.reload()
            if [st.names for st in stacks] != seen:
                prep.plan = self.plan(tx)
                self._write_tables(prep.plan, prep)
        except BaseException:
            prep.release()
            raise
        return prep

    def _abort(self, tx: RefTransaction, prepared: object) -> None:
        cast(_Prepared, prepared).release()

    def _commit(self, tx: RefTransaction, prepared: object) -> None:
        prep = cast(_Prepared, prepared)
        try:
            for i, ((st, lock), name) in enumerate(zip(prep.locks, prep.tables, strict=True)):
                if name is None:
                    lock.rollback()
                else:
                    st.add_table(lock, name)
                    prep.tables[i] = None  # listed now: not ours to remove
        finally:
            prep.release()

    def _records(
        self, plan: list[PlannedWrite], ui: int, stack: Stack
    ) -> tuple[list[RefRecord], list[LogRecord]]:
        """The records of ``plan`` that ``stack`` stores, at update index ``ui``."""
        name, email, ts, tz = committer_identity(self.config)
        limit = self.options.block_size // 2
        refs: list[RefRecord] = []
        logs: dict[tuple[bytes, int], LogRecord] = {}
        for w in plan:
            st, bname = self._route(w.name)
            if st is stack:
                if w.ref is None:
                    refs.append(RefRecord(bname, ui, 0))
                    for g in stack.iter_logs(bname):
                        logs[(bname, g.update_index)] = LogRecord(bname, g.update_index, 0)
                elif w.ref.target is not None:
                    refs.append(RefRecord(bname, ui, 3, target=_bytes(w.ref.target)))
                elif w.ref.peeled is not None:
                    refs.append(RefRecord(bname, ui, 2, w.ref.oid, w.ref.peeled))
                else:
                    refs.append(RefRecord(bname, ui, 1, w.ref.oid))
            # Git stores every message with a newline, an empty one as just "\n"
            msg = w.message[:limit] + b"\n"
            for logname, old, new in w.logs:
                lst, key = self._route(logname)
                if lst is stack:
                    logs[(key, ui)] = LogRecord(
                        key, ui, 1, old, new, _bytes(name), _bytes(email), ts, tz, msg
                    )
        return refs, list(logs.values())

    # -- reflogs ----------------------------------------------------------
    def _entries(self, name: str) -> list[LogRecord]:
        stack, stored = self._route(name)
        return [g for g in stack.iter_logs(stored) if not _is_exists_marker(g)]

    def reflog(self, name: str) -> list[ReflogEntry]:
        out = []
        for g in reversed(self._entries(name)):
            msg = g.message[:-1] if g.message.endswith(b"\n") else g.message
            out.append(
                ReflogEntry(g.old, g.new, _name(g.name), _name(g.email), g.time, g.tz_offset, msg)
            )
        return out

    def reflog_exists(self, name: str) -> bool:
        stack, stored = self._route(name)
        return next(iter(stack.iter_logs(stored)), None) is not None

    def reflog_names(self) -> list[str]:
        names = [_name(n) for n in self.stack.log_refnames()]
        if self.worktree_stack is None:
            return names
        names = [n for n in names if locate(n)[0] != CURRENT]
        names += [
            n for n in map(_name, self.worktree_stack.log_refnames()) if locate(n)[0] == CURRENT
        ]
        return sorted(names, key=_bytes)

    def other_worktree_reflog_names(self) -> list[str]:
        out: list[str] = []
        wts = self.git_dir / "worktrees"
        here = self.worktree_stack.dir.parent.resolve() if self.worktree_stack is not None else None
        places = [] if here is None else [(self.stack, "main-worktree/")]
        if wts.is_dir():
            for wt_id in sorted(os.listdir(wts)):
                if (wts / wt_id).resolve() != here and (wts / wt_id / "reftable").is_dir():
                    places.append(
                        (self._route(f"worktrees/{wt_id}/HEAD")[0], f"worktrees/{wt_id}/")
                    )
        for stack, prefix in places:
            out += [prefix + n for n in map(_name, stack.log_refnames()) if locate(n)[0] == CURRENT]
        return sorted(out)

    def rewrite_reflog(
        self, name: str, keep: Callable[[int, ReflogEntry], bool], *, rewrite: bool = False
    ) -> int:
        target, bname = self._route(name)
        dropped = 0

        def build(stack: Stack, ui: int) -> tuple[list[RefRecord], list[LogRecord]]:
            nonlocal dropped
            recs = [g for g in stack.iter_logs(bname) if not _is_exists_marker(g)]
            entries = self.reflog(name)
            tomb = []
            last_kept = self.fmt.null_oid
            for i, e in enumerate(entries):
                g = recs[len(recs) - 1 - i]
                if not keep(i, e):
                    tomb.append(LogRecord(bname, g.update_index, 0))
                    continue
                if rewrite and g.old != last_kept:
                    tomb.append(g._replace(old=last_kept))  # same key: shadows the entry
                last_kept = g.new
            dropped = sum(1 for t in tomb if t.value_type == 0)
            if dropped and dropped == len(recs):
                # keep an empty reflog, like Git's expiry does
                tomb.append(LogRecord(bname, ui, 1, self.fmt.null_oid, self.fmt.null_oid))
            return [], tomb

        target.modify(build)
        return dropped

    def drop_reflog(self, name: str) -> bool:
        target, bname = self._route(name)
        found = False

        def build(stack: Stack, ui: int) -> tuple[list[RefRecord], list[LogRecord]]:
            nonlocal found
            tomb = [LogRecord(bname, g.update_index, 0) for g in stack.iter_logs(bname)]
            found = bool(tomb)
            return [], tomb

        target.modify(build)
        return found

    def append_reflog(self, name: str, entry: ReflogEntry) -> None:
        target, bname = self._route(name)
        limit = self.options.block_size // 2

        def build(stack: Stack, ui: int) -> tuple[list[RefRecord], list[LogRecord]]:
            return [], [
                LogRecord(
                    bname,
                    ui,
                    1,
                    entry.old,
                    entry.new,
                    _bytes(entry.name),
                    _bytes(entry.email),
                    entry.time,
                    entry.tz_offset,
                    entry.message[:limit] + b"\n",
                )
            ]

        target.modify(build)

    def import_refs(self, refs: list[Ref], logs: dict[str, list[ReflogEntry]]) -> None:
        """Fill an empty store with one table, as Git's initial transaction does.

        Refs get update index 1; log entries one index each, ref by ref in name
        order and oldest first, so that every reflog keeps its order.
        """
        records = []
        for ref in refs:
            name = _bytes(ref.name)
            if ref.target is not None:
                records.append(RefRecord(name, 1, 3, target=_bytes(ref.target)))
            elif ref.peeled is not None:
                records.append(RefRecord(name, 1, 2, ref.oid, ref.peeled))
            else:
                records.append(RefRecord(name, 1, 1, ref.oid))
        limit = self.options.block_size // 2
        log_records = []
        index = 0
        for refname in sorted(logs, key=_bytes):
            for e in logs[refname]:
                index += 1
                log_records.append(
                    LogRecord(
                        _bytes(refname),
                        index,
                        1,
                        e.old,
                        e.new,
                        _bytes(e.name),
                        _bytes(e.email),
                        e.time,
                        e.tz_offset,
                        e.message[:limit] + b"\n",
                    )
                )
        max_ui = max(index, 1)
        from gitodb.reftable.writer import TableWriter  # here: reading never writes

        data = TableWriter(self.options).write(records, log_records, 1, max_ui)
        lock = self.stack.lock()
        self.stack.commit_table(lock, data, 1, max_ui)

    def pack_refs(
        self,
        all_refs: bool = True,
        prune: bool = True,
        *,
        includes: list[str] | None = None,
        excludes: list[str] | None = None,
        auto: bool = False,
    ) -> bool:
        """Compact the stack (``git pack-refs`` on reftable): all tables into one, or
        with ``auto`` only as much as the geometric sequence asks.  Ref selection
        (``includes``/``excludes``) does not apply to reftable, as in Git."""
        from gitodb.reftable.writer import EntryTooLargeError  # here: reading never writes

        # in a linked worktree Git compacts the worktree's own stack
        stack = self.worktree_stack if self.worktree_stack is not None else self.stack
        try:
            return bool(stack.compact(auto=auto)) or not auto
        except LockError as e:
            err = CompactionLockError("unable to compact stack: data is locked")
            err.path = e.path
            raise err from None
        except EntryTooLargeError:
            too_big = CompactionLockError("unable to compact stack: entry too large")
            too_big.exit_status = 246  # REFTABLE_ENTRY_TOO_BIG_ERROR
            raise too_big from None
