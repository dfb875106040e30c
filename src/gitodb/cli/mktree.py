"""``gitodb mktree [-z] [--missing] [--batch]``: trees from ``ls-tree`` output on
standard input, like ``git mktree``; prints each tree's id.

With ``--batch`` a blank line ends one tree and starts the next.  The parsing and
checks are ``gitodb.repo.write`` (``parse_mktree_line``, ``check_tree_input``,
``write_tree_entries``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO

from gitodb.cli.options import Option, OptionParser
from gitodb.errors import GitodbError
from gitodb.repo.write import ObjectWriter, TreeInput, parse_mktree_line

if TYPE_CHECKING:
    from gitodb.cli.main import Context

PARSER = OptionParser(
    "mktree",
    ["[-z] [--missing] [--batch]"],
    [
        Option("z", None, "bool", "input is NUL terminated", dest="nul"),
        Option(None, "missing", "bool", "allow missing objects"),
        Option(None, "batch", "bool", "allow creation of more than one tree"),
    ],
)


def _lines(stream: BinaryIO, nul: bool) -> Iterator[bytes]:
    """Input records without terminators (Git's ``strbuf_getline_lf``/``_nul``)."""
    data = stream.read()
    sep = b"\0" if nul else b"\n"
    items = data.split(sep)
    if items and items[-1] == b"":
        items.pop()
    yield from items


def run(argv: list[str], ctx: Context) -> int:
    """Entry point for ``gitodb mktree``."""
    opts, _args = PARSER.parse(argv)  # Git ignores other arguments
    repo = ctx.open_repository()
    writer = ObjectWriter(repo)
    fmt = repo.object_format
    entries: list[TreeInput] = []
    out = sys.stdout

    def write_tree() -> None:
        oid = writer.write_tree_entries(entries, check=False)
        out.write(oid.hex() + "\n")
        out.flush()
        entries.clear()

    for line in _lines(sys.stdin.buffer, opts.nul):
        # the line as C reads it: up to its first NUL
        line = line.split(b"\0", 1)[0]
        if not line:
            if not opts.batch:
                raise GitodbError("input format error: (blank line only valid in batch mode)")
            write_tree()  # a blank line ends a tree, even an empty one
            continue
        entry = parse_mktree_line(line, fmt, nul_terminated=opts.nul)
        writer.check_tree_input(entry, allow_missing=opts.missing)
        entries.append(entry)
    # at the end: in batch mode an empty last tree is not written (the input's
    # last line may end in a blank one); otherwise the tree, empty or not
    if entries or not opts.batch:
        write_tree()
    return 0
