"""``gitodb pack-refs [--all] [--no-prune]``: packed-refs, or full reftable compaction."""

from __future__ import annotations

import sys
from typing import Any

from gitodb.refs.peel import make_peeler

USAGE = "usage: git pack-refs [--all] [--no-prune]"


def run(argv: list[str], ctx: Any) -> int:
    """Pack refs: files backend writes packed-refs; reftable compacts the stack to one table."""
    all_refs = False
    prune = True
    for a in argv:
        if a == "--all":
            all_refs = True
        elif a == "--no-prune":
            prune = False
        elif a == "--prune":
            prune = True
        else:
            sys.stderr.write(USAGE + "\n")
            return 129
    repo = ctx.open_repository()
    refs = repo.refs
    refs.peeler = make_peeler(repo.odb, repo.object_format.hexsz)
    refs.pack_refs(all_refs=all_refs, prune=prune)
    return 0
