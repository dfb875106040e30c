"""Batch object queries, what ``git cat-file --batch*`` answers, as a library call.

``run_batch(repo, BatchOptions(...), stdin, stdout)`` reads request lines (object
names, or ``--batch-command``'s ``contents``/``info``/``flush``) and writes Git's
records: a line from a ``BatchFormat`` (``%(objectname) %(objecttype)
%(objectsize)`` by default) and, for ``contents``, the object's bytes.
``BatchRunner.all_objects`` lists every object of the repository instead.

The read strategies live here, not in the command: which walk answers
``--batch-all-objects`` (pack order with bases cached, a one-pack header scan,
records placed straight into a regular output file, a spill to a temporary file
sorted back into id order, the plain per-object loop when filters or conversions
apply), and the pack-rank sort keys that order reads.
The bytes are Git's in every case; only the cost differs.

Diagnostics Git prints on the way (an ambiguous name, a corrupt loose object)
go to ``err`` (standard error by default), as ``error: ...`` lines.
"""

from __future__ import annotations

import os
import sys
from array import array
from itertools import accumulate

from gitodb.errors import (
    AmbiguousObjectNameError,
    BadRevisionError,
    GitodbError,
    LooseObjectError,
    MissingDeltaBaseError,
)
from gitodb.fileio import pread
from gitodb.loose.read import INVALID_TYPE, SIZE_OVERFLOW
from gitodb.objects.filter import ObjectFilter
from gitodb.objects.header import TYPE_NAMES, TYPE_NUMBERS
from gitodb.objects.mailmap import map_idents
from gitodb.repo.replace import replace_map, replaced
from gitodb.repo.revparse import (
    SymlinkOutcome,
    resolve_follow_symlinks,
    resolve_full,
)
from gitodb.types import cast

try:
    from gitodb._native import check_lines as _check_lines
except ImportError:  # built without a C compiler
    _check_lines = None  # type: ignore[assignment]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import BinaryIO, TextIO, TypeAlias

    from gitodb.loose.read import LooseObjectStore
    from gitodb.objects.mailmap import Mailmap
    from gitodb.pack.reader import PackFile
    from gitodb.repo import Repository
    from gitodb.repo.conversion import Conversion
    from gitodb.repo.odb import ObjectDatabase

    #: where an object is: (pack, offset) or the loose store that has it
    Location = tuple[PackFile, int] | LooseObjectStore
    #: one object of a listing: (oid, pack, offset) or (oid, None, loose store)
    Located = tuple[bytes, PackFile | None, int | LooseObjectStore]

__all__ = [
    "DEFAULT_FORMAT",
    "BatchFormat",
    "BatchOptions",
    "BatchOutput",
    "BatchRunner",
    "loose_error_lines",
    "read_requests",
    "run_batch",
]

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
# Spilled records at least this large are copied out with sendfile.
_SENDFILE_MIN = 64 * 1024
# Buffers per writev call (the kernel's UIO_MAXIOV).
_IOV_MAX = 1024
_BLOB = TYPE_NUMBERS["blob"]
#: the types whose identities a mailmap rewrites
_IDENT_TYPES = (TYPE_NUMBERS["commit"], TYPE_NUMBERS["tag"])
_TREE = TYPE_NUMBERS["tree"]


def shown_path(path: str) -> str:
    """A file as Git names it: relative to where it works when that is shorter."""
    rel = os.path.relpath(path) if path else path
    return path if rel.startswith("..") else rel


def loose_hex(path: str) -> str:
    """The object id a loose object's path names (``objects/ab/cdef...``)."""
    head, tail = os.path.split(path)
    return os.path.basename(head) + tail


def loose_error_lines(e: LooseObjectError) -> list[str] | None:
    """Git's ``error:`` lines for a loose object whose header cannot be read, or None."""
    oid_hex = loose_hex(e.path or "")
    if e.message == "object file is empty":
        return [f"object file {shown_path(e.path or '')} is empty"]
    if not e.message.startswith("unable to unpack header: "):
        return None
    detail = e.message[len("unable to unpack header: ") :]
    if detail in ("no NUL in the first bytes", "loose object is truncated"):
        # Git 2.55 reads what there is and finds no end of header in it
        return [f"header for {oid_hex} too long, exceeds 32 bytes"]
    return [detail, f"unable to unpack {oid_hex} header"]


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


#: ``os.writev``/``os.write``-like calls (the CLI passes ones that tag stdout's errors)
WriteV: TypeAlias = "Callable[[int, Sequence[bytes | memoryview]], int]"
Write: TypeAlias = "Callable[[int, bytes | memoryview], int]"
PWriteV: TypeAlias = "Callable[[int, Sequence[bytes | memoryview], int], int]"
SendFile: TypeAlias = "Callable[[int, int, int, int], int]"


class BatchOutput:
    """Collects output and writes it in large chunks (or per request when unbuffered).

    ``writev``/``write`` are the system calls used for large scattered writes to a
    file descriptor (``os.writev``/``os.write`` by default); ``pwritev`` the one that
    places records in a regular file (``os.pwritev``; None where there is none);
    ``sendfile`` the one that copies from a file to the output in the kernel.
    """

    def __init__(
        self,
        stream: BinaryIO,
        buffered: bool,
        *,
        writev: WriteV | None = None,
        write: Write | None = None,
        pwritev: PWriteV | None = None,
        sendfile: SendFile | None = None,
    ) -> None:
        self.stream = stream
        self.buffered = buffered
        self._writev = writev or getattr(os, "writev", None)
        self._write = write or os.write
        self.pwritev: PWriteV | None = pwritev or getattr(os, "pwritev", None)
        self.sendfile: SendFile | None = sendfile or getattr(os, "sendfile", None)
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
        writev = self._writev
        try:
            fd = self.stream.fileno()
        except (AttributeError, OSError):
            fd = -1
        if fd < 0 or writev is None:  # not a descriptor, or no writev (Windows)
            self.stream.write(b"".join(parts))
            return
        self.stream.flush()
        for start in range(0, len(parts), _IOV_MAX):
            batch = parts[start : start + _IOV_MAX]
            want = sum(map(len, batch))
            done = writev(fd, batch)
            if done < want:  # a pipe took part of it: write the rest plainly
                rest = memoryview(b"".join(batch))[done:]
                while rest:
                    rest = rest[self._write(fd, rest) :]

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
        out: BatchOutput,
        *,
        follow_symlinks: bool = False,
        object_filter: ObjectFilter | None = None,
        transform: str | None = None,
        conversion: Conversion | None = None,
        err: TextIO | None = None,
    ) -> None:
        self.repo = repo
        # "filters" / "textconv": blobs' contents converted for the path given after
        # the name; only then is a request line split at whitespace
        if transform not in (None, "filters", "textconv"):
            raise ValueError(f"unknown transform {transform!r}")
        self.transform = transform
        self.err = err if err is not None else sys.stderr
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
        #: the mailmap applied to commits and tags (``use_mailmap``), or None
        self.mailmap: Mailmap | None = None
        self._mailmap: Mailmap | None = None

    def use_mailmap(self, on: bool) -> None:
        """Map the identities of the commits and tags printed from now on, or not
        (the repository's mailmap is read on first use)."""
        if on and self._mailmap is None:
            from gitodb.repo import work_tree_mailmap

            self._mailmap = work_tree_mailmap(self.repo)
        self.mailmap = self._mailmap if on else None

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
            self.err.write(e.report_text())
            self.out.write(name + b" ambiguous" + d)
            return
        except BadRevisionError:
            self.out.write(name + b" missing" + d)
            return
        oid = self.replaced(got.oid)
        self.mode = got.mode
        where = self.odb.locate(oid)
        if where is None and oid == self.odb.fmt.empty_tree:  # Git's one "cached object"
            if self.filter is not None and self.filter.excludes("tree", 0):
                self.out.write(got.name_oid.hex().encode() + b" excluded" + d)
                return
            line = self.fmt.render(got.oid, _TREE, 0, 0, None, rest, self.rawsz, self.mode)
            self.out.write(line + (d if contents else b""))
            return
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
            lines = loose_error_lines(e) or [str(e)]
            self.err.write("".join(f"error: {line}\n" for line in lines))
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
        pack: PackFile | None,
        where: int | LooseObjectStore,
        rest: bytes | None,
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
        mailmap = self.mailmap
        if pack is not None:
            where = cast(int, where)
            try:
                if contents:
                    type_num, data = pack.read_at(where)
                    size = len(data)
                elif fmt.needs_size:
                    type_num, size = pack.header_at(where)
                    if mailmap is not None and type_num in _IDENT_TYPES:
                        _t, raw = pack.read_at(where)
                        size = len(map_idents(mailmap, TYPE_NAMES[type_num], raw))
                elif fmt.needs_type:
                    type_num = pack.type_at(where)
            except MissingDeltaBaseError:
                # Git: the object's info cannot be had, so it is missing; go on
                self.out.write(shown.hex().encode() + b" missing" + self.delim)
                return
            if fmt.needs_disk:
                disk = pack.disk_size_at(where)
            if fmt.needs_deltabase:
                deltabase = pack.delta_base_at(where)
        else:
            where = cast("LooseObjectStore", where)
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
                if mailmap is not None and fmt.needs_size and type_num in _IDENT_TYPES:
                    got = where.read(oid)
                    if got is not None:
                        size = len(map_idents(mailmap, got[0], got[1]))
            if fmt.needs_disk:
                disk = where.disk_size(oid) or 0
        if oid == self.odb.fmt.empty_tree:
            disk, deltabase = 0, None  # Git's cached object: see ObjectDatabase.info
        if contents and mailmap is not None and type_num in _IDENT_TYPES:
            data = map_idents(mailmap, TYPE_NAMES[type_num], data)
            size = len(data)
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
        if self.transform == "filters":
            return conv.to_worktree(text, data)
        converted = conv.textconv(text, data)
        return data if converted is None else converted

    def emit_compat(
        self,
        compat_oid: bytes,
        oid: bytes,
        where: Location,
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
        if (
            self.filter is not None
            or (self.transform is not None and self.contents)
            or self.mailmap is not None
        ):
            # the plain loop: the fast paths below print every object as stored
            for oid, pack, where in self.odb.iter_located("pack" if unordered else "sorted"):
                spot = (pack, where) if pack is not None else where
                if self.filter is None or not self._excluded(oid, spot):
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
        if self.fmt.is_default:
            try:
                if self._default_contents_in_place():
                    return
                pack = self._only_pack()
                if pack is None:
                    self._contents_spilled()
                    return
            except GitodbError:
                # Damage somewhere: print in id order what Git prints before it dies.
                # (it raises there; reading one object at a time may also succeed)
                self._default_contents_id_order()
                return
            self._default_contents_planned(pack)  # on damage, goes on as Git does
            return
        self._contents_spilled()

    def _default_contents_planned(self, pack: PackFile) -> None:
        """``--batch --batch-all-objects`` (default format, id order) for a fully packed
        repository, built in id order with the cache planned from the whole sequence
        of reads (``PackFile.id_order_walk``, ``_native/idorder.c``), the records
        formatted in C and written as they come with ``writev``: no spill, whatever
        standard output is (a pipe, /dev/null).

        An object the walk cannot build (damage) is printed here as Git prints it:
        its line, then its content read by ``read_at``, which raises where Git dies.
        Without the native core (or if the walk cannot be set up), one object at a
        time (``_default_contents_id_order``).
        """
        try:
            walk = pack.id_order_walk()
        except GitodbError:
            walk = None
        if walk is None:
            self._default_contents_id_order()
            return
        out = self.out
        write_parts = out.write_parts
        while True:
            parts, fallback = walk.records(_IOV_MAX, OUTPUT_CHUNK)
            if parts:
                if out.parts:  # a fallback's record, still buffered
                    out.flush()
                write_parts(parts)
            if fallback is not None:
                self._default_record(fallback[0], pack, fallback[1])
            elif not parts:
                return

    def _default_record(self, oid: bytes, pack: PackFile, offset: int) -> None:
        """One packed object's default ``--batch`` record, its line out before its
        content is read (so on damage the output ends where Git's does)."""
        write = self.out.write
        try:
            type_num, size = pack.header_at(offset)
        except MissingDeltaBaseError:
            write(oid.hex().encode() + b" missing\n")  # Git goes on
            return
        write(b"%s %s %d\n" % (oid.hex().encode(), TYPE_NAMES[type_num].encode(), size))
        write(pack.read_at(offset)[1])
        write(b"\n")

    def _default_contents_id_order(self) -> None:
        """Default ``--batch`` records in id order, each header line out before its
        content is read, as Git writes them: on damage, the output ends where Git's
        does, and the typed error of the object that Git fails on is raised."""
        write = self.out.write
        for oid, pack, where in self.odb.iter_located("sorted"):
            if pack is not None:
                self._default_record(oid, pack, cast(int, where))
                continue
            loose = cast("LooseObjectStore", where)
            header = loose.read_header(oid)
            if header is None:
                write(oid.hex().encode() + b" missing\n")
                continue
            write(b"%s %s %d\n" % (oid.hex().encode(), header[0].encode(), header[1]))
            got = loose.read(oid)
            write(got[1] if got is not None else self.odb.read(oid)[1])
            write(b"\n")

    def _contents_spilled(self) -> None:
        """Every record built in pack order into a temporary file, copied out in id order."""
        located = list(self.odb.iter_located("sorted"))
        starts = array("Q", bytes(8 * len(located)))
        ends = array("Q", bytes(8 * len(located)))
        real_out = self.out
        import tempfile  # only to spill (start-up)

        with tempfile.TemporaryFile(prefix="gitodb-cat-file-") as spill_file:
            spill = BatchOutput(spill_file, buffered=True)
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

    def _default_contents_in_place(self) -> bool:
        """``--batch --batch-all-objects`` (default format, id order) straight into a
        regular file: no spill.

        Every record's length is known from the headers alone (the one-pass header
        scan of ``--batch-check``), so its place in the output is too: the objects
        are built in pack order (bases cached) and each record is written at its
        offset with ``pwritev``.  Only for a fully packed repository (one pack, no
        loose objects) and standard output a regular file positioned at its end,
        not in append mode (``> file``); anything else, the spill.  If an entry
        cannot be read, what was written is cut off again and ``GitodbError`` is
        raised (the caller then prints in id order what Git prints before it dies).
        Returns False (nothing written) when it does not apply.
        """
        pwritev = self.out.pwritev
        at = self._output_file_end() if pwritev is not None else None
        pack = self._only_pack() if at is not None else None
        if at is None or pack is None or pwritev is None:
            return False
        fd, base = at
        types, sizes = pack.headers_by_position()
        names = [b"", *(TYPE_NAMES[n].encode() for n in range(1, 5))]
        # record: "<hex> <type> <size>\n" <data> "\n"
        fixed = 2 * self.rawsz + 3
        name_len = [len(n) for n in names]
        starts = array(
            "Q",
            accumulate(
                (
                    fixed + name_len[t] + len(str(s)) + s + 1
                    for t, s in zip(types, sizes, strict=True)
                ),
                initial=base,
            ),
        )
        rev = pack.rev_order
        try:
            for k, (oid, _off, t, data) in enumerate(pack.iter_objects()):
                p = rev[k]
                if t != types[p] or len(data) != sizes[p]:
                    raise _NotAsScanned
                parts = [b"%s %s %d\n" % (oid.hex().encode(), names[t], len(data)), data, b"\n"]
                at_ = starts[p]
                want = starts[p + 1] - at_
                done = pwritev(fd, parts, at_)
                if done < want:  # short write (a signal, a full disk): the rest plainly
                    rest = memoryview(b"".join(parts))[done:]
                    while rest:
                        n = pwritev(fd, [rest], at_ + want - len(rest))
                        rest = rest[n:]
        except (GitodbError, _NotAsScanned):
            # Undo; the caller then prints what Git prints, in id order, and dies.
            os.ftruncate(fd, base)
            os.lseek(fd, base, os.SEEK_SET)
            raise GitodbError("damaged object") from None
        os.lseek(fd, starts[-1], os.SEEK_SET)
        return True

    def _output_file_end(self) -> tuple[int, int] | None:
        """``(fd, offset)`` of standard output when it is a regular file positioned at
        its end and not in append mode (records can be placed with ``pwrite``)."""
        stream = self.out.stream
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):
            return None
        import fcntl  # only here (start-up)
        import stat

        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND:
                return None
            stream.flush()
            here = os.lseek(fd, 0, os.SEEK_CUR)
        except OSError:
            return None
        return (fd, here) if here == os.fstat(fd).st_size else None

    def _only_pack(self) -> PackFile | None:
        """The repository's one pack when every object is in it (no loose objects,
        no other or unusable pack: as after ``git gc``), else None."""
        odb = self.odb
        odb.rescan_packs()
        if (
            len(odb.packs) != 1
            or odb.unusable
            or any(True for d in odb.dirs for _ in d.loose.iter_oids())
        ):
            return None
        return odb.packs[0]

    def _spill_default(
        self,
        located: list[Located],
        spill: BatchOutput,
        starts: array[int],
        ends: array[int],
    ) -> int:
        """Write every object's default ``--batch`` record to ``spill`` in pack order.

        ``starts``/``ends`` get each record's span, indexed like ``located``.
        """
        names = {n: t.encode() for n, t in TYPE_NAMES.items()}
        index = {oid: i for i, (oid, _pack, _where) in enumerate(located)}
        parts = spill.parts
        write_parts = spill.write_parts
        pending = 0
        written = 0

        def records() -> Iterator[tuple[int, int, bytes]]:
            for pack in self.odb.packs:
                for oid, _off, type_num, data in pack.iter_objects():
                    i = index.get(oid)
                    if i is not None and located[i][1] is pack:
                        yield i, type_num, data
            for i, (oid, in_pack, where) in enumerate(located):
                if in_pack is None:
                    got = cast("LooseObjectStore", where).read(oid) or self.odb.read(oid)
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
                write_parts(parts)  # writev: no joined copy of the objects
                parts.clear()
                pending = 0
        spill.size = pending
        return written

    def _copy_in_order(self, fd: int, starts: array[int], ends: array[int]) -> None:
        """Copy the spilled records out in id order.

        Large records go with ``sendfile`` (kernel to kernel: no copy through this
        process); small ones are read with ``pread`` and written in ~1 MiB batches.
        Not a mapping of the spill: read at random, its touched pages (and the
        kernel's fault-around of each) would stay in the process's RSS up to the
        spill's whole size.
        """
        out = self.out
        stream_write = out.stream.write
        sendfile = out.sendfile
        try:
            out_fd = out.stream.fileno() if sendfile is not None else -1
        except (AttributeError, OSError, ValueError):
            out_fd = -1
        chunk: list[bytes] = []
        pending = 0
        for start, end in zip(starts, ends, strict=True):
            if out_fd >= 0 and end - start >= _SENDFILE_MIN:
                if chunk:
                    stream_write(b"".join(chunk))
                    chunk.clear()
                    pending = 0
                out.stream.flush()
                while start < end:
                    sent = sendfile(out_fd, fd, start, end - start)  # type: ignore[misc]
                    if sent <= 0:  # the spill ended early: cannot happen; do not spin
                        raise GitodbError("cat-file: temporary file is truncated")
                    start += sent
                continue
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
        pending = done = 0
        try:
            for oid, type_name, data in self.odb.iter_objects("pack"):
                parts.append(b"%s %s %d\n" % (oid.hex().encode(), names[type_name], len(data)))
                parts.append(data)
                parts.append(b"\n")
                done += 1
                pending += len(data)
                if pending >= OUTPUT_CHUNK:
                    write_parts(parts)
                    parts.clear()
                    pending = 0
        except MissingDeltaBaseError:
            # a delta whose base is nowhere (a thin pack): from it on, one object at a
            # time in the same order, each such object "missing" (Git goes on)
            out.size = pending
            for i, (oid, pack, where) in enumerate(self.odb.iter_located("pack")):
                if i >= done:
                    self.emit(oid, pack, where, None, True)
            return
        out.size = pending

    def _all_default_check_one_pack(self, unordered: bool) -> bool:
        """``--batch-check --batch-all-objects`` for a fully packed repository (one pack,
        no loose objects, as after ``git gc``): all headers in one pass in pack order.

        Returns False (nothing printed) when the repository is not laid out so.
        """
        pack = self._only_pack()
        if pack is None:
            return False
        try:
            types, sizes = pack.headers_by_position()
        except MissingDeltaBaseError:
            return False  # the loop over every object says which ones are missing
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
                try:
                    type_num, size = pack.header_at(where)
                except MissingDeltaBaseError:
                    parts.append(oid.hex().encode() + b" missing\n")  # Git goes on
                    continue
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


class _NotAsScanned(Exception):
    """An object built differently from what its header said (damage): start over."""


def read_requests(stream: BinaryIO, nul: bool) -> Iterator[bytes]:
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


class BatchOptions:
    """What a batch run is asked to do (``git cat-file``'s batch options).

    ``mode``: ``"batch"`` (records and contents), ``"batch-check"`` (records) or
    ``"batch-command"`` (commands on stdin); ``format``: the record format (None:
    the default); ``all_objects``: every object instead of stdin's names, sorted by
    id unless ``unordered``; ``buffer``: write at the end or at ``flush`` (None: the
    mode's default, buffered for ``all_objects``); ``nul_input``/``nul_output``:
    NUL-terminated requests/records (``-z``/``-Z``); ``follow_symlinks``: names
    through in-tree symlinks; ``object_filter``: objects it excludes are reported
    ``excluded``; ``transform``: ``"filters"`` or ``"textconv"`` for blobs' contents,
    each request naming the path after the object; ``mailmap``: commits and tags
    with their identities mapped (``--use-mailmap``; ``--batch-command``'s
    ``mailmap <bool>`` switches it), their sizes those of the mapped content.
    """

    def __init__(
        self,
        mode: str = "batch-check",
        *,
        format: str | None = None,
        all_objects: bool = False,
        unordered: bool = False,
        buffer: bool | None = None,
        nul_input: bool = False,
        nul_output: bool = False,
        follow_symlinks: bool = False,
        object_filter: ObjectFilter | None = None,
        transform: str | None = None,
        mailmap: bool = False,
    ) -> None:
        if mode not in ("batch", "batch-check", "batch-command"):
            raise ValueError(f"unknown batch mode {mode!r}")
        self.mode = mode
        self.format = format
        self.all_objects = all_objects
        self.unordered = unordered
        self.buffer = buffer
        self.nul_input = nul_input
        self.nul_output = nul_output
        self.follow_symlinks = follow_symlinks
        self.object_filter = object_filter
        self.transform = transform
        self.mailmap = mailmap


def run_batch(
    repo: Repository,
    o: BatchOptions,
    stdin: BinaryIO,
    stdout: BinaryIO,
    *,
    conversion: Conversion | None = None,
    err: TextIO | None = None,
    writev: WriteV | None = None,
    write: Write | None = None,
    pwritev: PWriteV | None = None,
    sendfile: SendFile | None = None,
) -> int:
    """Answer a batch run: requests from ``stdin`` (or every object), records to ``stdout``.

    ``conversion`` is needed with a ``transform``; ``err`` gets Git's ``error:``
    lines; ``writev``/``write``/``pwritev``/``sendfile`` replace the system calls
    used for large writes.
    Raises ``GitodbError`` where Git dies (what was produced before goes out first).
    Returns the exit status (0).
    """
    delim = b"\0" if o.nul_output else b"\n"
    fmt = BatchFormat(o.format if o.format is not None else DEFAULT_FORMAT, delim)
    contents = o.mode == "batch"
    buffer = bool(o.buffer)
    buffered = o.all_objects if o.buffer is None else buffer
    out = BatchOutput(
        stdout, buffered, writev=writev, write=write, pwritev=pwritev, sendfile=sendfile
    )
    transform = o.transform
    if transform is not None and conversion is None:
        raise ValueError(f"transform {transform!r} needs a conversion")
    runner = BatchRunner(
        repo,
        fmt,
        contents,
        out,
        follow_symlinks=o.follow_symlinks,
        object_filter=o.object_filter,
        transform=transform,
        conversion=conversion,
        err=err,
    )
    runner.use_mailmap(o.mailmap)
    nul_input = o.nul_input or o.nul_output
    flush_at_exit = True
    try:
        if o.all_objects:
            runner.all_objects(o.unordered)
        elif o.mode == "batch-command":
            flush_at_exit = _run_commands(runner, buffer, stdin, out, nul_input)
        else:
            for line in read_requests(stdin, nul_input):
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


_COMMANDS = (("contents", True), ("info", True), ("flush", False), ("mailmap", True))

#: Git's boolean words (``git_parse_maybe_bool``), compared without case; "" is false
_BOOLS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}


def _mailmap_switch(arg: bytes) -> bool:
    """The value of ``mailmap <bool>``; Git's ``fatal:`` for anything else."""
    text = arg.decode("utf-8", "surrogateescape")
    word = text.lower()
    if word in _BOOLS:
        return _BOOLS[word]
    if word == "":
        return False
    try:
        return int(word, 10) != 0
    except ValueError:
        raise GitodbError(f"mailmap: invalid boolean '{text}'") from None


def _run_commands(
    runner: BatchRunner, buffer: bool, stdin: BinaryIO, out: BatchOutput, nul_input: bool
) -> bool:
    """``--batch-command``: ``contents <obj>``, ``info <obj>``, ``mailmap <bool>``,
    ``flush`` (with --buffer); buffered commands run in their order at ``flush``.

    Returns whether output still pending at the end is to be written: with
    ``--buffer``, Git's test knob ``GIT_TEST_CAT_FILE_NO_FLUSH_ON_EXIT`` drops the
    commands queued since the last ``flush``.
    """
    queued: list[tuple[str, bytes]] = []

    def execute(cmd: str, arg: bytes) -> None:
        if cmd == "mailmap":
            runner.use_mailmap(_mailmap_switch(arg))
        else:
            runner.one(arg, None, cmd == "contents")

    def dispatch() -> None:
        for cmd, arg in queued:
            execute(cmd, arg)
        queued.clear()
        out.flush()

    for line in read_requests(stdin, nul_input):
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
            if not buffer:
                raise GitodbError("flush is only for --buffer mode")
            dispatch()
            continue
        if not buffer:
            execute(cmd, arg)
            out.flush()
            continue
        queued.append((cmd, arg))
    if buffer and _env_bool("GIT_TEST_CAT_FILE_NO_FLUSH_ON_EXIT"):
        return False
    if queued:
        dispatch()
    return True


def _env_bool(name: str) -> bool:
    return os.environ.get(name, "").lower() in ("1", "true", "yes", "on")
