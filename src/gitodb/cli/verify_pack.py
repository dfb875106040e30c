"""``gitodb verify-pack [-v] [-s] <pack>.idx...``: check packs like ``git verify-pack``.

Each pack is indexed again from its bytes (pack checksum, zlib streams, CRC-32s
and object ids) and the result compared with the stored index.  ``-v`` prints
Git's per-object lines, the delta chain histogram and ``<pack>: ok``; ``-s``
only the histogram.  A damaged pack prints ``fatal: ...`` on stderr (and
``<pack>: bad`` with ``-v``/``-s``); the exit status is 1 if any pack failed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gitodb.cli import output
from gitodb.errors import GitodbError, ObjectCollisionError, RepositoryError
from gitodb.objects import SHA1, format_by_name
from gitodb.pack.cache import DEFAULT_DELTA_BASE_CACHE_LIMIT
from gitodb.pack.verify import format_stats, pack_name_for, verify_pack

USAGE = "usage: git verify-pack [-v | --verbose] [-s | --stat-only] [--] <pack>.idx..."


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"error: {message}\n{USAGE}\n")
        raise SystemExit(129)


def run(argv: list[str], ctx: Any) -> int:
    """Run ``verify-pack`` with ``argv``; return the exit status."""
    p = _Parser(prog="gitodb verify-pack", add_help=False)
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("-s", "--stat-only", action="store_true")
    p.add_argument("--object-format")
    p.add_argument("-h", "--help", action="store_true")
    p.add_argument("packs", nargs="*")
    args = p.parse_args(argv)
    if args.help or not args.packs:
        sys.stderr.write(USAGE + "\n")
        return 129
    limit = DEFAULT_DELTA_BASE_CACHE_LIMIT
    try:
        repo = ctx.open_repository()
        fmt = repo.object_format
        limit = repo.config.get_ulong("core.deltabasecachelimit", limit)
    except RepositoryError:
        fmt = SHA1
    if args.object_format:
        fmt = format_by_name(args.object_format)
    try:
        return _verify_all(args.packs, fmt, args.verbose, args.stat_only, limit)
    except output.StdoutWriteError as e:
        if isinstance(e, BrokenPipeError):
            raise
        # Git's verify-pack has its index-pack child print the listing: the child
        # dies of the failed write and verify-pack itself exits 1.
        output.stdout_failed(e)
        return 1


def _verify_all(packs: list[str], fmt: Any, verbose: bool, stat_only: bool,
                limit: int) -> int:
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
