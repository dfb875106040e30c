"""``gitodb version [--build-options]``, modelled on ``git version``."""

from __future__ import annotations

import argparse
import platform
import sys

import gitodb

USAGE = "usage: gitodb version [--build-options]"


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(message)


def run(argv: list[str], ctx: object) -> int:
    """Print gitodb's version; with ``--build-options`` also Python and zlib details."""
    parser = _Parser(prog="gitodb version", usage=USAGE[len("usage: "):], add_help=False)
    parser.add_argument("--build-options", action="store_true")
    parser.add_argument("-h", "--help", action="store_true")
    try:
        # Like git, extra non-option arguments are ignored.
        args, rest = parser.parse_known_args(argv)
        unknown = [a for a in rest if a.startswith("-")]
        if unknown:
            parser.error(f"unknown option `{unknown[0].lstrip('-')}'")
    except _UsageError as e:
        # Git prints the error and its usage and exits 129 on a bad option.
        sys.stderr.write(f"error: {e}\n{USAGE}\n")
        return 129
    if args.help:
        sys.stdout.write(f"{USAGE}\n\n    --build-options       also print build options\n\n")
        return 129
    out = [f"gitodb version {gitodb.__version__}\n"]
    if args.build_options:
        from gitodb.compress import info

        out.append(f"python: {platform.python_version()} "
                   f"({platform.python_implementation()})\n")
        from gitodb.objects import sha1dc

        out.extend(f"{key}: {value}\n" for key, value in info.build_options())
        # Git prints which SHA-1 it was built with ("SHA-1: SHA1_DC") and SHA-256.
        out.extend(f"{key}: {value}\n" for key, value in sha1dc.build_options())
    sys.stdout.write("".join(out))
    return 0
