"""``gitodb version [--build-options]``, modelled on ``git version``."""

from __future__ import annotations

import platform
import sys

import gitodb
from gitodb.cli.options import Option, OptionParser

PARSER = OptionParser("version", ["[--build-options]"], [
    Option(None, "build-options", "bool", "also print build options"),
])


def run(argv: list[str], ctx: object) -> int:
    """Print gitodb's version; with ``--build-options`` also Python and zlib details."""
    args, _ignored = PARSER.parse(argv)  # like Git, other arguments are ignored
    out = [f"gitodb version {gitodb.__version__}\n"]
    if args.build_options:
        from gitodb.compress import info

        out.append(f"python: {platform.python_version()} "
                   f"({platform.python_implementation()})\n")
        from gitodb.objects import sha1dc

        out.extend(f"{key}: {value}\n" for key, value in info.build_options())
        # Git prints which SHA-1 it was built with ("SHA-1: SHA1_DC") and SHA-256.
        out.extend(f"{key}: {value}\n" for key, value in sha1dc.build_options())
        out.append(f"native-core: {_native_core()}\n")
    sys.stdout.write("".join(out))
    return 0


def _native_core() -> str:
    """Which C parts are built: ``gitodb._native`` and ``gitodb.pack._cdelta``."""
    from gitodb.objects import sha1dc
    from gitodb.pack import delta

    parts = [("gitodb._native", sha1dc.native_available()),
             ("gitodb.pack._cdelta", delta.native_available())]
    missing = [name for name, built in parts if not built]
    if not missing:
        return "built (" + ", ".join(name for name, _ in parts) + ")"
    return ("missing " + ", ".join(missing) + " (pure-Python fallback, much slower: "
            "install a binary wheel or build with a C compiler)")
