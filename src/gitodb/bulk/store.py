"""Output files on any filesystem fsspec knows, and the task a Dask worker runs.

Kept apart from ``gitodb.dask`` so that a worker, which unpickles the function it
runs and so imports its module, loads fsspec and the bulk tables only, not
``dask.dataframe`` and its dependencies (a second or more of start-up and about
100 MB of memory per worker process).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from gitodb.bulk.schema import parquet_options
from gitodb.bulk.tables import Options
from gitodb.bulk.tasks import LocalStore, Task, TaskResult, run_task_to_file


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
            pq.ParquetWriter(f, sch, **parquet_options(sch)) as writer,
        ):
            for batch in batches:
                writer.write_batch(batch)
                rows += batch.num_rows
        return rows, int(self.fs.size(self._path(path)))


def run_task_to_store(task: Task, options: Options, out: str, store: FsspecStore) -> TaskResult:
    """``run_task_to_file`` into ``store``: what a Dask worker runs for one task."""
    return run_task_to_file(task, options, out, store)
