"""``gitodb show-index``: list a pack index read from stdin, like ``git show-index``.

One line per object in index order: ``<offset> <id>`` for a version 1 index,
``<offset> <id> (<crc32>)`` for version 2.  The object format is the
repository's, or SHA-1 outside one, or ``--object-format=<hash>``.  The reading
is ``gitodb.pack.idx_stream``.
"""

from __future__ import annotations

import sys
from typing import Any

from gitodb.cli.options import Option, OptionParser
from gitodb.errors import GitodbError, RepositoryError
from gitodb.objects.format import SHA1, format_by_name
from gitodb.pack.idx_stream import iter_index_entries

PARSER = OptionParser(
    "show-index",
    ["[--object-format=<hash-algorithm>] < <pack-idx-file>"],
    [
        Option(
            None,
            "object-format",
            "string",
            "specify the hash algorithm to use",
            argh="hash-algorithm",
        ),
    ],
)


def run(argv: list[str], ctx: Any) -> int:
    """Entry point for ``gitodb show-index``."""
    # Git ignores arguments other than options: the index always comes on stdin
    opts, _args = PARSER.parse(argv)
    hash_name: str | None = opts.object_format
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
