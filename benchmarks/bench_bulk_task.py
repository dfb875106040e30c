"""bench_bulk_task: one large repository's bulk tasks against git's own commands.

A warm worker (``gitodb.bulk.preload`` imported) runs every task of a table for the
repository with ``run_task_to_file`` (Parquet written; for ``objects`` each part the
runner plans), its CPU from ``getrusage(RUSAGE_SELF)`` around the tasks; git runs
the command the subprocess pipeline of ``bench_bulk.py`` runs (text to /dev/null, no
parsing, no table), its CPU (user+sys, ``time``'s included) from ``os.wait4`` and its
max RSS from ``/usr/bin/time``.  Alternating, best of N.

    python benchmarks/bench_bulk_task.py [N] [TABLE...]     # N=5; objects commits files

The per-repository comparison that holds on a loaded machine; ``bench_bulk.py`` is
the benchmark of record for the corpus and the engines.  ``GITODB_BULK_REPO`` names
the repository (default ``../shared/corpus/libgit2.git``).
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile

import gitodb.bulk.preload  # noqa: F401  (a worker's imports, as the runner's)
from gitodb.bulk.tables import Options, parts
from gitodb.bulk.tasks import Task, run_task_to_file

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.environ.get("GITODB_BULK_REPO", os.path.join(HERE, "../../shared/corpus/libgit2.git"))
CHECK = "%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase)"
LOG = "%H%x1f%T%x1f%P%x1f%an%x1f%ae%x1f%ad%x1f%cn%x1f%ce%x1f%cd%x1f%s"
GIT = {
    "objects": ["cat-file", "--batch-all-objects", f"--batch-check={CHECK}"],
    "commits": ["log", "--all", "--topo-order", "--date=raw", "-z", f"--format={LOG}"],
    "files": ["ls-tree", "-r", "-l", "-z", "HEAD"],
}


def git_cpu(args: list[str]) -> tuple[float, int]:
    """CPU seconds and max RSS (MiB) of one git command.  The RSS is ``/usr/bin/time
    -f %M``'s: a forked child's ``ru_maxrss`` counts the parent's pages before exec."""
    argv = ["/usr/bin/time", "-f", "%M", "git", "--git-dir", REPO, *args]
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(argv, stdout=null, stderr=subprocess.PIPE)
        assert p.stderr is not None
        err = p.stderr.read()
        _pid, _status, ru = os.wait4(p.pid, 0)
    return ru.ru_utime + ru.ru_stime, int(err.split()[-1]) // 1024


def task_cpu(table: str) -> float:
    """CPU seconds of every task of ``table`` for the repository, Parquet written."""
    out = tempfile.mkdtemp()
    try:
        t0 = resource.getrusage(resource.RUSAGE_SELF)
        for part in parts(REPO, table, Options()):
            run_task_to_file(Task(REPO, table, part), Options(), out)
        t1 = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        shutil.rmtree(out)
    return t1.ru_utime + t1.ru_stime - t0.ru_utime - t0.ru_stime


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 5
    tables = argv[1:] or list(GIT)
    print("| table | gitodb task CPU s | git command CPU s | git max RSS | git / gitodb | load |")
    print("|---|---|---|---|---|---|")
    for table in tables:
        task_cpu(table)  # warm: pyarrow's first-use imports
        best_task, best_git = float("inf"), (float("inf"), 0)
        for _ in range(n):
            best_task = min(best_task, task_cpu(table))
            best_git = min(best_git, git_cpu(GIT[table]))
        cpu, rss = best_git
        load = os.getloadavg()[0]
        print(
            f"| {table} | {best_task:.3f} | {cpu:.3f} | {rss} MiB | {cpu / best_task:.2f}x "
            f"| {load:.1f} |",
            flush=True,
        )
    rss_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"max RSS of the gitodb worker: {rss_self} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
