"""``gitodb cat-file``: object contents, type, size and batch queries, like ``git cat-file``.

Modes: ``-t``, ``-s``, ``-e``, ``-p``, ``<type> <object>``, ``--batch[=<format>]``,
``--batch-check[=<format>]``, ``--batch-command[=<format>]`` (``contents``, ``info``,
``flush``), with ``--batch-all-objects``, ``--unordered``, ``--buffer`` and ``-z``.
Output bytes, messages and exit codes follow Git 2.39.  All storage work is done by
``gitodb.repo.odb`` and ``gitodb.repo.revparse``; this module only formats.
"""

from __future__ import annotations

import os
import sys
from array import array
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO

from gitodb.cli import output
from gitodb.errors import (
    AmbiguousObjectNameError,
    BadRevisionError,
    GitodbError,
    LooseObjectError,
    ObjectNotFoundError,
)
from gitodb.loose.read import INVALID_TYPE, SIZE_OVERFLOW
from gitodb.objects.commit import Commit
from gitodb.objects.filter import ObjectFilter
from gitodb.objects.header import TYPE_NAMES, TYPE_NUMBERS
from gitodb.objects.pretty import format_tree
from gitodb.objects.tag import Tag
from gitodb.objects.tree import Tree
from gitodb.repo.replace import replace_map, replaced
from gitodb.repo.revparse import (
    MissingPathError,
    Resolved,
    SymlinkOutcome,
    resolve_follow_symlinks,
    resolve_full,
)

try:
    from gitodb._native import check_lines as _check_lines
except ImportError:  # built without a C compiler
    _check_lines = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from gitodb.cli.main import Context
    from gitodb.repo import Repository
    from gitodb.repo.conversion import Conversion
    from gitodb.repo.odb import ObjectDatabase

USAGE = """usage: git cat-file <type> <object>
   or: git cat-file (-e | -p | -t | -s) <object>
   or: git cat-file (--textconv | --filters)
                    [<rev>:<path|tree-ish> | --path=<path|tree-ish> <rev>]
   or: git cat-file (--batch | --batch-check | --batch-command) [--batch-all-objects]
                    [--buffer] [--follow-symlinks] [--unordered]
                    [--textconv | --filters] [-Z]

Check object existence or emit object contents
    -e                    check if <object> exists
    -p                    pretty-print <object> content

Emit [broken] object attributes
    -t                    show object type (one of 'blob', 'tree', 'commit', 'tag', ...)
    -s                    show object size
    --[no-]use-mailmap    use mail map file
    --[no-]mailmap        alias of --use-mailmap

Batch objects requested on stdin (or --batch-all-objects)
    --batch[=<format>]    show full <object> or <rev> contents
    --batch-check[=<format>]
                          like --batch, but don't emit <contents>
    -Z                    stdin and stdout is NUL-terminated
    --batch-command[=<format>]
                          read commands from stdin
    --batch-all-objects   with --batch[-check]: ignores stdin, batches all known objects

Change or optimize batch output
    --[no-]buffer         buffer --batch output
    --[no-]follow-symlinks
                          follow in-tree symlinks
    --[no-]unordered      do not order objects before emitting them

Emit object (blob or tree) with conversion or filter (stand-alone, or with batch)
    --textconv            run textconv on object's content
    --filters             run filters on object's content
    --[no-]path blob|tree use a <path> for (--textconv | --filters); Not with 'batch'
    --[no-]filter <args>  object filtering

"""

DEFAULT_FORMAT = "%(objectname) %(objecttype) %(objectsize)"
KNOWN_ATOMS = (
    "objectname",
    "objecttype",
    "objectsize",
    "objectsize:disk",
    "deltabase",
    "rest",
    "objectmode",
)
# Flush the output buffer once it holds this much (one large write per chunk).
OUTPUT_CHUNK = 1 << 20
# Objects per write of --batch-check --batch-all-objects output.
_CHECK_LINES_CHUNK = 1 << 16
# Buffers per writev call (the kernel's UIO_MAXIOV).
_IOV_MAX = 1024
_BLOB = TYPE_NUMBERS["blob"]


class UsageError(Exception):
    """A command-line mistake: Git prints ``fatal: <msg>`` plus usage, exit 129.

    ``with_usage=False`` for Git's messages that come alone (option conflicts).
    """

    def __init__(self, msg: str, with_usage: bool = True) -> None:
        super().__init__(msg)
        self.with_usage = with_usage


# --------------------------------------------------------------------------- options
#: command modes: letter -> how Git names the option in a conflict message
_CMDMODES = {
    "e": "-e",
    "p": "-p",
    "t": "-t",
    "s": "-s",
    "c": "--textconv",
    "w": "--filters",
    "b": "--batch-all-objects",
}
#: long options: name -> kind ("cmdmode:<letter>", "batch", "bool", "string")
_LONG = {
    "batch": "batch",
    "batch-check": "batch",
    "batch-command": "batch",
    "batch-all-objects": "cmdmode:b",
    "textconv": "cmdmode:c",
    "filters": "cmdmode:w",
    "use-mailmap": "bool",
    "mailmap": "bool",
    "buffer": "bool",
    "follow-symlinks": "bool",
    "unordered": "bool",
    "path": "string",
    "filter": "string",
}
_NEGATABLE = ("use-mailmap", "mailmap", "buffer", "follow-symlinks", "unordered", "path", "filter")


class Options:
    """Parsed ``cat-file`` arguments."""

    def __init__(self) -> None:
        self.mode: str | None = None  # "t", "s", "e", "p", "c", "w", "b"
        self.batch: str | None = None  # "batch", "batch-check", "batch-command"
        self.format: str | None = None
        self.all_objects = False
        self.unordered = False
        self.buffer = False
        self.buffer_given = False
        self.nul_input = False  # -z
        self.nul_output = False  # -Z (input and output)
        self.follow_symlinks = False
        self.mailmap = False
        self.path: str | None = None
        self.filter: ObjectFilter | None = None
        self.args: list[str] = []


def _long_name(word: str) -> tuple[str, bool]:
    """The long option ``word`` names (exact, or a unique prefix): ``(name, negated)``."""
    names = list(_LONG) + [f"no-{n}" for n in _NEGATABLE]
    if word in names:
        exact = word
    else:
        found = [n for n in names if n.startswith(word)]
        # "--no-b" style prefixes of one option's two forms count once
        if len({n.removeprefix("no-") for n in found}) != 1 or not found:
            if not found:
                raise UsageError(f"error: unknown option `{word}'")
            raise UsageError(
                f"error: ambiguous option: {word} (could be --{found[0]} or --{found[1]})",
                with_usage=False,
            )
        if os.environ.get("GIT_TEST_DISALLOW_ABBREVIATED_OPTIONS", "").lower() in (
            "1",
            "true",
            "yes",
            "on",
        ):
            raise GitodbError(f"disallowed abbreviated or ambiguous option '{word}'")
        exact = found[0]
    if exact.startswith("no-") and exact not in _LONG:
        return exact[3:], True
    return exact, False


def _set_mode(o: Options, m: str) -> None:
    if o.mode is not None and o.mode != m:
        raise UsageError(
            f"error: options '{_CMDMODES[m]}' and '{_CMDMODES[o.mode]}' cannot be used together",
            with_usage=False,
        )
    o.mode = m


def parse_args(argv: list[str]) -> Options:
    """Parse ``argv`` the way Git 2.55's parse-options does for ``cat-file``."""
    o = Options()
    only_args = False
    it = iter(argv)
    for arg in it:
        if only_args or not arg.startswith("-") or arg == "-":
            o.args.append(arg)
            continue
        if arg == "--":
            only_args = True
            continue
        if arg.startswith("--"):
            word, eq, value = arg[2:].partition("=")
            name, negated = _long_name(word)
            kind = _LONG[name]
            if kind == "batch":
                if o.batch is not None:
                    raise UsageError(
                        "error: only one batch option may be specified", with_usage=False
                    )
                o.batch = name
                o.format = value if eq else None
                continue
            if eq and kind != "string":
                raise UsageError(f"error: option `{name}' takes no value", with_usage=False)
            if kind.startswith("cmdmode:"):
                _set_mode(o, kind[-1])
                if kind[-1] == "b":
                    o.all_objects = True
            elif kind == "bool":
                on = not negated
                if name in ("use-mailmap", "mailmap"):
                    o.mailmap = on
                elif name == "buffer":
                    o.buffer, o.buffer_given = on, True
                elif name == "follow-symlinks":
                    o.follow_symlinks = on
                else:
                    o.unordered = on
            else:  # path, filter
                if negated:
                    value = None  # type: ignore[assignment]
                elif not eq:
                    value = next(it, None)  # type: ignore[assignment]
                    if value is None:
                        raise UsageError(
                            f"error: option `{name}' requires a value", with_usage=False
                        )
                if name == "path":
                    o.path = value
                else:
                    o.filter = None if value is None else ObjectFilter.parse(value, o.filter)
            continue
        for ch in arg[1:]:
            if ch in "epts":
                _set_mode(o, ch)
            elif ch == "z":
                o.nul_input = True
            elif ch == "Z":
                o.nul_output = True
            else:
                raise UsageError(f"error: unknown switch `{ch}'")
    return o


def check_args(o: Options) -> None:
    """Git's checks of the option combination, in Git's order (``UsageError``)."""
    transform = o.mode in ("c", "w")
    if o.filter is not None and o.filter.kind not in ("blob:none", "blob:limit", "object:type"):
        raise UsageError(
            f"usage: objects filter not supported: '{o.filter.kind}'", with_usage=False
        )
    if o.path is not None and not transform:
        raise UsageError("fatal: '--path=<path|tree-ish>' needs '--filters' or '--textconv'")
    if o.batch is None:
        for flag, on in (
            ("--follow-symlinks", o.follow_symlinks),
            ("--buffer", o.buffer_given),
            ("--batch-all-objects", o.all_objects),
            ("-z", o.nul_input),
            ("-Z", o.nul_output),
        ):
            if on:
                raise UsageError(f"fatal: '{flag}' requires a batch mode")
        if o.filter is not None:
            raise UsageError("usage: objects filter only supported in batch mode", with_usage=False)
    else:
        if o.mode is not None and not transform and o.mode != "b":
            raise UsageError(f"fatal: '-{o.mode}' is incompatible with batch mode")
        if o.args:
            raise UsageError("fatal: batch modes take no arguments")
        return
    if o.mode is not None:
        if not o.args:
            if o.mode in ("c", "w"):
                raise UsageError(f"fatal: <rev> required with '{_CMDMODES[o.mode]}'")
            raise UsageError(f"fatal: <object> required with '-{o.mode}'")
        if len(o.args) > 1:
            raise UsageError("fatal: too many arguments")
    elif not o.args:
        raise UsageError("")
    elif len(o.args) != 2:
        raise UsageError(
            f"fatal: only two arguments allowed in <type> <object> mode, not {len(o.args)}"
        )


def run(argv: list[str], ctx: Context) -> int:
    """Entry point for ``gitodb cat-file``."""
    if argv in (["-h"], ["--help"]):
        sys.stdout.write(USAGE)
        return 129
    try:
        o = parse_args(argv)
        check_args(o)
    except UsageError as e:
        msg = str(e)
        if not e.with_usage:
            sys.stderr.write(msg + "\n")
        else:
            sys.stderr.write((msg + "\n\n" if msg else "") + USAGE)
        return 129
    repo = ctx.open_repository()
    conversion = None
    if o.mode in ("c", "w"):
        conversion = _conversion(repo, ctx)
    if o.batch is not None:
        return run_batch(repo, o, sys.stdin.buffer, sys.stdout.buffer, conversion=conversion)
    if conversion is not None:
        return _run_transform(repo, o, conversion)
    return _run_single(repo, o)


def _conversion(repo: Repository, ctx: Context) -> Conversion:
    """The attribute-driven conversions for ``--filters``/``--textconv``."""
    from gitodb.repo.conversion import conversion_for

    explicit = bool(ctx.git_dir or os.environ.get("GIT_DIR"))
    return conversion_for(repo, repo.config, explicit_git_dir=explicit, attr_source=ctx.attr_source)


def _run_transform(repo: Repository, o: Options, conversion: Conversion) -> int:
    """``--filters`` / ``--textconv`` on one object: ``<rev>:<path>`` or ``--path``."""
    name = o.args[0]
    got = _resolve_or_die(repo, name)
    path = o.path if o.path is not None else got.path
    if path is None:
        raise GitodbError(f"<object>:<path> required, only <object> '{name}' given")
    mode = got.mode or 0o100644
    oid = replaced(replace_map(repo), got.oid)
    try:
        t, data = repo.odb.read(oid)
    except ObjectNotFoundError:
        raise GitodbError(f"Not a valid object name {name}") from None
    regular_blob = t == "blob" and mode & 0o170000 == 0o100000
    out = sys.stdout.buffer
    if o.mode == "w":
        out.write(conversion.to_worktree(path, data) if regular_blob else data)
        return 0
    converted = conversion.textconv(path, data) if regular_blob else None
    if converted is not None:
        out.write(converted)
        return 0
    # no textconv driver: Git prints the object as -p does
    return _run_single(repo, _as_pretty(o))


def _as_pretty(o: Options) -> Options:
    p = Options()
    p.mode = "p"
    p.args = list(o.args)
    return p


# --------------------------------------------------------------------------- single
def _resolve_or_die(repo: Repository, name: str) -> Resolved:
    try:
        return resolve_full(repo, name)
    except MissingPathError:
        raise
    except AmbiguousObjectNameError as e:
        sys.stderr.write(f"error: {e.message}\n")
        raise BadRevisionError(f"Not a valid object name {name}") from None
    except BadRevisionError:
        raise BadRevisionError(f"Not a valid object name {name}") from None


def _run_single(repo: Repository, o: Options) -> int:
    try:
        return _run_single_checked(repo, o)
    except LooseObjectError as e:
        if e.message == INVALID_TYPE:
            raise GitodbError(INVALID_TYPE) from None  # Git names no file here
        lines = _unpack_error_lines(e)
        if lines is None:
            raise
        sys.stderr.write("".join(f"error: {line}\n" for line in lines))
        name = o.args[-1]
        if o.mode in ("t", "s"):
            raise GitodbError("git cat-file: could not get object info") from None
        if o.mode == "p":
            raise GitodbError(f"Not a valid object name {name}") from None
        oid_hex = _loose_hex(e.path or "")
        raise GitodbError(
            f"loose object {oid_hex} (stored in {_shown_path(e.path or '')}) is corrupt"
        ) from None


def _shown_path(path: str) -> str:
    """A file as Git names it: relative to where it works when that is shorter."""
    rel = os.path.relpath(path) if path else path
    return path if rel.startswith("..") else rel


def _loose_hex(path: str) -> str:
    """The object id a loose object's path names (``objects/ab/cdef...``)."""
    head, tail = os.path.split(path)
    return os.path.basename(head) + tail


def _unpack_error_lines(e: LooseObjectError) -> list[str] | None:
    """Git's ``error:`` lines for a loose object whose header cannot be read, or None."""
    oid_hex = _loose_hex(e.path or "")
    if e.message == "object file is empty":
        return [f"object file {_shown_path(e.path or '')} is empty"]
    if not e.message.startswith("unable to unpack header: "):
        return None
    detail = e.message[len("unable to unpack header: ") :]
    if detail in ("no NUL in the first bytes", "loose object is truncated"):
        # Git 2.55 reads what there is and finds no end of header in it
        return [f"header for {oid_hex} too long, exceeds 32 bytes"]
    return [detail, f"unable to unpack {oid_hex} header"]


def _run_single_checked(repo: Repository, o: Options) -> int:
    odb = repo.odb
    out = sys.stdout.buffer
    if o.mode is None:
        type_name, name = o.args
        if type_name not in TYPE_NUMBERS:
            raise GitodbError(f'invalid object type "{type_name}"')
        got = _resolve_or_die(repo, name)
        data = _read_with_reference(repo, replaced(replace_map(repo), got.oid), type_name)
        if data is None:
            raise GitodbError(f"git cat-file {name}: bad file")
        if got.compat_oid is not None:
            data = _to_compat(repo, type_name, data)
        out.write(data)
        return 0
    name = o.args[0]
    got = _resolve_or_die(repo, name)
    oid = got.oid
    if o.mode == "e":
        return 0 if odb.contains(oid) else 1
    oid = replaced(replace_map(repo), oid)
    if o.mode in ("t", "s"):
        try:
            t, size = odb.read_header(oid)
            if o.mode == "s" and got.compat_oid is not None and t != "blob":
                size = len(_to_compat(repo, t, odb.read(oid)[1]))
        except ObjectNotFoundError:
            raise GitodbError("git cat-file: could not get object info") from None
        out.write(b"%s\n" % (t.encode() if o.mode == "t" else b"%d" % size))
        return 0
    # -p
    try:
        t, data = odb.read(oid)
    except ObjectNotFoundError:
        raise GitodbError(f"Not a valid object name {name}") from None
    fmt = repo.object_format
    if got.compat_oid is not None:
        data = _to_compat(repo, t, data)
        fmt = repo.compat.compat  # type: ignore[union-attr]
    if t == "tree":
        quote = repo.config.get_bool("core.quotepath", True)
        out.write(format_tree(Tree(data, fmt, got.name_oid), quote_fully=quote))
    else:
        out.write(data)
    return 0


def _to_compat(repo: Repository, type_name: str, data: bytes) -> bytes:
    """Content read in the storage format, as it is in the compatibility format."""
    compat = repo.compat
    if compat is None:
        return data
    return compat.convert_to_compat(type_name, data)


def _read_with_reference(repo: Repository, oid: bytes, want: str) -> bytes | None:
    """Git's ``read_object_with_reference``: peel tags (and commit -> tree) to ``want``."""
    fmt = repo.object_format
    for _ in range(100):
        try:
            t, data = repo.odb.read(oid)
        except ObjectNotFoundError:
            return None
        if t == want:
            return data
        if t == "tag":
            oid = Tag(data, fmt).object
        elif t == "commit" and want == "tree":
            oid = Commit(data, fmt).tree
        else:
            return None
    return None


# --------------------------------------------------------------------------- batch
class BatchFormat:
    """A compiled ``--batch`` format: literal text with ``%(atom)`` placeholders."""

    def __init__(self, fmt: str, delim: bytes = b"\n") -> None:
        self.delim = delim
        self.template, self.atoms = self._compile(fmt)
        self.template = self.template[:-1] + delim.replace(b"%", b"%%")
        atoms = set(self.atoms)
        self.needs_type = "objecttype" in atoms
        self.needs_size = "objectsize" in atoms
        self.needs_disk = "objectsize:disk" in atoms
        self.needs_deltabase = "deltabase" in atoms
        self.uses_rest = "rest" in atoms
        self.uses_mode = "objectmode" in atoms
        # the hand-written fast paths print exactly this
        self.is_default = fmt == DEFAULT_FORMAT and delim == b"\n"

    @staticmethod
    def _compile(fmt: str) -> tuple[bytes, list[str]]:
        """Turn the format into a bytes %-template and the atom order (Git's strbuf_expand)."""
        raw = fmt.encode("utf-8", "surrogateescape")
        parts = bytearray()
        atoms: list[str] = []
        i = 0
        n = len(raw)
        while i < n:
            pct = raw.find(b"%", i)
            if pct < 0:
                parts += raw[i:].replace(b"%", b"%%")
                break
            parts += raw[i:pct]
            if raw[pct + 1 : pct + 2] == b"%":
                parts += b"%%"
                i = pct + 2
                continue
            if raw[pct + 1 : pct + 2] == b"(":
                close = raw.find(b")", pct + 2)
                if close < 0:
                    element = raw[pct + 1 :].decode("utf-8", "surrogateescape")
                    raise GitodbError(f"format element '{element}' does not end in ')'")
                atom = raw[pct + 2 : close].decode("utf-8", "surrogateescape")
                if atom not in KNOWN_ATOMS:
                    raise GitodbError(f"unknown format element: {atom}")
                atoms.append(atom)
                parts += b"%s"
                i = close + 1
                continue
            parts += b"%%"
            i = pct + 1
        parts += b"\n"
        return bytes(parts), atoms

    def render(
        self,
        oid: bytes,
        type_num: int,
        size: int,
        disk: int,
        deltabase: bytes | None,
        rest: bytes | None,
        rawsz: int,
        mode: int | None = None,
    ) -> bytes:
        """One output line for an object (``mode``: of the tree entry it was named by)."""
        values = []
        for atom in self.atoms:
            if atom == "objectmode":
                values.append(b"%06o" % mode if mode else b"")
            elif atom == "objectname":
                values.append(oid.hex().encode())
            elif atom == "objecttype":
                values.append(TYPE_NAMES[type_num].encode())
            elif atom == "objectsize":
                values.append(b"%d" % size)
            elif atom == "objectsize:disk":
                values.append(b"%d" % disk)
            elif atom == "deltabase":
                values.append((deltabase or b"\0" * rawsz).hex().encode())
            else:
                values.append(rest or b"")
        return self.template % tuple(values)


class _Output:
    """Collects output and writes it in large chunks (or per request when unbuffered)."""

    def __init__(self, stream: BinaryIO, buffered: bool) -> None:
        self.stream = stream
        self.buffered = buffered
        self.parts: list[bytes] = []
        self.size = 0
        self.total = 0  # bytes accepted so far (written or pending)

    def write(self, data: bytes) -> None:
        self.parts.append(data)
        self.size += len(data)
        self.total += len(data)
        if self.size >= OUTPUT_CHUNK:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            self.stream.write(b"".join(self.parts))
            self.parts.clear()
            self.size = 0
        self.stream.flush()

    def write_parts(self, parts: list[bytes]) -> None:
        """Write ``parts`` in order, with ``writev`` where the stream is a file
        descriptor: joining them first would copy every object once more."""
        try:
            fd = self.stream.fileno()
        except (AttributeError, OSError):
            self.stream.write(b"".join(parts))
            return
        self.stream.flush()
        writev = output.writev
        for start in range(0, len(parts), _IOV_MAX):
            batch = parts[start : start + _IOV_MAX]
            want = sum(map(len, batch))
            done = writev(fd, batch)
            if done < want:  # a pipe took part of it: write the rest plainly
                rest = memoryview(b"".join(batch))[done:]
                while rest:
                    rest = rest[output.write(fd, rest) :]

    def end_request(self) -> None:
        if not self.buffered:
            self.flush()


class BatchRunner:
    """Answers batch requests against one repository."""

    def __init__(
        self,
        repo: Repository,
        fmt: BatchFormat,
        contents: bool,
        out: _Output,
        *,
        follow_symlinks: bool = False,
        object_filter: ObjectFilter | None = None,
        transform: str | None = None,
        conversion: Conversion | None = None,
    ) -> None:
        self.repo = repo
        # --filters ("w") / --textconv ("c"): blobs' contents converted for the path
        # given after the name; only then is a request line split at whitespace
        self.transform = transform
        self.conversion = conversion
        self.delim = fmt.delim
        self.follow_symlinks = follow_symlinks
        self.filter = object_filter
        self.mode: int | None = None
        self._replace: dict[bytes, bytes] | None = None
        self.odb: ObjectDatabase = repo.odb
        self.fmt = fmt
        self.contents = contents
        self.out = out
        self.rawsz = repo.object_format.rawsz

    # -- one named object (stdin modes)
    def one(self, name: bytes, rest: bytes | None, contents: bool) -> None:
        """Answer one request line: resolve ``name`` and print it, or ``missing``."""
        text = name.decode("utf-8", "surrogateescape")
        d = self.delim
        try:
            if self.follow_symlinks:
                got = resolve_follow_symlinks(self.repo, text)
                if isinstance(got, SymlinkOutcome):
                    self._symlink_outcome(name, got)
                    return
            else:
                got = resolve_full(self.repo, text)
        except AmbiguousObjectNameError as e:
            sys.stderr.write(f"error: {e.message}\n")
            self.out.write(name + b" ambiguous" + d)
            return
        except BadRevisionError:
            self.out.write(name + b" missing" + d)
            return
        oid = self.replaced(got.oid)
        self.mode = got.mode
        where = self.odb.locate(oid)
        if where is None:
            if got.mode is not None and got.mode & 0o170000 == 0o160000:
                self.out.write(got.oid.hex().encode() + b" submodule" + d)
            else:
                self.out.write(name + b" missing" + d)
            return
        if self.filter is not None and self._excluded(oid, where):
            self.out.write(got.name_oid.hex().encode() + b" excluded" + d)
            return
        if got.compat_oid is not None:
            self.emit_compat(got.compat_oid, oid, where, rest, contents)
            return
        shown = got.oid
        if isinstance(where, tuple):
            self.emit(shown, where[0], where[1], rest, contents, read_oid=oid)
            return
        try:
            self.emit(shown, None, where, rest, contents, read_oid=oid)
        except LooseObjectError as e:
            if e.message == INVALID_TYPE or e.message.startswith(SIZE_OVERFLOW):
                raise GitodbError(e.message) from None  # Git dies on these even in batch
            # Git: a loose object it cannot unpack is reported, then "missing"
            lines = _unpack_error_lines(e) or [str(e)]
            sys.stderr.write("".join(f"error: {line}\n" for line in lines))
            self.out.write(name + b" missing" + d)

    def replaced(self, oid: bytes) -> bytes:
        """The object to read for ``oid`` (replace refs, loaded on first use)."""
        if self._replace is None:
            self._replace = replace_map(self.repo)
        return replaced(self._replace, oid) if self._replace else oid

    def _excluded(self, oid: bytes, where) -> bool:  # type: ignore[no-untyped-def]
        assert self.filter is not None
        if isinstance(where, tuple):
            pack, offset = where
            type_num, size = pack.header_at(offset)
            type_name = TYPE_NAMES[type_num]
        else:
            header = where.read_header(oid)
            if header is None:
                return False
            type_name, size = header
        return self.filter.excludes(type_name, size)

    def _symlink_outcome(self, name: bytes, got: SymlinkOutcome) -> None:
        d = self.delim
        if got.status == "missing":
            self.out.write(name + b" missing" + d)
            return
        shown = got.path.encode("utf-8", "surrogateescape") if got.status == "symlink" else name
        self.out.write(b"%s %d%s%s%s" % (got.status.encode(), len(shown), d, shown, d))

    def emit(
        self,
        oid: bytes,
        pack,
        where,
        rest: bytes | None,  # type: ignore[no-untyped-def]
        contents: bool,
        read_oid: bytes | None = None,
    ) -> None:
        """Print one located object: the format line, then its content if ``contents``.

        ``read_oid`` is the object actually read when ``oid`` is replaced.
        """
        fmt = self.fmt
        shown, oid = oid, read_oid or oid
        data = b""
        type_num = 0
        size = disk = 0
        deltabase = None
        if pack is not None:
            if contents:
                type_num, data = pack.read_at(where)
                size = len(data)
            elif fmt.needs_size:
                type_num, size = pack.header_at(where)
            elif fmt.needs_type:
                type_num = pack.type_at(where)
            if fmt.needs_disk:
                disk = pack.disk_size_at(where)
            if fmt.needs_deltabase:
                deltabase = pack.delta_base_at(where)
        else:
            if contents:
                got = where.read(oid)
                if got is None:
                    self.out.write(shown.hex().encode() + b" missing" + self.delim)
                    return
                type_num, data = TYPE_NUMBERS[got[0]], got[1]
                size = len(data)
            elif fmt.needs_size or fmt.needs_type:
                header = where.read_header(oid)
                if header is None:
                    self.out.write(shown.hex().encode() + b" missing" + self.delim)
                    return
                type_num, size = TYPE_NUMBERS[header[0]], header[1]
            if fmt.needs_disk:
                disk = where.disk_size(oid) or 0
        write = self.out.write
        write(fmt.render(shown, type_num, size, disk, deltabase, rest, self.rawsz, self.mode))
        if contents:
            if self.transform is not None and type_num == _BLOB:
                data = self._transformed(shown, data, rest)
            write(data)
            write(self.delim)

    def _transformed(self, oid: bytes, data: bytes, path: bytes | None) -> bytes:
        """A blob's content through ``--filters``/``--textconv`` for ``path`` (Git takes
        every blob as a regular file here)."""
        conv = self.conversion
        assert conv is not None
        if not path:
            raise GitodbError(f"missing path for '{oid.hex()}'")
        text = path.decode("utf-8", "surrogateescape")
        if self.transform == "w":
            return conv.to_worktree(text, data)
        converted = conv.textconv(text, data)
        return data if converted is None else converted

    def emit_compat(
        self,
        compat_oid: bytes,
        oid: bytes,
        where,  # type: ignore[no-untyped-def]
        rest: bytes | None,
        contents: bool,
    ) -> None:
        """Print an object named by its compatibility id: that id, and the content
        (and so the size) as it is in the compatibility format."""
        compat = self.repo.compat
        assert compat is not None  # only names in a compatibility format get here
        type_name, data = self.odb.read(oid)
        data = compat.convert_to_compat(type_name, data)
        if isinstance(where, tuple):
            pack, offset = where
            disk = pack.disk_size_at(offset) if self.fmt.needs_disk else 0
            base = pack.delta_base_at(offset) if self.fmt.needs_deltabase else None
            if base is not None:
                base = compat.to_compat(base)
        else:
            disk = (where.disk_size(oid) or 0) if self.fmt.needs_disk else 0
            base = None
        self.out.write(
            self.fmt.render(
                compat_oid,
                TYPE_NUMBERS[type_name],
                len(data),
                disk,
                base,
                rest,
                compat.compat.rawsz,
                self.mode,
            )
        )
        if contents:
            self.out.write(data)
            self.out.write(self.delim)

    # -- every object
    def all_objects(self, unordered: bool) -> None:
        """Print every object: sorted by id, or in storage order with ``unordered``."""
        fmt = self.fmt
        if self.filter is not None or (self.transform is not None and self.contents):
            # the plain loop: the fast paths below print every object, unconverted
            for oid, pack, where in self.odb.iter_located("pack" if unordered else "sorted"):
                spot = (pack, where) if pack is not None else where
                if not self._excluded(oid, spot):
                    self.emit(oid, pack, where, None, self.contents)
            return
        if self.contents and not unordered:
            self._all_contents_reordered()
            return
        if fmt.is_default and self.contents:
            self._all_default_contents_pack_order()
            return
        if fmt.is_default and self._all_default_check_one_pack(unordered):
            return
        located = self.odb.iter_located("pack" if unordered else "sorted")
        if fmt.is_default:
            self._all_default_check(located)
        else:
            emit = self.emit
            contents = self.contents
            for oid, pack, where in located:
                emit(oid, pack, where, None, contents)

    def _all_contents_reordered(self) -> None:
        """``--batch --batch-all-objects`` in id order, computed in pack order.

        Reading in id order jumps between delta chains, so most of the time would go
        into rebuilding bases the cache has already dropped.  Instead every object is
        built walking the packs in offset order (its base was usually just built),
        its output record goes to an anonymous temporary file, and the records are
        then copied out in id order.  Same bytes as Git; the cost is one extra copy.
        """
        located = list(self.odb.iter_located("sorted"))
        starts = array("Q", bytes(8 * len(located)))
        ends = array("Q", bytes(8 * len(located)))
        real_out = self.out
        import tempfile

        with tempfile.TemporaryFile(prefix="gitodb-cat-file-") as spill_file:
            spill = _Output(spill_file, buffered=True)  # type: ignore[arg-type]
            self.out = spill
            written = 0
            try:
                if self.fmt.is_default:
                    written = self._spill_default(located, spill, starts, ends)
                else:
                    rank = {id(p): i for i, p in enumerate(self.odb.packs)}
                    loose_key = len(rank) << 44
                    keys = [
                        loose_key + i if pack is None else (rank[id(pack)] << 44) + where  # type: ignore[operator]
                        for i, (_oid, pack, where) in enumerate(located)
                    ]
                    for i in sorted(range(len(located)), key=keys.__getitem__):
                        oid, pack, where = located[i]
                        starts[i] = written
                        self.emit(oid, pack, where, None, True)
                        written = spill.total
                        ends[i] = written
                spill.flush()
            finally:
                self.out = real_out
            if not written:
                return
            self._copy_in_order(spill_file.fileno(), starts, ends)

    def _spill_default(
        self,
        located: list,
        spill: _Output,  # type: ignore[type-arg]
        starts: array,
        ends: array,
    ) -> int:
        """Write every object's default ``--batch`` record to ``spill`` in pack order.

        ``starts``/``ends`` get each record's span, indexed like ``located``.
        """
        names = {n: t.encode() for n, t in TYPE_NAMES.items()}
        index = {oid: i for i, (oid, _pack, _where) in enumerate(located)}
        parts = spill.parts
        stream_write = spill.stream.write
        pending = 0
        written = 0

        def records() -> Iterator[tuple[int, int, bytes]]:
            for pack in self.odb.packs:
                for oid, _off, type_num, data in pack.iter_objects():
                    i = index.get(oid)
                    if i is not None and located[i][1] is pack:
                        yield i, type_num, data
            for i, (oid, pack, where) in enumerate(located):
                if pack is None:
                    got = where.read(oid) or self.odb.read(oid)
                    yield i, TYPE_NUMBERS[got[0]], got[1]

        for i, type_num, data in records():
            header = b"%s %s %d\n" % (located[i][0].hex().encode(), names[type_num], len(data))
            starts[i] = written
            written += len(header) + len(data) + 1
            ends[i] = written
            parts.append(header)
            parts.append(data)
            parts.append(b"\n")
            pending += len(data)
            if pending >= OUTPUT_CHUNK:
                stream_write(b"".join(parts))
                parts.clear()
                pending = 0
        spill.size = pending
        return written

    def _copy_in_order(self, fd: int, starts: array, ends: array) -> None:
        """Copy the spilled records out in id order, reading each with ``pread``.

        Not a mapping of the spill: read at random, its touched pages (and the
        kernel's fault-around of each) would stay in the process's RSS up to the
        spill's whole size.  Reads land in the page cache and in ~1 MiB of output.
        """
        stream_write = self.out.stream.write
        pread = os.pread
        chunk: list[bytes] = []
        pending = 0
        for start, end in zip(starts, ends, strict=True):
            chunk.append(pread(fd, end - start, start))
            pending += end - start
            if pending >= OUTPUT_CHUNK:
                stream_write(b"".join(chunk))
                chunk.clear()
                pending = 0
        if chunk:
            stream_write(b"".join(chunk))

    def _all_default_contents_pack_order(self) -> None:
        # The hot loop of ``--batch --batch-all-objects --unordered``: objects come
        # in pack order (bases cached), the header line is one %-format, and
        # output goes out in ~1 MiB writev batches.
        names = {n: n.encode() for n in TYPE_NUMBERS}
        out = self.out
        parts = out.parts
        write_parts = out.write_parts
        pending = 0
        for oid, type_name, data in self.odb.iter_objects("pack"):
            parts.append(b"%s %s %d\n" % (oid.hex().encode(), names[type_name], len(data)))
            parts.append(data)
            parts.append(b"\n")
            pending += len(data)
            if pending >= OUTPUT_CHUNK:
                write_parts(parts)
                parts.clear()
                pending = 0
        out.size = pending

    def _all_default_check_one_pack(self, unordered: bool) -> bool:
        """``--batch-check --batch-all-objects`` for a fully packed repository (one pack,
        no loose objects, as after ``git gc``): all headers in one pass in pack order.

        Returns False (nothing printed) when the repository is not laid out so.
        """
        odb = self.odb
        odb.rescan_packs()
        if (
            len(odb.packs) != 1
            or odb.unusable
            or any(True for d in odb.dirs for _ in d.loose.iter_oids())
        ):
            return False
        pack = odb.packs[0]
        types, sizes = pack.headers_by_position()
        count = pack.count
        names = [b"", *(TYPE_NAMES[n].encode() for n in range(1, 5))]
        positions = pack.rev_order if unordered else range(count)
        stream_write = self.out.stream.write
        # The C formatter reads the ids straight from the mapped index; the Python
        # one from the list of every id.
        table = pack.idx.id_table()
        oids: list[bytes] = pack.idx.oid_list() if _check_lines is None else []
        for start in range(0, count, _CHECK_LINES_CHUNK):
            chunk = positions[start : start + _CHECK_LINES_CHUNK]
            if _check_lines is not None:  # the same lines, formatted in C
                stream_write(_check_lines(table, types, sizes, array("I", chunk)))
            else:
                stream_write(
                    b"".join(
                        [
                            b"%s %s %d\n" % (oids[p].hex().encode(), names[types[p]], sizes[p])
                            for p in chunk
                        ]
                    )
                )
        return True

    def _all_default_check(self, located: Iterator) -> None:  # type: ignore[type-arg]
        names = {n: t.encode() for n, t in TYPE_NAMES.items()}
        out = self.out
        parts = out.parts
        stream_write = out.stream.write
        for oid, pack, where in located:
            if pack is not None:
                type_num, size = pack.header_at(where)
            else:
                header = where.read_header(oid)
                if header is None:
                    parts.append(oid.hex().encode() + b" missing\n")
                    continue
                type_num, size = TYPE_NUMBERS[header[0]], header[1]
            parts.append(b"%s %s %d\n" % (oid.hex().encode(), names[type_num], size))
            if len(parts) >= 16384:
                stream_write(b"".join(parts))
                parts.clear()


def _read_requests(stream: BinaryIO, nul: bool) -> Iterator[bytes]:
    """Request lines without their terminator (CRLF too, like strbuf_getline)."""
    if nul:
        data = stream.read()
        items = data.split(b"\0")
        if items and items[-1] == b"":
            items.pop()
        yield from items
        return
    for line in stream:
        if line.endswith(b"\n"):
            line = line[:-1]
            if line.endswith(b"\r"):
                line = line[:-1]
        yield line


def run_batch(
    repo: Repository,
    o: Options,
    stdin: BinaryIO,
    stdout: BinaryIO,
    *,
    conversion: Conversion | None = None,
) -> int:
    """Run a batch mode; return the exit status (``conversion``: with --filters/--textconv)."""
    delim = b"\0" if o.nul_output else b"\n"
    fmt = BatchFormat(o.format if o.format is not None else DEFAULT_FORMAT, delim)
    contents = o.batch == "batch"
    buffered = o.buffer or (o.all_objects and not o.buffer_given)
    out = _Output(stdout, buffered)
    transform = o.mode if o.mode in ("c", "w") else None
    runner = BatchRunner(
        repo,
        fmt,
        contents,
        out,
        follow_symlinks=o.follow_symlinks,
        object_filter=o.filter,
        transform=transform,
        conversion=conversion,
    )
    nul_input = o.nul_input or o.nul_output
    flush_at_exit = True
    try:
        if o.all_objects:
            runner.all_objects(o.unordered)
        elif o.batch == "batch-command":
            flush_at_exit = _run_commands(runner, o, stdin, out, nul_input)
        else:
            for line in _read_requests(stdin, nul_input):
                rest = None
                name = line
                if fmt.uses_rest or transform is not None:
                    name, rest = _split_rest(line)
                runner.one(name, rest, contents)
                out.end_request()
    finally:
        # Like Git's stdio at exit: what was produced before an error still goes out.
        if flush_at_exit:
            out.flush()
    return 0


def _split_rest(line: bytes) -> tuple[bytes, bytes | None]:
    for i, c in enumerate(line):
        if c in (0x20, 0x09):
            j = i
            while j < len(line) and line[j] in (0x20, 0x09):
                j += 1
            return line[:i], line[j:]
    return line, None


_COMMANDS = (("contents", True), ("info", True), ("flush", False))


def _run_commands(
    runner: BatchRunner, o: Options, stdin: BinaryIO, out: _Output, nul_input: bool
) -> bool:
    """``--batch-command``: ``contents <obj>``, ``info <obj>``, ``flush`` (with --buffer).

    Returns whether output still pending at the end is to be written: with
    ``--buffer``, Git's test knob ``GIT_TEST_CAT_FILE_NO_FLUSH_ON_EXIT`` drops the
    commands queued since the last ``flush``.
    """
    queued: list[tuple[bool, bytes]] = []

    def dispatch() -> None:
        for want_contents, arg in queued:
            runner.one(arg, None, want_contents)
        queued.clear()
        out.flush()

    for line in _read_requests(stdin, nul_input):
        text = line.decode("utf-8", "surrogateescape")
        if not line:
            raise GitodbError("empty command in input")
        if line[:1].isspace():
            raise GitodbError(f"whitespace before command: '{text}'")
        cmd = None
        arg = b""
        for name, takes_args in _COMMANDS:
            if not line.startswith(name.encode()):
                continue
            tail = line[len(name) :]
            if takes_args:
                if tail[:1] != b" ":
                    raise GitodbError(f"{name} requires arguments")
                arg = tail[1:]
            elif tail:
                raise GitodbError(f"{name} takes no arguments")
            cmd = name
            break
        if cmd is None:
            raise GitodbError(f"unknown command: '{text}'")
        if cmd == "flush":
            if not o.buffer:
                raise GitodbError("flush is only for --buffer mode")
            dispatch()
            continue
        if not o.buffer:
            runner.one(arg, None, cmd == "contents")
            out.flush()
            continue
        queued.append((cmd == "contents", arg))
    if o.buffer and _env_bool("GIT_TEST_CAT_FILE_NO_FLUSH_ON_EXIT"):
        return False
    if queued:
        dispatch()
    return True


def _env_bool(name: str) -> bool:
    return os.environ.get(name, "").lower() in ("1", "true", "yes", "on")


__all__ = ["run", "run_batch", "parse_args", "BatchFormat", "BatchRunner"]
