"""The reftable stack: ``reftable/tables.list``, the merged view, and safe updates.

``tables.list`` names the tables oldest first; a reader merges them newest first,
so a newer record (or tombstone) hides older ones with the same key.

Writers follow Git's protocol: create ``tables.list.lock`` exclusively (a second
writer retries for ``reftable.lockTimeout`` with Git's backoff, then gets
``LockError``), re-read the list, write the new table under a
temporary name and rename it to ``0x<min>-0x<max>-<random>.ref``, write the new
list into the lock file and rename it over ``tables.list``.  Any failure removes
what was written, so ``tables.list`` and the existing tables stay untouched.
After each addition the stack is compacted geometrically like Git does.
New tables and the new list are synced before their renames when ``core.fsync``
includes ``reference`` (Git's default does not).
"""

from __future__ import annotations

import os

from gitodb.errors import GitodbError, LockError, ReftableError
from gitodb.lazymod import lazy_module
from gitodb.purepath import pure
from gitodb.reftable.basics import FOOTER_SIZE, HEADER_SIZE
from gitodb.reftable.options import WriteOptions
from gitodb.reftable.reader import TableReader
from gitodb.reftable.records import LogRecord, RefRecord
from gitodb.types import cached_property

TYPE_CHECKING = False
if TYPE_CHECKING:
    import heapq
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from gitodb import durable, lockfile
    from gitodb.durable import FsyncPolicy
    from gitodb.lockfile import LockFile
else:
    durable = lazy_module("gitodb.durable", globals(), "durable")
    lockfile = lazy_module("gitodb.lockfile", globals(), "lockfile")  # writers only
    heapq = lazy_module("heapq", globals(), "heapq")  # merging two tables or more

GEOMETRIC_FACTOR = 2

Changes = tuple[list[RefRecord], list[LogRecord]]


def table_name(min_ui: int, max_ui: int) -> str:
    """Git's table file name: ``0x%012x-0x%012x-%08x.ref`` with a random suffix."""
    import secrets  # here: only a write names a table (secrets brings random, hashlib)

    return f"0x{min_ui:012x}-0x{max_ui:012x}-{secrets.randbits(32):08x}.ref"


def compaction_segment(sizes: list[int], factor: int = GEOMETRIC_FACTOR) -> tuple[int, int]:
    """[start, end) of the tables to merge so sizes form a geometric sequence again.

    Like Git: walk from the newest table back to the first one that is not at least
    ``factor`` times bigger than its successor (the end), then keep extending the
    start while an older table is smaller than ``factor`` times the accumulated size.
    """
    n = len(sizes)
    if n <= 1:
        return 0, 0
    end = 0
    total = 0
    i = n - 1
    while i > 0:
        if sizes[i - 1] < sizes[i] * factor:
            end = i + 1
            total = sizes[i]
            break
        i -= 1
    if end == 0:
        return 0, 0
    start = end
    while i > 0:
        cur = total
        total += sizes[i - 1]
        if sizes[i - 1] < cur * factor:
            start = i - 1
        i -= 1
    return (start, end) if end - start > 1 else (0, 0)


class Stack:
    """The tables of one ``reftable/`` directory and their merged view."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        options: WriteOptions | None = None,
        *,
        auto_compact: bool = True,
        lock_timeout_ms: int = 100,
        fsync: FsyncPolicy | Callable[[], FsyncPolicy] | None = None,
        file_mode: int | Callable[[], int] = 0o644,
    ) -> None:
        """Open the stack in ``directory``; writers wait up to ``lock_timeout_ms`` for
        ``tables.list.lock`` (Git's ``reftable.lockTimeout``; -1 waits forever) and
        flush tables and the list to disk as the ``core.fsync`` policy ``fsync`` says
        (Git's default when None; a function giving it is called at the first write).
        ``file_mode``: the mode of the files written, or a function giving it (called
        at the first write too)."""
        # a str path: reading refs needs no pathlib (``dir`` is the Path, on first use)
        self.dirname = pure(os.fspath(directory))
        self._fsync = fsync
        self._file_mode = file_mode
        self.lock_timeout_ms = lock_timeout_ms
        self.list_path = os.path.join(self.dirname, "tables.list")
        self.lock_path = self.list_path + ".lock"
        self.options = options or WriteOptions()
        self.auto_compact = auto_compact
        self.names: list[str] = []
        self.readers: list[TableReader] = []
        self.reload()

    @cached_property
    def fsync(self) -> FsyncPolicy:
        """The ``core.fsync`` policy the stack's writes follow."""
        given = self._fsync
        if given is None:
            return durable.DEFAULT_POLICY
        return given() if callable(given) else given

    @cached_property
    def file_mode(self) -> int:
        """The mode of the tables and tables.list written (core.sharedRepository, umask)."""
        given = self._file_mode
        return given() if callable(given) else given

    @cached_property
    def dir(self) -> Path:
        """The stack's directory."""
        from pathlib import Path

        return Path(self.dirname)

    # -- reading ----------------------------------------------------------
    def _read_list(self) -> list[str]:
        try:
            with open(self.list_path, "rb") as f:
                text = f.read().decode("utf-8", "surrogateescape")
        except FileNotFoundError:
            return []
        except OSError as e:
            raise ReftableError(
                f"unable to read tables.list: {e.strerror}", path=self.list_path
            ) from None
        return [line for line in text.split("\n") if line]

    def close(self) -> None:
        """Unmap every table; ``reload()`` maps the listed tables again."""
        for r in self.readers:
            r.close()
        self.names, self.readers = [], []

    def reload(self) -> None:
        """Re-read ``tables.list``, keeping readers of tables still listed."""
        for attempt in range(3):
            names = self._read_list()
            old = dict(zip(self.names, self.readers, strict=True))
            readers = []
            try:
                for name in names:
                    if "/" in name or name.startswith("."):
                        raise ReftableError(
                            f"bad table name '{name}' in tables.list", path=self.list_path
                        )
                    r = old.pop(name, None)
                    if r is None:
                        path = os.path.join(self.dirname, name)
                        if not os.path.exists(path):
                            raise ReftableError(
                                f"tables.list names missing table {name}",
                                path=self.list_path,
                                offset=0,
                            )
                        try:
                            r = TableReader(path)
                        except OSError as e:
                            raise ReftableError(
                                f"unable to open table {name}: {e.strerror}", path=path
                            ) from None
                    readers.append(r)
            except ReftableError:
                # A concurrent compaction may have replaced the list meanwhile: retry.
                if attempt == 2 or self._read_list() == names:
                    raise
                continue
            self.names, self.readers = names, readers
            return

    def next_update_index(self) -> int:
        """The update index a new table must use."""
        return self.readers[-1].max_update_index + 1 if self.readers else 1

    def read_ref(self, name: bytes) -> RefRecord | None:
        """The newest record for ``name`` (None if absent or deleted)."""
        for r in reversed(self.readers):
            rec = r.seek_ref(name)
            if rec is not None:
                return None if rec.value_type == 0 else rec
        return None

    def iter_refs(
        self,
        prefix: bytes = b"",
        *,
        keep_deletions: bool = False,
        readers: list[TableReader] | None = None,
    ) -> Iterator[RefRecord]:
        """Merged refs starting with ``prefix``, sorted; newest table wins."""
        rs = self.readers if readers is None else readers
        if len(rs) == 1:
            its = rs[0].iter_refs(prefix)
            yield from (its if keep_deletions else (r for r in its if r.value_type != 0))
            return
        streams = [_tagged_refs(r.iter_refs(prefix), -i) for i, r in enumerate(rs)]
        last = None
        for name, _, rec in heapq.merge(*streams):
            if name == last:
                continue
            last = name
            if rec.value_type != 0 or keep_deletions:
                yield rec

    def iter_logs(
        self,
        refname: bytes | None = None,
        *,
        keep_deletions: bool = False,
        readers: list[TableReader] | None = None,
    ) -> Iterator[LogRecord]:
        """Merged log records (one ref's, or all), by name then newest first."""
        rs = self.readers if readers is None else readers
        if len(rs) == 1:
            its = rs[0].iter_logs(refname)
            yield from (its if keep_deletions else (g for g in its if g.value_type != 0))
            return
        streams = [_tagged_logs(r.iter_logs(refname), -i) for i, r in enumerate(rs)]
        last = None
        for name, nui, _, g in heapq.merge(*streams):
            if (name, nui) == last:
                continue
            last = (name, nui)
            if g.value_type != 0 or keep_deletions:
                yield g

    # -- writing ----------------------------------------------------------
    def _lock(self, timeout_ms: int | None = None) -> LockFile:
        timeout = self.lock_timeout_ms if timeout_ms is None else timeout_ms
        return lockfile.LockFile(self.list_path, timeout_ms=timeout, final_mode=self.file_mode)

    def _write_table(self, data: bytes, min_ui: int, max_ui: int) -> str:
        try:
            import tempfile  # here: only a write (tempfile brings shutil, zlib, bz2, lzma)

            fd, tmp = tempfile.mkstemp(
                prefix=f"0x{min_ui:012x}-0x{max_ui:012x}-", suffix=".tmp", dir=self.dirname
            )
        except OSError as e:
            raise ReftableError(
                f"unable to create new table: {e.strerror}", path=self.dirname
            ) from None
        try:
            try:
                lockfile.write_all(fd, data)
                self._flush(fd, tmp)
            finally:
                os.close(fd)
            os.chmod(tmp, self.file_mode)
            name = table_name(min_ui, max_ui)
            os.rename(tmp, os.path.join(self.dirname, name))
        except OSError as e:
            _unlink(tmp)
            raise ReftableError(f"unable to write new table: {e.strerror}", path=tmp) from None
        except BaseException:
            _unlink(tmp)
            raise
        return name

    def _flush(self, fd: int, path: str | os.PathLike[str]) -> None:
        """Flush a table or the list to disk if ``core.fsync`` covers references.

        Git's default ``core.fsync`` does not, which also keeps ``tables.list.lock``
        from being held while the disk catches up.
        """
        self.fsync.sync(durable.Component.REFERENCE, fd, os.fspath(path))

    def _commit_list(self, lock: LockFile, names: list[str]) -> None:
        """Write the new list into the held lock and rename it over ``tables.list``."""
        lock.write("".join(n + "\n" for n in names).encode("utf-8", "surrogateescape"))
        try:
            self._flush(lock.fd, lock.lock_path)
        except OSError as e:
            raise ReftableError(
                f"unable to write '{lock.lock_path}': {e.strerror}", path=lock.lock_path
            ) from None
        lock.commit()

    def lock(self) -> LockFile:
        """Take ``tables.list.lock`` (waiting up to the lock timeout, then ``LockError``)."""
        try:
            os.makedirs(self.dirname, exist_ok=True)
        except OSError as e:
            raise ReftableError(
                f"unable to create '{self.dirname}': {e.strerror}", path=self.dirname
            ) from None
        return self._lock()

    def unlock(self, lock: LockFile) -> None:
        """Give up a lock from ``lock()`` without changing anything."""
        lock.rollback()

    def commit_locked(
        self, lock: LockFile, refs: list[RefRecord], logs: list[LogRecord], update_index: int
    ) -> None:
        """Write one table with these records and release the lock (always)."""
        self.modify(lambda _s, _ui: (refs, logs), locked=lock, update_index=update_index)

    def log_refnames(self) -> list[bytes]:
        """Names of refs that have at least one live log record, sorted."""
        names: set[bytes] = set()
        for r in self.readers:
            names.update(r.log_refnames())
        return [n for n in sorted(names) if next(self.iter_logs(n), None) is not None]

    def encode(
        self, refs: list[RefRecord], logs: list[LogRecord], update_index: int
    ) -> tuple[bytes, int] | None:
        """The table bytes for these records and its max update index (None: nothing).

        Log records may carry older update indexes (tombstones, rewritten reflogs);
        only newer ones widen the table's range.
        """
        if not refs and not logs:
            return None
        max_ui = max(
            [update_index]
            + [r.update_index for r in refs]
            + [g.update_index for g in logs if g.update_index > update_index]
        )
        from gitodb.reftable.writer import TableWriter  # here: reading never writes

        return TableWriter(self.options).write(refs, logs, update_index, max_ui), max_ui

    def write_table(self, data: bytes, min_ui: int, max_ui: int) -> str:
        """Write an encoded table under its final name; it is not live until listed.

        Callers do this before taking the lock, so the lock is held only for the list.
        """
        return self._write_table(data, min_ui, max_ui)

    def discard_table(self, name: str) -> None:
        """Remove a table written by ``write_table`` that never got listed."""
        if name not in self._read_list():
            _unlink(os.path.join(self.dirname, name))

    def add_table(self, lock: LockFile, name: str) -> None:
        """List a written table on top of the (locked, current) stack; always unlocks."""
        try:
            self._commit_list(lock, self.names + [name])
        except BaseException:
            if lock.held:
                _unlink(os.path.join(self.dirname, name))
            raise
        finally:
            lock.rollback()
        self.reload()
        if self.auto_compact:
            try:
                self.compact(auto=True)
            except GitodbError:
                pass  # the update is committed; compaction is an optimisation Git retries

    def commit_table(self, lock: LockFile, data: bytes, min_ui: int, max_ui: int) -> None:
        """Write and list an encoded table on the (locked, current) stack; always unlocks."""
        try:
            name = self._write_table(data, min_ui, max_ui)
        except BaseException:
            lock.rollback()
            raise
        self.add_table(lock, name)

    def modify(
        self,
        build: Callable[[Stack, int], Changes],
        *,
        locked: LockFile | None = None,
        update_index: int | None = None,
    ) -> None:
        """Add one table holding ``build(stack, update_index)``'s records, atomically.

        ``build`` runs under the lock on a freshly reloaded stack, so it can check old
        values; it returns (refs, logs) whose update indexes are ``update_index``
        (logs may use more indexes above it).  Raising inside leaves everything as it was,
        and the lock is released on every path.
        """
        lock = locked if locked is not None else self.lock()
        try:
            self.reload()
            ui = self.next_update_index() if update_index is None else update_index
            encoded = self.encode(*build(self, ui), ui)
        except BaseException:
            lock.rollback()
            raise
        if encoded is None:
            lock.rollback()
            return
        self.commit_table(lock, encoded[0], ui, encoded[1])

    def compact(self, *, auto: bool = False) -> bool:
        """Merge tables: all of them, or (``auto``) Git's geometric segment.  True if done.

        Like Git, the merge runs without ``tables.list.lock``: the segment's tables are
        locked (``<table>.lock``) so no other compaction takes them, the list lock is
        released while merging, and taken again only to swap the segment for the new
        table, keeping any tables other writers appended meanwhile.
        """
        try:
            lock = self._lock(timeout_ms=0 if auto else None)
        except LockError:
            if auto:
                return False  # someone else is writing; they will compact
            raise
        table_locks: list[LockFile] = []
        new_name = None
        try:
            try:
                self.reload()
                n = len(self.readers)
                if auto:
                    sizes = [
                        max(r.size - (HEADER_SIZE[r.version] + FOOTER_SIZE[r.version] - 1), 1)
                        for r in self.readers
                    ]
                    start, end = compaction_segment(sizes)
                else:
                    start, end = 0, n
                if end - start < (2 if auto else 1) or (
                    not auto and n == 1 and end == 1 and self._is_compact()
                ):
                    return False
                old = self.names[start:end]
                try:
                    for name in old:
                        path = os.path.join(self.dirname, name)
                        table_locks.append(lockfile.LockFile(path, timeout_ms=0, final_mode=None))
                except LockError:
                    if auto:
                        return False  # another compaction has some of these tables
                    raise
                seg = self.readers[start:end]
                keep = start > 0  # tombstones must survive while older tables remain
            finally:
                lock.rollback()
            refs = list(self.iter_refs(keep_deletions=keep, readers=seg))
            logs = list(self.iter_logs(keep_deletions=keep, readers=seg))
            min_ui, max_ui = seg[0].min_update_index, seg[-1].max_update_index
            from gitodb.reftable.writer import TableWriter

            data = TableWriter(self.options).write(refs, logs, min_ui, max_ui)
            new_name = self._write_table(data, min_ui, max_ui)
            lock = self._lock()
            self.reload()
            at = self.names.index(old[0]) if old[0] in self.names else -1
            if at < 0 or self.names[at : at + len(old)] != old:
                raise ReftableError(
                    "tables to compact changed while they were locked", path=self.list_path
                )
            self._commit_list(lock, self.names[:at] + [new_name] + self.names[at + len(old) :])
        except BaseException:
            if new_name is not None and new_name not in self._read_list():
                _unlink(os.path.join(self.dirname, new_name))
            raise
        finally:
            lock.rollback()
            for tl in table_locks:
                tl.rollback()
        for r in seg:
            r.close()
        self.names = []
        self.readers = []
        for name in old:
            _unlink(os.path.join(self.dirname, name))
        self.reload()
        return True

    def _is_compact(self) -> bool:
        """A single table with no tombstones needs no full compaction."""
        r = self.readers[0]
        return not any(x.value_type == 0 for x in r.iter_refs()) and not any(
            g.value_type == 0 for g in r.iter_logs()
        )


def _tagged_refs(it: Iterator[RefRecord], rank: int) -> Iterator[tuple[bytes, int, RefRecord]]:
    for rec in it:
        yield rec.name, rank, rec


def _tagged_logs(it: Iterator[LogRecord], rank: int) -> Iterator[tuple[bytes, int, int, LogRecord]]:
    for g in it:
        yield g.refname, -g.update_index, rank, g


def _unlink(path: str | os.PathLike[str]) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
