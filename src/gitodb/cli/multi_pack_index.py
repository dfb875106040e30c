"""``gitodb multi-pack-index [--object-dir=<dir>] [--[no-]progress] write|verify|expire``.

``write`` takes ``--preferred-pack=<pack>``, ``--stdin-packs`` and ``--no-bitmap``
(and ``--no-incremental``); ``midx.version`` picks the file version.  ``repack``
takes ``--batch-size=<n>``.  A thin shell over ``gitodb.pack.midx_write`` and
``gitodb.repo.midx_repack``.  Not here: ``--bitmap``, ``--incremental`` and
``compact`` (they answer with an error naming what is missing).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from gitodb.errors import GitodbError, MultiPackIndexError

_COMMON = """\
    --[no-]object-dir <directory>
                          object directory containing set of packfile and pack-index pairs
    --[no-]progress       force progress reporting
"""

USAGE = (
    """\
usage: git multi-pack-index [<options>] write [--preferred-pack=<pack>]
         [--[no-]bitmap] [--[no-]incremental] [--[no-]stdin-packs]
         [--refs-snapshot=<path>] [--[no-]write-chain-file]
         [--base=<checksum>]
   or: git multi-pack-index [<options>] compact [--[no-]incremental]
         [--[no-]bitmap] [--base=<checksum>] [--[no-]write-chain-file]
         <from> <to>
   or: git multi-pack-index [<options>] verify
   or: git multi-pack-index [<options>] expire
   or: git multi-pack-index [<options>] repack [--batch-size=<size>]

"""
    + _COMMON
    + "\n"
)

WRITE_USAGE = (
    """\
usage: git multi-pack-index [<options>] write [--preferred-pack=<pack>]
         [--[no-]bitmap] [--[no-]incremental] [--[no-]stdin-packs]
         [--refs-snapshot=<path>] [--[no-]write-chain-file]
         [--base=<checksum>]

"""
    + _COMMON
    + """\
    --[no-]preferred-pack <preferred-pack>
                          pack for reuse when computing a multi-pack bitmap
    --[no-]bitmap         write multi-pack bitmap
    --[no-]base <checksum>
                          base MIDX for incremental writes
    --[no-]incremental    write a new incremental MIDX
    --[no-]write-chain-file
                          write the multi-pack-index chain file
    --[no-]stdin-packs    write multi-pack index containing only given indexes
    --[no-]refs-snapshot <file>
                          refs snapshot for selecting bitmap commits

"""
)

VERIFY_USAGE = "usage: git multi-pack-index [<options>] verify\n\n" + _COMMON + "\n"
EXPIRE_USAGE = "usage: git multi-pack-index [<options>] expire\n\n" + _COMMON + "\n"
REPACK_USAGE = (
    "usage: git multi-pack-index [<options>] repack [--batch-size=<size>]\n\n"
    + _COMMON
    + "    --batch-size <n>      during repack, collect pack-files of smaller size into a "
    "batch that is larger than this size\n\n"
)

_NOT_HERE = {
    "--bitmap": "a multi-pack bitmap",
    "--incremental": "incremental multi-pack-index files",
    "--base": "incremental multi-pack-index files",
    "--write-chain-file": "incremental multi-pack-index files",
}


class _Usage(Exception):
    def __init__(self, text: str, message: str | None) -> None:
        self.text = text
        self.message = message


def _usage_exit(e: _Usage) -> int:
    if e.message:
        sys.stderr.write(f"error: {e.message}\n")
    (sys.stdout if e.message is None else sys.stderr).write(e.text)
    return 129


def _unknown(arg: str) -> str:
    if arg.startswith("--"):
        return f"unknown option `{arg[2:].split('=', 1)[0]}'"
    return f"unknown switch `{arg[1:2]}'"


class _Opts:
    def __init__(self) -> None:
        self.object_dir: str | None = None
        self.progress = sys.stderr.isatty()


def _common(argv: list[str], i: int, opts: _Opts) -> int:
    """Consume a common option at ``argv[i]``; return the next index (or ``i``)."""
    arg = argv[i]
    if arg == "--object-dir":
        if i + 1 >= len(argv):
            raise _Usage(USAGE, "option `object-dir' requires a value")
        opts.object_dir = argv[i + 1]
        return i + 2
    if arg.startswith("--object-dir="):
        opts.object_dir = arg[len("--object-dir=") :]
        return i + 1
    if arg == "--no-object-dir":
        opts.object_dir = None
        return i + 1
    if arg in ("--progress", "--no-progress"):
        opts.progress = arg == "--progress"
        return i + 1
    return i


def _progress(title: str, count: int) -> None:
    """Git's final progress line of a phase."""
    sys.stderr.write(f"{title}: 100% ({count}/{count}), done.\n")


def _warn(level: str, text: str) -> None:
    sys.stderr.write(f"{level}: {text}\n")


def run(argv: list[str], ctx: Any) -> int:
    """Dispatch ``write``, ``verify`` and ``expire``."""
    opts = _Opts()
    try:
        i = 0
        while i < len(argv) and argv[i].startswith("-"):
            if argv[i] in ("-h", "--help"):
                raise _Usage(USAGE, None)
            j = _common(argv, i, opts)
            if j == i:
                raise _Usage(USAGE, _unknown(argv[i]))
            i = j
        if i >= len(argv):
            raise _Usage(USAGE, "need a subcommand")
        sub, rest = argv[i], argv[i + 1 :]
        if sub == "write":
            return _write(rest, ctx, opts)
        if sub in ("verify", "expire"):
            return _verify_or_expire(sub, rest, ctx, opts)
        if sub == "repack":
            return _repack(rest, ctx, opts)
        if sub == "compact":
            raise GitodbError(f"gitodb multi-pack-index does not implement {sub}")
        raise _Usage(USAGE, f"unknown subcommand: `{sub}'")
    except _Usage as e:
        return _usage_exit(e)


def _objects_dir(repo: Any, opts: _Opts) -> str:
    if opts.object_dir is not None:
        return os.path.abspath(opts.object_dir)
    return os.path.abspath(
        os.environ.get("GIT_OBJECT_DIRECTORY") or os.path.join(repo.common_dir, "objects")
    )


def _write(argv: list[str], ctx: Any, opts: _Opts) -> int:
    from gitodb.pack.midx_write import MidxWriteError, write_midx

    preferred: str | None = None
    stdin_packs = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-h", "--help"):
            raise _Usage(WRITE_USAGE, None)
        j = _common(argv, i, opts)
        if j != i:
            i = j
            continue
        i += 1
        if arg.startswith("--preferred-pack="):
            preferred = arg[len("--preferred-pack=") :]
        elif arg == "--preferred-pack":
            if i >= len(argv):
                raise _Usage(WRITE_USAGE, "option `preferred-pack' requires a value")
            preferred = argv[i]
            i += 1
        elif arg == "--no-preferred-pack":
            preferred = None
        elif arg in ("--stdin-packs", "--no-stdin-packs"):
            stdin_packs = arg == "--stdin-packs"
        elif arg in ("--no-bitmap", "--no-incremental", "--no-write-chain-file"):
            pass  # the defaults: what is written anyway
        elif arg.startswith("--refs-snapshot=") or arg == "--no-refs-snapshot":
            pass  # as Git: only read to pick bitmap commits, and no bitmap is written
        elif arg == "--refs-snapshot":
            if i >= len(argv):
                raise _Usage(WRITE_USAGE, "option `refs-snapshot' requires a value")
            i += 1
        elif arg.split("=", 1)[0] in _NOT_HERE:
            what = _NOT_HERE[arg.split("=", 1)[0]]
            raise GitodbError(f"gitodb multi-pack-index write cannot write {what} ({arg})")
        else:
            raise _Usage(WRITE_USAGE, _unknown(arg) if arg.startswith("-") else None)
    repo = ctx.open_repository()
    version = repo.config.get_ulong("midx.version", 1)
    if version not in (1, 2):
        raise GitodbError(f"unknown multi-pack-index version {version}")
    include = None
    if stdin_packs:
        include = [
            ln.decode("utf-8", "surrogateescape").strip()
            for ln in sys.stdin.buffer.read().split(b"\n")
            if ln.strip()
        ]
    try:
        write_midx(
            _objects_dir(repo, opts),
            repo.object_format,
            preferred_pack=preferred,
            include=include,
            version=version,
            warn=_warn,
            progress=_progress if opts.progress else None,
        )
    except MidxWriteError as e:
        sys.stderr.write(f"error: {e.message}\n")
        return 255  # Git's cmd_multi_pack_index returns -1
    return 0


def _magnitude(text: str) -> int:
    """Git's OPT_MAGNITUDE: a number with an optional k, m or g (powers of 1024)."""
    units = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
    t = text.strip().lower()
    unit = t[-1:] if t[-1:] in ("k", "m", "g") else ""
    digits = t[: len(t) - len(unit)]
    if not digits.isdigit():
        raise _Usage(
            REPACK_USAGE,
            "option `batch-size' expects a non-negative integer value"
            " with an optional k/m/g suffix",
        )
    return int(digits) * units[unit]


def _repack(argv: list[str], ctx: Any, opts: _Opts) -> int:
    from gitodb.pack.midx_write import MidxWriteError
    from gitodb.repo.midx_repack import midx_repack

    batch = 0
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-h", "--help"):
            raise _Usage(REPACK_USAGE, None)
        j = _common(argv, i, opts)
        if j != i:
            i = j
            continue
        i += 1
        if arg.startswith("--batch-size="):
            batch = _magnitude(arg[len("--batch-size=") :])
        elif arg == "--batch-size":
            if i >= len(argv):
                raise _Usage(REPACK_USAGE, "option `batch-size' requires a value")
            batch = _magnitude(argv[i])
            i += 1
        else:
            raise _Usage(REPACK_USAGE, _unknown(arg) if arg.startswith("-") else None)
    repo = ctx.open_repository()
    level = repo.config.get("pack.compression") or repo.config.get("core.compression")
    try:
        midx_repack(
            _objects_dir(repo, opts),
            repo.object_format,
            batch_size=batch,
            pack_kept_objects=repo.config.get_bool("repack.packkeptobjects", False),
            compression=int(level) if level is not None else -1,
            warn=_warn,
            progress=_progress if opts.progress else None,
        )
    except MidxWriteError as e:
        sys.stderr.write(f"error: {e.message}\n")
        return 255
    return 0


def _verify_or_expire(sub: str, argv: list[str], ctx: Any, opts: _Opts) -> int:
    from gitodb.pack.midx_write import expire_midx, verify_midx

    text = VERIFY_USAGE if sub == "verify" else EXPIRE_USAGE
    i = 0
    while i < len(argv):
        if argv[i] in ("-h", "--help"):
            raise _Usage(text, None)
        j = _common(argv, i, opts)
        if j == i:
            raise _Usage(text, _unknown(argv[i]) if argv[i].startswith("-") else None)
        i = j
    repo = ctx.open_repository()
    progress = _progress if opts.progress else None
    if sub == "expire":
        expire_midx(_objects_dir(repo, opts), repo.object_format, warn=_warn, progress=progress)
        return 0
    found: list[str] = []
    try:
        errors = verify_midx(
            _objects_dir(repo, opts), repo.object_format, progress=progress, found=found
        )
    except MultiPackIndexError as e:
        if not e.ignorable:
            sys.stderr.write("".join(f"{line}\n" for line in found))
            raise
        for line in [*e.details, e.message, "multi-pack-index file exists, but failed to parse"]:
            sys.stderr.write(f"error: {line}\n")
        return 1
    for line in errors:  # bare, as Git's verify prints them
        sys.stderr.write(f"{line}\n")
    return 1 if errors else 0
