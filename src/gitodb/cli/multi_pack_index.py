"""``gitodb multi-pack-index [--object-dir=<dir>] [--[no-]progress] write|verify|expire|repack``.

``write`` takes ``--preferred-pack=<pack>``, ``--stdin-packs``, ``--[no-]bitmap``
(a multi-pack bitmap, its commits picked from the refs or from
``--refs-snapshot=<file>``; without it a stale bitmap of a kept MIDX is removed,
as Git does), ``--incremental`` (a new layer of the MIDX chain) with
``--[no-]write-chain-file`` and ``--base=<checksum>|none`` (which, as in Git 2.55,
does not change the layer written); ``midx.version`` picks
the file version.  ``repack`` takes ``--batch-size=<n>``.  A thin shell over
``gitodb.pack.midx_write``, ``gitodb.pack.midx_chain``, ``gitodb.history.midx_bitmap``
and ``gitodb.repo.midx_repack``.  ``compact [--bitmap] [--base=<checksum>|none]
[--no-write-chain-file] <from> <to>`` replaces a run of chain layers by one
(``gitodb.pack.midx_chain``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from gitodb.cli.options import Option, OptionParser
from gitodb.errors import GitodbError, MultiPackIndexError

_COMMON = [
    Option(
        None,
        "object-dir",
        "string",
        "object directory containing set of packfile and pack-index pairs",
        argh="directory",
    ),
    Option(None, "progress", "bool", "force progress reporting", default=None),
]

_WRITE_USAGE = (
    "[<options>] write [--preferred-pack=<pack>]\n"
    "  [--[no-]bitmap] [--[no-]incremental] [--[no-]stdin-packs]\n"
    "  [--refs-snapshot=<path>] [--[no-]write-chain-file]\n"
    "  [--base=<checksum>]"
)
_COMPACT_USAGE = (
    "[<options>] compact [--[no-]incremental]\n"
    "  [--[no-]bitmap] [--base=<checksum>] [--[no-]write-chain-file]\n"
    "  <from> <to>"
)
_VERIFY_USAGE = "[<options>] verify"
_EXPIRE_USAGE = "[<options>] expire"
_REPACK_USAGE = "[<options>] repack [--batch-size=<size>]"

PARSER = OptionParser(
    "multi-pack-index",
    [_WRITE_USAGE, _COMPACT_USAGE, _VERIFY_USAGE, _EXPIRE_USAGE, _REPACK_USAGE],
    _COMMON,
    stop_at_non_option=True,
)

# the options write and compact share (each parser lists them in Git's order)
_BITMAP = Option(None, "bitmap", "bool", "write multi-pack bitmap")
_BASE = Option(None, "base", "string", "base MIDX for incremental writes", argh="checksum")
_INCREMENTAL = Option(None, "incremental", "bool", "write a new incremental MIDX")
_WRITE_CHAIN_FILE = Option(
    None, "write-chain-file", "bool", "write the multi-pack-index chain file", initial=True
)

WRITE_PARSER = OptionParser(
    "multi-pack-index",
    [_WRITE_USAGE],
    [
        *_COMMON,
        Option(
            None,
            "preferred-pack",
            "string",
            "pack for reuse when computing a multi-pack bitmap",
            argh="preferred-pack",
        ),
        _BITMAP,
        _BASE,
        _INCREMENTAL,
        _WRITE_CHAIN_FILE,
        Option(None, "stdin-packs", "bool", "write multi-pack index containing only given indexes"),
        Option(
            None,
            "refs-snapshot",
            "string",
            "refs snapshot for selecting bitmap commits",
            argh="file",
        ),
    ],
)

COMPACT_PARSER = OptionParser(
    "multi-pack-index",
    [_COMPACT_USAGE],
    [
        *_COMMON,
        _INCREMENTAL,
        _BITMAP,
        _BASE,
        _WRITE_CHAIN_FILE,
    ],
)
VERIFY_PARSER = OptionParser("multi-pack-index", [_VERIFY_USAGE], _COMMON)
EXPIRE_PARSER = OptionParser("multi-pack-index", [_EXPIRE_USAGE], _COMMON)
REPACK_PARSER = OptionParser(
    "multi-pack-index",
    [_REPACK_USAGE],
    [
        *_COMMON,
        Option(
            None,
            "batch-size",
            "string",
            "during repack, collect pack-files of smaller size into a batch that is "
            "larger than this size",
            argh="n",
        ),
    ],
)

_SUBCOMMANDS = {
    "write": WRITE_PARSER,
    "compact": COMPACT_PARSER,
    "verify": VERIFY_PARSER,
    "expire": EXPIRE_PARSER,
    "repack": REPACK_PARSER,
}


def _progress(title: str, count: int) -> None:
    """Git's final progress line of a phase."""
    sys.stderr.write(f"{title}: 100% ({count}/{count}), done.\n")


def _warn(level: str, text: str) -> None:
    sys.stderr.write(f"{level}: {text}\n")


def run(argv: list[str], ctx: Any) -> int:
    """Dispatch ``write``, ``verify``, ``expire`` and ``repack``."""
    values = PARSER.defaults()
    _top, rest = PARSER.parse(argv, values)
    if not rest:
        raise PARSER.usage_error("need a subcommand")
    sub, rest = rest[0], rest[1:]
    parser = _SUBCOMMANDS.get(sub)
    if parser is None:
        raise PARSER.usage_error(f"unknown subcommand: `{sub}'")
    sub_values = parser.defaults()
    sub_values.object_dir = values.object_dir
    sub_values.progress = values.progress
    opts, args = parser.parse(rest, sub_values)
    if sub == "compact":
        if len(args) != 2:
            raise parser.usage_error()
        return _compact(opts, args, ctx)
    if args:
        raise parser.usage_error()
    if opts.progress is None:
        opts.progress = sys.stderr.isatty()
    if sub == "write":
        return _write(opts, ctx)
    if sub == "repack":
        return _repack(opts, ctx)
    return _verify_or_expire(sub, opts, ctx)


def _objects_dir(repo: Any, opts: Any) -> str:
    given: str | None = opts.object_dir
    if given is not None:
        return os.path.abspath(given)
    return os.path.abspath(
        os.environ.get("GIT_OBJECT_DIRECTORY") or os.path.join(repo.commondir, "objects")
    )


def _write(opts: Any, ctx: Any) -> int:
    from gitodb.pack.midx_write import MidxWriteError, write_midx

    if not opts.write_chain_file and not opts.incremental:
        raise WRITE_PARSER.usage_error("cannot use --no-write-chain-file without --incremental")
    if opts.base is not None and opts.write_chain_file:
        raise WRITE_PARSER.usage_error("cannot use --base without --no-write-chain-file")
    repo = ctx.open_repository()
    version = repo.config.get_ulong("midx.version", 1)
    if version not in (1, 2):
        raise GitodbError(f"unknown multi-pack-index version {version}")
    include = None
    if opts.stdin_packs:
        include = [
            ln.decode("utf-8", "surrogateescape").strip()
            for ln in sys.stdin.buffer.read().split(b"\n")
            if ln.strip()
        ]
    objects_dir = _objects_dir(repo, opts)

    def bitmap(midx_path: str) -> None:
        from gitodb.history.midx_bitmap import write_midx_bitmap

        write_midx_bitmap(
            repo,
            objects_dir,
            refs_snapshot=opts.refs_snapshot,
            prefer_tips=repo.config.get_all("pack.preferbitmaptips"),
            midx_path=midx_path,
            lookup_table=repo.config.get_bool("pack.writebitmaplookuptable", False),
            warn=_warn,
            incremental=opts.incremental,
        )

    if opts.incremental:
        layer_bitmap = bitmap if opts.bitmap else None
        return _write_layer(opts, repo, objects_dir, version, include, layer_bitmap)

    from gitodb.history.midx_bitmap import MidxBitmapError

    try:
        write_midx(
            objects_dir,
            repo.object_format,
            preferred_pack=opts.preferred_pack,
            include=include,
            version=version,
            bitmap=opts.bitmap,
            before_commit=bitmap if opts.bitmap else None,
            warn=_warn,
            progress=_progress if opts.progress else None,
        )
    except (MidxWriteError, MidxBitmapError) as e:
        for line in e.details:
            _warn("warning", line)
        sys.stderr.write(f"error: {e.message}\n")
        return 255  # Git's cmd_multi_pack_index returns -1
    return 0


def _write_layer(
    opts: Any,
    repo: Any,
    objects_dir: str,
    version: int,
    include: list[str] | None,
    bitmap: Any | None,
) -> int:
    """``write --incremental``: a new chain layer; its checksum printed when the chain
    file is not written (the caller links the layer in, as Git's)."""
    from gitodb.history.midx_bitmap import MidxBitmapError
    from gitodb.pack.midx_chain import MidxWriteError, write_midx_layer

    try:
        checksum = write_midx_layer(
            objects_dir,
            repo.object_format,
            write_chain=opts.write_chain_file,
            preferred_pack=opts.preferred_pack,
            include=include,
            version=version,
            bitmap=bitmap is not None,
            before_commit=bitmap,
            warn=_warn,
            progress=_progress if opts.progress else None,
        )
    except (MidxWriteError, MidxBitmapError) as e:
        sys.stderr.write(f"error: {e.message}\n")
        return 255
    if checksum is not None and not opts.write_chain_file:
        sys.stdout.write(f"{checksum}\n")
    return 0


def _compact(opts: Any, args: list[str], ctx: Any) -> int:
    """``compact <from> <to>``: one layer for a run of the chain's layers."""
    from gitodb.history.midx_bitmap import MidxBitmapError, write_midx_bitmap
    from gitodb.pack.midx_chain import MidxWriteError, compact_midx_layers

    repo = ctx.open_repository()
    if (
        repo.config.get("midx.version") is not None
        and repo.config.get_ulong("midx.version", 2) == 1
    ):
        raise GitodbError("cannot perform MIDX compaction with v1 format")
    objects_dir = _objects_dir(repo, opts)

    def bitmap(midx_path: str, below: int) -> None:
        write_midx_bitmap(
            repo,
            objects_dir,
            prefer_tips=repo.config.get_all("pack.preferbitmaptips"),
            midx_path=midx_path,
            lookup_table=repo.config.get_bool("pack.writebitmaplookuptable", False),
            warn=_warn,
            incremental=True,
            below=below,
            name_hashes=False,  # as Git's compaction
        )

    try:
        checksum = compact_midx_layers(
            objects_dir,
            repo.object_format,
            args[0],
            args[1],
            base=opts.base,
            write_chain=opts.write_chain_file,
            bitmap=opts.bitmap,
            before_commit=bitmap if opts.bitmap else None,
        )
    except (MidxWriteError, MidxBitmapError) as e:
        sys.stderr.write(f"error: {e.message}\n")
        return 255
    if not opts.write_chain_file:
        sys.stdout.write(f"{checksum}\n")
    return 0


def _magnitude(text: str) -> int:
    """Git's OPT_MAGNITUDE: a number with an optional k, m or g (powers of 1024)."""
    units = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
    t = text.strip().lower()
    unit = t[-1:] if t[-1:] in ("k", "m", "g") else ""
    digits = t[: len(t) - len(unit)]
    if not digits.isdigit():
        raise REPACK_PARSER.usage_error(
            "option `batch-size' expects a non-negative integer value with an optional k/m/g suffix"
        )
    return int(digits) * units[unit]


def _repack(opts: Any, ctx: Any) -> int:
    from gitodb.pack.midx_write import MidxWriteError
    from gitodb.repo.midx_repack import midx_repack

    batch = _magnitude(opts.batch_size) if opts.batch_size is not None else 0
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


def _verify_or_expire(sub: str, opts: Any, ctx: Any) -> int:
    from gitodb.pack.midx_write import expire_midx, verify_midx

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
