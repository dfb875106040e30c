"""Reading loose objects: ``objects/<2 hex>/<rest hex>``, zlib of ``<type> <size>\\0<data>``.

Every error names the object's file.  Inflation is bounded by the size the header
declares, so a file that inflates to more than it says is an error, not a memory bomb.
"""

from __future__ import annotations

import os

from gitodb.errors import (
    CompressionError,
    GitodbError,
    LooseObjectError,
    ObjectFormatError,
    OutOfMemoryError,
)
from gitodb.lazymod import lazy_module
from gitodb.objects.format import ObjectFormat
from gitodb.objects.header import parse_object_header
from gitodb.objects.stream import ObjectStream

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gitodb import compress
else:
    # cat-file imports this module for its messages, whatever it reads
    compress = lazy_module("gitodb.compress", globals(), "compress")

# Inflated bytes that hold any valid header ("commit 18446744073709551615\0"); Git
# inflates exactly this much (MAX_HEADER_LEN) to read a header, so damage further
# into the stream does not stop ``cat-file -t``/``-s``, as in Git.
_HEADER_PEEK = 32
_HEX = frozenset("0123456789abcdef")
#: the message of a header whose type is not one of Git's (fatal in Git even in batch mode)
INVALID_TYPE = "invalid object type"
#: the start of the message of a size past 64 bits (Git: fatal size_t overflow, also in batch)
SIZE_OVERFLOW = "unable to parse header: object header size"


class LooseObjectStore:
    """The loose objects of one object directory (``.git/objects`` or an alternate)."""

    def __init__(self, objects_dir: str | os.PathLike[str], fmt: ObjectFormat) -> None:
        self.objects_dir = os.fspath(objects_dir)
        self.fmt = fmt
        # fan-out directory -> its names, for find_prefix(cached=True)
        self._listing: dict[str, list[str]] = {}

    def path_of(self, oid: bytes) -> str:
        """The file that holds (or would hold) the object ``oid``."""
        h = oid.hex()
        return os.path.join(self.objects_dir, h[:2], h[2:])

    def contains(self, oid: bytes) -> bool:
        """True if a loose file for ``oid`` exists."""
        return os.path.isfile(self.path_of(oid))

    def _load(self, oid: bytes) -> tuple[bytes, str] | None:
        path = self.path_of(oid)
        try:
            with open(path, "rb") as f:
                return f.read(), path
        except (FileNotFoundError, NotADirectoryError):
            return None

    def read(self, oid: bytes) -> tuple[str, bytes] | None:
        """Return ``(type_name, data)`` of ``oid``, or None if it is not stored loose."""
        loaded = self._load(oid)
        if loaded is None:
            return None
        raw, path = loaded
        return inflate_loose(raw, path)

    def read_header(self, oid: bytes) -> tuple[str, int] | None:
        """Return ``(type_name, size)`` inflating only the first bytes, or None."""
        path = self.path_of(oid)
        try:
            with open(path, "rb") as f:
                # A header is at most a few dozen bytes; 4 KiB of input always covers it
                # unless the file is absurdly compressed, in which case read more below.
                raw = f.read(4096)
                try:
                    return _parse_header_prefix(raw, path, complete=len(raw) < 4096)[:2]
                except _NeedMore:
                    raw += f.read()
                    return _parse_header_prefix(raw, path, complete=True)[:2]
        except (FileNotFoundError, NotADirectoryError):
            return None

    def open_stream(self, oid: bytes) -> LooseObjectStream | None:
        """A reader over the content of ``oid`` that inflates as it goes, or None."""
        path = self.path_of(oid)
        try:
            f = open(path, "rb")  # noqa: SIM115 - owned by the stream
        except (FileNotFoundError, NotADirectoryError):
            return None
        return LooseObjectStream(f, path)

    def disk_size(self, oid: bytes) -> int | None:
        """Size of the loose file in bytes, or None."""
        try:
            return os.stat(self.path_of(oid)).st_size
        except (FileNotFoundError, NotADirectoryError):
            return None

    def iter_oids(self) -> Iterator[bytes]:
        """Ids of all loose objects, in fan-out directory order (sorted within each)."""
        hexsz = self.fmt.hexsz
        try:
            dirs = sorted(os.listdir(self.objects_dir))
        except FileNotFoundError:
            return
        for d in dirs:
            if len(d) != 2 or not _HEX.issuperset(d):
                continue
            try:
                names = sorted(os.listdir(os.path.join(self.objects_dir, d)))
            except (NotADirectoryError, FileNotFoundError):
                continue
            for name in names:
                if len(name) == hexsz - 2 and _HEX.issuperset(name):
                    yield bytes.fromhex(d + name)

    def mark_present(self, oids: bytes, marks: bytearray, tag: int = 1) -> int:
        """Set ``marks[i]`` to ``tag`` for every id of ``oids`` (``rawsz`` bytes each)
        stored loose here; return how many were newly marked.

        One listing per fan-out directory that exists, never a ``stat`` per id: a
        repository usually has few loose objects and a received pack many ids.
        """
        rawsz, hexsz = self.fmt.rawsz, self.fmt.hexsz
        try:
            dirs = os.listdir(self.objects_dir)
        except (FileNotFoundError, NotADirectoryError):
            return 0
        where: dict[bytes, int] | None = None
        marked = 0
        for d in dirs:
            if len(d) != 2 or not _HEX.issuperset(d):
                continue
            try:
                names = os.listdir(os.path.join(self.objects_dir, d))
            except (NotADirectoryError, FileNotFoundError):
                continue
            for name in names:
                if len(name) != hexsz - 2 or not _HEX.issuperset(name):
                    continue
                if where is None:  # built on the first loose object only
                    where = {oids[i : i + rawsz]: i // rawsz for i in range(0, len(oids), rawsz)}
                i = where.get(bytes.fromhex(d + name), -1)
                if i >= 0 and not marks[i]:
                    marks[i] = tag
                    marked += 1
        return marked

    def find_prefix(self, hex_prefix: str, *, cached: bool = False) -> list[bytes]:
        """Ids of loose objects whose hex form starts with ``hex_prefix`` (>= 2 digits);
        ``cached``: list each fan-out directory once and reuse the listing."""
        rest = hex_prefix[2:]
        names = self._listing.get(hex_prefix[:2]) if cached else None
        if names is None:
            try:
                names = os.listdir(os.path.join(self.objects_dir, hex_prefix[:2]))
            except (FileNotFoundError, NotADirectoryError):
                names = []
            if cached:
                self._listing[hex_prefix[:2]] = names
        hexsz = self.fmt.hexsz
        return [
            bytes.fromhex(hex_prefix[:2] + n)
            for n in names
            if len(n) == hexsz - 2 and n.startswith(rest) and _HEX.issuperset(n)
        ]


class _NeedMore(Exception):
    """Internal: ``raw`` is a prefix of the file too short to hold the header."""


def _parse_header_prefix(
    raw: bytes, path: str, *, complete: bool = True
) -> tuple[str, int, int, bytes, compress.Inflater]:
    """Inflate just enough of ``raw`` to parse the header.

    ``complete`` says ``raw`` is the whole file: then a header cut short is a
    ``LooseObjectError``, else ``_NeedMore`` asks the caller to read more.
    Returns ``(type, size, header_len, inflated_so_far, inflater)``.
    """
    if not raw and complete:
        # The usual leftover of a crash between creating and writing the file.
        raise LooseObjectError("object file is empty", path=path, offset=0)
    # The header's backend decodes no further than asked (see _HEADER_PEEK).
    inf = compress.new_inflater("inflate-head")
    try:
        head = inf.decompress(raw, _HEADER_PEEK)
    except CompressionError as e:
        raise LooseObjectError(
            f"unable to unpack header: {e.message}", path=path, offset=0
        ) from None
    if b"\0" not in head:
        if not inf.eof and len(head) < _HEADER_PEEK and not inf.unconsumed_tail:
            if complete:
                raise LooseObjectError(
                    "unable to unpack header: loose object is truncated", path=path, offset=len(raw)
                )
            raise _NeedMore
        raise LooseObjectError(
            "unable to unpack header: no NUL in the first bytes", path=path, offset=0
        )
    try:
        type_name, size, hlen = parse_object_header(head, path=path)
    except ObjectFormatError as e:
        if e.message.startswith(INVALID_TYPE):
            # Git's words; it dies on this one even in batch mode (see cat-file)
            raise LooseObjectError(INVALID_TYPE, path=path, offset=0) from None
        raise LooseObjectError(
            f"unable to parse header: {e.message}", path=path, offset=0
        ) from None
    except GitodbError as e:
        raise LooseObjectError(
            f"unable to parse header: {e.message}", path=path, offset=0
        ) from None
    return type_name, size, hlen, head, inf


def _check_plausible(size: int, file_size: int, path: str) -> None:
    """Refuse a declared size the file's zlib data cannot hold, before inflating it.

    Without this a small file declaring 1 TiB would be inflated until its data ran
    out (gigabytes for a zlib bomb) before the size mismatch was noticed.
    """
    if size > compress.max_inflated_size(file_size):
        raise LooseObjectError(
            f"object declares {size} bytes, more than its {file_size} bytes of zlib data can hold",
            path=path,
            offset=0,
        )


def inflate_loose(raw: bytes, path: str) -> tuple[str, bytes]:
    """Inflate a whole loose object file's bytes; return ``(type_name, data)``."""
    type_name, size, hlen, head, inf = _parse_header_prefix(raw, path)
    _check_plausible(size, len(raw), path)
    have = len(head) - hlen
    if have > size:
        raise LooseObjectError(
            f"object inflates to more than its declared size {size}", path=path, offset=0
        )
    try:
        # Ask for one byte more than declared, so an overlong object is noticed.
        rest = (
            inf.decompress(inf.unconsumed_tail, size - have + 1)
            if have < size or not inf.eof
            else b""
        )
        if not inf.eof and len(rest) <= size - have:
            rest += inf.flush()
    except MemoryError:
        raise OutOfMemoryError(size, path=path) from None
    except CompressionError as e:
        raise LooseObjectError(
            f"corrupt loose object: {e.message}", path=path, offset=inf.consumed
        ) from None
    got = have + len(rest)
    if got != size:
        raise LooseObjectError(
            f"object inflates to {got} bytes but its header says {size}",
            path=path,
            offset=inf.consumed,
        )
    if not inf.eof:
        raise LooseObjectError(
            "corrupt loose object: zlib stream does not end", path=path, offset=inf.consumed
        )
    data = head[hlen:] + rest if have else rest
    return type_name, data


class LooseObjectStream(ObjectStream):
    """File-like reader of one loose object's content, inflated incrementally."""

    def __init__(self, f, path: str) -> None:  # type: ignore[no-untyped-def]
        self._f = f
        self.path = path
        raw = f.read(4096)
        try:
            self.type_name, self.size, hlen, head, self._inf = _parse_header_prefix(
                raw, path, complete=len(raw) < 4096
            )
        except _NeedMore:
            raw += f.read()
            self.type_name, self.size, hlen, head, self._inf = _parse_header_prefix(raw, path)
        _check_plausible(self.size, os.fstat(f.fileno()).st_size, path)
        self._pending = head[hlen:]
        self._remaining = self.size - len(self._pending)
        self._tail = self._inf.unconsumed_tail
        if self._remaining < 0:
            raise LooseObjectError(
                "object inflates to more than its declared size", path=path, offset=0
            )

    def _next_chunk(self) -> bytes:
        inf = self._inf
        try:
            while True:
                # zlib may still hold output for input it has already taken, so an
                # empty read is fed too before the stream is called truncated.
                data = self._tail or self._f.read(self.CHUNK)
                out = inf.decompress(data, self.CHUNK)
                self._tail = inf.unconsumed_tail
                if out:
                    self._remaining -= len(out)
                    if self._remaining < 0:
                        raise LooseObjectError(
                            "object inflates to more than its declared size",
                            path=self.path,
                            offset=inf.consumed,
                        )
                    return out
                if not data:
                    raise LooseObjectError(
                        "loose object is truncated", path=self.path, offset=inf.consumed
                    )
                if inf.eof:
                    raise LooseObjectError(
                        f"object inflates to fewer bytes than its declared size {self.size}",
                        path=self.path,
                        offset=inf.consumed,
                    )
        except CompressionError as e:
            raise LooseObjectError(
                f"corrupt loose object: {e.message}", path=self.path, offset=inf.consumed
            ) from None

    def close(self) -> None:
        """Close the underlying file."""
        self._f.close()
