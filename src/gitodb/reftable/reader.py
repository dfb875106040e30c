"""Read one reftable file: header, footer, ref/obj/log sections and their indexes.

The file is ``mmap``ed (small files are read); blocks are decoded lazily from
``memoryview``-free byte slices.  Log blocks are inflated with one reusable
inflater per reader (``compress.new_inflater()``), so the inflate state is set up
once per table rather than once per block.
"""

from __future__ import annotations

import mmap
import os
from binascii import crc32 as _crc32_of_footer
from itertools import chain
from struct import Struct
from struct import error as StructError

from gitodb.errors import CompressionError, ReftableError
from gitodb.lazymod import lazy_module
from gitodb.reftable.basics import (
    BLOCK_INDEX,
    BLOCK_LOG,
    BLOCK_OBJ,
    BLOCK_REF,
    FOOTER_SIZE,
    HEADER_SIZE,
    MAGIC,
    MAX_UPDATE_INDEX,
    get_varint,
    put_varint,
)
from gitodb.reftable.block import Block, parse_block_header
from gitodb.reftable.records import LogRecord, RefRecord, log_key
from gitodb.types import Buffer

try:
    from gitodb._native import ref_block_records as _ref_block_records
    from gitodb._native import ref_blocks_table as _ref_blocks_table
except ImportError:  # built without a C compiler: the Python loop
    _ref_blocks_table = None  # type: ignore[assignment]
    _ref_block_records = None  # type: ignore[assignment]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

    from gitodb import compress
else:
    compress = lazy_module("gitodb.compress", globals(), "compress")  # log blocks only

_HASH_SIZES = {b"sha1": 20, b"s256": 32}
_MMAP_MIN = 64 * 1024
_new_tuple = tuple.__new__

# log record decoding (see decode_log_block)
_VALUE_HEAD = {h: Struct(f"{h}s{h}sB").unpack_from for h in _HASH_SIZES.values()}
_TZ_MSGLEN = Struct(">hB").unpack_from
#: masks of the low n bytes of a 64-bit number (n = key suffix length)
_LOW_BYTES = [(1 << (8 * n)) - 1 for n in range(9)]
#: what the "+1 per continuation byte" adds up to in a 5-byte varint
_VARINT5 = 128 + 128**2 + 128**3 + 128**4
#: memo of ``_time_high``: consecutive reflog entries mostly share their time's top bytes
_TIME_HIGH: dict[int, int] = {}


def _time_high(word: int) -> int | None:
    """The value of a 5-byte varint whose first four bytes are ``word`` and last byte 0.

    Add the last byte (< 0x80) for the varint's value.  None unless all four bytes
    have the continuation bit (else the varint is not 5 bytes long).  Memoised in
    ``_TIME_HIGH`` (bounded).
    """
    if word & 0x80808080 != 0x80808080:
        return None
    # Git's varint: each continuation adds one before shifting (_VARINT5)
    value = (
        (
            ((word >> 3) & 0xFE00000)
            | ((word >> 2) & 0x1FC000)
            | ((word >> 1) & 0x3F80)
            | (word & 0x7F)
        )
        << 7
    ) + _VARINT5
    if len(_TIME_HIGH) >= 4096:
        _TIME_HIGH.clear()
    _TIME_HIGH[word] = value
    return value


class TableReader:
    """A read-only view of one ``*.ref`` table.

    ``reuse_inflater=False`` makes every log block set up a fresh inflater (only for
    measuring what the reuse saves).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        data: bytes | None = None,
        name: str | None = None,
        reuse_inflater: bool = True,
    ) -> None:
        self.path = os.fspath(path) if path is not None else (name or "<table>")
        self.reuse_inflater = reuse_inflater
        self._inflater: compress.Inflater | None = None
        self._mmap: mmap.mmap | None = None
        if data is None:
            try:
                with open(self.path, "rb") as f:
                    size = os.fstat(f.fileno()).st_size
                    if size >= _MMAP_MIN:
                        self._mmap = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                        buf: bytes | mmap.mmap = self._mmap
                    else:
                        buf = f.read()
            except FileNotFoundError:
                raise ReftableError("table does not exist", path=self.path) from None
        else:
            buf = data
        self.buf = buf
        self.size = len(buf)
        self._parse_header_footer()

    # -- header and footer ------------------------------------------------
    def _parse_header_footer(self) -> None:
        buf, path = self.buf, self.path
        if self.size < 24 or buf[0:4] != MAGIC:
            raise ReftableError(
                "bad magic (not a reftable)"
                if self.size >= 4 and buf[0:4] != MAGIC
                else "truncated table header",
                path=path,
                offset=0,
            )
        version = buf[4]
        if version not in HEADER_SIZE:
            raise ReftableError(f"unsupported reftable version {version}", path=path, offset=4)
        self.version = version
        hsize = self.header_size = HEADER_SIZE[version]
        fsize = FOOTER_SIZE[version]
        if self.size < hsize + fsize:
            raise ReftableError("truncated table", path=path, offset=self.size)
        self.block_size = int.from_bytes(buf[5:8], "big")
        self.min_update_index = int.from_bytes(buf[8:16], "big")
        self.max_update_index = int.from_bytes(buf[16:24], "big")
        self.hash_id = bytes(buf[24:28]) if version == 2 else b"sha1"
        if self.hash_id not in _HASH_SIZES:
            raise ReftableError(f"unknown hash id {self.hash_id!r}", path=path, offset=24)
        self.hash_size = _HASH_SIZES[self.hash_id]
        fpos = self.footer_pos = self.size - fsize
        footer = bytes(buf[fpos:])
        if footer[:hsize] != bytes(buf[:hsize]):
            raise ReftableError(
                "footer does not repeat the header (truncated table?)", path=path, offset=fpos
            )
        crc = int.from_bytes(footer[-4:], "big")
        # The standard library's CRC-32 (the value every backend computes): the
        # compression layer, and the backend it would load, are for log blocks only.
        if _crc32_of_footer(footer[:-4]) != crc:
            raise ReftableError("footer CRC-32 mismatch", path=path, offset=self.size - 4)
        f = [int.from_bytes(footer[hsize + 8 * i : hsize + 8 * i + 8], "big") for i in range(5)]
        self.ref_index_pos = f[0]
        self.obj_pos = f[1] >> 5
        self.obj_id_len = f[1] & 0x1F
        self.obj_index_pos = f[2]
        self.log_pos = f[3]
        self.log_index_pos = f[4]
        for i, p in enumerate((f[0], self.obj_pos, f[2], f[3], f[4])):
            if p >= fpos or (p and p < hsize):
                raise ReftableError(
                    f"footer position {p} out of range", path=path, offset=fpos + hsize + 8 * i
                )
        first = buf[hsize] if fpos > hsize else None
        if first is not None and first not in (BLOCK_REF, BLOCK_LOG, BLOCK_OBJ, BLOCK_INDEX):
            # Something is there but it is no block: the table is damaged, not empty.
            raise ReftableError(f"unexpected block type 0x{first:02x}", path=path, offset=hsize)
        self.has_refs = first == BLOCK_REF
        self.logs_first = first == BLOCK_LOG
        self.has_logs = self.logs_first or self.log_pos > 0

    def close(self) -> None:
        """Release the mapping (the reader must not be used afterwards)."""
        if self._mmap is not None:
            self._mmap.close()
            self._mmap = None

    def __enter__(self) -> TableReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- blocks -----------------------------------------------------------
    def _section_end(self, start: int) -> int:
        ends = [
            p
            for p in (
                self.ref_index_pos,
                self.obj_pos,
                self.obj_index_pos,
                self.log_pos,
                self.log_index_pos,
            )
            if p > start
        ]
        return min(ends, default=self.footer_pos)

    def block_at(self, pos: int, expect: int | None = None) -> Block:
        """Decode (inflating if a log block) the block whose frame starts at ``pos``."""
        hdr = self.header_size if pos == 0 else 0
        if pos + hdr + 4 > self.footer_pos:
            raise ReftableError("block position out of range", path=self.path, offset=pos)
        btype, block_len = parse_block_header(self.buf, pos + hdr, self.path, expect)
        if btype == BLOCK_LOG:
            inflated = block_len - hdr - 4
            if inflated < 6:
                raise ReftableError(
                    f"log block length {block_len} out of range", path=self.path, offset=pos
                )
            # A deflate stream is never much longer than its output (stored blocks cost
            # 5 bytes per 64 KiB), so hand the inflater a bounded slice: giving it the
            # rest of a 35 MB file would make zlib copy the unconsumed tail every block.
            zstart = pos + hdr + 4
            zend = min(self.footer_pos, zstart + inflated + (inflated >> 10) + 64)
            data = memoryview(self.buf)[zstart:zend]
            failure: ReftableError | None = None
            try:
                if self.reuse_inflater:
                    inf = self._inflater
                    if inf is None:
                        inf = self._inflater = compress.new_inflater()
                    out, consumed = inf.inflate_prefix(data, inflated)
                else:
                    out, consumed = compress.new_inflater().inflate_prefix(data, inflated)
            except CompressionError as e:
                failure = ReftableError(
                    f"corrupt log block: {e.message}", path=self.path, offset=pos + hdr + 4
                )
            # Released only once the backend's exception (whose traceback may hold
            # slices of ``data``) is gone; a slice still alive just delays the release.
            try:
                data.release()
            except BufferError:
                pass
            if failure is not None:
                raise failure
            blk = Block(out, -(hdr + 4), hdr, btype, block_len, self.path, pos)
            blk.full_size = hdr + 4 + consumed
            return blk
        if pos + block_len > self.footer_pos:
            raise ReftableError(
                f"block length {block_len} out of range", path=self.path, offset=pos
            )
        blk = Block(self.buf, pos, hdr, btype, block_len, self.path, pos)
        bs = self.block_size
        end = pos + block_len
        if bs and block_len < bs and end < self.footer_pos and self.buf[end] == 0:
            blk.full_size = bs
        return blk

    def blocks(self, start: int, btype: int) -> Iterator[Block]:
        """Blocks of type ``btype`` from ``start`` until the type changes or the section ends."""
        pos = start
        end = self.footer_pos
        hs = self.header_size
        while pos < end:
            hdr = hs if pos == 0 else 0
            if pos + hdr >= end or self.buf[pos + hdr] != btype:
                return
            blk = self.block_at(pos, btype)
            yield blk
            pos += blk.full_size

    def _section(self, pos: int, btype: int) -> int:
        """``pos`` from the footer, checked to start a block of ``btype`` when first used.

        Checked lazily, as Git does: a damaged log index must not stop reading refs.
        """
        hdr = self.header_size if pos == 0 else 0
        if self.buf[pos + hdr] != btype:
            raise ReftableError(
                f"unexpected block type 0x{self.buf[pos + hdr]:02x} where the "
                f"footer places a 0x{btype:02x} block",
                path=self.path,
                offset=pos,
            )
        return pos

    def _first_pos(self, btype: int) -> int | None:
        if btype == BLOCK_REF:
            return 0 if self.has_refs else None
        if btype == BLOCK_LOG:
            return (
                0
                if self.logs_first
                else (self._section(self.log_pos, BLOCK_LOG) if self.log_pos else None)
            )
        if btype == BLOCK_OBJ:
            return self._section(self.obj_pos, BLOCK_OBJ) if self.obj_pos else None
        return None

    def _index_pos(self, btype: int) -> int:
        pos = {
            BLOCK_REF: self.ref_index_pos,
            BLOCK_LOG: self.log_index_pos,
            BLOCK_OBJ: self.obj_index_pos,
        }[btype]
        return self._section(pos, BLOCK_INDEX) if pos else 0

    # -- seeking ----------------------------------------------------------
    def _leaf_for(self, btype: int, key: bytes) -> int | None:
        """Frame position of the first ``btype`` block that may hold ``key`` or a later key."""
        first = self._first_pos(btype)
        if first is None:
            return None
        index = self._index_pos(btype)
        if not index:
            return first
        # The top index level may span several blocks: scan them linearly.
        for blk in self.blocks(index, BLOCK_INDEX):
            for _ikey, child in _index_records(blk, key):
                pos = child
                depth = 0
                while True:
                    hdr = self.header_size if pos == 0 else 0
                    if pos + hdr >= self.footer_pos:
                        raise ReftableError("index points past the end", path=self.path, offset=pos)
                    if self.buf[pos + hdr] != BLOCK_INDEX:
                        return pos
                    depth += 1
                    if depth > 64:
                        raise ReftableError("index too deep (cycle?)", path=self.path, offset=pos)
                    sub = self.block_at(pos, BLOCK_INDEX)
                    found = next(_index_records(sub, key), None)
                    if found is None:
                        raise ReftableError(
                            "index record without a matching child", path=self.path, offset=pos
                        )
                    pos = found[1]
        return None

    # -- refs -------------------------------------------------------------
    def iter_refs(self, prefix: bytes = b"", start: bytes | None = None) -> Iterator[RefRecord]:
        """Ref records (tombstones included) whose name starts with ``prefix``, sorted."""
        target = prefix if start is None else start
        leaf = self._leaf_for(BLOCK_REF, target) if target else self._first_pos(BLOCK_REF)
        if leaf is None:
            return
        # Without an index the leaf is the first block, so the target may lie in any
        # later one: records are filtered by it until the first one at or past it.
        seek: bytes | None = target or None
        for blk in self.blocks(leaf, BLOCK_REF):
            for rec in _ref_records(blk, self.hash_size, self.min_update_index, seek):
                seek = None
                if not rec.name.startswith(prefix):
                    if rec.name > prefix:
                        return
                    continue
                yield rec

    def ref_table_parts(
        self,
    ) -> tuple[tuple[bytes, bytes, bytes, bytes, bytes], list[bytes], list[bytes]] | None:
        """The refs under ``refs/`` of this table as ``gitodb.refs.table`` parts (ids and
        peeled ids of value types 1 and 2), with the names of its symbolic refs and of
        its deletions, in one native pass over the ref blocks: ``iter_refs(b"refs/")``
        without an object per ref.  None without the native core or for a damaged
        block (``iter_refs`` then reads it and raises the error naming the offset)."""
        if _ref_blocks_table is None:
            return None
        first = self._first_pos(BLOCK_REF)
        if first is None:
            return (b"", b"\0\0\0\0", b"", b"", b""), [], []
        blocks = list(self.blocks(first, BLOCK_REF))
        last = blocks[-1]
        end = last.file_pos + last.full_size
        if last.full_size != self.block_size and end not in (
            self.footer_pos,
            self.ref_index_pos,
            self.obj_pos,
            self.obj_index_pos,
            self.log_pos,
            self.log_index_pos,
        ):
            # The walk took a block for unpadded (the byte after it is not zero) and
            # stopped where no section starts: damaged padding, or an unpadded table
            # with a multi-level index.  iter_refs, which seeks through the index,
            # decides (Git reads a ref listing that way too).
            return None
        spans = [(blk.rec_start, blk.rec_end) for blk in blocks]
        return _ref_blocks_table(self.buf, spans, self.hash_size)

    def seek_ref(self, name: bytes) -> RefRecord | None:
        """The record for exactly ``name`` (maybe a tombstone), or None."""
        for rec in self.iter_refs(start=name):
            return rec if rec.name == name else None
        return None

    # -- logs -------------------------------------------------------------
    def iter_logs(self, refname: bytes | None = None) -> Iterator[LogRecord]:
        """Log records, by ref name and newest first; only ``refname``'s if given.

        Lazy: blocks are read as the iterator advances.
        """
        if refname is not None:
            return self._iter_ref_logs(refname)
        first = self._first_pos(BLOCK_LOG)
        if first is None:
            return iter(())
        hash_size = self.hash_size

        # Whole blocks are decoded at a time and chained in C: no generator frame
        # is resumed per record.
        starts = ((blk, blk.rec_start) for blk in self.blocks(first, BLOCK_LOG))
        return chain.from_iterable(decode_log_blocks(starts, hash_size))

    def _iter_ref_logs(self, refname: bytes) -> Iterator[LogRecord]:
        target = log_key(refname, MAX_UPDATE_INDEX)
        leaf = self._leaf_for(BLOCK_LOG, target)
        if leaf is None:
            return
        seek: bytes | None = target
        want = refname + b"\0"
        for blk in self.blocks(leaf, BLOCK_LOG):
            for rec in _log_records(blk, self.hash_size, seek):
                seek = None  # as in iter_refs: filter until the target is reached
                if rec.refname != refname:
                    if rec.refname + b"\0" > want:
                        return
                    continue
                yield rec

    def log_refnames(self) -> list[bytes]:
        """Distinct ref names in the log section, skipping from one name to the next.

        The skip goes through the log index.  Every step must land on a ref name
        after the previous one; a damaged index that leads back (which would loop
        forever) makes the rest of the walk a plain scan of the log blocks, which
        always moves forward and gives the names Git's sequential read gives.
        """
        names: list[bytes] = []
        first = self._first_pos(BLOCK_LOG)
        if first is None:
            return names
        target = b""
        use_index = True
        while True:
            leaf = self._leaf_for(BLOCK_LOG, target) if target and use_index else first
            if leaf is None:
                return names
            found = self._first_log_name_from(leaf, target or None)
            if found is not None and names and found <= names[-1]:
                if not use_index:  # cannot happen: the scan checks key order
                    raise ReftableError("log keys out of order", path=self.path, offset=leaf)
                use_index = False
                continue
            if found is None:
                if use_index and target:
                    # The index may have skipped past the rest: confirm by scanning.
                    use_index = False
                    found = self._first_log_name_from(first, target)
                if found is None:
                    return names
            names.append(found)
            target = found + b"\x01"

    def _first_log_name_from(self, leaf: int, target: bytes | None) -> bytes | None:
        """Ref name of the first log record at or after key ``target``, from block ``leaf``."""
        for blk in self.blocks(leaf, BLOCK_LOG):
            for rec in _log_records(blk, self.hash_size, target):
                if target is None or log_key(rec.refname, rec.update_index) >= target:
                    return rec.refname
        return None

    # -- objects ----------------------------------------------------------
    def refs_for(self, oid: bytes) -> Iterator[RefRecord]:
        """Refs whose id or peeled id is ``oid``, through the obj section when present."""
        if not self.obj_pos or not self.obj_id_len:
            for rec in self.iter_refs():
                if rec.oid == oid or rec.peeled == oid:
                    yield rec
            return
        key = oid[: self.obj_id_len]
        leaf = self._leaf_for(BLOCK_OBJ, key)
        if leaf is None:
            return
        for blk in self.blocks(leaf, BLOCK_OBJ):
            for okey, positions in _obj_records(blk, key):
                if okey != key:
                    return
                if not positions:  # too many refs to list: scan all ref blocks
                    yield from (r for r in self.iter_refs() if oid in (r.oid, r.peeled))
                    return
                for p in positions:
                    blk_r = self.block_at(p, BLOCK_REF)
                    for rec in _ref_records(blk_r, self.hash_size, self.min_update_index, None):
                        if rec.oid == oid or rec.peeled == oid:
                            yield rec
                return

    # -- inspection -------------------------------------------------------
    def block_summary(self) -> list[tuple[str, int, int]]:
        """(section, length without restart table, restarts) per block, like Git's dump -b."""
        out: list[tuple[str, int, int]] = []

        def add(name: str, start: int | None, btype: int) -> None:
            if start is None:
                return
            for blk in self.blocks(start, btype):
                out.append((name, blk.block_len - 2 - 3 * blk.restart_count, blk.restart_count))

        add("ref", self._first_pos(BLOCK_REF), BLOCK_REF)
        ref_blocks = sum(1 for o in out if o[0] == "ref")
        pos = self._first_pos(BLOCK_REF)
        if pos is not None:
            # index blocks follow the last ref block directly
            for i, blk in enumerate(self.blocks(pos, BLOCK_REF)):
                pos += blk.full_size
                if i + 1 == ref_blocks:
                    break
            add("idx", pos, BLOCK_INDEX)
        if self.obj_pos:
            n_obj = len(out)
            add("obj", self.obj_pos, BLOCK_OBJ)
            p = self.obj_pos
            for _ in range(len(out) - n_obj):
                p += self.block_at(p).full_size
            add("idx", p, BLOCK_INDEX)
        first = self._first_pos(BLOCK_LOG)
        if first is not None:
            n_log = len(out)
            add("log", first, BLOCK_LOG)
            p = first
            for _ in range(len(out) - n_log):
                p += self.block_at(p).full_size
            add("idx", p, BLOCK_INDEX)
        return out


# -- record decoders (hot loops; one per block type) ---------------------


def _ref_records(
    blk: Block, hash_size: int, min_ui: int, target: bytes | None
) -> Iterator[RefRecord]:
    """The block's ref records, from the first whose name is >= ``target`` if given.

    Decoded in one native call where the native core is built; a damaged record
    sends the block to the Python loop below (the reference), which names it.
    """
    buf = blk.buf
    end = blk.rec_end
    pos = blk.seek_restart(target) if target else blk.rec_start
    if _ref_block_records is not None:
        got = _ref_block_records(buf, pos, end, hash_size, min_ui, RefRecord, target or b"")
        if got is not None:
            return iter(got)
    return _ref_records_python(blk, hash_size, min_ui, target, pos)


def _ref_records_python(
    blk: Block, hash_size: int, min_ui: int, target: bytes | None, pos: int
) -> Iterator[RefRecord]:
    buf = blk.buf
    end = blk.rec_end
    last = b""
    try:
        while pos < end:
            start = pos
            prefix = buf[pos]
            pos += 1
            if prefix & 0x80:
                prefix, pos = get_varint(buf, pos - 1, end)
            st = buf[pos]
            pos += 1
            if st & 0x80:
                st, pos = get_varint(buf, pos - 1, end)
            e = pos + (st >> 3)
            if prefix > len(last) or e > end:
                raise blk.error("record key out of range", start)
            key = last[:prefix] + bytes(buf[pos:e])
            # No order check: Git lists refs in stored order too (a seek may then miss).
            last = key
            ui, pos = get_varint(buf, e, end)
            vt = st & 7
            if vt == 1:
                e = pos + hash_size
                rec = _new_tuple(RefRecord, (key, min_ui + ui, 1, bytes(buf[pos:e]), None, None))
            elif vt == 2:
                e = pos + 2 * hash_size
                rec = _new_tuple(
                    RefRecord,
                    (
                        key,
                        min_ui + ui,
                        2,
                        bytes(buf[pos : pos + hash_size]),
                        bytes(buf[pos + hash_size : e]),
                        None,
                    ),
                )
            elif vt == 3:
                n, pos = get_varint(buf, pos, end)
                e = pos + n
                rec = _new_tuple(RefRecord, (key, min_ui + ui, 3, None, None, bytes(buf[pos:e])))
            elif vt == 0:
                e = pos
                rec = _new_tuple(RefRecord, (key, min_ui + ui, 0, None, None, None))
            else:
                raise blk.error(f"unknown ref value type {vt}", start)
            if e > end:
                raise blk.error("ref record past end of block", start)
            pos = e
            if target is not None and key < target:
                continue
            yield rec
    except (IndexError, ValueError):
        raise blk.error("truncated ref record", pos) from None


def _log_records(blk: Block, hash_size: int, target: bytes | None) -> Iterator[LogRecord]:
    """Log records of one block, from the first whose key is >= ``target`` if given."""
    if target is None:
        return iter(decode_log_block(blk, hash_size, blk.rec_start))
    recs = decode_log_block(blk, hash_size, blk.seek_restart(target))
    i = 0
    while i < len(recs) and log_key(recs[i].refname, recs[i].update_index) < target:
        i += 1
    return iter(recs[i:])


# The shapes' decoders, by their lengths: a dict (``functools.lru_cache`` is an
# import of its own), emptied when it reaches _SHAPES_MAX entries.
_SHAPES_MAX = 256
_common_shapes: dict[
    tuple[int, int, int, int], tuple[Callable[[Buffer, int], tuple[Any, ...]], int]
] = {}
_restart_shapes: dict[
    tuple[int, int, int, int, int], tuple[Callable[[Buffer, int], tuple[Any, ...]], int, bytes]
] = {}


def _common_log_record(
    hash_size: int, name_len: int, email_len: int, msg_len: int
) -> tuple[Callable[[Buffer, int], tuple[Any, ...]], int]:
    """``(unpack_from, size)`` for the usual shape of a log record (see below)."""
    key = (hash_size, name_len, email_len, msg_len)
    got = _common_shapes.get(key)
    if got is None:
        s = Struct(f">BBB{hash_size}s{hash_size}sB{name_len}sB{email_len}sIBhB{msg_len}s")
        if len(_common_shapes) >= _SHAPES_MAX:
            _common_shapes.clear()
        got = _common_shapes[key] = (s.unpack_from, s.size)
    return got


def _restart_log_record(
    hash_size: int, refkey_len: int, name_len: int, email_len: int, msg_len: int
) -> tuple[Callable[[Buffer, int], tuple[Any, ...]], int, bytes]:
    """``(unpack_from, size, suffix_type)`` for the usual restart record of a ref.

    Restart records store their whole key: ``refname NUL`` (``refkey_len`` bytes)
    and the reversed update index (unpacked as a 64-bit number).
    """
    key = (hash_size, refkey_len, name_len, email_len, msg_len)
    got = _restart_shapes.get(key)
    if got is None:
        suffix_type = put_varint(((refkey_len + 8) << 3) | 1)
        s = Struct(
            f">B{len(suffix_type)}s{refkey_len}sQ{hash_size}s{hash_size}sB{name_len}s"
            f"B{email_len}sIBhB{msg_len}s"
        )
        if len(_restart_shapes) >= _SHAPES_MAX:
            _restart_shapes.clear()
        got = _restart_shapes[key] = (s.unpack_from, s.size, suffix_type)
    return got


def decode_log_block(blk: Block, hash_size: int, pos: int) -> list[LogRecord]:
    """Decode the log records of ``blk`` from buffer position ``pos`` (a restart point)."""
    return next(decode_log_blocks(((blk, pos),), hash_size))


def decode_log_blocks(
    blocks: Iterable[tuple[Block, int]], hash_size: int
) -> Iterator[list[LogRecord]]:
    """The log records of each ``(block, start position)``, one list per block.

    One generator decodes all the blocks of a scan: its frame (large: many locals)
    is set up once per scan.  A call per block would, wherever frames get
    materialised (profilers, memray), cost one native allocation per block.

    This is the hot loop of reading a reflog, so it has two paths:

    * The fast path decodes the usual record with *one* ``struct`` call: a key
      sharing all but the last byte with the previous key (same ref, next update
      index), an update (value type 1), name, e-mail and message lengths that are
      one-byte varints and (except the message's) the same as the last record's, a
      5-byte time varint (1978..2999).  Restart records of the same ref (whole key
      stored) have a second ``struct`` of the same kind.  The unpacked bytes are
      checked before they are used, so a record that is not of that shape takes the
      general path; both read the same bytes the same way, so they give the same
      records.
    * The general path decodes any record, byte by byte.

    Keys are checked to be increasing; while the ref name does not change that is a
    comparison of update indexes (the key ends in the reversed update index), and
    the previous key is only materialised when the general path needs it (``stale``).
    """
    head = _VALUE_HEAD[hash_size]
    tz_msglen = _TZ_MSGLEN
    low = _LOW_BYTES
    time_high = _TIME_HIGH.get
    h2 = 2 * hash_size + 1
    new = _new_tuple
    cls = LogRecord
    maxui = MAX_UPDATE_INDEX
    from_bytes = int.from_bytes
    common = _common_log_record
    common_restart = _restart_log_record
    guess, gsize = common(hash_size, 0, 0, 0)
    gnl = gel = gml = 0  # name/email/message lengths ``guess`` expects
    for blk, pos in blocks:
        out: list[LogRecord] = []
        buf = blk.buf
        end = blk.rec_end
        last = b""  # previous key (stale while the fast path only tracks ``ui``)
        stale = False
        refname = b""
        refkey = b""  # refname + NUL
        keep = -9  # len(refkey); with ``klen`` chosen so that nothing matches at first
        klen = -1  # length of the current ref's keys
        kprev = -2  # klen - 1: the shared prefix of the next update of the same ref
        ui = 0  # update index of the previous record
        append = out.append
        start = pos
        try:
            while pos < end:
                # (the fast paths report errors at ``pos``; ``start`` is the general path's)
                try:
                    (prefix, st, kb, old, newid, nl, name, el, email, tw, tb, tz, ml, msg) = guess(
                        buf, pos
                    )
                except StructError:  # the guess runs past the block: general path
                    prefix = -1
                # st == 9: 1-byte key suffix, value type 1; tw/tb: a 5-byte time varint
                if (
                    prefix == kprev
                    and st == 9
                    and nl == gnl
                    and el == gel
                    and tb < 0x80
                    and (ml == gml or ml < 0x80)
                    and ((th := time_high(tw)) is not None or (th := _time_high(tw)) is not None)
                ):
                    # The key's last byte is the low byte of ~update_index: newer first.
                    u = (ui | 0xFF) - kb
                    if u >= ui:
                        raise blk.error("keys out of order", pos)
                    ui = u
                    stale = True
                    if ml == gml:
                        pos += gsize
                    else:
                        p = pos + gsize - gml
                        pos = p + ml
                        msg = buf[p:pos]
                    if pos > end:
                        raise blk.error("log record past end of block", pos - gsize + gml - ml)
                    append(new(cls, (refname, u, 1, old, newid, name, email, th + tb, tz, msg)))
                    continue
                if prefix == 0 and keep > 0:  # maybe a restart record of the same ref
                    rguess, rsize, rst = common_restart(hash_size, keep, gnl, gel, gml)
                    try:
                        (
                            prefix,
                            stb,
                            rk,
                            rev,
                            old,
                            newid,
                            nl,
                            name,
                            el,
                            email,
                            tw,
                            tb,
                            tz,
                            ml,
                            msg,
                        ) = rguess(buf, pos)
                    except StructError:
                        prefix = -1
                    if (
                        prefix == 0
                        and stb == rst
                        and rk == refkey
                        and nl == gnl
                        and el == gel
                        and tb < 0x80
                        and (ml == gml or ml < 0x80)
                        and (
                            (th := time_high(tw)) is not None or (th := _time_high(tw)) is not None
                        )
                    ):
                        u = maxui - rev
                        if u >= ui:
                            raise blk.error("keys out of order", pos)
                        ui = u
                        stale = True
                        if ml == gml:
                            pos += rsize
                        else:
                            p = pos + rsize - gml
                            pos = p + ml
                            msg = buf[p:pos]
                        if pos > end:
                            raise blk.error("log record past end of block", pos - rsize + gml - ml)
                        append(new(cls, (refname, u, 1, old, newid, name, email, th + tb, tz, msg)))
                        continue

                start = pos
                prefix = buf[pos]
                if prefix < 0x80:
                    pos += 1
                else:
                    prefix, pos = get_varint(buf, pos, end)
                st = buf[pos]
                if st < 0x80:
                    pos += 1
                else:
                    st, pos = get_varint(buf, pos, end)
                slen = st >> 3
                e = pos + slen
                if keep <= prefix and prefix + slen == klen and e <= end:
                    # same ref as the previous record: only the update index changes;
                    # the key's last ``slen`` bytes are the low bytes of ~update_index
                    u = (ui | low[slen]) - from_bytes(buf[pos:e], "big")
                    if u >= ui:
                        raise blk.error("keys out of order", start)
                    ui = u
                    stale = True
                else:
                    if stale:
                        last = refkey + (maxui - ui).to_bytes(8, "big")
                        stale = False
                    if prefix > len(last):
                        raise blk.error("record key out of range", start)
                    key = last[:prefix] + buf[pos:e]
                    if key <= last:
                        raise blk.error("keys out of order", start)
                    last = key
                    if len(key) < 10 or key[-9] != 0:
                        raise blk.error("malformed log key", start)
                    refname = key[:-9]
                    klen = len(key)
                    kprev = klen - 1
                    keep = klen - 8
                    refkey = key[:keep]
                    ui = maxui - from_bytes(key[-8:], "big")
                pos = e
                vt = st & 7
                if vt == 1:
                    old, newid, n = head(buf, pos)
                    pos += h2
                    if n >= 0x80:
                        n, pos = get_varint(buf, pos - 1, end)
                    nl = n
                    name = buf[pos : pos + n]
                    pos += n
                    n = buf[pos]
                    if n < 0x80:
                        pos += 1
                    else:
                        n, pos = get_varint(buf, pos, end)
                    el = n
                    email = buf[pos : pos + n]
                    pos += n
                    b = buf[pos]
                    pos += 1
                    t = b & 0x7F
                    while b & 0x80:
                        b = buf[pos]
                        pos += 1
                        t = ((t + 1) << 7) | (b & 0x7F)
                    tz, ml = tz_msglen(buf, pos)
                    if ml < 0x80:
                        pos += 3
                    else:
                        ml, pos = get_varint(buf, pos + 2, end)
                    msg = buf[pos : pos + ml]
                    pos += ml
                    if pos > end:
                        raise blk.error("log record past end of block", start)
                    append(new(cls, (refname, ui, 1, old, newid, name, email, t, tz, msg)))
                    if (
                        (nl != gnl or el != gel or ml != gml)
                        and nl < 0x80
                        and el < 0x80
                        and ml < 0x80
                    ):
                        guess, gsize = common(hash_size, nl, el, ml)
                        gnl = nl
                        gel = el
                        gml = ml
                elif vt == 0:
                    if pos > end:
                        raise blk.error("log record past end of block", start)
                    append(new(cls, (refname, ui, 0, b"", b"", b"", b"", 0, 0, b"")))
                else:
                    raise blk.error(f"unknown log value type {vt}", start)
        except (IndexError, ValueError, StructError):
            raise blk.error("truncated log record", start) from None
        yield out


def _index_records(blk: Block, target: bytes | None) -> Iterator[tuple[bytes, int]]:
    """(last key, child position) records with last key >= ``target``."""
    buf = blk.buf
    end = blk.rec_end
    pos = blk.seek_restart(target) if target else blk.rec_start
    last = b""
    while pos < end:
        start = pos
        key, vt, pos = blk.decode_key(pos, last)
        if last and key <= last:
            raise blk.error("keys out of order", start)
        last = key
        try:
            child, pos = get_varint(buf, pos, end)
        except ValueError:
            raise blk.error("truncated index record", start) from None
        if target is None or key >= target:
            yield key, child


def _obj_records(blk: Block, target: bytes | None) -> Iterator[tuple[bytes, tuple[int, ...]]]:
    buf = blk.buf
    end = blk.rec_end
    pos = blk.seek_restart(target) if target else blk.rec_start
    last = b""
    try:
        while pos < end:
            start = pos
            key, cnt, pos = blk.decode_key(pos, last)
            if last and key <= last:
                raise blk.error("keys out of order", start)
            last = key
            if cnt == 0:
                cnt, pos = get_varint(buf, pos, end)
            positions = []
            p = 0
            for i in range(cnt):
                d, pos = get_varint(buf, pos, end)
                p = d if i == 0 else p + d
                positions.append(p)
            if target is None or key >= target:
                yield key, tuple(positions)
    except ValueError:
        raise blk.error("truncated obj record", pos) from None
