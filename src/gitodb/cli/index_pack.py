"""``gitodb index-pack``: build a pack's index, like ``git index-pack``.

``[-v] [-o <index-file>] [--stdin] [--keep[=<msg>]] [--fix-thin] [--verify] [--strict]
[--threads=<n>] [--progress|--no-progress] [--rev-index|--no-rev-index]
[--index-version=<n>[,<offset>]] [--object-format=<hash>] [<pack-file>]``

Prints the pack's hash; with ``--stdin`` as ``pack\\t<hash>`` (``keep\\t<hash>``
when this run created the ``.keep`` file).  Progress goes to stderr when ``-v``
is given or stderr is a terminal; ``--progress``/``--no-progress`` force it.
Defaults follow the repository's config when there is one: ``pack.threads``,
``pack.indexVersion``, ``pack.writeReverseIndex`` (false, as in Git 2.39),
``core.looseCompression``/``core.compression`` for bases appended by ``--fix-thin``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from gitodb.cli.options import Option, OptionParser, UsageError
from gitodb.durable import DEFAULT_POLICY
from gitodb.errors import ConfigError, GitodbError, ObjectNotFoundError, PackError, RepositoryError
from gitodb.objects import SHA1, format_by_name
from gitodb.objects.check import PackObjectChecker
from gitodb.objects.header import TYPE_NAMES
from gitodb.pack.cache import DEFAULT_DELTA_BASE_CACHE_LIMIT
from gitodb.pack.idx import OFFSET32_LIMIT
from gitodb.pack.index_write import (
    IndexPackOptions,
    index_pack_file,
    index_pack_stream,
)
from gitodb.pack.verify import format_stats, index_pack_verify
from gitodb.repo.extensions import check_object_writes

USAGE_LINE = (
    "[-v] [-o <index-file>] [--keep | --keep=<msg>] [--[no-]rev-index] [--verify] "
    "[--strict[=<msg-id>=<severity>...]] [--fsck-objects[=<msg-id>=<severity>...]] "
    "(<pack-file> | --stdin [--fix-thin] [<pack-file>])"
)


def _msgs(flag: str, msgs: str) -> Callable[[Any, str | None, bool], None]:
    """``--strict[=<msgs>]``/``--fsck-objects[=<msgs>]``: set ``flag``, keep the settings."""

    def callback(values: Any, value: str | None, unset: bool) -> None:
        setattr(values, flag, True)
        if value is not None:
            getattr(values, msgs).append(value)

    return callback


# Git's index-pack reads its arguments by hand: exact names, stuck values
# (``parse_exact``); --progress/--no-progress are gitodb's own
PARSER = OptionParser(
    "index-pack",
    [USAGE_LINE],
    [
        Option("v", None, "bool", dest="verbose", hidden=True),
        Option("o", None, "string", dest="index_file", separate=True, hidden=True),
        Option(None, "stdin", "bool", hidden=True),
        Option(None, "keep", "string", optional_value=True, default="", hidden=True),
        Option(None, "promisor", "string", optional_value=True, default="", hidden=True),
        Option(None, "fix-thin", "bool", hidden=True),
        Option(None, "verify", "bool", hidden=True),
        Option(None, "verify-stat", "bool", hidden=True),
        Option(None, "verify-stat-only", "bool", hidden=True),
        Option(
            None,
            "strict",
            "callback",
            takes_value=True,
            optional_value=True,
            callback=_msgs("strict_flag", "strict_msgs"),
            hidden=True,
        ),
        Option(
            None,
            "fsck-objects",
            "callback",
            takes_value=True,
            optional_value=True,
            callback=_msgs("fsck_flag", "fsck_msgs"),
            hidden=True,
        ),
        Option(None, "check-self-contained-and-connected", "bool", hidden=True),
        Option(None, "pack_header", "string", hidden=True),
        Option(None, "max-input-size", "string", hidden=True),
        Option(None, "threads", "string", hidden=True),
        Option(None, "progress", "const", const=True, dest="progress", hidden=True),
        Option(None, "no-progress", "const", const=False, dest="progress", hidden=True),
        Option(None, "progress-title", "string", separate=True, hidden=True),
        Option(None, "rev-index", "const", const=True, dest="rev_index", hidden=True),
        Option(None, "no-rev-index", "const", const=False, dest="rev_index", hidden=True),
        Option(None, "index-version", "string", hidden=True),
        Option(None, "object-format", "string", hidden=True),
    ],
)


def parse_args(argv: list[str]) -> Any:
    """Parse ``argv`` as Git's index-pack does (``UsageError`` for what it refuses)."""
    if argv == ["--help"]:
        argv = ["-h"]
    values = PARSER.defaults()
    values.strict_flag = values.fsck_flag = False
    values.strict_msgs, values.fsck_msgs = [], []
    got, rest = PARSER.parse_exact(argv, values)
    got.strict = got.strict_flag
    got.fsck_objects = got.fsck_flag
    if len(rest) > 1:
        raise UsageError(stderr=PARSER.usage_lines())
    got.pack_file = rest[0] if rest else None
    if got.threads is not None:
        # Git's strtoul(arg, &end, 0): the whole value, any base prefix
        try:
            got.threads = int(got.threads, 0) if got.threads.strip() == got.threads else -1
        except ValueError:
            got.threads = -1
        if got.threads < 0:
            raise UsageError(stderr=PARSER.usage_lines())
    return got


class ProgressMeter:
    """Git-style progress lines on a stream: ``Title:  42% (n/total)`` then ``, done.``.

    A line is rewritten (``\r``) whenever the percentage changes, as Git does.
    Called from several resolver threads, so it keeps no state that a race could break
    beyond a duplicate line.  Each meter is a trace2 ``progress`` region, with its
    ``total_objects`` at the end, as Git's ``start_progress``/``stop_progress``.
    """

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self._last: tuple[str, int] | None = None
        self._region: Any = None  # the trace2 region of the meter shown now
        self._traced: set[str] = set()  # meters whose region is over (one each)

    def __call__(self, title: str, done: int, total: int, finished: bool) -> None:
        if title not in self._traced:
            from gitodb import trace2

            if self._region is None or self._region.label != title:
                self._region = trace2.region("progress", title)
                self._region.__enter__()
            if finished:
                trace2.data("progress", "total_objects", str(total))
                self._region.__exit__(None, None, None)
                self._traced.add(title)
                self._region = None
        percent = done * 100 // total if total else 100
        key = (title, percent)
        if not finished and key == self._last:
            return
        self._last = key
        end = ", done.\n" if finished else "\r"
        self.stream.write(f"{title}: {percent:3d}% ({done}/{total}){end}")
        self.stream.flush()

    def close(self) -> None:
        """Flush what was written."""
        self.stream.flush()


def _parse_index_version(text: str) -> tuple[int, int]:
    version_text, _, limit_text = text.partition(",")
    try:
        version = int(version_text)
        limit = int(limit_text, 0) if limit_text else OFFSET32_LIMIT
    except ValueError:
        raise PackError(f"bad --index-version={text}") from None
    if version not in (1, 2) or limit < 0 or limit > 0xFFFFFFFF:
        raise PackError(f"bad --index-version={text}")
    return version, limit


def _open_repo(ctx: Any) -> Any:
    try:
        return ctx.open_repository()
    except ConfigError:
        raise
    except RepositoryError:
        return None


def run(argv: list[str], ctx: Any) -> int:
    """Run ``index-pack`` with ``argv``; return the exit status."""
    args = parse_args(argv)
    if args.fix_thin and not args.stdin:
        raise PackError("the option '--fix-thin' requires '--stdin'")
    verify = args.verify or args.verify_stat or args.verify_stat_only
    if not args.stdin and args.pack_file is None:
        raise UsageError(stderr=PARSER.usage_lines())
    if args.promisor is not None and not args.stdin and args.pack_file is not None:
        raise PackError("--promisor cannot be used with a pack name")
    max_input = _parse_size(args.max_input_size) if args.max_input_size is not None else 0
    if verify and args.pack_file is None:
        raise PackError("--verify with no packfile name given")
    if verify and args.stdin:
        # Git would read the pack from stdin into <pack-file> and then verify it.
        raise PackError("--verify reads the pack from <pack-file>; it cannot be used with --stdin")

    repo = _open_repo(ctx)
    config = repo.config if repo is not None else None
    fmt = repo.object_format if repo is not None else SHA1
    if args.object_format:
        try:
            fmt = format_by_name(args.object_format)
        except GitodbError:
            raise PackError(f"unknown hash algorithm '{args.object_format}'") from None

    threads = args.threads
    if threads is None:
        threads = config.get_int("pack.threads", 0) if config is not None else 0
    if threads < 0:
        raise PackError(f"invalid number of threads specified ({threads})")

    version, off32 = 2, OFFSET32_LIMIT
    if config is not None and config.get("pack.indexversion") is not None:
        version = config.get_int("pack.indexversion", 2)
        if version > 2:
            raise PackError(f"bad pack.indexVersion={version}")
    if args.index_version:
        version, off32 = _parse_index_version(args.index_version)

    rev_index = args.rev_index
    if rev_index is None:
        env = os.environ.get("GIT_TEST_WRITE_REV_INDEX")
        if env is not None:
            rev_index = env.lower() in ("1", "true", "yes", "on")
        elif config is not None:
            rev_index = config.get_bool("pack.writereverseindex", False)
        else:
            rev_index = False

    level = 1  # Git's zlib_compression_level default, Z_BEST_SPEED
    if config is not None:
        level = config.get_int("core.compression", level)
        level = config.get_int("core.loosecompression", level)
    cache_limit = (
        DEFAULT_DELTA_BASE_CACHE_LIMIT
        if config is None
        else config.get_ulong("core.deltabasecachelimit", DEFAULT_DELTA_BASE_CACHE_LIMIT)
    )

    show_progress = args.progress
    if show_progress is None:
        show_progress = args.verbose or sys.stderr.isatty()
    meter = ProgressMeter(sys.stderr) if show_progress else None

    if verify:  # --keep is ignored here, as in Git: nothing is stored
        return _run_verify(args, fmt, threads, rev_index, cache_limit)

    checker = _checker(args, fmt)
    # --strict: fsck and links; --fsck-objects: fsck; --check-self-contained-and-
    # connected: links, and exit 1 when one is found only outside the pack
    strict = args.strict or args.check_self_contained_and_connected or bool(args.strict_msgs)
    do_fsck = args.strict or args.fsck_objects or bool(args.strict_msgs or args.fsck_msgs)

    opts = IndexPackOptions(
        index_version=version,
        offset32_limit=off32,
        rev_index=rev_index,
        keep_msg=args.keep,
        threads=threads,
        fix_thin=args.fix_thin,
        strict=strict or do_fsck,
        strict_links=strict,
        checker=checker,
        promisor_msg=args.promisor,
        progress=meter,
        progress_title=args.progress_title,
        compression_level=level,
        delta_base_cache_limit=cache_limit,
    )
    fsync = repo.fsync_policy if repo is not None else DEFAULT_POLICY
    try:
        if args.stdin:
            if repo is None and args.pack_file is None:
                raise PackError("--stdin requires a git repository")
            if repo is not None:
                check_object_writes(repo.config)
            odb = repo.odb if repo is not None else None
            if repo is not None:
                # Git creates objects/pack when it is missing
                os.makedirs(os.path.join(repo.commondir, "objects", "pack"), exist_ok=True)
            source: Any = sys.stdin.buffer
            if args.pack_header is not None:
                # fetch-pack read the pack header itself to choose index-pack: stdin
                # starts after it, and the header is rebuilt from its two numbers
                source = _Prefixed(source, _pack_header(args.pack_header))
            if max_input:
                source = _Bounded(source, max_input)
            outcome = index_pack_stream(
                source,
                fmt,
                opts,
                pack_dir=os.path.join(repo.commondir, "objects", "pack") if repo else None,
                pack_path=args.pack_file,
                index_path=args.index_file,
                base_lookup=_lookup(odb) if odb is not None else None,
                contains=odb.contains if odb is not None else None,
                existing=odb,
                fsync=fsync,
            )
            report = "keep" if outcome.keep_created else "pack"
            sys.stdout.write(f"{report}\t{outcome.pack_hash}\n")
        else:
            if max_input and os.path.getsize(args.pack_file) > max_input:
                raise _too_big(max_input)
            # In a repository, Git compares objects it already has (collision check).
            outcome = index_pack_file(
                args.pack_file,
                fmt,
                opts,
                index_path=args.index_file,
                existing=repo.odb if repo is not None else None,
                fsync=fsync,
            )
            sys.stdout.write(f"{outcome.pack_hash}\n")
    finally:
        if meter is not None:
            meter.close()
    sys.stdout.flush()
    if do_fsck:
        # after the outputs, as Git 2.55 does: the queued .gitattributes/.gitmodules
        # blobs may be in the pack just stored
        checker.finish_blobs(_blob_reader(repo, outcome))
    if args.check_self_contained_and_connected and checker.foreign:
        return 1
    return 0


def _checker(args: Any, fmt: Any) -> PackObjectChecker:
    """The object checker for --strict/--fsck-objects[=<msg-id>=<severity>,...]."""
    from gitodb.repo.packcheck import received_pack_checker

    do_fsck = args.strict or args.fsck_objects or bool(args.strict_msgs or args.fsck_msgs)
    return received_pack_checker(fmt, (*args.strict_msgs, *args.fsck_msgs), fsck=do_fsck)


def _blob_reader(repo: Any, outcome: Any = None) -> Any:
    """``oid -> (type, data) | None`` over the pack just indexed (``outcome``: it may
    lie outside the repository, as Git reads it too) and the repository (packs
    rescanned), or None outside a repository."""
    if repo is None:
        return None
    odb = repo.odb
    odb.rescan_packs()
    pack = None
    if outcome is not None:
        from gitodb.pack.reader import PackFile

        pack = PackFile(outcome.pack_path, repo.object_format, idx_path=outcome.index_path)

    def read(oid: bytes) -> tuple[str, bytes] | None:
        if pack is not None:
            offset = pack.find(oid)
            if offset >= 0:
                try:
                    type_num, data = pack.read_at(offset)
                    return TYPE_NAMES[type_num], data
                except GitodbError:
                    pass  # a delta on a base only the repository has: read it there
        try:
            return odb.read(oid)  # type: ignore[no-any-return]
        except ObjectNotFoundError:
            return None

    return read


def _pack_header(text: str) -> bytes:
    """``--pack_header=<version>,<entries>``: the 12 bytes fetch-pack consumed."""
    version, comma, count = text.partition(",")
    try:
        if not comma:
            raise ValueError
        return b"PACK" + int(version).to_bytes(4, "big") + int(count).to_bytes(4, "big")
    except (ValueError, OverflowError):
        raise PackError(f"bad {text}") from None


class _Prefixed:
    """A reader that yields ``head`` before what ``stream`` has."""

    def __init__(self, stream: Any, head: bytes) -> None:
        self.stream = stream
        self.head = head

    def read(self, n: int = -1) -> bytes:
        if self.head:
            if n < 0:
                data: bytes = self.head + self.stream.read()
                self.head = b""
                return data
            data, self.head = self.head[:n], self.head[n:]
            return data
        return self.stream.read(n)  # type: ignore[no-any-return]

    def readinto(self, buf: Any) -> int:
        data = self.read(len(buf))
        buf[: len(data)] = data
        return len(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _parse_size(text: str) -> int:
    """As Git 2.55 reads ``--max-input-size``: the leading digits (none: 0, no limit)."""
    digits = ""
    for ch in text:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else 0


def humanise_bytes(n: int) -> str:
    """Git's ``strbuf_humanise_bytes``: ``1 byte``, ``100 bytes``, ``1.46 KiB`` ..."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n // scale}.{(n % scale) * 100 // scale:02d} {unit}"
    return f"{n} byte" if n == 1 else f"{n} bytes"


def _too_big(limit: int) -> PackError:
    return PackError(f"pack exceeds maximum allowed size ({humanise_bytes(limit)})")


class _Bounded:
    """A reader that fails once more than ``limit`` bytes were read (--max-input-size)."""

    def __init__(self, stream: Any, limit: int) -> None:
        self.stream = stream
        self.limit = limit
        self.seen = 0

    def read(self, n: int = -1) -> bytes:
        data = self.stream.read(n)
        self.seen += len(data)
        if self.seen > self.limit:
            raise _too_big(self.limit)
        return data  # type: ignore[no-any-return]

    def readinto(self, buf: Any) -> int:
        data = self.read(len(buf))
        buf[: len(data)] = data
        return len(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _lookup(odb: Any) -> Any:
    """``oid -> (type_name, data) | None`` over the repository (for --fix-thin)."""

    def lookup(oid: bytes) -> tuple[str, bytes] | None:
        try:
            return odb.read(oid)  # type: ignore[no-any-return]
        except ObjectNotFoundError:
            return None

    return lookup


def _run_verify(args: Any, fmt: Any, threads: int, rev_index: bool, cache_limit: int) -> int:
    """``--verify``/``--verify-stat``/``--verify-stat-only``: check the stored index."""
    result = index_pack_verify(
        args.pack_file,
        fmt,
        index_path=args.index_file,
        threads=threads,
        rev_index=rev_index,
        report=True,
        delta_base_cache_limit=cache_limit,
    )
    if args.verify_stat or args.verify_stat_only:
        sys.stdout.write(format_stats(result, stat_only=args.verify_stat_only))
        sys.stdout.flush()
    if result.index_error is not None:
        raise result.index_error
    return 0
