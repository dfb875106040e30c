"""``gitodb unpack-objects``: store the objects of a pack read from stdin as loose objects.

``[-n] [-q] [-r] [--strict] [--max-input-size=<n>] [--pack_header=<v>,<n>]``, like
``git unpack-objects``:
``-n`` checks without writing, ``-q`` hides progress, ``-r`` skips damaged entries
(exit status 1 when one is skipped or met without ``-r``),
``--strict[=<msg-id>=<severity>,...]`` runs Git's fsck on each object and checks
that what it names exists.  Input after the pack goes to stdout.
The work is ``gitodb.repo.unpack``.
"""

from __future__ import annotations

import sys
from typing import Any

from gitodb.cli.index_pack import _pack_header, _parse_size
from gitodb.cli.options import as_gitodb_usage
from gitodb.repo.unpack import UnpackAbort, unpack_objects

USAGE = "usage: git unpack-objects [-n] [-q] [-r] [--strict]\n"


def run(argv: list[str], ctx: Any) -> int:
    """Entry point for ``gitodb unpack-objects``."""
    dry_run = quiet = recover = strict = False
    strict_msgs: list[str] = []
    max_input = 0
    header = b""
    for arg in argv:
        if arg == "-n":
            dry_run = True
        elif arg == "-q":
            quiet = True
        elif arg == "-r":
            recover = True
        elif arg == "--strict" or arg.startswith("--strict="):
            strict = True
            if "=" in arg:
                strict_msgs.append(arg.split("=", 1)[1])
        elif arg.startswith("--pack_header="):
            # receive-pack read the pack header itself to choose unpack-objects
            header = _pack_header(arg.split("=", 1)[1])
        elif arg.startswith("--max-input-size="):
            # strtoumax, as Git: the leading digits count, the rest is ignored
            max_input = _parse_size(arg.split("=", 1)[1])
        elif arg in ("-h", "--help"):
            sys.stdout.write(as_gitodb_usage(USAGE))
            return 129
        else:
            sys.stderr.write(as_gitodb_usage(USAGE))
            return 129
    repo = ctx.open_repository()
    show = not quiet and sys.stderr.isatty()

    def progress(title: str, done: int, total: int, finished: bool) -> None:
        end = ", done.\n" if finished else "\r"
        sys.stderr.write(f"{title}: {done * 100 // total:3d}% ({done}/{total}){end}")

    def report(message: str) -> None:
        sys.stderr.write(f"error: {message}\n")

    try:
        result = unpack_objects(
            repo,
            sys.stdin.buffer,
            header=header,
            dry_run=dry_run,
            recover=recover,
            strict=strict,
            strict_msgs=strict_msgs,
            max_input_size=max_input,
            report=report,
            progress=progress if show else None,
        )
    except UnpackAbort:
        return 1
    sys.stdout.buffer.write(result.trailing)
    return 1 if result.had_errors else 0
