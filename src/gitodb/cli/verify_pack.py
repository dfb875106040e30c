"""``gitodb verify-pack [-v] [-s] <pack>.idx...``: check packs like ``git verify-pack``.

Each pack is indexed again from its bytes (pack checksum, zlib streams, CRC-32s
and object ids) and the result compared with the stored index.  ``-v`` prints
Git's per-object lines, the delta chain histogram and ``<pack>: ok``; ``-s``
only the histogram.  A damaged pack prints ``fatal: ...`` on stderr (and
``<pack>: bad`` with ``-v``/``-s``); the exit status is 1 if any pack failed.
"""

from __future__ import annotations

import sys
from typing import Any

from gitodb.cli import output
from gitodb.cli.options import Option, OptionParser
from gitodb.errors import GitodbError, ObjectCollisionError, RepositoryError
from gitodb.objects import SHA1, format_by_name
from gitodb.pack.cache import DEFAULT_DELTA_BASE_CACHE_LIMIT
from gitodb.pack.verify import format_stats, pack_name_for, verify_pack

PARSER = OptionParser(
    "verify-pack",
    ["[-v | --verbose] [-s | --stat-only] [--] <pack>.idx..."],
    [
        Option("v", "verbose", "bool", "verbose"),
        Option("s", "stat-only", "bool", "show statistics only"),
        Option(None, "object-format", "string", "specify the hash algorithm to use", argh="hash"),
    ],
)


def run(argv: list[str], ctx: Any) -> int:
    """Run ``verify-pack`` with ``argv``; return the exit status."""
    args, packs = PARSER.parse(argv)
    if not packs:
        raise PARSER.usage_error()
    limit = DEFAULT_DELTA_BASE_CACHE_LIMIT
    try:
        repo = ctx.open_repository()
        fmt = repo.object_format
        limit = repo.config.get_ulong("core.deltabasecachelimit", limit)
    except RepositoryError:
        fmt = SHA1
    if args.object_format:
        try:
            fmt = format_by_name(args.object_format)
        except RepositoryError:
            # Git's index-pack child dies on it; verify-pack then exits 1.
            sys.stderr.write(f"fatal: unknown hash algorithm '{args.object_format}'\n")
            return 1
    try:
        return _verify_all(packs, fmt, args.verbose, args.stat_only, limit)
    except output.StdoutWriteError as e:
        if isinstance(e, BrokenPipeError):
            raise
        # Git's verify-pack has its index-pack child print the listing: the child
        # dies of the failed write and verify-pack itself exits 1.
        output.stdout_failed(e)
        return 1


def _verify_all(packs: list[str], fmt: Any, verbose: bool, stat_only: bool, limit: int) -> int:
    """Verify each pack, printing Git's listing; 1 if any pack is bad."""
    status = 0
    out = sys.stdout
    for arg in packs:
        pack_name = pack_name_for(arg)
        ok = True
        try:
            result = verify_pack(arg, fmt, delta_base_cache_limit=limit)
            if verbose or stat_only:
                out.write(format_stats(result, stat_only=stat_only))
            if result.index_error is not None:
                raise result.index_error
        except GitodbError as e:
            ok = False
            out.flush()
            # A collision gets Git's exact line (the location stays on the exception).
            message = e.git_message if isinstance(e, ObjectCollisionError) else str(e)
            sys.stderr.write(f"fatal: {message}\n")
            sys.stderr.flush()
        if verbose or stat_only:
            if not ok:
                out.write(f"{pack_name}: bad\n")
            elif not stat_only:
                out.write(f"{pack_name}: ok\n")
        out.flush()
        if not ok:
            status = 1
    return status
