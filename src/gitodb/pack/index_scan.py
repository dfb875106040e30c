"""Pass 1 of index-pack: walk a pack without an index.

Nothing tells where an entry's zlib stream ends, so each one is inflated (the
inflater reports how much input it used); this also yields every entry's CRC-32
over its raw bytes and the id of every non-delta object, and finds each delta's
base (by offset or by id).  The pack's trailing checksum is checked over all
bytes before it (beside the scan, in a thread, when more than one is allowed).
Inflated entries stay in the one delta-base cache (``gitodb.pack.cache``),
bounded by ``core.deltaBaseCacheLimit``, for the resolve pass.
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gitodb import compress
from gitodb.errors import CompressionError, ObjectCollisionError, PackError
from gitodb.fileio import PAGE_DROP_STEP
from gitodb.objects import OBJ_OFS_DELTA, OBJ_REF_DELTA, TYPE_NAMES, ObjectFormat
from gitodb.pack.cache import DEFAULT_DELTA_BASE_CACHE_LIMIT, DeltaBaseCache
from gitodb.pack.entry import parse_entry_header, parse_ofs_distance

PACK_SIGNATURE = b"PACK"
PACK_HEADER_SIZE = 12

# Keep inflated entries in memory (instead of inflating them again in pass 2)
# up to this many bytes in total: Git's core.deltaBaseCacheLimit, in the one cache.
DEFAULT_CACHE_BUDGET = DEFAULT_DELTA_BASE_CACHE_LIMIT

# Progress callback: (title, done, total, finished)
Progress = Callable[[str, int, int, bool], None]

# A header like b"blob 123\0" for each type number.
TYPE_PREFIX = {num: name.encode() + b" " for num, name in TYPE_NAMES.items()}


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


class MappedPages:
    """Keeps the pages of a mapped pack that a pass has read out of this process's RSS.

    Both passes read the pack once through (the scan in order, the resolve pass
    where the cache misses), so a page read is rarely read again soon; left mapped,
    every page of the pack would count in the process's memory until the end.
    Every ``PAGE_DROP_STEP`` bytes read, the pages are given back
    (``madvise(MADV_DONTNEED)``: the file's data stays in the page cache, and a
    later read faults it in again).  Nothing happens for a pack held in memory.
    """

    __slots__ = ("mapping", "read", "dropped")

    def __init__(self, buf: object) -> None:
        usable = isinstance(buf, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED")
        self.mapping: mmap.mmap | None = buf if usable else None  # type: ignore[assignment]
        self.read = 0
        self.dropped = 0  # the scan's pages below this are given back already

    def scanned_to(self, pos: int) -> None:
        """The scan has read everything below ``pos``: give back those pages."""
        upto = pos - pos % mmap.PAGESIZE
        if self.mapping is not None and upto > self.dropped:
            self.mapping.madvise(mmap.MADV_DONTNEED, self.dropped, upto - self.dropped)
            self.dropped = upto

    def give_back(self, start: int, end: int) -> None:
        """Give back the whole pages inside ``[start, end)``."""
        if self.mapping is None:
            return
        start += -start % mmap.PAGESIZE
        end -= end % mmap.PAGESIZE
        if end > start:
            self.mapping.madvise(mmap.MADV_DONTNEED, start, end - start)

    def hash_through(self, h: Any, buf: memoryview, end: int) -> Any:
        """``h`` updated with ``buf[:end]`` piece by piece, each piece's pages given back."""
        for at in range(0, end, PAGE_DROP_STEP):
            stop = min(end, at + PAGE_DROP_STEP)
            h.update(buf[at:stop])
            self.give_back(at, stop)
        return h

    def note_read(self, n: int) -> None:
        """``n`` more bytes were read at random: every ``PAGE_DROP_STEP``, give back all."""
        self.read += n
        if self.mapping is not None and self.read >= PAGE_DROP_STEP:
            self.read = 0
            self.mapping.madvise(mmap.MADV_DONTNEED)


def hasher_for(fmt: ObjectFormat) -> Callable[..., Any]:
    """The hasher constructor for ``fmt`` (bound once; SHA-1 is SHA-1DC)."""
    return fmt.hasher_factory()


@dataclass
class ScanState:
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
    # Inflated entries by entry number, kept from the scan for the resolve pass.
    cache: DeltaBaseCache = field(default_factory=DeltaBaseCache)
    # The mapped pack's pages, given back as the passes read them.
    pages: MappedPages = field(default_factory=lambda: MappedPages(None))


class PackScanner:
    """Pass 1 of indexing one pack held in memory or mapped from a file (see the module).

    ``buf`` is the whole pack including its trailing checksum.  ``path`` names
    the pack in errors.  ``threads`` (0: Git's default) resolve deltas in
    parallel.  ``base_lookup(oid) -> (type_name, data) | None`` supplies bases
    for a thin pack (``fix_thin``); ``compression_level`` is the zlib level of
    appended bases (Git's ``core.looseCompression``/``core.compression``, 1 if unset).
    """

    def __init__(
        self,
        buf: bytes | bytearray | memoryview | mmap.mmap,
        fmt: ObjectFormat,
        *,
        path: str | None = None,
        threads: int = 1,
        progress: Progress | None = None,
        progress_title: str = "Indexing objects",
        fix_thin: bool = False,
        base_lookup: Callable[[bytes], tuple[str, bytes] | None] | None = None,
        compression_level: int = 1,
        object_check: Callable[[int, bytes, bytes, int], None] | None = None,
        cache_budget: int = DEFAULT_CACHE_BUDGET,
    ) -> None:
        self.buf = memoryview(buf)
        self.pages = MappedPages(buf)
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
        return PackError(
            f"pack has bad object at offset {offset}: {reason}", path=self.path, offset=offset
        )

    # -- pass 1 --------------------------------------------------------------
    def _read_header(self) -> int:
        buf = self.buf
        rawsz = self.fmt.rawsz
        if len(buf) < PACK_HEADER_SIZE + rawsz:
            if bytes(buf[:4]) != PACK_SIGNATURE[: len(buf[:4])]:
                raise PackError("pack signature mismatch", path=self.path, offset=0)
            raise PackError(
                "early EOF: pack is shorter than its header and trailer",
                path=self.path,
                offset=len(buf),
            )
        if bytes(buf[:4]) != PACK_SIGNATURE:
            raise PackError("pack signature mismatch", path=self.path, offset=0)
        version, count = struct.unpack_from(">II", buf, 4)
        if version not in (2, 3):
            raise PackError(f"pack version {version} unsupported", path=self.path, offset=4)
        # Every entry takes at least 2 bytes (header + a zlib stream is more).
        if count > (len(buf) - PACK_HEADER_SIZE) // 2:
            raise PackError(
                f"early EOF: pack claims {count} objects but is only {len(buf)} bytes",
                path=self.path,
                offset=8,
            )
        return int(count)

    def _inflate_streaming(self, pos: int, size: int, limit: int, offset: int) -> tuple[bytes, int]:
        """Inflate the entry data at ``pos`` (not past ``limit``) chunk by chunk.

        Returns ``(data, end)``; raises ``PackError`` naming the entry's offset
        when the stream is corrupt, truncated, or inflates to the wrong size.
        """
        buf = self.buf
        if size > compress.max_inflated_size(limit - pos):
            # Checked first: the chunks below would otherwise pile up to ``size``.
            raise self._bad_object(
                offset,
                f"declares {size} bytes, more than its {limit - pos} bytes of zlib data can hold",
            )
        inf = compress.new_inflater()
        parts: list[bytes] = []
        got = 0
        at = pos
        step = 1 << 16
        try:
            while not inf.eof:
                if at >= limit:
                    raise PackError(
                        "early EOF: pack ends inside an entry", path=self.path, offset=offset
                    )
                chunk = buf[at : min(at + step, limit)]
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

    def scan(self) -> ScanState:
        """Pass 1: entry boundaries, CRC-32s, non-delta ids; checks the trailer."""
        buf = self.buf
        fmt = self.fmt
        rawsz = fmt.rawsz
        count = self._read_header()
        end_of_entries = len(buf) - rawsz
        st = ScanState(
            self.path, buf, fmt, cache=DeltaBaseCache(self.cache_budget), pages=self.pages
        )
        pages = self.pages
        next_drop = PAGE_DROP_STEP
        offsets, ends, starts = st.offsets, st.ends, st.data_starts
        types, sizes, crcs, oids = st.types, st.sizes, st.crcs, st.oids
        ofs_children, ref_children, ref_base = st.ofs_children, st.ref_children, st.ref_base
        keep = st.cache.put
        crc32 = compress.crc32
        new_hash = hasher_for(fmt)
        prefixes = TYPE_PREFIX
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
                    h = pages.hash_through(new_hash(), buf, end_of_entries)
                    trailer_result.append(h.digest())
                except ObjectCollisionError as e:
                    trailer_result.append(e)

            hasher_thread = threading.Thread(target=hash_trailer)
            hasher_thread.start()
        try:
            for i in range(count):
                offset = pos
                if pos >= end_of_entries:
                    raise PackError(
                        f"early EOF: pack ends before object {i} of {count}",
                        path=self.path,
                        offset=pos,
                    )
                type_num, size, hlen = parse_entry_header(buf, pos, self.path)
                pos += hlen
                if type_num == OBJ_OFS_DELTA:
                    dist, dlen = parse_ofs_distance(buf, pos, self.path)
                    pos += dlen
                    if dist <= 0 or dist > offset:
                        raise self._bad_object(offset, "delta base offset is out of bound")
                    ofs_children.setdefault(offset - dist, []).append(i)
                elif type_num == OBJ_REF_DELTA:
                    base = bytes(buf[pos : pos + rawsz])
                    pos += rawsz
                    ref_children.setdefault(base, []).append(i)
                    ref_base[i] = base
                elif type_num not in prefixes:
                    raise self._bad_object(offset, f"unknown object type {type_num}")
                if pos > end_of_entries:
                    raise PackError(
                        "early EOF: pack ends inside an entry header", path=self.path, offset=offset
                    )
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
                keep(i, type_num, data)
                pos = end
                if pos >= next_drop:
                    pages.scanned_to(pos)
                    next_drop = pos + PAGE_DROP_STEP
                if progress is not None:
                    progress(title, i + 1, count, False)
        finally:
            if hasher_thread is not None:
                hasher_thread.join()
        if pos != end_of_entries:
            raise PackError("pack has junk at the end", path=self.path, offset=pos)
        try:
            outcome = (
                trailer_result[0]
                if trailer_result
                else pages.hash_through(new_hash(), buf, end_of_entries).digest()
            )
        except ObjectCollisionError as e:
            outcome = e
        if isinstance(outcome, ObjectCollisionError):
            raise outcome.located(self.path, 0) from None
        digest = outcome
        if digest != bytes(buf[end_of_entries:]):
            raise PackError(
                f"pack is corrupted ({fmt.name.upper()} mismatch): trailing "
                "checksum does not match the content",
                path=self.path,
                offset=end_of_entries,
            )
        # Keep cached data only for deltas and for objects that are delta bases.
        st.cache.discard_if(
            lambda i: (
                oids[i] is not None
                and offsets[i] not in ofs_children
                and oids[i] not in ref_children
            )
        )
        if progress is not None:
            progress(title, count, count, True)
        return st
