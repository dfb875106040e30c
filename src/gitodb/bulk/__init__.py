"""Tables over many repositories, as Arrow record batches and Parquet files.

Needs the ``bulk`` extra (``pip install 'gitodb[bulk]'``: pyarrow, tqdm).  Each
table is a function of one repository with a fixed schema (``schema(name)``):
``objects``, ``refs``, ``commits``, ``files``, ``changes``, ``verify``; a
repository that cannot be read becomes a row of the ``errors`` table and the run
goes on.

Example::

    from gitodb import bulk
    for batch in bulk.table_batches("path/to/repo.git", "commits"):
        print(batch.num_rows)
    summary = bulk.run_local(bulk.discover(["/srv/repos"]), "objects", "/tmp/out", jobs=4)

``gitodb.dask.read_table`` builds the same tables as a Dask dataframe.
"""

from __future__ import annotations

from gitodb.bulk.discover import discover
from gitodb.bulk.runner import RunSummary, run_local
from gitodb.bulk.schema import ERRORS_SCHEMA, SCHEMAS, TABLE_NAMES, schema
from gitodb.bulk.tables import WHOLE, BulkUsageError, Options, parts, table_batches
from gitodb.bulk.tasks import Task, plan, task_table

__all__ = [
    "discover",
    "RunSummary",
    "run_local",
    "ERRORS_SCHEMA",
    "SCHEMAS",
    "TABLE_NAMES",
    "schema",
    "WHOLE",
    "BulkUsageError",
    "Options",
    "parts",
    "table_batches",
    "Task",
    "plan",
    "task_table",
]
