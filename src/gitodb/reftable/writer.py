"""Write one reftable: ref blocks, obj blocks, log blocks, their indexes, and the footer.

The layout follows what Git writes (see the fixtures' block dumps): blocks of
``block_size`` padded with zeros before the next ref/obj/index block, log blocks
deflated at level 9 and never padded, no padding before the log section or the
footer, an index for a section only when it has more than three blocks, multi-level
indexes until the top level has at most three blocks, and obj blocks only when
the ref section needed an index.
"""

from __future__ import annotations

from collections.abc import Iterable

from gitodb import compress
from gitodb.errors import ReftableError
from gitodb.reftable.basics import (
    BLOCK_INDEX,
    BLOCK_LOG,
    BLOCK_OBJ,
    BLOCK_REF,
    HEADER_SIZE,
    MAGIC,
    put_varint,
)
from gitodb.reftable.block import BlockWriter
from gitodb.reftable.options import WriteOptions
from gitodb.reftable.records import (
    LogRecord,
    RefRecord,
    encode_log_value,
    encode_obj_value,
    encode_ref_value,
    log_key,
)

INDEX_THRESHOLD = 3
LOG_COMPRESSION = 9


class EntryTooLargeError(ReftableError):
    """A record does not fit in an empty block (Git's REFTABLE_ENTRY_TOO_BIG_ERROR)."""


class TableWriter:
    """Serialise sorted refs and logs into one table (``write`` returns its bytes)."""

    def __init__(self, options: WriteOptions | None = None) -> None:
        self.opts = options or WriteOptions()
        self.version = 1 if self.opts.fmt.rawsz == 20 else 2
        self.header_size = HEADER_SIZE[self.version]
        self._out = bytearray()
        self._pending = 0

    def _header(self, min_ui: int, max_ui: int) -> bytes:
        h = MAGIC + bytes((self.version,)) + self.opts.block_size.to_bytes(3, "big")
        h += min_ui.to_bytes(8, "big") + max_ui.to_bytes(8, "big")
        if self.version == 2:
            h += self.opts.fmt.reftable_id
        return h

    def _emit(self, btype: int, data: bytes, header_off: int) -> int:
        """Append one block (its type byte on); return its frame position."""
        out = self._out
        if btype != BLOCK_LOG and self._pending:
            out += bytes(self._pending)
        self._pending = 0
        frame = len(out) - header_off
        out += data
        if btype != BLOCK_LOG:
            self._pending = self.opts.block_size - header_off - len(data)
        return frame

    def _new_block(self, btype: int) -> BlockWriter:
        header_off = self.header_size if len(self._out) == self.header_size else 0
        return BlockWriter(btype, self.opts.block_size, header_off, self.opts.restart_interval)

    def _flush(self, bw: BlockWriter) -> int:
        data = bw.finish()
        if bw.block_type == BLOCK_LOG:
            data = data[:4] + compress.deflate(data[4:], LOG_COMPRESSION)
        return self._emit(bw.block_type, data, bw.header_off)

    def _section(
        self, btype: int, records: Iterable[tuple[bytes, int, bytes]]
    ) -> tuple[list[tuple[bytes, int]], int]:
        """Write ``(key, value_type, value)`` records; return (index entries, section start)."""
        index: list[tuple[bytes, int]] = []
        bw: BlockWriter | None = None
        start = -1
        for key, vt, value in records:
            if bw is None:
                bw = self._new_block(btype)
            if not bw.add(key, vt, value):
                if bw.entries == 0:
                    raise EntryTooLargeError(f"entry too large: '{_show(key[:80])}'")
                pos = self._flush(bw)
                start = pos if start < 0 else start
                index.append((bw.last_key, pos))
                bw = self._new_block(btype)
                if not bw.add(key, vt, value):
                    raise EntryTooLargeError(f"entry too large: '{_show(key[:80])}'")
        if bw is not None and bw.entries:
            pos = self._flush(bw)
            start = pos if start < 0 else start
            index.append((bw.last_key, pos))
        return index, start

    def _index(self, index: list[tuple[bytes, int]]) -> int:
        """Write index levels while more than ``INDEX_THRESHOLD`` entries; return root pos."""
        root = 0
        while len(index) > INDEX_THRESHOLD:
            level, root = self._section(BLOCK_INDEX, ((k, 0, put_varint(p)) for k, p in index))
            index = level
        return root

    def write(
        self,
        refs: Iterable[RefRecord],
        logs: Iterable[LogRecord],
        min_update_index: int,
        max_update_index: int,
    ) -> bytes:
        """The complete table for ``refs`` (sorted by name) and ``logs`` (any order)."""
        hs = self.opts.fmt.rawsz
        self._out = bytearray(self._header(min_update_index, max_update_index))
        self._pending = 0
        obj_positions: dict[bytes, list[int]] = {}
        ref_list = sorted(refs, key=lambda r: r.name)
        # Only refs must lie in [min, max]; log records may carry any update index.
        for i in range(1, len(ref_list)):
            if ref_list[i].name == ref_list[i - 1].name:
                raise ReftableError(f"duplicate ref '{_show(ref_list[i].name)}' in one table")
        for r in ref_list:
            if not min_update_index <= r.update_index <= max_update_index:
                raise ReftableError(f"update index {r.update_index} outside the table's range")
            for oid in (r.oid, r.peeled):
                if oid is not None and len(oid) != hs:
                    raise ReftableError(f"object id of '{_show(r.name)}' has the wrong length")

        # Ref section; remember which block holds which object id.
        block_of: list[int] = []
        ref_index, _ = self._section_tracking(ref_list, min_update_index, block_of)
        ref_index_pos = self._index(ref_index)
        for r, pos in zip(ref_list, block_of, strict=True):
            for oid in (r.oid, r.peeled):
                if oid is not None:
                    lst = obj_positions.setdefault(oid, [])
                    if not lst or lst[-1] != pos:
                        lst.append(pos)

        obj_pos = obj_index_pos = obj_id_len = 0
        if ref_index_pos and obj_positions and self.opts.write_obj_index:
            oids = sorted(obj_positions)
            common = 0
            for a, b in zip(oids, oids[1:], strict=False):
                n = 0
                while n < hs and a[n] == b[n]:
                    n += 1
                common = max(common, n)
            obj_id_len = max(2, common + 1)
            recs = []
            for oid in oids:
                vt, value = encode_obj_value(tuple(obj_positions[oid]))
                recs.append((oid[:obj_id_len], vt, value))
            obj_index, obj_pos = self._section(BLOCK_OBJ, recs)
            obj_index_pos = self._index(obj_index)

        log_list = sorted(logs, key=lambda g: log_key(g.refname, g.update_index))
        log_pos = log_index_pos = 0
        if log_list:
            log_index, log_pos = self._section(
                BLOCK_LOG,
                (
                    (log_key(g.refname, g.update_index), g.value_type, encode_log_value(g))
                    for g in log_list
                ),
            )
            log_index_pos = self._index(log_index)

        header = self._header(min_update_index, max_update_index)
        footer = header + b"".join(
            p.to_bytes(8, "big")
            for p in (
                ref_index_pos,
                (obj_pos << 5) | obj_id_len,
                obj_index_pos,
                log_pos,
                log_index_pos,
            )
        )
        footer += compress.crc32(footer).to_bytes(4, "big")
        self._out += footer
        return bytes(self._out)

    def _section_tracking(
        self, refs: list[RefRecord], min_ui: int, block_of: list[int]
    ) -> tuple[list[tuple[bytes, int]], int]:
        """The ref section, also recording each ref's block position in ``block_of``."""
        index: list[tuple[bytes, int]] = []
        bw: BlockWriter | None = None
        in_block = 0
        start = -1
        for r in refs:
            value = encode_ref_value(r, min_ui)
            if bw is None:
                bw = self._new_block(BLOCK_REF)
            if not bw.add(r.name, r.value_type, value):
                if bw.entries == 0:
                    raise EntryTooLargeError(f"entry too large: '{_show(r.name[:80])}'")
                pos = self._flush(bw)
                start = pos if start < 0 else start
                index.append((bw.last_key, pos))
                block_of.extend([pos] * in_block)
                bw = self._new_block(BLOCK_REF)
                in_block = 0
                if not bw.add(r.name, r.value_type, value):
                    raise EntryTooLargeError(f"entry too large: '{_show(r.name[:80])}'")
            in_block += 1
        if bw is not None and bw.entries:
            pos = self._flush(bw)
            start = pos if start < 0 else start
            index.append((bw.last_key, pos))
            block_of.extend([pos] * in_block)
        return index, start


def _show(name: bytes) -> str:
    """A ref name for a message, as text (not a Python bytes repr)."""
    return name.decode("utf-8", "backslashreplace")
