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

import os
import sys
from typing import Any

from gitodb.cli.options import Option, OptionParser, SimpleNamespace, appender, parse_int

TABLES = ("objects", "refs", "commits", "files", "changes", "verify")
ENGINES = ("local", "dask")
MAX_STATUS = 125

PARSER = OptionParser(
    "bulk",
    [
        "<table> --repos <file|dir>... --out <dir> [-j <n>]\n"
        "[--engine local|dask] [--scheduler <addr>] [--rev <rev>]\n"
        "[--content-limit <bytes>] [--message]",
    ],
    [
        Option(
            None,
            "repos",
            "callback",
            "list files of repositories, or directories to find them under",
            argh="file|dir",
            takes_value=True,
            callback=appender("repos"),
        ),
        Option(None, "out", "string", "the output directory (or URL with dask)", argh="dir"),
        Option("j", "jobs", "int", "worker processes (default: one per core)"),
        Option(
            None,
            "engine",
            "string",
            "local processes or a Dask cluster",
            argh="(local|dask)",
            literal_argh=True,
        ),
        Option(None, "scheduler", "string", "a Dask scheduler to connect to", argh="addr"),
        Option(None, "rev", "string", "the revision of the files table (default HEAD)", argh="rev"),
        Option(
            None,
            "content-limit",
            "string",
            "keep blob content up to this size (files table)",
            argh="bytes",
        ),
        Option(None, "message", "bool", "keep whole commit messages (commits table)"),
    ],
)


def run(argv: list[str], ctx: Any) -> int:
    """Run ``bulk`` with ``argv``; return the exit status."""
    opts, args = PARSER.parse(argv)
    # ``--repos a b c``: the values after the first are arguments after the table
    table = args[0] if args else None
    repos = [*(opts.repos or []), *args[1:]]
    engine = opts.engine or "local"
    if table is None:
        raise PARSER.usage_error("a table is required (" + ", ".join(TABLES) + ")")
    if table not in TABLES:
        raise PARSER.usage_error(f"unknown table '{table}' (tables: {', '.join(TABLES)})")
    if engine not in ENGINES:
        raise PARSER.usage_error(f"invalid engine '{engine}' (engines: {', '.join(ENGINES)})")
    content_limit = None
    if opts.content_limit is not None:
        content_limit = parse_int(opts.content_limit, "option `content-limit'")
    for name, value in (("-j", opts.jobs), ("--content-limit", content_limit)):
        if value is not None and value < 0:
            raise PARSER.usage_error(f"{name} is negative: {value}")
    if not repos:
        raise PARSER.usage_error("--repos is required")
    if not opts.out:
        raise PARSER.usage_error("--out is required")
    if opts.scheduler and engine != "dask":
        raise PARSER.usage_error("--scheduler needs --engine dask")
    if engine == "local" and "://" in opts.out:
        raise PARSER.usage_error(
            "the local engine writes to a directory; use --engine dask for a URL"
        )
    try:
        from gitodb.bulk import BulkUsageError, Options, discover
    except ImportError as e:
        sys.stderr.write(
            f"fatal: gitodb bulk needs pyarrow and tqdm (pip install 'gitodb[bulk]'): {e}\n"
        )
        return 128
    if engine == "dask":
        try:
            import distributed  # noqa: F401

            import gitodb.dask  # noqa: F401
        except ImportError as e:
            sys.stderr.write(
                f"fatal: --engine dask needs dask and distributed "
                f"(pip install 'gitodb[bulk,dask]'): {e}\n"
            )
            return 128
    options = Options(rev=opts.rev, content_limit=content_limit, message=opts.message)
    try:
        options.check(table)
    except BulkUsageError as e:
        raise PARSER.usage_error(str(e)) from None
    run_args = SimpleNamespace(
        table=table, out=opts.out, jobs=opts.jobs, engine=engine, scheduler=opts.scheduler
    )
    found = discover(repos)
    try:
        if engine == "dask":
            failed = _run_dask(run_args, found, options)
        else:
            failed = _run_local(run_args, found, options)
    except BulkUsageError as e:
        sys.stderr.write(f"fatal: {e}\n")
        return 128
    except OSError as e:  # the output cannot be written
        sys.stderr.write(f"fatal: {e}\n")
        return 128
    return min(failed, MAX_STATUS)


def _run_local(args: Any, repos: list[str], options: Any) -> int:
    import gitodb.bulk.preload  # noqa: F401  (with -j1 this process runs the tasks)
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
