"""Unpacking a pack into loose objects (``git unpack-objects``).

The pack is read front to back: each whole object is written loose as it is
met; a delta is applied to its base (an earlier entry of the pack for
``OFS_DELTA``; for ``REF_DELTA`` an earlier entry or an object the repository
has, else it waits until its base turns up later in the pack).  Then the pack's
trailing checksum is checked, and whatever input follows it is handed back (Git
copies it to stdout).  Objects the repository has already are not rewritten.

Errors are Git's: ``early EOF``, ``bad pack file``, ``unknown pack file version``,
``final sha1 did not match``, ``pack exceeds maximum allowed size``,
``unresolved deltas left after unpacking``.  An entry that does not inflate is
reported (``report``) and, with ``recover``, skipped; otherwise it ends the run
with exit status 1, as in Git.  Objects written before an error stay: each one is
complete.

Example::

    with open("x.pack", "rb") as f:
        result = unpack_objects(repo, f.read())
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gitodb import compress
from gitodb.errors import (
    CompressionError,
    DeltaError,
    GitodbError,
    ObjectCheckError,
    ObjectNotFoundError,
    PackError,
)
from gitodb.objects.check import ObjectChecker, typed_links
from gitodb.objects.header import OBJ_OFS_DELTA, OBJ_REF_DELTA, TYPE_NAMES, TYPE_NUMBERS
from gitodb.pack.delta import apply_delta
from gitodb.pack.entry import parse_entry_header_python, parse_ofs_distance_python
from gitodb.repo.packcheck import received_pack_checker
from gitodb.repo.write import ObjectWriter, compute_object_id
from gitodb.types import Progress

if TYPE_CHECKING:
    from gitodb.repo import Repository

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
    data: bytes,
    *,
    dry_run: bool = False,
    recover: bool = False,
    strict: bool = False,
    strict_msgs: Sequence[str] = (),
    max_input_size: int = 0,
    report: Callable[[str], None] | None = None,
    progress: Progress | None = None,
) -> UnpackResult:
    """Store every object of the pack ``data`` loose in ``repo`` (see the module docstring).

    ``dry_run`` checks and resolves without writing.  ``strict`` is Git's: blobs
    are stored as they come, every other object only once Git's fsck passed on it
    and every object it names is in the pack or the repository with the type it is
    named as; then the queued ``.gitmodules``/``.gitattributes`` checks run.
    ``strict_msgs`` are ``<msg-id>=<severity>`` lists changing the fsck severities.
    ``max_input_size`` (bytes, 0 = none) bounds the pack.
    ``progress`` (``gitodb.types.Progress``) is called as ``("Unpacking objects",
    done, total, finished)`` after each entry.
    """
    fmt = repo.object_format
    say = report or (lambda _msg: None)
    view = memoryview(data)
    if len(data) < 12:
        raise UnpackError("early EOF")
    if data[:4] != PACK_MAGIC:
        raise UnpackError("bad pack file")
    version, nr = struct.unpack(">II", data[4:12])
    if version not in (2, 3):
        raise UnpackError(f"unknown pack file version {version}")
    writer = None if dry_run else ObjectWriter(repo)
    result = UnpackResult(objects=nr)
    by_offset: dict[int, tuple[str, bytes]] = {}
    by_oid: dict[bytes, tuple[str, bytes]] = {}
    waiting: dict[bytes, list[tuple[int, bytes]]] = {}  # base id -> (offset, delta)
    held: list[tuple[bytes, int]] = []  # with strict: (id, offset) of what waits for its check
    # with strict: Git's table of every id looked up, as what type (parsing a commit
    # or tag looks up what it names)
    parser = ObjectChecker(fmt) if strict else None

    def store(offset: int, type_name: str, content: bytes) -> None:
        oid = compute_object_id(fmt, type_name, content)
        by_offset[offset] = by_oid[oid] = (type_name, content)
        # with strict, Git writes a blob before it looks the id up, and holds the
        # other objects back until their links are checked
        if writer is not None and not (strict and type_name != "blob"):
            writer.write(type_name, content)
        if parser is not None:
            _parse(parser, oid, type_name, content)
            if type_name != "blob":
                held.append((oid, offset))
        result.written.append(oid)
        for delta_offset, delta in waiting.pop(oid, []):
            store(delta_offset, type_name, apply_delta(content, delta))

    pos = 12
    for i in range(nr):
        if max_input_size and pos > max_input_size:
            raise UnpackError("pack exceeds maximum allowed size")
        try:
            type_num, size, hlen = parse_entry_header_python(view, pos)
        except PackError:
            raise UnpackError("early EOF") from None
        start = pos
        pos += hlen
        base_offset = base_oid = None
        if type_num == OBJ_OFS_DELTA:
            try:
                dist, n = parse_ofs_distance_python(view, pos)
            except PackError:
                raise UnpackError("early EOF") from None
            pos += n
            base_offset = start - dist
            if dist == 0 or base_offset <= 0:
                raise UnpackError("offset value out of bound for delta base object")
        elif type_num == OBJ_REF_DELTA:
            if pos + fmt.rawsz > len(data):
                raise UnpackError("early EOF")
            base_oid = bytes(view[pos : pos + fmt.rawsz])
            pos += fmt.rawsz
        elif type_num not in TYPE_NAMES:
            say(f"bad object type {type_num}")
            if not recover:
                raise UnpackAbort(f"bad object type {type_num}")
            result.had_errors = True
            continue
        try:
            content, used = _inflate_at(view, pos, size)
        except CompressionError as e:
            say(e.message)
            if not recover:
                raise UnpackAbort(e.message) from None
            result.had_errors = True
            # Git's recovery goes on reading after the damaged stream; without a
            # stream end to go by, there is nothing reliable left to read
            break
        pos += used
        if max_input_size and pos > max_input_size:
            raise UnpackError("pack exceeds maximum allowed size")
        try:
            if base_offset is not None:
                base = by_offset.get(base_offset)
                if base is None:
                    raise UnpackError("offset value out of bound for delta base object")
                store(start, base[0], apply_delta(base[1], content))
            elif base_oid is not None:
                base = by_oid.get(base_oid)
                if base is None:
                    try:
                        base = repo.odb.read(base_oid)
                    except ObjectNotFoundError:
                        waiting.setdefault(base_oid, []).append((start, content))
                        continue
                store(start, base[0], apply_delta(base[1], content))
            else:
                store(start, TYPE_NAMES[type_num], content)
        except DeltaError as e:
            say(e.message)
            if not recover:
                raise UnpackAbort(e.message) from None
            result.had_errors = True
        if progress is not None:
            progress("Unpacking objects", i + 1, nr, i + 1 == nr)
    if waiting and not result.had_errors:
        raise UnpackError("unresolved deltas left after unpacking")
    if strict:
        # Git checks before it compares the trailing checksum
        assert parser is not None
        _check_held(repo, held, by_oid, parser, strict_msgs, writer)
    if not result.had_errors:
        end = pos + fmt.rawsz
        if end > len(data):
            raise UnpackError("early EOF")
        if fmt.new_hasher(view[:pos]).digest() != bytes(view[pos:end]):
            raise UnpackError("final sha1 did not match")
        result.trailing = bytes(view[end:])
    return result


def _inflate_at(view: memoryview, pos: int, size: int) -> tuple[bytes, int]:
    """Inflate the zlib stream at ``pos`` that must give ``size`` bytes: ``(data, used)``."""
    inf = compress.new_inflater()
    # one byte more than declared: an entry that inflates to more is noticed
    out = inf.decompress(view[pos:], size + 1)
    if not inf.eof or len(out) != size:
        if not inf.eof and len(out) <= size and not inf.unconsumed_tail:
            raise UnpackError("early EOF")  # the input ends inside the stream
        raise CompressionError(f"inflated size of the entry is not {size}")
    return out, inf.consumed


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
    by_oid: dict[bytes, tuple[str, bytes]],
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

    def enter(oid: bytes) -> None:
        type_name, content = by_oid[oid]
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
                    writer.write(*by_oid[top])
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
        if oid in by_oid:
            return by_oid[oid]
        try:
            return repo.odb.read(oid)
        except ObjectNotFoundError:
            return None

    checker.finish_blobs(read_blob)


def _object_type(repo: Repository, oid: bytes) -> str | None:
    """The type of ``oid`` in the repository, or None when it has no such object."""
    try:
        return repo.odb.read_header(oid)[0]
    except ObjectNotFoundError:
        return None
