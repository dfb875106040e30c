"""``gitodb show-index``: list a pack index read from stdin, like ``git show-index``.

One line per object in index order: ``<offset> <id>`` for a version 1 index,
``<offset> <id> (<crc32>)`` for version 2.  The object format is the
repository's, or SHA-1 outside one, or ``--object-format=<hash>``.  The reading
is ``gitodb.pack.idx_stream``.
"""

from __future__ import annotations

import sys
from typing import Any

from gitodb.errors import GitodbError, RepositoryError
from gitodb.objects.format import SHA1, format_by_name
from gitodb.pack.idx_stream import iter_index_entries

USAGE = """usage: git show-index [--object-format=<hash-algorithm>] < <pack-idx-file>

    --[no-]object-format <hash-algorithm>
                          specify the hash algorithm to use

"""


def _usage_error(line: str, with_usage: bool = True) -> int:
    sys.stderr.write(line + "\n" + (USAGE if with_usage else ""))
    return 129


def run(argv: list[str], ctx: Any) -> int:
    """Entry point for ``gitodb show-index``."""
    hash_name: str | None = None
    it = iter(argv)
    for arg in it:
        if arg in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 129
        if arg == "--":
            continue
        if arg == "--no-object-format":
            hash_name = None
        elif arg == "--object-format" or arg.startswith("--object-format="):
            if "=" in arg:
                hash_name = arg.split("=", 1)[1]
            else:
                hash_name = next(it, None)
                if hash_name is None:
                    return _usage_error(
                        "error: option `object-format' requires a value", with_usage=False
                    )
        elif arg.startswith("--"):
            return _usage_error(f"error: unknown option `{arg[2:]}'")
        elif arg.startswith("-") and arg != "-":
            return _usage_error(f"error: unknown switch `{arg[1:2]}'")
        # Git ignores other arguments: the index always comes on stdin
    if hash_name is not None:
        try:
            fmt = format_by_name(hash_name)
        except GitodbError:
            raise GitodbError("Unknown hash algorithm") from None
    else:
        try:
            fmt = ctx.open_repository().object_format
        except RepositoryError:
            fmt = SHA1
    out = sys.stdout.buffer
    lines: list[bytes] = []
    try:
        for offset, oid, crc in iter_index_entries(sys.stdin.buffer, fmt):
            if crc is None:
                lines.append(b"%d %s\n" % (offset, oid.hex().encode()))
            else:
                lines.append(b"%d %s (%08x)\n" % (offset, oid.hex().encode(), crc))
            if len(lines) >= 4096:
                out.write(b"".join(lines))
                lines.clear()
    finally:
        out.write(b"".join(lines))  # what was listed before an error, as Git prints it
    return 0
