"""Unpacking a pack into loose objects (``git unpack-objects``).

The pack is read front to back from a stream, in pieces: each whole object is
written loose as it is met (a blob above ``core.bigFileThreshold`` streamed into
its file, never held whole); a delta is applied to its base (an earlier entry of the pack for
``OFS_DELTA``; for ``REF_DELTA`` an earlier entry or an object the repository
has, else it waits until its base turns up later in the pack).  Then the pack's
trailing checksum is checked, and whatever input follows it is handed back (Git
copies it to stdout).  Objects the repository has already are not rewritten.

Errors are Git's: ``early EOF``, ``bad pack file``, ``unknown pack file version``,
``final sha1 did not match``, ``pack exceeds maximum allowed size``,
``unresolved deltas left after unpacking``.  An entry that does not inflate is
reported (``report``) and, with ``recover``, skipped; otherwise it ends the run
with exit status 1, as in Git.  Objects written before an error stay (each one is
complete), except under ``core.fsyncMethod=batch``, where the transaction that
holds them is dropped, as Git drops its temporary object directory.

Example::

    with open("x.pack", "rb") as f:
        result = unpack_objects(repo, f)
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from gitodb import compress
from gitodb.errors import (
    CompressionError,
    DeltaError,
    GitodbError,
    ObjectCheckError,
    ObjectNotFoundError,
    PackError,
    check_allocation,
)
from gitodb.loose.write import object_header
from gitodb.objects.check import ObjectChecker, typed_links
from gitodb.objects.header import OBJ_OFS_DELTA, OBJ_REF_DELTA, TYPE_NAMES, TYPE_NUMBERS
from gitodb.pack.delta import apply_delta
from gitodb.pack.entry import parse_entry_header_python, parse_ofs_distance_python
from gitodb.repo.packcheck import received_pack_checker
from gitodb.repo.write import ObjectWriter, WriteSettings, compute_object_id
from gitodb.types import cast

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

    from gitodb.repo import Repository
    from gitodb.types import Progress

PACK_MAGIC = b"PACK"


class UnpackError(GitodbError):
    """The pack cannot be unpacked (Git's ``fatal:`` message)."""


class UnpackAbort(GitodbError):
    """An entry failed without ``recover``: Git reports it and exits with status 1."""


@dataclass
class UnpackResult:
    """What ``unpack_objects`` did."""

    objects: int = 0  #: entries in the pack
    written: list[bytes] = field(default_factory=list)  #: ids of objects stored (or seen)
    trailing: bytes = b""  #: input after the pack's checksum
    had_errors: bool = False  #: an entry was skipped (``recover``)


def unpack_objects(
    repo: Repository,
    data: bytes | BinaryIO,
    *,
    header: bytes = b"",
    dry_run: bool = False,
    recover: bool = False,
    strict: bool = False,
    strict_msgs: Sequence[str] = (),
    max_input_size: int = 0,
    report: Callable[[str], None] | None = None,
    progress: Progress | None = None,
) -> UnpackResult:
    """Store every object of the pack ``data`` loose in ``repo`` (see the module docstring).

    ``data`` is the pack's bytes or a binary stream it is read from as it is
    unpacked; ``header``, bytes of it that were read already (receive-pack's
    ``--pack_header``).  ``dry_run`` is Git's: each entry is inflated to check it,
    and nothing is hashed, resolved or written.  ``strict`` is Git's: blobs are
    stored as they come, every other object only once Git's fsck passed on it and
    every object it names is in the pack or the repository with the type it is
    named as; then the queued ``.gitmodules``/``.gitattributes`` checks run.  With
    both, gitodb resolves and checks without writing (Git's dry run checks nothing
    then).  ``strict_msgs`` are ``<msg-id>=<severity>`` lists changing the fsck
    severities.  ``max_input_size`` (bytes, 0 = none) bounds the pack.
    ``progress`` (``gitodb.types.Progress``) is called as ``("Unpacking objects",
    done, total, finished)`` after each entry.

    A blob larger than ``core.bigFileThreshold`` is streamed into its loose object
    and never held whole; any other object is (``GIT_ALLOC_LIMIT`` applies).  The
    objects of the pack are written as one ODB transaction (``ObjectWriter.batch``:
    one fsync under ``core.fsyncMethod=batch``), which ends before the trailing
    checksum is compared, as in Git.
    """
    fmt = repo.object_format
    say = report or (lambda _msg: None)
    inp = _PackInput(data, header, fmt.new_hasher(), max_input_size)
    head = bytes(inp.peek(12)[:12])
    if len(head) < 12:
        raise UnpackError("early EOF")
    if head[:4] != PACK_MAGIC:
        raise UnpackError("bad pack file")
    version, nr = struct.unpack(">II", head[4:12])
    if version not in (2, 3):
        raise UnpackError(f"unknown pack file version {version}")
    inp.use(12)
    hold = strict or not dry_run  # Git's dry run only inflates
    writer = None if dry_run else ObjectWriter(repo)
    settings = writer.settings if writer is not None else WriteSettings.from_config(repo.config)
    threshold = settings.big_file_threshold
    result = UnpackResult(objects=nr)
    # what each entry gave; the content is None for a blob that was streamed
    by_offset: dict[int, tuple[str, bytes | None, bytes]] = {}
    by_oid: dict[bytes, tuple[str, bytes | None]] = {}
    waiting: dict[bytes, list[tuple[int, bytes]]] = {}  # base id -> (offset, delta)
    held: list[tuple[bytes, int]] = []  # with strict: (id, offset) of what waits for its check
    # with strict: Git's table of every id looked up, as what type (parsing a commit
    # or tag looks up what it names)
    parser = ObjectChecker(fmt) if strict else None

    def store(offset: int, type_name: str, content: bytes) -> None:
        oid = compute_object_id(fmt, type_name, content)
        by_offset[offset] = (type_name, content, oid)
        by_oid[oid] = (type_name, content)
        # with strict, Git writes a blob before it looks the id up, and holds the
        # other objects back until their links are checked
        if writer is not None and not (strict and type_name != "blob"):
            writer.write(type_name, content)
        note(offset, oid, type_name)
        for delta_offset, delta in waiting.pop(oid, []):
            store(delta_offset, type_name, apply_delta(content, delta))

    def note(offset: int, oid: bytes, type_name: str) -> None:
        if parser is not None:
            _parse(parser, oid, type_name, by_oid[oid][1] or b"")
            if type_name != "blob":
                held.append((oid, offset))
        result.written.append(oid)

    def stream_blob(offset: int, size: int) -> None:
        pieces = _PieceReader(_inflate_pieces(inp, size))
        if writer is not None:
            # the writer only calls read(n)
            oid = writer.write_stream("blob", cast("BinaryIO", pieces), size, allow_pack=False)
        else:
            hasher = fmt.new_hasher(object_header("blob", size))
            for piece in pieces:
                hasher.update(piece)
            oid = hasher.digest()
        pieces.finish()
        by_offset[offset] = ("blob", None, oid)
        by_oid[oid] = ("blob", None)
        note(offset, oid, "blob")

    def base_content(type_name: str, content: bytes | None, oid: bytes) -> bytes | None:
        if content is not None:
            return content
        # a streamed blob: read back from where it was written (none in a dry run)
        return writer.read_back(oid)[1] if writer is not None else None

    def entry(i: int) -> bool:
        """Unpack entry ``i``; False when the rest of the input cannot be trusted."""
        view = inp.peek(_MAX_ENTRY_HEAD + fmt.rawsz)
        try:
            type_num, size, hlen = parse_entry_header_python(view, 0)
        except PackError:
            raise UnpackError("early EOF") from None
        start = inp.offset
        base_offset = base_oid = None
        if type_num == OBJ_OFS_DELTA:
            try:
                dist, n = parse_ofs_distance_python(view, hlen)
            except PackError:
                raise UnpackError("early EOF") from None
            hlen += n
            base_offset = start - dist
            if dist == 0 or base_offset <= 0:
                raise UnpackError("offset value out of bound for delta base object")
        elif type_num == OBJ_REF_DELTA:
            if hlen + fmt.rawsz > len(view):
                raise UnpackError("early EOF")
            base_oid = bytes(view[hlen : hlen + fmt.rawsz])
            hlen += fmt.rawsz
        elif type_num not in TYPE_NAMES:
            say(f"bad object type {type_num}")
            if not recover:
                raise UnpackAbort(f"bad object type {type_num}")
            result.had_errors = True
            return True
        del view
        inp.use(hlen)
        try:
            if type_num == TYPE_NUMBERS["blob"] and size > threshold:
                stream_blob(start, size)
                return True
            if not hold:
                for _piece in _inflate_pieces(inp, size):
                    pass
                return True
            check_allocation(size)
            content = b"".join(_inflate_pieces(inp, size))
        except CompressionError as e:
            say(e.message)
            if not recover:
                raise UnpackAbort(e.message) from None
            result.had_errors = True
            # Git's recovery goes on reading after the damaged stream; without a
            # stream end to go by, there is nothing reliable left to read
            return False
        try:
            if base_offset is not None:
                found = by_offset.get(base_offset)
                if found is None:
                    raise UnpackError("offset value out of bound for delta base object")
                base = base_content(*found)
                if base is not None:
                    store(start, found[0], apply_delta(base, content))
            elif base_oid is not None:
                have = by_oid.get(base_oid)
                if have is not None:
                    base = base_content(have[0], have[1], base_oid)
                    type_name = have[0]
                else:
                    try:
                        type_name, base = repo.odb.read(base_oid)
                    except ObjectNotFoundError:
                        waiting.setdefault(base_oid, []).append((start, content))
                        return True
                if base is not None:
                    store(start, type_name, apply_delta(base, content))
            else:
                store(start, TYPE_NAMES[type_num], content)
        except DeltaError as e:
            say(e.message)
            if not recover:
                raise UnpackAbort(e.message) from None
            result.had_errors = True
        return True

    with writer.batch() if writer is not None else contextlib.nullcontext():
        for i in range(nr):
            if not entry(i):
                break
            if progress is not None:
                progress("Unpacking objects", i + 1, nr, i + 1 == nr)
        if waiting and not result.had_errors:
            raise UnpackError("unresolved deltas left after unpacking")
    if strict:
        # Git checks before it compares the trailing checksum
        assert parser is not None
        _check_held(repo, held, by_oid, parser, strict_msgs, writer)
    if not result.had_errors:
        digest = inp.digest()
        trailer = bytes(inp.peek(fmt.rawsz)[: fmt.rawsz])
        if len(trailer) < fmt.rawsz:
            raise UnpackError("early EOF")
        if digest != trailer:
            raise UnpackError("final sha1 did not match")
        inp.use(fmt.rawsz, hashed=False)
        result.trailing = inp.rest()
    return result


#: the longest entry header before a base id: a type-and-size varint of 64 bits
#: (10 bytes) and an OFS_DELTA distance (10 bytes)
_MAX_ENTRY_HEAD = 20

#: how much inflated data one step gives at most
_PIECE = 1 << 16

#: how much of the stream one read asks for
_READ = 1 << 16

#: used bytes kept before the window, for an inflater that gives input back
_KEEP_USED = 64


class _PackInput:
    """The pack as it is read: a window of bytes not used yet, hashed as they are used.

    ``offset`` is the pack offset of the window's first byte.  ``max_input_size``
    (0: none) is checked as bytes are used, as Git's ``use()`` does.  A few bytes
    before the window are kept, and ``use`` may step back into them: an inflater
    that read ahead (ISA-L takes input eight bytes at a time) gives the bytes past
    its stream's end back only when it reaches that end, so the last bytes used
    are hashed only once more follow (or the checksum is asked for).
    """

    __slots__ = ("_stream", "_buf", "_pos", "offset", "_hashed", "_hasher", "_max")

    def __init__(
        self, source: bytes | BinaryIO, header: bytes, hasher: Any, max_input_size: int
    ) -> None:
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._stream: BinaryIO | None = None
            self._buf = header + bytes(source)
        else:
            self._stream = source
            self._buf = header
        self._pos = 0
        self.offset = 0
        self._hashed = 0  # the pack offset up to which bytes were hashed
        self._hasher = hasher
        self._max = max_input_size

    def peek(self, n: int) -> memoryview:
        """The unused bytes, at least ``n`` of them unless the input ends first."""
        while len(self._buf) - self._pos < n and self._stream is not None:
            chunk = self._stream.read(max(n, _READ))
            if not chunk:
                self._stream = None
                break
            keep = max(0, self._pos - _KEEP_USED)
            self._buf = self._buf[keep:] + chunk
            self._pos -= keep
        return memoryview(self._buf)[self._pos :]

    def use(self, n: int, *, hashed: bool = True) -> None:
        """Mark the next ``n`` bytes (all in the window) used; a negative ``n`` gives
        back that many bytes used last (at most ``_KEEP_USED``)."""
        if -n > _KEEP_USED or self._pos + n < 0:
            raise UnpackError("the inflater gave back more input than it was given")
        self._pos += n
        self.offset += n
        if hashed:
            # the last bytes used wait: they may still be given back
            self._hash_to(self.offset - _KEEP_USED)
        if self._max and self.offset > self._max:
            raise UnpackError("pack exceeds maximum allowed size")

    def _hash_to(self, upto: int) -> None:
        """Hash the used bytes below pack offset ``upto`` not hashed yet."""
        if upto > self._hashed:
            start = self._pos - (self.offset - self._hashed)
            self._hasher.update(memoryview(self._buf)[start : start + upto - self._hashed])
            self._hashed = upto

    def digest(self) -> bytes:
        """The checksum of the bytes used so far."""
        self._hash_to(self.offset)
        return bytes(self._hasher.digest())

    def rest(self) -> bytes:
        """Everything the input still holds."""
        tail = bytes(self.peek(0))
        if self._stream is not None:
            tail += self._stream.read()
            self._stream = None
        self._buf, self._pos = b"", 0
        return tail


def _inflate_pieces(inp: _PackInput, size: int) -> Iterator[bytes]:
    """Inflate the zlib stream at the front of ``inp``, which must give ``size``
    bytes, in pieces; its bytes are used as it goes."""
    inf = compress.new_inflater()
    left = size + 1  # one byte more than declared: an entry that inflates to more is noticed
    want = 1
    while not inf.eof:
        view = inp.peek(want)
        if len(view) < want:
            raise UnpackError("early EOF")  # the input ends inside the stream
        before = inf.consumed
        out = inf.decompress(view, min(left, _PIECE))
        used = inf.consumed - before
        del view
        inp.use(used)
        left -= len(out)
        if left == 0:
            break
        # zlib took nothing and gave nothing: it needs more input than the window has
        want = want + _READ if not out and not used else 1
        if out:
            yield out
    if not inf.eof or left != 1:
        raise CompressionError(f"inflated size of the entry is not {size}")


class _PieceReader:
    """A binary stream over inflated pieces, for the streaming writers."""

    __slots__ = ("_pieces", "_rest")

    def __init__(self, pieces: Iterator[bytes]) -> None:
        self._pieces = pieces
        self._rest = b""

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes (-1: all that is left)."""
        out = [self._rest]
        have = len(self._rest)
        while n < 0 or have < n:
            piece = next(self._pieces, None)
            if piece is None:
                break
            out.append(piece)
            have += len(piece)
        data = b"".join(out)
        if n < 0:
            self._rest = b""
            return data
        self._rest = data[n:]
        return data[:n]

    def __iter__(self) -> Iterator[bytes]:
        if self._rest:
            yield self._rest
            self._rest = b""
        yield from self._pieces

    def finish(self) -> None:
        """Inflate to the end of the stream (its size and end are checked there)."""
        if self.read(1):
            raise CompressionError("inflated size of the entry is larger than declared")


def _parse(parser: ObjectChecker, oid: bytes, type_name: str, content: bytes) -> None:
    """Git's ``parse_object_buffer`` as ``unpack-objects --strict`` calls it on each
    object it receives: the id is looked up as its type, a commit or tag parsed."""
    errors: list[str] = []
    if not parser.lookup(oid, type_name, errors):
        what = "blob object" if type_name == "blob" else type_name
        raise UnpackError(f"invalid {what}", details=errors)
    try:
        if type_name == "commit":
            parser.check_commit(content, oid)
        elif type_name == "tag":
            parser.check_tag(content, oid)
    except ObjectCheckError as e:
        raise UnpackError(f"invalid {type_name}", details=e.details) from None


def _check_held(
    repo: Repository,
    held: list[tuple[bytes, int]],
    by_oid: dict[bytes, tuple[str, bytes | None]],
    parser: ObjectChecker,
    strict_msgs: Sequence[str],
    writer: ObjectWriter | None,
) -> None:
    """Git's ``write_rest`` and ``fsck_finish`` for ``unpack-objects --strict``: each
    held object is checked, then what it names (looked up in ``parser``'s table as
    the type it is named as; held objects recursively, others must be in the
    repository), then it is written; the queued blob checks run last."""
    fmt = repo.object_format
    checker = received_pack_checker(fmt, strict_msgs)
    offsets = dict(held)
    done: set[bytes] = set()
    # depth first without recursion: (id, the links still to check)
    stack: list[tuple[bytes, list[tuple[bytes, str]]]] = []

    def held_object(oid: bytes) -> tuple[str, bytes]:
        type_name, content = by_oid[oid]
        assert content is not None  # only blobs are streamed, and none is held
        return type_name, content

    def enter(oid: bytes) -> None:
        type_name, content = held_object(oid)
        done.add(oid)
        checker(TYPE_NUMBERS[type_name], content, oid, offsets[oid])
        # reversed: popped from the end, the links are walked in Git's order
        stack.append((oid, typed_links(type_name, content, fmt)[::-1]))

    for oid, _offset in held:
        if oid in done:
            continue
        enter(oid)
        while stack:
            top, links = stack[-1]
            if not links:
                stack.pop()
                if writer is not None:
                    writer.write(*held_object(top))
                continue
            link, want = links.pop()
            errors: list[str] = []
            if not parser.lookup(link, want, errors):
                raise UnpackError(f"Error on reachable objects of {top.hex()}", details=errors)
            if link in by_oid:
                if link in offsets and link not in done:
                    enter(link)
            elif link not in done:
                if _object_type(repo, link) != want:
                    raise UnpackError("object of unexpected type")
                done.add(link)

    def read_blob(oid: bytes) -> tuple[str, bytes] | None:
        type_name, content = by_oid.get(oid, ("", None))
        if content is not None:
            return type_name, content
        try:
            # a streamed blob was written as it came (none is in a dry run)
            return writer.read_back(oid) if writer is not None else repo.odb.read(oid)
        except ObjectNotFoundError:
            return None

    checker.finish_blobs(read_blob)


def _object_type(repo: Repository, oid: bytes) -> str | None:
    """The type of ``oid`` in the repository, or None when it has no such object."""
    try:
        return repo.odb.read_header(oid)[0]
    except ObjectNotFoundError:
        return None
