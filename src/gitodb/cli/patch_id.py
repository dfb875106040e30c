"""``gitodb patch-id [--stable | --unstable | --verbatim]``: patch ids of patches on
standard input, one ``<patch-id> <commit-id>`` line each, like ``git patch-id``.

The computation is ``gitodb.history.patchid.patch_ids_of_text``.  Without an
option, ``patchid.stable`` and ``patchid.verbatim`` choose (``verbatim`` implies
``stable``); the ids use the repository's hash (SHA-1 outside a repository).
"""

from __future__ import annotations

import sys
from typing import Any

from gitodb.cli.options import Option, OptionParser
from gitodb.errors import ConfigError, RepositoryError

PARSER = OptionParser(
    "patch-id",
    ["[--stable | --unstable | --verbatim]"],
    [
        Option(
            None, "unstable", "cmdmode", "use the unstable patch ID algorithm", dest="mode", const=1
        ),
        Option(
            None, "stable", "cmdmode", "use the stable patch ID algorithm", dest="mode", const=2
        ),
        Option(
            None,
            "verbatim",
            "cmdmode",
            "don't strip whitespace from the patch",
            dest="mode",
            const=3,
        ),
    ],
    layout="2.55",
)


def run(argv: list[str], ctx: Any) -> int:
    """Print the patch id of each patch read from standard input."""
    args, _rest = PARSER.parse(argv)  # Git ignores arguments that are not options
    from gitodb.history.patchid import patch_ids_of_text

    try:
        repo = ctx.open_repository()
    except ConfigError:
        raise
    except RepositoryError:
        repo = None
    if repo is not None:
        config = repo.config
        fmt = repo.object_format
    else:
        from gitodb.objects import SHA1
        from gitodb.repo.config_levels import load_config

        config = load_config(overrides=ctx.config_overrides)
        fmt = SHA1
    verbatim = bool(config.get_bool("patchid.verbatim", False))
    stable = verbatim or bool(config.get_bool("patchid.stable", False))
    mode = args.mode
    if mode:
        stable, verbatim = mode > 1, mode == 3
    import hashlib

    new_hash = getattr(hashlib, fmt.name)
    write = sys.stdout.buffer.write
    for pid, oid in patch_ids_of_text(
        sys.stdin.buffer, stable=stable, verbatim=verbatim, new_hash=new_hash, hexsz=fmt.hexsz
    ):
        write(b"%s %s\n" % (pid.hex().encode(), oid.hex().encode()))
    return 0
