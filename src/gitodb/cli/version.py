"""``gitodb version [--build-options]``, modelled on ``git version``."""

from __future__ import annotations

import sys

import gitodb
from gitodb.cli.options import Option, OptionParser

PARSER = OptionParser(
    "version",
    ["[--build-options]"],
    [
        Option(None, "build-options", "bool", "also print build options"),
    ],
)


def run(argv: list[str], ctx: object) -> int:
    """Print gitodb's version; with ``--build-options`` also Python and zlib details."""
    args, _ignored = PARSER.parse(argv)  # like Git, other arguments are ignored
    out = [f"gitodb version {gitodb.__version__}\n"]
    if args.build_options:
        import platform

        from gitodb.compress import info

        out.append(f"python: {platform.python_version()} ({platform.python_implementation()})\n")
        from gitodb.objects import sha1dc

        out.extend(f"{key}: {value}\n" for key, value in info.build_options())
        # Git prints which SHA-1 it was built with ("SHA-1: SHA1_DC") and SHA-256.
        out.extend(f"{key}: {value}\n" for key, value in sha1dc.build_options())
    sys.stdout.write("".join(out))
    return 0
