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

import posixpath
from collections.abc import Iterable, Iterator
from typing import Any

import dask as _dask
import dask.dataframe as _dd
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from gitodb.bulk.discover import discover
from gitodb.bulk.runner import check_options_file, write_manifest
from gitodb.bulk.schema import schema
from gitodb.bulk.tables import Options
from gitodb.bulk.tasks import (
    LocalStore,
    Task,
    TaskResult,
    data_path,
    largest_first,
    plan,
    run_task_to_file,
    task_table,
)

# Dask ships no complete type hints: its entry points are used untyped, as Any.
dask: Any = _dask
dd: Any = _dd

__all__ = ["read_table", "write_table", "to_pandas", "meta"]


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


class FsspecStore(LocalStore):
    """Output files on any filesystem fsspec knows (``s3://``, ``gs://``, ``file://``,
    a plain path).  On a local filesystem a file is written under a temporary name
    and renamed; on object stores an object appears only once it is complete."""

    def __init__(self, url: str) -> None:
        import fsspec

        self.url = url
        self.fs, self.root = fsspec.core.url_to_fs(url)
        self.local = "file" in (
            self.fs.protocol if isinstance(self.fs.protocol, tuple) else (self.fs.protocol,)
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (FsspecStore, (self.url,))

    def _path(self, path: str) -> str:
        # Paths are made from the URL the user gave; fsspec wants its own form.
        if path.startswith(self.url):
            path = posixpath.join(self.root, path[len(self.url) :].lstrip("/"))
        return path

    def makedirs(self, path: str) -> None:
        self.fs.makedirs(self._path(path), exist_ok=True)

    def exists(self, path: str) -> bool:
        return bool(self.fs.exists(self._path(path)))

    def remove(self, path: str) -> None:
        p = self._path(path)
        if self.fs.exists(p):
            self.fs.rm(p)

    def num_rows(self, path: str) -> int:
        with self.fs.open(self._path(path), "rb") as f:
            return int(pq.ParquetFile(f).metadata.num_rows)

    def read_text(self, path: str) -> str | None:
        p = self._path(path)
        if not self.fs.exists(p):
            return None
        with self.fs.open(p, "r", encoding="utf-8") as f:
            return str(f.read())

    def write_text(self, path: str, text: str) -> None:
        with self.fs.open(self._path(path), "w", encoding="utf-8") as f:
            f.write(text)

    def write_parquet(
        self, path: str, sch: pa.Schema, batches: Iterator[pa.RecordBatch]
    ) -> tuple[int, int]:
        if self.local:
            return super().write_parquet(self._path(path), sch, batches)
        rows = 0
        with (
            self.fs.open(self._path(path), "wb") as f,
            pq.ParquetWriter(f, sch, compression="zstd") as writer,
        ):
            for batch in batches:
                writer.write_batch(batch)
                rows += batch.num_rows
        return rows, int(self.fs.size(self._path(path)))


def _run(task: Task, options: Options, out: str, store: FsspecStore) -> TaskResult:
    return run_task_to_file(task, options, out, store)


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
    # Largest first: Dask starts tasks roughly in the order they are given.
    jobs = [dask.delayed(_run, pure=True)(t, opts, out, store) for t in largest_first(todo)]
    try:
        if client is not None:
            futures = client.compute(jobs)
            if progress:
                import distributed

                show_progress: Any = distributed.progress

                show_progress(futures)
            results: list[TaskResult] = client.gather(futures)
        else:
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
