"""``gitodb mktag [--[no-]strict]``: a tag object from standard input, checked as
``git mktag`` checks it (``ObjectWriter.write_tag_checked``); prints its id."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from gitodb.cli.options import Option, OptionParser
from gitodb.repo.write import ObjectWriter

if TYPE_CHECKING:
    from gitodb.cli.main import Context

PARSER = OptionParser(
    "mktag",
    [""],
    [Option(None, "strict", "bool", "enable more strict checking", initial=True)],
)


def run(argv: list[str], ctx: Context) -> int:
    """Entry point for ``gitodb mktag``."""
    opts, _args = PARSER.parse(argv)  # Git ignores other arguments
    data = sys.stdin.buffer.read()
    repo = ctx.open_repository()
    oid = ObjectWriter(repo).write_tag_checked(data, strict=opts.strict)
    sys.stdout.write(oid.hex() + "\n")
    return 0
