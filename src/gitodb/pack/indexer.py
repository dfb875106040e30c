"""Index a pack without an index: what ``git index-pack`` does.

Two passes, like Git:

1. **Scan.**  Walk the entries from the header on.  Nothing tells where an
   entry's zlib stream ends, so each one is inflated (the inflater reports how
   much input it used); this also yields every entry's CRC-32 over its raw
   bytes and the id of every non-delta object.  The pack's trailing checksum is
   checked over all bytes before it.
2. **Resolve.**  Each non-delta object that other entries are deltas against is
   the root of a tree of deltas (children found by base offset for OFS_DELTA
   and by base id for REF_DELTA).  Trees are independent, so with ``threads``
   > 1 they are shared out: to forked processes when there are many (the walk
   per entry is Python and holds the GIL; only zlib, SHA-1DC and the C delta
   application release it), else to threads.

Every object id and the trailer are hashed with SHA-1DC (``fmt.hasher_factory``);
a collision attack raises ``ObjectCollisionError`` naming the pack and the offset
of the entry (Git dies with the same message).  A walk keeps only the chain from
   the root to the current entry in memory.

With ``fix_thin``, REF_DELTA entries whose base is not in the pack get that
base from the repository, appended to the pack as a full object in Git's order,
after which the header count and trailing checksum are rewritten.

The result (:class:`PackIndexResult`) holds per-entry offsets, CRCs, ids, types
and chain depths; :func:`index_pack_file` and :func:`index_pack_stream` write
``.pack``/``.idx``/``.rev``/``.keep`` through temporary files in the destination
directory and renames, leaving nothing behind on failure; each file is synced
before its rename per ``core.fsync`` (``pack`` for a pack read from a stream,
``pack-metadata`` for ``.idx``/``.rev``).  ``StrictChecker`` is
``--strict``: object syntax and links.
"""

from __future__ import annotations

import gc
import mmap
import os
import struct
import tempfile
import threading
from array import array
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from gitodb import compress
from gitodb.durable import DEFAULT_POLICY, Component, FsyncPolicy
from gitodb.errors import (
    CompressionError,
    DeltaError,
    GitodbError,
    ObjectCollisionError,
    ObjectIdCollisionError,
    ObjectParseError,
    ObjectWriteError,
    PackError,
    report,
)
from gitodb.objects import OBJ_OFS_DELTA, OBJ_REF_DELTA, TYPE_NAMES, ObjectFormat
from gitodb.objects.headers import parse_headers
from gitodb.objects.tree import parse_entries
from gitodb.pack.delta import apply_delta
from gitodb.pack.entry import encode_entry_header, parse_entry_header, parse_ofs_distance
from gitodb.pack.idx import OFFSET32_LIMIT, write_index_v1, write_index_v2
from gitodb.pack.rev import write_rev

PACK_SIGNATURE = b"PACK"
PACK_HEADER_SIZE = 12

# Keep inflated entries in memory (instead of inflating them again in pass 2)
# up to this many bytes in total.
DEFAULT_CACHE_BUDGET = 256 << 20

# With --threads > 1, fork resolver processes when there are at least this many
# delta trees (fewer are not worth a fork); otherwise use threads.
FORK_MIN_ROOTS = 64

# Progress callback: (title, done, total, finished)
Progress = Callable[[str, int, int, bool], None]

# A header like b"blob 123\0" for each type number.
_TYPE_PREFIX = {num: name.encode() + b" " for num, name in TYPE_NAMES.items()}


def default_thread_count(cpus: int | None = None) -> int:
    """Git's ``index-pack`` default for ``--threads=0``/``pack.threads=0``.

    All CPUs below 4, 3 (the historic cap) below 6, half the CPUs below 40,
    and 20 above that.
    """
    n = cpus if cpus is not None else (os.cpu_count() or 1)
    if n < 4:
        return n
    if n < 6:
        return 3
    if n < 40:
        return n // 2
    return 20


def _hasher_for(fmt: ObjectFormat) -> Callable[..., Any]:
    """The hasher constructor for ``fmt`` (bound once; SHA-1 is SHA-1DC)."""
    return fmt.hasher_factory()


@dataclass
class PackIndexResult:
    """What indexing a pack found, one list entry per pack entry in pack order."""

    fmt: ObjectFormat
    pack_checksum: bytes
    offsets: list[int]
    ends: list[int]                 # offset just past each entry
    crcs: list[int]
    oids: list[bytes]
    types: list[int]                # stored type (OFS_DELTA/REF_DELTA for deltas)
    real_types: list[int]           # the object's type after resolving
    sizes: list[int]                # size in the entry header (the delta's size for deltas)
    object_sizes: list[int]         # the object's size after resolving
    depths: list[int]               # delta chain length, 0 for non-deltas
    bases: list[int]                # index of the direct base entry, -1 for non-deltas
    appended: int = 0               # objects appended by --fix-thin
    pack_bytes: bytes | None = None  # the completed pack when objects were appended
    index_error: PackError | None = None  # verify: how the stored index differs (if it does)

    def idx_entries(self) -> list[tuple[bytes, int, int]]:
        """``(oid, crc32, offset)`` for every entry, as the index writers take them."""
        return list(zip(self.oids, self.crcs, self.offsets, strict=True))

    def index_bytes(self, version: int = 2, offset32_limit: int = OFFSET32_LIMIT) -> bytes:
        """The ``.idx`` for this pack, byte-identical to Git's."""
        if version == 1:
            return write_index_v1(self.idx_entries(), self.pack_checksum, self.fmt)
        if version == 2:
            return write_index_v2(self.idx_entries(), self.pack_checksum, self.fmt,
                                  offset32_limit=offset32_limit)
        raise PackError(f"unknown index version {version}")

    def rev_bytes(self) -> bytes:
        """The ``.rev`` for this pack (positions in the index ordered by offset)."""
        order = sorted(range(len(self.oids)), key=lambda i: (self.oids[i], self.offsets[i]))
        return write_rev([self.offsets[i] for i in order], self.pack_checksum, self.fmt)


@dataclass
class _Scan:
    """Pass-1 state shared by the resolver threads."""

    path: str | None
    buf: memoryview
    fmt: ObjectFormat
    offsets: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    data_starts: list[int] = field(default_factory=list)
    types: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    crcs: list[int] = field(default_factory=list)
    oids: list[bytes | None] = field(default_factory=list)
    # Delta bookkeeping: base offset -> children, base id -> children, child -> base id.
    ofs_children: dict[int, list[int]] = field(default_factory=dict)
    ref_children: dict[bytes, list[int]] = field(default_factory=dict)
    ref_base: dict[int, bytes] = field(default_factory=dict)
    cache: dict[int, bytes] = field(default_factory=dict)


class PackIndexer:
    """Index one pack held in memory or mapped from a file.

    ``buf`` is the whole pack including its trailing checksum.  ``path`` names
    the pack in errors.  ``threads`` (0: Git's default) resolve deltas in
    parallel.  ``base_lookup(oid) -> (type_name, data) | None`` supplies bases
    for a thin pack (``fix_thin``); ``compression_level`` is the zlib level of
    appended bases (Git's ``core.looseCompression``/``core.compression``, 1 if unset).
    """

    def __init__(self, buf: bytes | bytearray | memoryview | mmap.mmap, fmt: ObjectFormat, *,
                 path: str | None = None, threads: int = 1,
                 progress: Progress | None = None, progress_title: str = "Indexing objects",
                 fix_thin: bool = False,
                 base_lookup: Callable[[bytes], tuple[str, bytes] | None] | None = None,
                 compression_level: int = 1,
                 object_check: Callable[[int, bytes, bytes, int], None] | None = None,
                 cache_budget: int = DEFAULT_CACHE_BUDGET) -> None:
        self.buf = memoryview(buf)  # type: ignore[arg-type]
        self.fmt = fmt
        self.path = path
        self.threads = threads if threads > 0 else default_thread_count()
        self.progress = progress
        self.progress_title = progress_title
        self.fix_thin = fix_thin
        self.base_lookup = base_lookup
        self.compression_level = compression_level
        self.cache_budget = cache_budget
        # Called as object_check(type_num, data, oid, offset) for every object (--strict).
        self.object_check = object_check

    # -- errors --------------------------------------------------------------
    def _bad_object(self, offset: int, reason: str) -> PackError:
        return PackError(f"pack has bad object at offset {offset}: {reason}",
                         path=self.path, offset=offset)

    # -- pass 1 --------------------------------------------------------------
    def _read_header(self) -> int:
        buf = self.buf
        rawsz = self.fmt.rawsz
        if len(buf) < PACK_HEADER_SIZE + rawsz:
            if bytes(buf[:4]) != PACK_SIGNATURE[:len(buf[:4])]:
                raise PackError("pack signature mismatch", path=self.path, offset=0)
            raise PackError("early EOF: pack is shorter than its header and trailer",
                            path=self.path, offset=len(buf))
        if bytes(buf[:4]) != PACK_SIGNATURE:
            raise PackError("pack signature mismatch", path=self.path, offset=0)
        version, count = struct.unpack_from(">II", buf, 4)
        if version not in (2, 3):
            raise PackError(f"pack version {version} unsupported", path=self.path, offset=4)
        # Every entry takes at least 2 bytes (header + a zlib stream is more).
        if count > (len(buf) - PACK_HEADER_SIZE) // 2:
            raise PackError(f"early EOF: pack claims {count} objects but is only "
                            f"{len(buf)} bytes", path=self.path, offset=8)
        return int(count)

    def _inflate_streaming(self, pos: int, size: int, limit: int,
                           offset: int) -> tuple[bytes, int]:
        """Inflate the entry data at ``pos`` (not past ``limit``) chunk by chunk.

        Returns ``(data, end)``; raises ``PackError`` naming the entry's offset
        when the stream is corrupt, truncated, or inflates to the wrong size.
        """
        buf = self.buf
        if size > compress.max_inflated_size(limit - pos):
            # Checked first: the chunks below would otherwise pile up to ``size``.
            raise self._bad_object(offset, f"declares {size} bytes, more than its "
                                   f"{limit - pos} bytes of zlib data can hold")
        inf = compress.new_inflater()
        parts: list[bytes] = []
        got = 0
        at = pos
        step = 1 << 16
        try:
            while not inf.eof:
                if at >= limit:
                    raise PackError("early EOF: pack ends inside an entry",
                                    path=self.path, offset=offset)
                chunk = buf[at:min(at + step, limit)]
                out = inf.decompress(chunk, size + 1 - got)
                tail = len(inf.unconsumed_tail)
                at += len(chunk) - tail - len(inf.unused_data)
                got += len(out)
                parts.append(out)
                if got > size:
                    raise self._bad_object(offset, f"inflated size exceeds {size}")
                if tail and not out:
                    raise self._bad_object(offset, "inflate made no progress")
        except CompressionError as e:
            raise self._bad_object(offset, f"inflate failed: {e.message}") from None
        if got != size:
            raise self._bad_object(offset, f"inflated to {got} bytes, expected {size}")
        return b"".join(parts), at

    def scan(self) -> _Scan:
        """Pass 1: entry boundaries, CRC-32s, non-delta ids; checks the trailer."""
        buf = self.buf
        fmt = self.fmt
        rawsz = fmt.rawsz
        count = self._read_header()
        end_of_entries = len(buf) - rawsz
        st = _Scan(self.path, buf, fmt)
        offsets, ends, starts = st.offsets, st.ends, st.data_starts
        types, sizes, crcs, oids = st.types, st.sizes, st.crcs, st.oids
        ofs_children, ref_children, ref_base = st.ofs_children, st.ref_children, st.ref_base
        cache = st.cache
        budget = self.cache_budget
        crc32 = compress.crc32
        new_hash = _hasher_for(fmt)
        prefixes = _TYPE_PREFIX
        inflate_prefix = compress.inflate_prefix
        inflate_slow = self._inflate_streaming
        progress = self.progress
        title = self.progress_title
        check = self.object_check
        pos = PACK_HEADER_SIZE

        # The trailer check is one long hash; run it beside the scan when allowed.
        # Its outcome (the digest, or the collision found) is raised in this thread.
        trailer_result: list[bytes | ObjectCollisionError] = []
        hasher_thread = None
        if self.threads > 1:
            def hash_trailer() -> None:
                try:
                    trailer_result.append(new_hash(buf[:end_of_entries]).digest())
                except ObjectCollisionError as e:
                    trailer_result.append(e)
            hasher_thread = threading.Thread(target=hash_trailer)
            hasher_thread.start()
        try:
            for i in range(count):
                offset = pos
                if pos >= end_of_entries:
                    raise PackError(f"early EOF: pack ends before object {i} of {count}",
                                    path=self.path, offset=pos)
                type_num, size, hlen = parse_entry_header(buf, pos, self.path)
                pos += hlen
                if type_num == OBJ_OFS_DELTA:
                    dist, dlen = parse_ofs_distance(buf, pos, self.path)
                    pos += dlen
                    if dist <= 0 or dist > offset:
                        raise self._bad_object(offset, "delta base offset is out of bound")
                    ofs_children.setdefault(offset - dist, []).append(i)
                elif type_num == OBJ_REF_DELTA:
                    base = bytes(buf[pos:pos + rawsz])
                    pos += rawsz
                    ref_children.setdefault(base, []).append(i)
                    ref_base[i] = base
                elif type_num not in prefixes:
                    raise self._bad_object(offset, f"unknown object type {type_num}")
                if pos > end_of_entries:
                    raise PackError("early EOF: pack ends inside an entry header",
                                    path=self.path, offset=offset)
                # A deflate stream of n bytes takes at most n + 5 bytes per 16 KiB
                # block + 11, so this window holds any sensible stream and one call
                # does it; corrupt, oddly padded or truncated streams go the slow way,
                # which streams chunk by chunk and says what is wrong.
                window = pos + size + (size >> 10) + 64
                if window < end_of_entries:
                    try:
                        data, used = inflate_prefix(buf[pos:window], size)
                        end = pos + used
                    except CompressionError:
                        data, end = inflate_slow(pos, size, end_of_entries, offset)
                else:
                    data, end = inflate_slow(pos, size, end_of_entries, offset)
                offsets.append(offset)
                starts.append(pos)
                ends.append(end)
                types.append(type_num)
                sizes.append(size)
                crcs.append(crc32(buf[offset:end]))
                if type_num in prefixes:
                    h = new_hash(prefixes[type_num] + b"%d\0" % size)
                    h.update(data)
                    try:
                        oid = h.digest()
                    except ObjectCollisionError as e:
                        raise e.located(self.path, offset) from None
                    oids.append(oid)
                    if check is not None:
                        check(type_num, data, oid, offset)
                else:
                    oids.append(None)
                if budget >= size:
                    cache[i] = data
                    budget -= size
                pos = end
                if progress is not None:
                    progress(title, i + 1, count, False)
        finally:
            if hasher_thread is not None:
                hasher_thread.join()
        if pos != end_of_entries:
            raise PackError("pack has junk at the end", path=self.path, offset=pos)
        try:
            outcome = (trailer_result[0] if trailer_result
                       else new_hash(buf[:end_of_entries]).digest())
        except ObjectCollisionError as e:
            outcome = e
        if isinstance(outcome, ObjectCollisionError):
            raise outcome.located(self.path, 0) from None
        digest = outcome
        if digest != bytes(buf[end_of_entries:]):
            raise PackError(f"pack is corrupted ({fmt.name.upper()} mismatch): trailing "
                            "checksum does not match the content", path=self.path,
                            offset=end_of_entries)
        # Keep cached data only for deltas and for objects that are delta bases.
        for i in [i for i in cache if oids[i] is not None]:
            if offsets[i] not in ofs_children and oids[i] not in ref_children:
                del cache[i]
        if progress is not None:
            progress(title, count, count, True)
        return st

    # -- pass 2 --------------------------------------------------------------
    def run(self) -> PackIndexResult:
        """Scan, resolve every delta (completing a thin pack if asked), return the result."""
        st = self.scan()
        count = len(st.offsets)
        resolver = _Resolver(st, self.fmt, self.path, self.progress, self.object_check)
        ndeltas = sum(1 for t in st.types if t == OBJ_OFS_DELTA or t == OBJ_REF_DELTA)
        resolver.total = ndeltas
        roots = [i for i in range(count) if st.oids[i] is not None
                 and (st.offsets[i] in st.ofs_children or st.oids[i] in st.ref_children)]
        resolver.resolve_roots(roots, self.threads)
        appended = 0
        pack_bytes = None
        if resolver.resolved < ndeltas and self.fix_thin:
            appended, pack_bytes = self._fix_thin(st, resolver)
        if resolver.resolved < ndeltas:
            raise resolver.unresolved_error(ndeltas)
        if self.progress is not None and ndeltas:
            self.progress("Resolving deltas", resolver.resolved, ndeltas, True)
        if pack_bytes is not None:
            checksum = pack_bytes[-self.fmt.rawsz:]
        else:
            checksum = bytes(self.buf[-self.fmt.rawsz:])
        return PackIndexResult(
            fmt=self.fmt, pack_checksum=checksum, offsets=st.offsets, ends=st.ends,
            crcs=st.crcs, oids=st.oids,  # type: ignore[arg-type]
            types=st.types, real_types=resolver.real_types, sizes=st.sizes,
            object_sizes=resolver.result_sizes,
            depths=resolver.depths, bases=resolver.bases, appended=appended,
            pack_bytes=pack_bytes)

    def _fix_thin(self, st: _Scan, resolver: _Resolver) -> tuple[int, bytes]:
        """Append missing REF_DELTA bases from the repository, like Git's --fix-thin.

        Unresolved REF_DELTAs are visited in pack order; for each one still
        unresolved, its base is read from the repository, appended as a full
        object and its delta tree resolved.  Returns ``(appended, new_pack)``.
        """
        rawsz = self.fmt.rawsz
        pending = sorted(i for i in st.ref_base if st.oids[i] is None)
        tail = bytearray()
        start = len(self.buf) - rawsz
        new_hash = _hasher_for(self.fmt)
        appended = 0
        for i in pending:
            if st.oids[i] is not None:
                continue
            base_oid = st.ref_base[i]
            if base_oid not in st.ref_children:
                continue
            found = self.base_lookup(base_oid) if self.base_lookup is not None else None
            if found is None:
                continue
            type_name, data = found
            type_num = next(n for n, name in TYPE_NAMES.items() if name == type_name)
            h = new_hash(_TYPE_PREFIX[type_num] + b"%d\0" % len(data))
            h.update(data)
            if h.digest() != base_oid:
                raise PackError(f"local object {base_oid.hex()} is corrupt")
            entry = encode_entry_header(type_num, len(data)) + compress.deflate(
                data, self.compression_level)
            offset = start + len(tail)
            tail += entry
            idx = len(st.offsets)
            st.offsets.append(offset)
            st.data_starts.append(offset)
            st.ends.append(offset + len(entry))
            st.types.append(type_num)
            st.sizes.append(len(data))
            st.crcs.append(compress.crc32(entry))
            st.oids.append(base_oid)
            st.cache[idx] = data
            if self.object_check is not None:
                self.object_check(type_num, data, base_oid, offset)
            resolver.add_entry(type_num, len(data))
            appended += 1
            resolver.resolve_roots([idx], 1)
        count = len(st.offsets)
        body = bytearray(self.buf[:start])
        body[8:12] = struct.pack(">I", count)
        body += tail
        body += new_hash(body).digest()
        return appended, bytes(body)


class _Resolver:
    """Pass 2: walk delta trees from their roots, in one or more threads."""

    def __init__(self, st: _Scan, fmt: ObjectFormat, path: str | None,
                 progress: Progress | None,
                 object_check: Callable[[int, bytes, bytes, int], None] | None = None) -> None:
        self.st = st
        self.object_check = object_check
        self.fmt = fmt
        self.path = path
        self.progress = progress
        n = len(st.offsets)
        self.real_types = list(st.types)
        self.result_sizes = list(st.sizes)
        self.depths = [0] * n
        self.bases = [-1] * n
        self.resolved = 0
        self.total = 0
        self._lock = threading.Lock()
        self._failed = threading.Event()

    def add_entry(self, type_num: int, size: int) -> None:
        """Register an entry appended after the scan (a thin pack's base)."""
        self.real_types.append(type_num)
        self.result_sizes.append(size)
        self.depths.append(0)
        self.bases.append(-1)

    def _data(self, i: int) -> bytes:
        """The inflated data of entry ``i``: from the scan's cache, else inflated again."""
        st = self.st
        data = st.cache.pop(i, None)
        if data is not None:
            return data
        start = st.data_starts[i]
        try:
            return compress.inflate(st.buf[start:st.ends[i]], st.sizes[i])
        except CompressionError as e:
            raise PackError(f"pack has bad object at offset {st.offsets[i]}: {e.message}",
                            path=self.path, offset=st.offsets[i]) from None

    def resolve_roots(self, roots: Sequence[int], threads: int) -> None:
        """Resolve the delta trees under ``roots``, spreading roots over ``threads``."""
        if threads <= 1 or len(roots) < 2:
            self._walk_many(roots)
            return
        if (len(roots) >= FORK_MIN_ROOTS
                and (self.object_check is None or getattr(self.object_check, "fork_safe", False))
                and hasattr(os, "fork") and threading.active_count() == 1):
            self._resolve_forked(roots, threads)
            return
        # Interleave roots so every thread gets a similar mix of big and small trees.
        chunks = [roots[k::threads] for k in range(threads)]
        with ThreadPoolExecutor(max_workers=threads) as pool:
            futures = [pool.submit(self._walk_many, c) for c in chunks if c]
            errors = []
            for f in futures:
                try:
                    f.result()
                except GitodbError as e:
                    errors.append(e)
        if errors:
            raise errors[0]

    def _resolve_forked(self, roots: Sequence[int], workers: int) -> None:
        """Resolve delta trees in this process plus ``workers - 1`` forked children.

        The per-entry walk is Python code that holds the GIL, so threads cannot
        run it in parallel; forked children can, sharing the mapped pack and the
        scan's state copy-on-write.  Every delta belongs to exactly one tree (its
        chain ends at one root), so no two processes resolve the same entry.  A
        child sends back, per resolved entry, its index, id, type, size, depth
        and base; the parent merges them after walking its own share.
        """
        shares = [roots[k::workers] for k in range(workers)]
        children: list[tuple[int, int]] = []
        # Move everything to the permanent generation first: a collection in a
        # child would otherwise touch every object and copy the whole heap.
        gc.freeze()
        for share in shares[1:]:
            rfd, wfd = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the child, reports through the pipe
                gc.disable()
                os.close(rfd)
                code = 0
                try:
                    payload = self._walk_share_packed(share)
                except ObjectCollisionError as e:
                    # Sent as such, so the parent raises the same typed error.
                    payload, code = b"C%s %d" % (e.hexdigest.encode(), e.offset or 0), 1
                except ObjectIdCollisionError as e:
                    payload, code = b"I%s %d" % (e.oid_hex.encode(), e.offset or 0), 1
                except BaseException as e:  # noqa: BLE001 - everything must reach the parent
                    payload, code = b"E" + str(e).encode("utf-8", "replace"), 1
                with os.fdopen(wfd, "wb") as f:
                    f.write(payload)
                os._exit(code)
            os.close(wfd)
            children.append((pid, rfd))
        gc.unfreeze()
        error: GitodbError | None = None
        try:
            self._walk_many(shares[0])
        except GitodbError as e:
            error = e
        finally:
            for pid, rfd in children:
                with os.fdopen(rfd, "rb") as f:
                    payload = f.read()
                os.waitpid(pid, 0)
                if payload[:1] == b"R":
                    self._merge(payload)
                elif payload[:1] in (b"C", b"I") and error is None:
                    hexdigest, _, where = payload[1:].decode("ascii").partition(" ")
                    kind = ObjectCollisionError if payload[:1] == b"C" else ObjectIdCollisionError
                    error = kind(hexdigest, path=self.path, offset=int(where))
                elif error is None:
                    # The child's message already names the file and offset.
                    error = PackError(payload[1:].decode("utf-8", "replace") or
                                      "delta resolver process failed")
        if error is not None:
            raise error

    def _walk_share_packed(self, roots: Sequence[int]) -> bytes:
        """In a forked child: resolve ``roots`` and pack what was resolved for the parent."""
        self.progress = None
        oids = self.st.oids
        before = [i for i, o in enumerate(oids) if o is None]
        self._walk_many(roots)
        done = [i for i in before if oids[i] is not None]
        return b"".join([
            b"R", struct.pack("<Q", len(done)),
            array("q", done).tobytes(),
            b"".join(oids[i] for i in done),  # type: ignore[misc]
            array("b", [self.real_types[i] for i in done]).tobytes(),
            array("q", [self.result_sizes[i] for i in done]).tobytes(),
            array("i", [self.depths[i] for i in done]).tobytes(),
            array("q", [self.bases[i] for i in done]).tobytes(),
        ])

    def _merge(self, payload: bytes) -> None:
        """Take over the entries a child resolved (see :meth:`_walk_share_packed`)."""
        (n,) = struct.unpack_from("<Q", payload, 1)
        rawsz = self.fmt.rawsz
        pos = 9
        def take(code: str, width: int) -> array:
            nonlocal pos
            arr = array(code, payload[pos:pos + n * width])
            pos += n * width
            return arr
        idx = take("q", 8)
        oid_blob = payload[pos:pos + n * rawsz]
        pos += n * rawsz
        types, sizes, depths, bases = take("b", 1), take("q", 8), take("i", 4), take("q", 8)
        oids = self.st.oids
        for k, i in enumerate(idx):
            oids[i] = oid_blob[k * rawsz:(k + 1) * rawsz]
            self.real_types[i] = types[k]
            self.result_sizes[i] = sizes[k]
            self.depths[i] = depths[k]
            self.bases[i] = bases[k]
        self._add_done(n)

    def _walk_many(self, roots: Sequence[int]) -> None:
        try:
            for r in roots:
                if self._failed.is_set():
                    return
                self._walk(r)
        except BaseException:
            self._failed.set()
            raise

    def _walk(self, root: int) -> None:
        """Depth-first over the deltas based on ``root``, keeping only the current chain."""
        st = self.st
        offsets, oids = st.offsets, st.oids
        ofs_children, ref_children = st.ofs_children, st.ref_children
        real_types, result_sizes, depths, bases = (
            self.real_types, self.result_sizes, self.depths, self.bases)
        new_hash = _hasher_for(self.fmt)
        path = self.path
        data_of = self._data
        progress = self.progress
        check = self.object_check
        done = 0

        ofs_pop, ref_pop = ofs_children.pop, ref_children.pop
        cache_pop = st.cache.pop
        prefixes = _TYPE_PREFIX

        root_kids = ofs_pop(offsets[root], None) or []
        by_ref = ref_pop(oids[root], None)  # type: ignore[arg-type]
        if by_ref:
            root_kids = root_kids + by_ref
        # Stack of (base data, base index, iterator over its remaining children).
        # A node's children are handled in one loop; the loop breaks to descend
        # into a child that has children itself, so memory holds one chain only.
        stack = [(data_of(root), root, iter(root_kids))]
        while stack:
            base_data, base_i, kids = stack[-1]
            type_num = real_types[base_i]
            prefix = prefixes[type_num]
            depth = depths[base_i] + 1
            for child in kids:
                delta = cache_pop(child, None)
                if delta is None:
                    delta = data_of(child)
                result = apply_delta(base_data, delta, path=path, offset=offsets[child])
                size = len(result)
                h = new_hash(prefix + b"%d\0" % size)
                h.update(result)
                try:
                    oid = h.digest()
                except ObjectCollisionError as e:
                    raise e.located(path, offsets[child]) from None
                oids[child] = oid
                if check is not None:
                    check(type_num, result, oid, offsets[child])
                real_types[child] = type_num
                result_sizes[child] = size
                depths[child] = depth
                bases[child] = base_i
                done += 1
                if progress is not None and done >= 64:
                    self._add_done(done)
                    done = 0
                grandkids = ofs_pop(offsets[child], None)
                by_ref = ref_pop(oid, None)
                if by_ref:
                    grandkids = grandkids + by_ref if grandkids else by_ref
                if grandkids:
                    stack.append((result, child, iter(grandkids)))
                    break
            else:
                stack.pop()
        self._add_done(done)

    def _add_done(self, n: int) -> None:
        with self._lock:
            self.resolved += n
            if self.progress is not None and self.total:
                self.progress("Resolving deltas", self.resolved, self.total, False)

    def unresolved_error(self, ndeltas: int) -> DeltaError:
        """The error for deltas left unresolved, naming the first one and its base.

        A REF_DELTA stays unresolved when its base is neither in the pack nor
        (with ``fix_thin``) in the repository, or when deltas name each other
        in a cycle; an OFS_DELTA when its base offset is not an entry start.
        """
        st = self.st
        left = [i for i, o in enumerate(st.oids) if o is None]
        n = len(left)
        first = left[0]
        off = st.offsets[first]
        base = st.ref_base.get(first)
        if base is not None:
            why = (f"base {base.hex()} of the REF_DELTA at offset {off} is missing "
                   "(not in the pack, or the deltas form a cycle)")
        else:
            base_off = next((b for b, kids in st.ofs_children.items() if first in kids), -1)
            why = (f"base offset {base_off} of the OFS_DELTA at offset {off} is not "
                   "the start of an object in the pack")
        return DeltaError(f"pack has {n} unresolved delta{'s' if n != 1 else ''}: {why}",
                          path=self.path, offset=off)


# -- objects the repository already has ---------------------------------------

class ObjectLookup(Protocol):
    """What the collision check needs from the repository (an ``ObjectDatabase`` fits)."""

    def contains(self, oid: bytes) -> bool: ...
    def read(self, oid: bytes) -> tuple[str, bytes]: ...


class CollisionCheck:
    """Git's check against objects the repository already has (index-pack in a repo).

    An object of the pack whose id the repository already stores must have the
    same type and content there; otherwise two different objects share one id
    and Git dies with ``SHA1 COLLISION FOUND WITH <id> !``.  Called like
    ``object_check`` for every object; it keeps no state, so forked delta
    resolvers may run it (``fork_safe``).
    """

    fork_safe = True

    def __init__(self, existing: ObjectLookup, path: str | None) -> None:
        self.existing = existing
        self.path = path

    def __call__(self, type_num: int, data: bytes, oid: bytes, offset: int) -> None:
        if not self.existing.contains(oid):
            return
        try:
            has_type, has_data = self.existing.read(oid)
        except GitodbError:
            raise PackError(f"cannot read existing object {oid.hex()}", path=self.path,
                            offset=offset) from None
        if has_type != TYPE_NAMES[type_num] or has_data != data:
            raise ObjectIdCollisionError(oid.hex(), path=self.path, offset=offset)


def _both(first: Callable[[int, bytes, bytes, int], None] | None,
          second: Callable[[int, bytes, bytes, int], None] | None
          ) -> Callable[[int, bytes, bytes, int], None] | None:
    """One per-object check that runs ``first`` then ``second`` (either may be None)."""
    if first is None or second is None:
        return first or second

    def both(type_num: int, data: bytes, oid: bytes, offset: int) -> None:
        first(type_num, data, oid, offset)
        second(type_num, data, oid, offset)
    return both


# -- --strict: object syntax and links ----------------------------------------

_COMMIT_HEADERS = (b"tree ", b"parent ", b"author ", b"committer ")
_TREE_MODES = {b"100644", b"100755", b"120000", b"40000", b"160000", b"100664", b"100600"}


class StrictChecker:
    """What ``index-pack --strict`` checks: each object is well formed, and every
    object a commit, tree or tag points at is in the pack or the repository.

    Called as ``checker(type_num, data, oid, offset)`` for every object (from
    several threads at once: it only appends); :meth:`finish` checks the links.
    """

    def __init__(self, fmt: ObjectFormat, path: str | None = None) -> None:
        self.fmt = fmt
        self.path = path
        self.links: list[bytes] = []

    def _fail(self, oid: bytes, offset: int, reason: str) -> PackError:
        return PackError(f"fsck error in packed object {oid.hex()}: {reason}",
                         path=self.path, offset=offset)

    def _hex_id(self, text: bytes, oid: bytes, offset: int, what: str) -> bytes:
        hexsz = self.fmt.hexsz
        if len(text) != hexsz or text.strip(b"0123456789abcdef"):
            raise self._fail(oid, offset, f"invalid {what} id '{text.decode(errors='replace')}'")
        return bytes.fromhex(text.decode())

    def __call__(self, type_num: int, data: bytes, oid: bytes, offset: int) -> None:
        name = TYPE_NAMES[type_num]
        if name == "commit":
            self._check_commit(data, oid, offset)
        elif name == "tree":
            self._check_tree(data, oid, offset)
        elif name == "tag":
            self._check_tag(data, oid, offset)

    def _headers(self, data: bytes, oid: bytes, offset: int) -> list[tuple[bytes, bytes | None]]:
        """The header lines (continuations joined), parsed by the object model."""
        block = parse_headers(data)
        if block.message is None and not data.endswith(b"\n"):
            raise self._fail(oid, offset, "unterminated header")
        return block.headers

    def _check_commit(self, data: bytes, oid: bytes, offset: int) -> None:
        headers = self._headers(data, oid, offset)
        if not headers or headers[0][0] != b"tree" or headers[0][1] is None:
            raise self._fail(oid, offset, "missingTree: invalid format - expected 'tree' line")
        self.links.append(self._hex_id(headers[0][1], oid, offset, "tree"))
        i = 1
        while i < len(headers) and headers[i][0] == b"parent" and headers[i][1] is not None:
            self.links.append(self._hex_id(headers[i][1] or b"", oid, offset, "parent"))
            i += 1
        if i >= len(headers) or headers[i][0] != b"author" or headers[i][1] is None:
            raise self._fail(oid, offset, "missingAuthor: invalid format - expected 'author' line")
        if i + 1 >= len(headers) or headers[i + 1][0] != b"committer" \
                or headers[i + 1][1] is None:
            raise self._fail(oid, offset,
                             "missingCommitter: invalid format - expected 'committer' line")

    def _check_tag(self, data: bytes, oid: bytes, offset: int) -> None:
        headers = self._headers(data, oid, offset)
        if len(headers) < 3 or headers[0][0] != b"object" or headers[0][1] is None:
            raise self._fail(oid, offset, "missingObject: invalid format - expected 'object' line")
        self.links.append(self._hex_id(headers[0][1], oid, offset, "object"))
        if headers[1][0] != b"type" or (headers[1][1] or b"").decode(errors="replace") not in (
                TYPE_NAMES.values()):
            raise self._fail(oid, offset, "badType: invalid 'type' value")
        if headers[2][0] != b"tag" or not headers[2][1]:
            raise self._fail(oid, offset, "missingTagEntry: invalid format - expected 'tag' line")
        if len(headers) < 4 or headers[3][0] != b"tagger":  # a warning in Git's fsck
            report("warning", f"object {oid.hex()}: missingTaggerEntry: invalid format - "
                              "expected 'tagger' line")

    def _check_tree(self, data: bytes, oid: bytes, offset: int) -> None:
        try:
            entries = parse_entries(data, self.fmt.rawsz)
        except ObjectParseError:
            raise self._fail(oid, offset, "badTree: truncated tree entry") from None
        prev: bytes | None = None
        for mode, name, entry_id in entries:
            if mode not in _TREE_MODES:
                raise self._fail(oid, offset,
                                 f"badFilemode: bad mode {mode.decode(errors='replace')}")
            if b"/" in name or name in (b".", b"..", b".git"):
                raise self._fail(oid, offset, f"badTreeName: bad entry name {name!r}")
            key = name + b"/" if mode == b"40000" else name
            if prev is not None and key <= prev:
                raise self._fail(oid, offset, "treeNotSorted: not properly sorted or duplicate")
            prev = key
            if mode != b"160000":
                self.links.append(entry_id)

    def finish(self, pack_oids: Sequence[bytes],
               contains: Callable[[bytes], bool] | None) -> None:
        """Every linked object must be in the pack or (via ``contains``) the repository."""
        have = set(pack_oids)
        for link in self.links:
            if link in have:
                continue
            if contains is not None and contains(link):
                have.add(link)
                continue
            raise PackError(f"did not receive expected object {link.hex()}", path=self.path)


# -- files: index a pack on disk or from a stream -------------------------------

@dataclass
class IndexPackOptions:
    """Options of ``git index-pack`` that shape what is checked and written."""

    index_version: int = 2
    offset32_limit: int = OFFSET32_LIMIT
    rev_index: bool = False
    keep_msg: str | None = None      # None: no .keep; "" an empty one
    promisor_msg: str | None = None  # None: no .promisor; "" an empty one
    threads: int = 0                 # 0: Git's default
    fix_thin: bool = False
    strict: bool = False
    strict_links: bool = True        # with strict: linked objects must exist (not --fsck-objects)
    progress: Progress | None = None
    progress_title: str | None = None
    compression_level: int = 1       # for bases appended by fix_thin


@dataclass
class IndexPackOutcome:
    """What :func:`index_pack_file`/:func:`index_pack_stream` did."""

    result: PackIndexResult
    pack_path: str
    index_path: str
    rev_path: str | None
    keep_created: bool

    @property
    def pack_hash(self) -> str:
        """The pack's checksum in hex (its name), as Git prints it."""
        return self.result.pack_checksum.hex()


def derive_name(path: str, old_ext: str, new_ext: str, what: str = "packfile") -> str:
    """``x.<old_ext>`` -> ``x.<new_ext>``; a name without ``old_ext`` is an error like Git's."""
    if not path.endswith("." + old_ext):
        raise PackError(f"{what} name '{path}' does not end with '.{old_ext}'")
    return path[: -len(old_ext)] + new_ext


def index_buffer(buf: bytes | mmap.mmap, fmt: ObjectFormat, opts: IndexPackOptions,
                 path: str, title: str,
                 lookup: Callable[[bytes], tuple[str, bytes] | None] | None,
                 contains: Callable[[bytes], bool] | None,
                 existing: ObjectLookup | None = None) -> PackIndexResult:
    """Index the pack in ``buf`` with ``opts`` (and --strict's checks); return the result.

    With ``existing`` (the repository's objects) every object the repository
    already has is compared with it (:class:`CollisionCheck`).
    """
    checker = StrictChecker(fmt, path) if opts.strict else None
    collision = CollisionCheck(existing, path) if existing is not None else None
    indexer = PackIndexer(buf, fmt, path=path, threads=opts.threads, progress=opts.progress,
                          progress_title=opts.progress_title or title,
                          fix_thin=opts.fix_thin, base_lookup=lookup,
                          compression_level=opts.compression_level,
                          object_check=_both(checker, collision))
    result = indexer.run()
    if checker is not None and opts.strict_links:
        checker.finish(result.oids, contains)
    return result


def map_file(path: str) -> tuple[mmap.mmap | bytes, int]:
    """Map the pack at ``path`` read-only; return the mapping (``b""`` if empty) and size."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                return b"", 0
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), size
    except OSError as e:
        raise PackError(f"cannot open packfile '{path}': {e.strerror}", path=path) from None


def close_map(m: mmap.mmap | bytes) -> None:
    """Close a mapping from :func:`map_file` unless views of it are still alive."""
    if isinstance(m, mmap.mmap):
        try:
            m.close()
        except BufferError:  # a view is still alive somewhere; the GC will close it
            pass


class _Staging:
    """Temporary files in the destination directories; renamed into place or removed."""

    def __init__(self, fsync: FsyncPolicy = DEFAULT_POLICY) -> None:
        self.temps: list[str] = []
        self.fsync = fsync

    def temp(self, directory: str, prefix: str) -> tuple[int, str]:
        try:
            fd, tmp = tempfile.mkstemp(prefix=prefix, dir=directory or ".")
        except OSError as e:
            raise ObjectWriteError(f"unable to create temporary file: {e.strerror}",
                                   path=directory or ".") from e
        self.temps.append(tmp)
        return fd, tmp

    def write(self, directory: str, prefix: str, data: bytes,
              component: Component = Component.PACK_METADATA) -> str:
        """Write ``data`` to a new temporary file, synced per ``component``; return its path."""
        fd, tmp = self.temp(directory, prefix)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                self.fsync.sync(component, f.fileno(), tmp)
        except OSError as e:
            raise ObjectWriteError(f"write error: {e.strerror}", path=tmp) from e
        return tmp

    def commit(self, tmp: str, final: str, mode: int = 0o444) -> None:
        try:
            os.chmod(tmp, mode)
            os.replace(tmp, final)
        except OSError as e:
            raise ObjectWriteError(f"unable to rename temporary file to '{final}': "
                                   f"{e.strerror}", path=tmp) from e
        self.temps.remove(tmp)

    def cleanup(self) -> None:
        for tmp in self.temps:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        self.temps.clear()


def _sync_file(fsync: FsyncPolicy, component: Component, path: str) -> None:
    """Sync the finished file at ``path`` per ``component`` (before it is renamed)."""
    if not fsync.wants(component):
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        raise ObjectWriteError(f"unable to open '{path}': {e.strerror}", path=path) from e
    try:
        fsync.sync(component, fd, path)
    finally:
        os.close(fd)


def _create_keep(keep_path: str, msg: str) -> bool:
    """Create ``keep_path`` unless it exists (Git's O_EXCL); True if this call created it."""
    try:
        fd = os.open(keep_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as f:
        if msg:
            f.write(msg + "\n")
    return True


def _write_outputs(staging: _Staging, result: PackIndexResult, opts: IndexPackOptions,
                   index_path: str, keep_path: str | None) -> tuple[str | None, bool]:
    """Write .idx (and .rev, .keep) for ``result``: temp files first, then renames."""
    idx_dir = os.path.dirname(index_path)
    idx_tmp = staging.write(idx_dir, "tmp_idx_",
                            result.index_bytes(opts.index_version, opts.offset32_limit))
    rev_path = rev_tmp = None
    if opts.rev_index:
        rev_path = derive_name(index_path, "idx", "rev")
        rev_tmp = staging.write(idx_dir, "tmp_rev_", result.rev_bytes())
    keep_created = False
    if keep_path is not None and opts.keep_msg is not None:
        keep_created = _create_keep(keep_path, opts.keep_msg)
    if opts.promisor_msg is not None:   # written like .keep (Git's write_special_file)
        _create_keep(derive_name(index_path, "idx", "promisor"), opts.promisor_msg)
    if rev_tmp is not None and rev_path is not None:
        staging.commit(rev_tmp, rev_path)
    staging.commit(idx_tmp, index_path)
    return rev_path, keep_created


def index_pack_file(pack_path: str, fmt: ObjectFormat, opts: IndexPackOptions | None = None,
                    *, index_path: str | None = None,
                    existing: ObjectLookup | None = None,
                    fsync: FsyncPolicy = DEFAULT_POLICY) -> IndexPackOutcome:
    """Index the pack at ``pack_path`` and write its ``.idx`` (and ``.rev``/``.keep``).

    The index goes to ``index_path`` (default: the pack's name with ``.idx``).
    ``existing`` (the repository's objects, when run in one) turns on Git's
    collision check.  Nothing is left behind when the pack is bad.  ``fsync`` is
    the ``core.fsync`` policy.
    """
    opts = opts or IndexPackOptions()
    if opts.fix_thin:
        raise PackError("--fix-thin cannot be used without --stdin")
    if index_path is None:
        index_path = derive_name(pack_path, "pack", "idx")
    elif opts.rev_index:
        derive_name(index_path, "idx", "rev")
    keep_path = derive_name(pack_path, "pack", "keep") if opts.keep_msg is not None else None
    m, _size = map_file(pack_path)
    staging = _Staging(fsync)
    try:
        # --strict's links may point at objects the repository has (Git looks there)
        result = index_buffer(m, fmt, opts, pack_path, "Indexing objects", None,
                              getattr(existing, "contains", None), existing)
        rev_path, keep_created = _write_outputs(staging, result, opts, index_path, keep_path)
    finally:
        staging.cleanup()
        close_map(m)
    return IndexPackOutcome(result, pack_path, index_path, rev_path, keep_created)


def index_pack_stream(stream: object, fmt: ObjectFormat, opts: IndexPackOptions | None = None,
                      *, pack_dir: str | None = None, pack_path: str | None = None,
                      index_path: str | None = None,
                      base_lookup: Callable[[bytes], tuple[str, bytes] | None] | None = None,
                      contains: Callable[[bytes], bool] | None = None,
                      existing: ObjectLookup | None = None,
                      fsync: FsyncPolicy = DEFAULT_POLICY) -> IndexPackOutcome:
    """Read a pack from ``stream`` (a binary file object), store and index it.

    The pack goes to ``pack_path``, or to ``pack_dir/pack-<hash>.pack``.  With
    ``opts.fix_thin`` missing REF_DELTA bases come from ``base_lookup`` and are
    appended.  ``contains`` answers --strict's link check for objects outside
    the pack; ``existing`` turns on the collision check against the repository.
    Temporary files live beside the destination and are removed on error;
    ``fsync`` is the ``core.fsync`` policy.
    """
    opts = opts or IndexPackOptions()
    if pack_path is None and pack_dir is None:
        raise PackError("--stdin requires a git repository")
    directory = os.path.dirname(pack_path) if pack_path is not None else str(pack_dir)
    if pack_path is not None:
        derive_name(pack_path, "pack", "idx")
    staging = _Staging(fsync)
    m: mmap.mmap | bytes = b""
    try:
        fd, pack_tmp = staging.temp(directory, "tmp_pack_")
        read = stream.read  # type: ignore[attr-defined]
        try:
            with os.fdopen(fd, "wb") as f:
                while True:
                    chunk = read(1 << 20)
                    if not chunk:
                        break
                    f.write(chunk)
        except OSError as e:
            raise ObjectWriteError(f"write error: {e.strerror}", path=pack_tmp) from e
        m, _size = map_file(pack_tmp)
        result = index_buffer(m, fmt, opts, pack_path or "<stdin>", "Receiving objects",
                               base_lookup, contains, existing)
        if result.pack_bytes is not None:
            close_map(m)
            m = b""
            try:
                with open(pack_tmp, "wb") as f:
                    f.write(result.pack_bytes)
            except OSError as e:
                raise ObjectWriteError(f"write error: {e.strerror}", path=pack_tmp) from e
            result.pack_bytes = None
        final_pack = pack_path or os.path.join(directory, f"pack-{result.pack_checksum.hex()}.pack")
        final_index = index_path or derive_name(final_pack, "pack", "idx")
        keep_path = derive_name(final_pack, "pack", "keep")
        if opts.keep_msg is not None:
            keep_created = _create_keep(keep_path, opts.keep_msg)
            keep_opts = IndexPackOptions(**{**opts.__dict__, "keep_msg": None})
        else:
            keep_created, keep_opts = False, opts
        _sync_file(fsync, Component.PACK, pack_tmp)
        staging.commit(pack_tmp, final_pack)
        rev_path, _ = _write_outputs(staging, result, keep_opts, final_index, None)
    finally:
        staging.cleanup()
        close_map(m)
    return IndexPackOutcome(result, final_pack, final_index, rev_path, keep_created)
