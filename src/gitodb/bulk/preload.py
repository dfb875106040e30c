"""What every bulk worker needs loaded before its first task, loaded once.

Importing this module imports the storage layers a task uses and pyarrow's
Parquet writer, and converts one Python list to Arrow: pyarrow imports pandas
(when installed) on its first list conversion, 0.3 CPU seconds that a worker
would otherwise pay inside its first task.  The local engine imports it in the
driver before forking its workers (they start with all of it in memory); the
fork server imports it when fork cannot be used, and ``gitodb bulk`` before its
first task (with ``-j1`` it runs them itself).

It also makes the C library's allocator pyarrow's default memory pool.  With the
mimalloc pool pyarrow picks on Linux, one libgit2 ``files`` task took 33-50 ms in
some processes and 85-140 ms in others (same page-fault count; the slow ones
spend the time clearing pages that mimalloc had given back to the system and
touched again); with the system pool it took 35-59 ms in every one of them.
"""

from __future__ import annotations

import gc
import importlib

import pyarrow as pa

#: modules every task needs
MODULES = (
    "gitodb.bulk.tasks",
    "gitodb.repo",
    "gitodb.repo.odb",
    "gitodb.repo.revparse",
    "gitodb.history.revwalk",
    "gitodb.history.treediff",
    "gitodb.pack.verify",
    "gitodb.refs.files",
    "gitodb.refs.reftable_store",
    "gitodb.compress",
    "pyarrow.parquet",
)


def warm_up() -> None:
    """Import ``MODULES``, make pyarrow load its optional pandas support, and move
    everything imported out of the cyclic collector's reach (``gc.freeze``): with
    pyarrow and pandas loaded, each full collection inside a task traversed their
    objects again (a tenth of a libgit2 commits task's CPU); frozen, forked workers
    also keep those pages shared."""
    pa.set_memory_pool(pa.system_memory_pool())
    for name in MODULES:
        importlib.import_module(name)
    pa.array(["warm"], pa.string())
    gc.collect()
    gc.freeze()


warm_up()
