"""The bulk tables as Dask dataframes, and writing them through a Dask cluster.

Needs the ``dask`` extra (``pip install 'gitodb[bulk,dask]'``).  Partitions are the
tasks of ``gitodb.bulk`` (one repository, or one pack of a split repository); a
partition is built on a worker from paths alone, so inputs must be on storage
every worker sees (a shared file system).  Columns are Arrow-backed pandas
dtypes (``pd.ArrowDtype``) of the table's schema.

Example::

    import gitodb.dask
    df = gitodb.dask.read_table(["/data/a.git", "/data/b.git"], "commits")
    df.groupby("author_email").size().compute()

``write_table`` runs a table on a ``distributed`` client, each task writing its
Parquet file to any URL fsspec knows (``s3://bucket/out``, ``/shared/out``...) in the
local engine's layout (``errors`` files, manifest, resumable).  A worker lost
mid-run has its tasks run again by the scheduler: files have fixed names, so a
retried task rewrites its own file and nothing is duplicated.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import dask as _dask
import dask.dataframe as _dd
import pandas as pd
import pyarrow as pa

from gitodb.bulk.discover import discover
from gitodb.bulk.runner import check_options_file, write_manifest
from gitodb.bulk.schema import schema
from gitodb.bulk.store import FsspecStore, run_task_to_store
from gitodb.bulk.tables import Options
from gitodb.bulk.tasks import (
    Task,
    TaskResult,
    data_path,
    largest_first,
    plan,
    task_table,
)

# Dask ships no complete type hints: its entry points are used untyped, as Any.
dask: Any = _dask
dd: Any = _dd

__all__ = ["read_table", "write_table", "to_pandas", "meta", "local_cluster", "FsspecStore"]


def to_pandas(table: pa.Table) -> pd.DataFrame:
    """An Arrow table as pandas with Arrow-backed columns (nulls and lists kept)."""
    return table.to_pandas(types_mapper=pd.ArrowDtype)


def meta(table: str) -> pd.DataFrame:
    """The empty dataframe of ``table``'s schema (Dask's ``meta``)."""
    return to_pandas(schema(table).empty_table())


def _options(options: dict[str, Any]) -> Options:
    return Options(**options)


class _Partition:
    """Builds one partition; ``errors`` says what a failed task gives."""

    def __init__(self, options: Options, errors: str) -> None:
        self.options = options
        self.errors = errors

    def __call__(self, task: Task) -> pd.DataFrame:
        data, failed = task_table(task, self.options)
        if failed.num_rows and self.errors == "raise":
            row = failed.to_pylist()[0]
            raise RuntimeError(
                f"{row['repository']} ({row['table']}, part {row['part']}): "
                f"{row['error_class']}: {row['message']}"
            )
        return to_pandas(data)


def _tasks(repos: Iterable[str] | str, table: str, options: Options) -> list[Task]:
    sources = [repos] if isinstance(repos, str) else list(repos)
    return plan(discover(sources), table, options)


def read_table(
    repos: Iterable[str] | str, table: str, *, errors: str = "raise", **options: Any
) -> dd.DataFrame:
    """``table`` over ``repos`` (paths, list files or directories, as the CLI's
    ``--repos``) as a ``dask.dataframe``, one partition per task.

    ``options`` are those of ``gitodb.bulk.Options`` (``rev``, ``content_limit``,
    ``message``, ``split_bytes``...).  ``errors="raise"`` fails the computation on
    a repository that cannot be read; ``"skip"`` leaves its partition empty (use
    ``write_table`` or the CLI to keep the ``errors`` rows).
    """
    if errors not in ("raise", "skip"):
        raise ValueError("errors must be 'raise' or 'skip'")
    opts = _options(options)
    tasks = _tasks(repos, table, opts)
    if not tasks:
        return dd.from_pandas(meta(table), npartitions=1)
    return dd.from_map(
        _Partition(opts, errors),
        tasks,
        meta=meta(table),
        label=f"gitodb-{table}",
        enforce_metadata=False,
    )


def local_cluster(workers: int, **kwargs: Any) -> Any:
    """A ``distributed.LocalCluster`` of ``workers`` single-threaded worker processes
    for bulk tables (what ``gitodb bulk --engine dask`` starts without
    ``--scheduler``).  The workers' statistical profiler is off: it samples every
    thread's stack every 10 ms, which costs a task holding the GIL about 10% of its
    time (on a cluster of your own, set ``distributed.worker.profile.enabled: false``
    likewise).  ``kwargs`` go to ``LocalCluster``."""
    import distributed

    LocalCluster: Any = distributed.LocalCluster  # untyped

    options: dict[str, Any] = {
        "n_workers": workers,
        "threads_per_worker": 1,
        "processes": True,
        "dashboard_address": None,
    }
    options.update(kwargs)
    with dask.config.set({"distributed.worker.profile.enabled": False}):
        return LocalCluster(**options)


def write_table(
    repos: Iterable[str] | str,
    table: str,
    out: str,
    *,
    client: Any = None,
    progress: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """Run ``table`` over ``repos`` on Dask, each task writing its Parquet file to
    ``out/<table>/`` (and ``out/errors/<table>/`` when it fails), the same layout,
    manifest and resumability as the local engine; ``out`` is any fsspec URL.

    Returns ``{"tasks", "skipped", "rows", "failed", "failed_repositories", "results"}``;
    ``progress`` shows Dask's progress bar (with a client).  With ``client`` (a
    ``distributed.Client``) the work goes to its cluster, otherwise to Dask's
    default scheduler.  A task retried after a lost worker rewrites its own file.
    """
    opts = _options(options)
    opts.check(table)
    out = out.rstrip("/")
    store = FsspecStore(out)
    check_options_file(out, table, opts, store)
    planned = _tasks(repos, table, opts)
    todo = [t for t in planned if not store.exists(data_path(out, t))]
    ordered = largest_first(todo)
    try:
        if client is not None:
            # Largest first, as the local engine: the scheduler's own order of
            # independent tasks follows their keys (hashes), so a large repository's
            # parts could start last and leave the other workers idle at the end.
            n = len(ordered)
            futures = [
                client.submit(run_task_to_store, t, opts, out, store, priority=n - i, pure=True)
                for i, t in enumerate(ordered)
            ]
            if progress:
                import distributed

                show_progress: Any = distributed.progress

                show_progress(futures)
            results: list[TaskResult] = client.gather(futures)
        else:
            run = dask.delayed(run_task_to_store, pure=True)
            jobs = [run(t, opts, out, store) for t in ordered]
            results = list(dask.compute(*jobs))
    finally:
        write_manifest(out, table, planned, store)
    failed = sorted({r.task.repository for r in results if r.error is not None})
    return {
        "tasks": len(planned),
        "skipped": len(planned) - len(todo),
        "rows": sum(r.rows for r in results),
        "failed": len(failed),
        "failed_repositories": failed,
        "results": results,
    }
