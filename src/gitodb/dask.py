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

``write_table`` runs a table on a ``distributed`` client and writes Parquet to any
URL fsspec knows (``s3://bucket/out``, ``/shared/out``...), the ``errors`` table
beside it; each task runs once for both.  A worker lost mid-run has its tasks run
again by the scheduler: partitions are written under fixed names, so a retried
task overwrites its own file and nothing is duplicated.
"""

from __future__ import annotations

import posixpath
import warnings
from collections.abc import Iterable
from typing import Any

import dask
import dask.dataframe as dd
import pandas as pd
import pyarrow as pa

from gitodb.bulk.discover import discover
from gitodb.bulk.schema import ERRORS_SCHEMA, schema
from gitodb.bulk.tables import Options
from gitodb.bulk.tasks import Task, largest_first, plan, task_table

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
            raise RuntimeError(f"{row['repository']} ({row['table']}, part {row['part']}): "
                               f"{row['error_class']}: {row['message']}")
        return to_pandas(data)


def _tasks(repos: Iterable[str] | str, table: str, options: Options) -> list[Task]:
    sources = [repos] if isinstance(repos, str) else list(repos)
    return plan(discover(sources), table, options)


def read_table(repos: Iterable[str] | str, table: str, *, errors: str = "raise",
               **options: Any) -> dd.DataFrame:
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
    return dd.from_map(_Partition(opts, errors), tasks, meta=meta(table),
                       label=f"gitodb-{table}", enforce_metadata=False)


def _both(task: Task, options: Options) -> tuple[pd.DataFrame, pd.DataFrame]:
    data, failed = task_table(task, options)
    return to_pandas(data), to_pandas(failed)


def write_table(repos: Iterable[str] | str, table: str, out: str, *, client: Any = None,
                progress: bool = False, **options: Any) -> dict[str, Any]:
    """Run ``table`` over ``repos`` on Dask and write ``out/<table>/`` and
    ``out/errors/<table>/`` as Parquet datasets (``out`` is any fsspec URL).

    Returns ``{"tasks": n, "rows": r, "failed": f, "failed_repositories": [...]}``;
    ``progress`` shows Dask's progress bar (with a client).  With ``client`` (a
    ``distributed.Client``) the work goes to its cluster; otherwise to the
    default scheduler.
    """
    opts = _options(options)
    opts.check(table)
    # Largest first: Dask runs tasks roughly in the order of their partitions.
    tasks = largest_first(_tasks(repos, table, opts))
    pairs = [dask.delayed(_both, nout=2, pure=True)(t, opts) for t in tasks]
    data = dd.from_delayed([p[0] for p in pairs], meta=meta(table), verify_meta=False) \
        if pairs else dd.from_pandas(meta(table), npartitions=1)
    failed = dd.from_delayed([p[1] for p in pairs], meta=to_pandas(ERRORS_SCHEMA.empty_table()),
                             verify_meta=False) \
        if pairs else dd.from_pandas(to_pandas(ERRORS_SCHEMA.empty_table()), npartitions=1)
    base = out.rstrip("/")
    writes = [
        data.to_parquet(posixpath.join(base, table), schema=schema(table), compute=False,
                        write_index=False, overwrite=True, write_metadata_file=False),
        failed.to_parquet(posixpath.join(base, "errors", table), schema=ERRORS_SCHEMA,
                          compute=False, write_index=False, overwrite=True,
                          write_metadata_file=False),
    ]
    counts = [dask.delayed(len)(d) for d in data.to_delayed()]
    names = [dask.delayed(_repositories)(d) for d in failed.to_delayed()]
    wanted = [*writes, *counts, *names]
    with warnings.catch_warnings():
        # Delayed tasks and dataframe expressions in one graph: Dask warns that it
        # materializes the expressions, which is what lets each task run once.
        warnings.filterwarnings("ignore", "Computing mixed collections", UserWarning)
        if client is not None:
            futures = client.compute(wanted)
            if progress:
                from distributed import progress as show_progress

                show_progress(futures)
            results = client.gather(futures)
        else:
            results = dask.compute(*wanted)
    n = len(counts)
    rows = sum(results[2:2 + n])
    failed_repos = sorted({r for part in results[2 + n:] for r in part})
    return {"tasks": len(tasks), "rows": int(rows), "failed": len(failed_repos),
            "failed_repositories": failed_repos}


def _repositories(frame: pd.DataFrame) -> list[str]:
    return [str(r) for r in frame["repository"]]
