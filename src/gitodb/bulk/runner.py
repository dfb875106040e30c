"""The local engine: tasks on a process pool, Parquet files, a manifest, resumable.

Layout of an output directory ``OUT`` for table ``T``::

    OUT/T/<key>.parquet             one per repository (or per pack of a split one)
    OUT/errors/T/<key>.parquet      one errors row per failed task
    OUT/T/_options.json             the table options the files were made with
    OUT/T/_manifest.json            every task: repository, part, file, rows, error

A rerun skips every task whose data file exists (files appear only complete, by
rename) and runs the rest, failed ones included; a rerun with other table options
is refused.  Workers receive paths, open the repository themselves and close it
when their task ends.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import posixpath
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from gitodb.bulk.tables import DEFAULT_OPTIONS, BulkUsageError, Options
from gitodb.bulk.tasks import (
    LOCAL,
    TMP_MARK,
    LocalStore,
    Task,
    TaskResult,
    data_path,
    errors_path,
    largest_first,
    plan,
    run_task_to_file,
)
from gitodb.types import Progress


@dataclass
class RunSummary:
    """What a run did, summed over its tasks."""

    table: str
    tasks: int = 0
    done: int = 0
    skipped: int = 0
    failed: int = 0
    rows: int = 0
    bytes_written: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    max_rss: int = 0
    failed_repositories: set[str] = field(default_factory=set)
    results: list[TaskResult] = field(default_factory=list)

    def add(self, r: TaskResult) -> None:
        """Count one task's result."""
        self.results.append(r)
        if r.skipped:
            self.skipped += 1
            return
        self.done += 1
        self.rows += r.rows
        self.bytes_written += r.bytes_written
        self.cpu_seconds += r.cpu_seconds
        self.max_rss = max(self.max_rss, r.max_rss)
        if r.error is not None:
            self.failed += 1
            self.failed_repositories.add(r.task.repository)

    def line(self) -> str:
        """The final summary line."""
        repos = len({r.task.repository for r in self.results})
        rate = self.rows / self.seconds if self.seconds > 0 else 0.0
        return (
            f"bulk {self.table}: {repos} repositories, {self.tasks} tasks "
            f"({self.skipped} already complete), {self.rows} rows, "
            f"{self.bytes_written / 1e6:.1f} MB written in {self.seconds:.1f}s "
            f"({rate:.0f} rows/s), {len(self.failed_repositories)} repositories failed"
        )


def check_options_file(out: str, table: str, options: Options, store: LocalStore = LOCAL) -> None:
    """Record the table options beside the output, or refuse a rerun that differs."""
    path = posixpath.join(out, table, "_options.json")
    wanted = options.table_options()
    text = store.read_text(path)
    if text is None:
        store.makedirs(posixpath.dirname(path))
        store.write_text(path, json.dumps(wanted, indent=1, sort_keys=True) + "\n")
        return
    stored = json.loads(text)
    if stored != wanted:
        raise BulkUsageError(
            f"'{posixpath.join(out, table)}' was made with other options "
            f"({stored}); use another --out directory"
        )


def _remove_stale_temporaries(out: str, table: str) -> None:
    """Temporary files a killed run left behind (never complete, never listed)."""
    for d in (os.path.join(out, table), os.path.join(out, "errors", table)):
        try:
            names = os.listdir(d)
        except FileNotFoundError:
            continue
        for n in names:
            if TMP_MARK in n:
                try:
                    os.unlink(os.path.join(d, n))
                except FileNotFoundError:
                    pass


def write_manifest(
    out: str,
    table: str,
    tasks: list[Task],
    store: LocalStore = LOCAL,
    written: dict[Task, int] | None = None,
) -> str:
    """``OUT/<table>/_manifest.json`` from the files in the store; returns its path.

    ``written``: the rows of the data files this run wrote, which are then not read
    back (the others' counts come from their Parquet footers)."""
    written = written or {}
    entries = []
    for t in tasks:
        data, err = data_path(out, t), errors_path(out, t)
        entry: dict[str, Any] = {
            "repository": t.repository,
            "part": t.part,
            "file": posixpath.relpath(data, out)
            if "://" not in out
            else data[len(out) :].lstrip("/"),
        }
        if t in written:
            entry["rows"] = written[t]
            entry["status"] = "complete"
        elif store.exists(data):
            entry["rows"] = store.num_rows(data)
            entry["status"] = "complete"
        elif store.exists(err):
            entry["status"] = "failed"
            entry["errors_file"] = err[len(out) :].lstrip("/")
        else:
            entry["status"] = "missing"
        entries.append(entry)
    path = posixpath.join(out, table, "_manifest.json")
    store.write_text(
        path, json.dumps({"table": table, "tasks": entries}, indent=1, sort_keys=True) + "\n"
    )
    return path


def _pool(jobs: int) -> ProcessPoolExecutor:
    """``jobs`` worker processes that start with gitodb and pyarrow loaded.

    Forked from this process when that is safe (Linux, no other thread running:
    a forked thread's locks would be held forever), after ``gitodb.bulk.preload``
    warmed it up, so a worker costs a fork and no imports; otherwise from a fork
    server that imported the same module once.
    """
    import gitodb.bulk.preload  # noqa: F401  (the imports and warm-up, once)

    methods = multiprocessing.get_all_start_methods()
    # Linux only: on macOS system libraries are not fork-safe (Python defaults to spawn).
    if sys.platform.startswith("linux") and "fork" in methods and threading.active_count() == 1:
        return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"))
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    if ctx.get_start_method() == "forkserver":
        ctx.set_forkserver_preload(["gitodb.bulk.preload"])
    return ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)


def run_local(
    repositories: Iterable[str],
    table: str,
    out: str,
    *,
    jobs: int | None = None,
    options: Options = DEFAULT_OPTIONS,
    on_result: Callable[[TaskResult], None] | None = None,
    progress: Progress | None = None,
) -> RunSummary:
    """Run ``table`` over ``repositories`` into ``out`` on ``jobs`` processes.

    ``on_result`` receives each task's ``TaskResult`` (skipped ones too);
    ``progress`` (``gitodb.types.Progress``) hears ``("Running tasks", done, total,
    finished)`` after each.
    """
    if progress is not None:
        user_on_result = on_result
        done = [0]

        def on_result(r: TaskResult) -> None:
            done[0] += 1
            if user_on_result is not None:
                user_on_result(r)
            progress("Running tasks", done[0], summary.tasks, done[0] == summary.tasks)

    options.check(table)
    out = os.path.abspath(out)
    check_options_file(out, table, options)
    _remove_stale_temporaries(out, table)
    tasks = plan(list(repositories), table, options)
    summary = RunSummary(table, tasks=len(tasks))
    start = time.perf_counter()
    todo = []
    for t in tasks:
        if os.path.exists(data_path(out, t)):
            r = TaskResult(t, skipped=True)
            summary.add(r)
            if on_result:
                on_result(r)
        else:
            todo.append(t)
    jobs = max(1, jobs or os.cpu_count() or 1)

    def record(r: TaskResult) -> None:
        summary.add(r)
        if on_result:
            on_result(r)

    try:
        if jobs == 1 or len(todo) <= 1:
            for t in todo:
                record(run_task_to_file(t, options, out))
        else:
            with _pool(min(jobs, len(todo))) as pool:
                pending: set[Future[TaskResult]] = {
                    pool.submit(run_task_to_file, t, options, out) for t in largest_first(todo)
                }
                try:
                    while pending:
                        finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                        for f in finished:
                            record(f.result())
                except BaseException:
                    for f in pending:
                        f.cancel()
                    raise
    finally:
        summary.seconds = time.perf_counter() - start
        written = {r.task: r.rows for r in summary.results if not r.skipped and r.error is None}
        write_manifest(out, table, tasks, written=written)
    return summary


def progress_printer(
    total: int, stream: Any = None
) -> tuple[Callable[[TaskResult], None], Callable[[], None]]:
    """A progress bar callback (on a terminal only) and its closer."""
    stream = stream if stream is not None else sys.stderr
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return (lambda r: None), (lambda: None)
    from tqdm import tqdm

    tqdm.monitor_interval = 0
    bar = tqdm(total=total, unit="task", file=stream, dynamic_ncols=True)
    state = {"rows": 0, "bytes": 0, "start": time.perf_counter()}

    def update(r: TaskResult) -> None:
        state["rows"] += r.rows
        state["bytes"] += r.bytes_written
        elapsed = max(1e-9, time.perf_counter() - state["start"])
        bar.set_postfix_str(
            f"{state['rows']} rows, {state['bytes'] / 1e6 / elapsed:.1f} MB/s", refresh=False
        )
        bar.update(1)

    return update, bar.close
