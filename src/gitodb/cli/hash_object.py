"""``gitodb hash-object``: compute object ids, optionally store the objects (Git 2.39's CLI).

A thin shell over ``gitodb.repo.write`` and ``gitodb.objects.check``.  Options are
parsed the way Git's parse-options does (abbreviations, ``--no-`` forms, bundled
short options, options after file names), so usage errors print Git's bytes.
Imports are kept lazy: hashing a file outside ``-w`` loads little beyond hashlib.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import TYPE_CHECKING, Any, BinaryIO

from gitodb import fileio
from gitodb.cli.options import Option, OptionParser
from gitodb.errors import GitodbError, ObjectCheckError, RepositoryError

if TYPE_CHECKING:
    from gitodb.cli.main import Context

NOTES = """\
A blob is converted as Git converts it on the way in, by the attributes of its path
(the file's own, or --path): the "filter" driver's clean command, line endings
("text", "eol", "crlf", core.autocrlf, core.eol; core.safecrlf with -w) and "ident".
--no-filters and --stdin without --path store the bytes as they are.  The
long-running filter "process" protocol and "working-tree-encoding" are refused.

Without --literally, content of type commit, tree or tag is checked as Git checks it
before hashing.  Blobs larger than core.bigFileThreshold (default 512m) are streamed:
with -w into a new pack with its .idx and .rev, without -w only hashed.
"""

PARSER = OptionParser(
    "hash-object",
    [
        "[-t <type>] [-w] [--path=<file> | --no-filters]\n[--stdin [--literally]] [--] <file>...",
        "[-t <type>] [-w] --stdin-paths [--no-filters]",
    ],
    [
        Option("t", None, "string", "object type", argh="type", dest="type", initial="blob"),
        Option("w", None, "bool", "write the object into the object database", dest="write"),
        Option(None, "stdin", "count", "read the object from stdin"),
        Option(None, "stdin-paths", "bool", "read file names from stdin"),
        Option(None, "no-filters", "bool", "store file as is without filters"),
        Option(
            None,
            "literally",
            "bool",
            "just hash any random garbage to create corrupt objects for debugging Git",
        ),
        Option(None, "path", "string", "process file as it were from this path", argh="file"),
    ],
    notes=NOTES,
)


def _out(data: bytes) -> None:
    sys.stdout.buffer.write(data) if hasattr(sys.stdout, "buffer") else sys.stdout.write(
        data.decode("utf-8", "surrogateescape")
    )


def _err(text: str) -> None:
    sys.stdout.flush()
    if hasattr(sys.stderr, "buffer"):
        sys.stderr.flush()
        sys.stderr.buffer.write(text.encode("utf-8", "surrogateescape"))
        sys.stderr.buffer.flush()
    else:
        sys.stderr.write(text)


def parse_args(argv: list[str]) -> tuple[dict[str, Any], list[str]]:
    """Parse ``argv`` as Git's hash-object does; return (options, files)."""
    values, files = PARSER.parse(argv)
    return vars(values), files


class _FdReader:
    """A minimal raw reader over a file descriptor (``readinto``/``read``)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def fileno(self) -> int:
        return self.fd

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return os.lseek(self.fd, 0, os.SEEK_CUR)

    def seek(self, pos: int) -> int:
        return os.lseek(self.fd, pos, os.SEEK_SET)

    def readinto(self, view: memoryview) -> int:
        return fileio.readinto(self.fd, view)

    def read(self, n: int) -> bytes:
        return os.read(self.fd, n)

    def read_all(self) -> bytes:
        chunks: list[bytes] = []
        while True:
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


class HashObject:
    """One ``hash-object`` run: the repository (or none), settings, and a content checker."""

    def __init__(
        self, opts: dict[str, Any], repo: Any, config: Any, conversion: Any = None
    ) -> None:
        from gitodb.objects.check import ObjectChecker
        from gitodb.objects.format import SHA1
        from gitodb.repo.write import WriteSettings

        self.opts = opts
        self.repo = repo
        self.fmt = repo.object_format if repo is not None else SHA1
        self.settings = WriteSettings.from_config(config)
        self.checker = ObjectChecker(self.fmt)
        self.conversion = conversion  # gitodb.repo.conversion.Conversion, or None
        self._writer: Any = None
        self._flush_each = (
            not stat.S_ISREG(os.fstat(sys.stdout.fileno()).st_mode)
            if _has_fileno(sys.stdout)
            else True
        )

    @property
    def writer(self) -> Any:
        if self._writer is None:
            from gitodb.repo.write import ObjectWriter

            self._writer = ObjectWriter(self.repo, self.settings)
        return self._writer

    def emit(self, oid: bytes) -> None:
        _out(oid.hex().encode("ascii") + b"\n")
        if self._flush_each:
            sys.stdout.flush()

    def hash_path(self, open_path: str, shown: str, vpath: str | None) -> None:
        """Git's ``hash_object``: open the file (errors name ``shown``), then hash it."""
        try:
            fd = os.open(open_path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError as e:
            raise GitodbError(f"could not open '{shown}' for reading: {e.strerror}") from None
        try:
            self.hash_fd(fd, vpath)
        finally:
            os.close(fd)

    def hash_fd(self, fd: int, vpath: str | None) -> None:
        """Git's ``hash_fd``: hash (and with ``-w`` store) the content of ``fd``."""
        from gitodb.errors import ObjectCollisionError, ObjectWriteError

        write = self.opts["write"]
        try:
            oid = self._index_fd(fd, vpath)
        except ObjectCollisionError as e:
            # Git dies inside its SHA-1 with this message; nothing was stored.
            raise e.located(vpath) from None
        except (ObjectWriteError, OSError) as e:
            # Git reports a failed read only through the fatal line below.
            if isinstance(e, ObjectWriteError):
                _err(f"error: {e}\n")
            what = "Unable to add %s to database" if write else "Unable to hash %s"
            raise GitodbError(what % ("(null)" if vpath is None else vpath)) from None
        self.emit(oid)

    def _index_fd(self, fd: int, vpath: str | None) -> bytes:
        from gitodb.objects.header import TYPE_NUMBERS
        from gitodb.repo.write import compute_object_id

        st = os.fstat(fd)
        type_name: str = self.opts["type"]
        write: bool = self.opts["write"]
        reader: Any = _FdReader(fd)
        regular = stat.S_ISREG(st.st_mode)
        if type_name not in TYPE_NUMBERS:
            # Git 2.55 refuses unknown types even with --literally (2.39 hashed them)
            raise GitodbError(f'invalid object type "{type_name}"')
        if self.opts["literally"]:
            # Any content; never checked, never packed.
            if not regular:
                data = reader.read_all()
                return (
                    self.writer.write(type_name, data)
                    if write
                    else compute_object_id(self.fmt, type_name, data)
                )
            if write:
                return self.writer.write_stream(
                    type_name, reader, st.st_size, source=vpath, allow_pack=False
                )
            return compute_object_id(
                self.fmt, type_name, stream=reader, size=st.st_size, source=vpath
            )
        if type_name not in TYPE_NUMBERS:
            raise GitodbError(f'invalid object type "{type_name}"')
        if type_name == "blob" and vpath is not None and self._converts(vpath, st, regular):
            # Git's index_mem: the whole content, converted, then hashed or stored
            data = self._read_whole(reader, st, regular, vpath)
            data = self.conversion.to_git(vpath, data, write=write)
            return (
                self.writer.write(type_name, data)
                if write
                else compute_object_id(self.fmt, type_name, data)
            )
        if regular and type_name == "blob":
            # A blob needs no check: stream it (hash only, loose or into a pack).
            if write:
                return self.writer.write_stream(type_name, reader, st.st_size, source=vpath)
            return compute_object_id(
                self.fmt, type_name, stream=reader, size=st.st_size, source=vpath
            )
        data = self._read_whole(reader, st, regular, vpath)
        self.checker.check(type_name, data)
        return (
            self.writer.write(type_name, data)
            if write
            else compute_object_id(self.fmt, type_name, data)
        )

    def _converts(self, vpath: str, st: os.stat_result, regular: bool) -> bool:
        """Whether the blob for ``vpath`` goes through the conversions (Git's index_fd:
        a file above core.bigFileThreshold only for a clean filter or ``ident``)."""
        conv = self.conversion
        if conv is None or not conv.may_convert(vpath):
            return False
        if regular and st.st_size > self.settings.big_file_threshold:
            return bool(conv.would_convert_to_git(vpath))
        return True

    @staticmethod
    def _read_whole(reader: Any, st: os.stat_result, regular: bool, vpath: str | None) -> bytes:
        if regular:
            from gitodb.loose.write import read_exactly

            return b"".join(bytes(c) for c in read_exactly(reader, st.st_size, vpath))
        return bytes(reader.read_all())


def _has_fileno(f: Any) -> bool:
    try:
        f.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True


def _unquote_c_style(line: bytes) -> bytes | None:
    """Git's ``unquote_c_style`` for a line starting with a double quote; None if bad."""
    out = bytearray()
    i = 1
    n = len(line)
    escapes = {
        ord("a"): 7,
        ord("b"): 8,
        ord("f"): 12,
        ord("n"): 10,
        ord("r"): 13,
        ord("t"): 9,
        ord("v"): 11,
        ord("\\"): 92,
        ord('"'): 34,
    }
    while i < n:
        c = line[i]
        i += 1
        if c == 0x22:
            return bytes(out)
        if c != 0x5C:
            out.append(c)
            continue
        if i >= n:
            return None
        c = line[i]
        i += 1
        if c in escapes:
            out.append(escapes[c])
        elif 0x30 <= c <= 0x33:
            digits = line[i - 1 : i + 2]
            if len(digits) != 3 or any(not 0x30 <= d <= 0x37 for d in digits):
                return None
            out.append(int(digits, 8))
            i += 2
        else:
            return None
    return None


def run(argv: list[str], ctx: Context) -> int:
    """Run ``hash-object`` with Git's options, output and exit codes."""
    opts, files = parse_args(argv)

    repo = None
    try:
        repo = ctx.open_repository()
    except RepositoryError as e:
        from gitodb.errors import ConfigError

        if opts["write"] or isinstance(e, ConfigError):
            raise
    if repo is not None:
        config = repo.config
    else:
        from gitodb.repo.config_levels import load_config

        # Outside a repository Git still reads the system, global and -c levels.
        config = load_config(overrides=ctx.config_overrides)
    from gitodb.repo import find_work_tree_top

    explicit = bool(ctx.git_dir or os.environ.get("GIT_DIR"))
    top = find_work_tree_top(repo, explicit) if repo is not None else None
    prefix = ""
    if top is not None:
        rel = os.path.relpath(os.getcwd(), top)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"

    def shown_path(arg: str) -> str:
        return arg if os.path.isabs(arg) else prefix + arg

    def open_path(shown: str) -> str:
        return os.path.join(top, shown) if top is not None else shown

    vpath = opts["path"]
    if vpath is not None:
        vpath = shown_path(vpath)

    conversion = None
    if not (opts["no_filters"] or opts["literally"]) and opts["type"] == "blob":
        from gitodb.repo.conversion import conversion_for

        conversion = conversion_for(
            repo, config, explicit_git_dir=explicit, attr_source=ctx.attr_source
        )
    # reads the settings: config errors come here
    job = HashObject(opts, repo, config, conversion)

    error = None
    if opts["stdin_paths"]:
        if opts["stdin"]:
            error = "Can't use --stdin-paths with --stdin"
        elif files:
            error = "Can't specify files with --stdin-paths"
        elif vpath is not None:
            error = "Can't use --stdin-paths with --path"
    else:
        if opts["stdin"] > 1:
            error = "Multiple --stdin arguments are not supported"
        if vpath is not None and opts["no_filters"]:
            error = "Can't use --path with --no-filters"
    if error is not None:
        raise PARSER.usage_error(error)

    try:
        if opts["stdin"]:
            job.hash_fd(0, vpath)
        for arg in files:
            shown = shown_path(arg)
            job.hash_path(
                open_path(shown),
                shown,
                None if opts["no_filters"] else (vpath if vpath is not None else shown),
            )
        if opts["stdin_paths"]:
            _hash_stdin_paths(job, opts, open_path)
    except ObjectCheckError as e:
        _err("".join(f"error: {line}\n" for line in e.details) + f"fatal: {e.message}\n")
        return 128
    sys.stdout.flush()
    return 0


def _hash_stdin_paths(job: HashObject, opts: dict[str, Any], open_path: Any) -> None:
    stdin: BinaryIO = sys.stdin.buffer
    for raw in stdin:
        line = raw[:-1] if raw.endswith(b"\n") else raw
        if line.endswith(b"\r"):
            line = line[:-1]
        if line.startswith(b'"'):
            unquoted = _unquote_c_style(line)
            if unquoted is None:
                raise GitodbError("line is badly quoted")
            line = unquoted
        name = os.fsdecode(line)
        job.hash_path(open_path(name), name, None if opts["no_filters"] else name)
