"""``gitodb bulk TABLE --repos FILE|DIR... --out DIR [options]``: tables over many repositories.

Tables: objects, refs, commits, files, changes, verify (schemas in
``gitodb.bulk.schema``).  Repositories come from list files or are found under
directories.  ``--engine local`` (default) runs ``-j`` processes and writes one
Parquet file per repository (per pack for large ones) under ``OUT/TABLE/``,
resumably; ``--engine dask`` runs the same tasks on a ``distributed`` scheduler
(``--scheduler``, or a local cluster of ``-j`` workers), in the same layout, where
``OUT`` may be any fsspec URL.  A repository that cannot be read becomes a row in
``OUT/errors/TABLE/``; the exit status is the number of failed repositories (at
most 125), 0 when all were read.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

USAGE = (
    "usage: gitodb bulk <table> --repos <file|dir>... --out <dir> [-j <n>]\n"
    "                   [--engine local|dask] [--scheduler <addr>] [--rev <rev>]\n"
    "                   [--content-limit <bytes>] [--message]"
)
TABLES = ("objects", "refs", "commits", "files", "changes", "verify")
MAX_STATUS = 125


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"error: {message}\n{USAGE}\n")
        raise SystemExit(129)


def _usage(message: str) -> int:
    sys.stderr.write(f"error: {message}\n{USAGE}\n")
    return 129


def _nonneg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is negative")
    return value


def run(argv: list[str], ctx: Any) -> int:
    """Run ``bulk`` with ``argv``; return the exit status."""
    p = _Parser(prog="gitodb bulk", add_help=False)
    p.add_argument("table", nargs="?")
    p.add_argument("--repos", nargs="+", action="extend", default=[])
    p.add_argument("--out")
    p.add_argument("-j", "--jobs", type=_nonneg, default=0)
    p.add_argument("--engine", choices=("local", "dask"), default="local")
    p.add_argument("--scheduler")
    p.add_argument("--rev")
    p.add_argument("--content-limit", type=_nonneg)
    p.add_argument("--message", action="store_true")
    p.add_argument("-h", "--help", action="store_true")
    args = p.parse_args(argv)
    if args.help:
        sys.stdout.write(USAGE + "\n")
        return 0
    if args.table is None:
        return _usage("a table is required (" + ", ".join(TABLES) + ")")
    if args.table not in TABLES:
        return _usage(f"unknown table '{args.table}' (tables: {', '.join(TABLES)})")
    if not args.repos:
        return _usage("--repos is required")
    if not args.out:
        return _usage("--out is required")
    if args.scheduler and args.engine != "dask":
        return _usage("--scheduler needs --engine dask")
    if args.engine == "local" and "://" in args.out:
        return _usage("the local engine writes to a directory; use --engine dask for a URL")
    try:
        from gitodb.bulk import BulkUsageError, Options, discover
    except ImportError as e:
        sys.stderr.write(
            f"fatal: gitodb bulk needs pyarrow and tqdm (pip install 'gitodb[bulk]'): {e}\n"
        )
        return 128
    if args.engine == "dask":
        try:
            import distributed  # noqa: F401

            import gitodb.dask  # noqa: F401
        except ImportError as e:
            sys.stderr.write(
                f"fatal: --engine dask needs dask and distributed "
                f"(pip install 'gitodb[bulk,dask]'): {e}\n"
            )
            return 128
    options = Options(rev=args.rev, content_limit=args.content_limit, message=args.message)
    try:
        options.check(args.table)
    except BulkUsageError as e:
        return _usage(str(e))
    repos = discover(args.repos)
    try:
        if args.engine == "dask":
            failed = _run_dask(args, repos, options)
        else:
            failed = _run_local(args, repos, options)
    except BulkUsageError as e:
        sys.stderr.write(f"fatal: {e}\n")
        return 128
    except OSError as e:  # the output cannot be written
        sys.stderr.write(f"fatal: {e}\n")
        return 128
    return min(failed, MAX_STATUS)


def _run_local(args: Any, repos: list[str], options: Any) -> int:
    from gitodb.bulk.runner import progress_printer, run_local
    from gitodb.bulk.tasks import plan

    total = len(plan(repos, args.table, options)) if sys.stderr.isatty() else 0
    update, close = progress_printer(total)
    try:
        summary = run_local(
            repos, args.table, args.out, jobs=args.jobs or None, options=options, on_result=update
        )
    finally:
        close()
    for r in summary.results:
        if r.error is not None:
            sys.stderr.write(
                f"error: {r.task.repository}: {r.error['error_class']}: {r.error['message']}\n"
            )
    sys.stderr.write(summary.line() + "\n")
    return len(summary.failed_repositories)


def _run_dask(args: Any, repos: list[str], options: Any) -> int:
    import distributed

    # distributed ships no complete type hints
    Client: Any = distributed.Client

    import gitodb.dask as gdask

    kwargs = {k: v for k, v in vars(options).items() if k in ("rev", "content_limit", "message")}
    cluster = None
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = gdask.local_cluster(args.jobs or os.cpu_count() or 1)
        client = Client(cluster)
    try:
        result = gdask.write_table(
            repos, args.table, args.out, client=client, progress=sys.stderr.isatty(), **kwargs
        )
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    failed = result["failed"]
    for r in result["results"]:
        if r.error is not None:
            sys.stderr.write(
                f"error: {r.task.repository}: {r.error['error_class']}: {r.error['message']}\n"
            )
    sys.stderr.write(
        f"bulk {args.table} (dask): {len(repos)} repositories, "
        f"{result['tasks']} tasks ({result['skipped']} already complete), "
        f"{result['rows']} rows, {failed} repositories failed\n"
    )
    return int(failed)
