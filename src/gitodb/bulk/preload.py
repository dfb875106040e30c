"""What every bulk worker needs loaded before its first task, loaded once.

Importing this module imports the storage layers a task uses and pyarrow's
Parquet writer, and converts one Python list to Arrow: pyarrow imports pandas
(when installed) on its first list conversion, 0.3 CPU seconds that a worker
would otherwise pay inside its first task.  The local engine imports it in the
driver before forking its workers (they start with all of it in memory); the
fork server imports it when fork cannot be used.
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
    for name in MODULES:
        importlib.import_module(name)
    pa.array(["warm"], pa.string())
    gc.collect()
    gc.freeze()


warm_up()
