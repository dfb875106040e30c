"""Tasks: one (repository, table, part), its output name, and running it.

A task is plain data (paths and names), so it can be sent to any process.  Its
output name is stable across runs (a readable stem of the path plus a hash of the
absolute path), which is what makes reruns resumable.  ``run_task_to_file`` writes
the Parquet file under a temporary name and renames it into place when complete:
a file with the final name is always whole.  A task that fails writes an
``errors`` file instead, and its partial data is deleted.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from gitodb import errors
from gitodb.bulk.commits import parse_slice
from gitodb.bulk.objects import parse_part
from gitodb.bulk.schema import ERRORS_SCHEMA, parquet_options, schema
from gitodb.bulk.tables import DEFAULT_OPTIONS, WHOLE, Options, parts, table_batches
from gitodb.errors import GitodbError

TMP_MARK = ".tmp-"
#: bytes a Parquet file is buffered by before they are written out
WRITE_BUFFER = 1 << 20


@dataclass(frozen=True)
class Task:
    """One unit of work: ``table`` rows of ``part`` of the repository at ``repository``."""

    repository: str
    table: str
    part: str = WHOLE

    @cached_property  # data_path and errors_path both ask for it
    def key(self) -> str:
        """The output file stem: ``<name>-<hash>`` plus ``.<part>`` for a split part."""
        name = os.path.basename(self.repository.rstrip("/")) or "root"
        if name == ".git":
            name = os.path.basename(os.path.dirname(self.repository.rstrip("/"))) or "root"
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", name.removesuffix(".git"))[:60] or "repo"
        digest = hashlib.sha1(self.repository.encode("utf-8", "surrogateescape")).hexdigest()
        stem = f"{name}-{digest[:12]}"
        if self.part != WHOLE:
            name, start, stop = parse_part(self.part)
            stem += "." + name.removesuffix(".pack")
            if stop is not None:
                stem += f".{start}-{stop}"
        return stem


def plan(repositories: list[str], table: str, options: Options = DEFAULT_OPTIONS) -> list[Task]:
    """The tasks of ``table`` over ``repositories`` (absolute paths), in order."""
    options.check(table)
    return [Task(r, table, p) for r in repositories for p in parts(r, table, options)]


def task_weight(task: Task) -> int:
    """A cheap size estimate of a task: the bytes of the packs (and loose objects) it
    reads, so that the largest can be started first."""
    objects = os.path.join(task.repository, "objects")
    if not os.path.isdir(objects):
        objects = os.path.join(task.repository, ".git", "objects")
    pack_dir = os.path.join(objects, "pack")
    try:
        names = os.listdir(pack_dir)
    except OSError:
        return 0
    share = 1.0
    piece = parse_slice(task.part)
    if piece is not None:  # a slice of a table over the whole history
        share = 1 / piece[1]
    elif task.part != WHOLE:
        name, start, stop = parse_part(task.part)
        names = [name] if name.endswith(".pack") else []
        if stop is not None:  # a range: its share of the pack's entries
            try:
                with open(os.path.join(pack_dir, name), "rb") as f:
                    count = int.from_bytes(f.read(12)[8:12], "big")
                share = (stop - start) / max(1, count)
            except OSError:
                pass
    total = 0
    for n in names:
        if n.endswith(".pack"):
            try:
                total += os.stat(os.path.join(pack_dir, n)).st_size
            except OSError:
                pass
    return int(total * share)


def largest_first(tasks: list[Task]) -> list[Task]:
    """``tasks`` by decreasing weight: a big repository started last would leave every
    other worker idle at the end of the run."""
    return sorted(tasks, key=task_weight, reverse=True)


def error_row(task: Task, e: BaseException) -> dict[str, Any]:
    """The ``errors`` row of a failed task."""
    file = getattr(e, "path", None) if isinstance(e, GitodbError) else getattr(e, "filename", None)
    offset = e.offset if isinstance(e, GitodbError) else None
    message = e.message if isinstance(e, GitodbError) else str(e)
    return {
        "repository": task.repository,
        "table": task.table,
        "part": task.part,
        "error_class": type(e).__name__,
        "message": message,
        "file": os.fsdecode(file) if file is not None else None,
        "offset": offset,
    }


def error_table(rows: list[dict[str, Any]]) -> pa.Table:
    """``errors`` rows as a table of the errors schema."""
    return pa.Table.from_pylist(rows, schema=ERRORS_SCHEMA)


@contextmanager
def _quiet() -> Iterator[None]:
    """Damage worked around (Git's error:/warning: lines) is not printed by tasks, whose
    output would interleave: what cannot be read is an errors row."""
    reporter = errors.reporter
    errors.reporter = _drop_report  # neither the CLI's lines nor Python warnings
    try:
        yield
    finally:
        errors.reporter = reporter


def _drop_report(level: str, message: str) -> None:
    """A report inside a task: nothing printed (see ``_quiet``)."""


def task_table(task: Task, options: Options) -> tuple[pa.Table, pa.Table]:
    """Run ``task`` in memory: ``(data, errors)``; on failure the data is empty."""
    try:
        with _quiet():
            batches = list(table_batches(task.repository, task.table, task.part, options))
    except Exception as e:  # any failure is this repository's: the run goes on
        return schema(task.table).empty_table(), error_table([error_row(task, e)])
    return (pa.Table.from_batches(batches, schema=schema(task.table)), error_table([]))


@dataclass
class TaskResult:
    """What a task did: rows written (or the error), seconds, the worker's max RSS,
    and which process ran it (``pid``, and ``parent_pid``, the process it came from)."""

    task: Task
    rows: int = 0
    bytes_written: int = 0
    error: dict[str, Any] | None = None
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    max_rss: int = 0
    skipped: bool = False
    pid: int = 0
    parent_pid: int = 0


def data_path(out: str, task: Task) -> str:
    """Where a task's rows go: ``OUT/<table>/<key>.parquet`` (``OUT`` a path or URL)."""
    return posixpath.join(out, task.table, task.key + ".parquet")


def errors_path(out: str, task: Task) -> str:
    """Where a failed task's ``errors`` row goes: ``OUT/errors/<table>/<key>.parquet``."""
    return posixpath.join(out, "errors", task.table, task.key + ".parquet")


def temp_path(path: str) -> str:
    """The temporary name ``path`` is written under: hidden (a leading dot), so that
    readers of the directory (pyarrow datasets, Dask) never see a partial file."""
    head, tail = os.path.split(path)
    return os.path.join(head, f".{tail}{TMP_MARK}{os.getpid()}")


class LocalStore:
    """Where output files go: a local directory (the default).  ``gitodb.dask`` has
    the same interface over fsspec, for any URL."""

    def makedirs(self, path: str) -> None:
        """Create directory ``path`` and its parents."""
        if not os.path.isdir(path):  # made by an earlier task: one stat, no mkdir
            os.makedirs(path, exist_ok=True)

    def exists(self, path: str) -> bool:
        """True if file ``path`` exists."""
        return os.path.exists(path)

    def remove(self, path: str) -> None:
        """Remove file ``path`` if it exists."""
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass

    def num_rows(self, path: str) -> int:
        """Rows of the Parquet file ``path`` (from its footer)."""
        return int(pq.ParquetFile(path).metadata.num_rows)

    def write_text(self, path: str, text: str) -> None:
        """Write ``text`` to ``path`` through a temporary file and a rename."""
        tmp = temp_path(path)
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)

    def read_text(self, path: str) -> str | None:
        """The text of ``path``, or None if it does not exist."""
        try:
            with open(path, encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def write_parquet(
        self, path: str, sch: pa.Schema, batches: Iterator[pa.RecordBatch]
    ) -> tuple[int, int]:
        """Write ``batches`` to ``path`` through a temporary file; ``(rows, bytes)``."""
        tmp = temp_path(path)
        rows = 0
        try:
            # Buffered: the writer's pages and footer go out in a few writes, not one
            # system call per page and header (36 for a small files table).
            with (
                pa.OSFile(tmp, "wb") as raw,
                pa.BufferedOutputStream(raw, WRITE_BUFFER) as sink,
                pq.ParquetWriter(sink, sch, **parquet_options(sch)) as writer,
            ):
                for batch in batches:
                    writer.write_batch(batch)
                    rows += batch.num_rows
            os.replace(tmp, path)
        except BaseException:
            self.remove(tmp)
            raise
        return rows, os.path.getsize(path)


LOCAL = LocalStore()


def _cpu(me: resource.struct_rusage | None = None) -> float:
    """CPU seconds of this process (``me``: its ``getrusage`` already taken) and its
    children so far."""
    if me is None:
        me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def run_task_to_file(
    task: Task, options: Options, out: str, store: LocalStore = LOCAL
) -> TaskResult:
    """Run ``task`` into its Parquet file under ``out`` (or its ``errors`` file)."""
    start = time.perf_counter()
    cpu = _cpu()
    result = TaskResult(task)
    dest = data_path(out, task)
    err_dest = errors_path(out, task)
    store.makedirs(posixpath.dirname(dest))
    try:
        with _quiet():
            result.rows, result.bytes_written = store.write_parquet(
                dest,
                schema(task.table),
                table_batches(task.repository, task.table, task.part, options),
            )
    except Exception as e:  # the repository's failure: recorded, the run goes on
        result.error = error_row(task, e)
        store.makedirs(posixpath.dirname(err_dest))
        store.write_parquet(err_dest, ERRORS_SCHEMA, iter(error_table([result.error]).to_batches()))
    else:
        store.remove(err_dest)  # failed in an earlier run, complete now
    result.seconds = time.perf_counter() - start
    me = resource.getrusage(resource.RUSAGE_SELF)
    result.cpu_seconds = _cpu(me) - cpu
    result.max_rss = me.ru_maxrss * 1024  # KiB on Linux
    result.pid, result.parent_pid = os.getpid(), os.getppid()
    return result
