"""The block codec: prefix-compressed records, restart points, and binary search.

A block is ``type(1) block_len(3) record* restart_offset(3)* restart_count(2)``.
Offsets inside a block (``block_len`` and restart offsets) are counted from the
block's *frame*: the file start for the first block (whose frame also holds the
file header), the block's own first byte otherwise.  A log block's bytes after
its 4-byte header are one zlib stream; the reader inflates them first.

``Block`` gives a view on one decoded block; the record decoders live in
``gitodb.reftable.reader`` next to the code that uses them.
"""

from __future__ import annotations

from gitodb.errors import ReftableError
from gitodb.reftable.basics import BLOCK_TYPES, get_varint, put_varint
from gitodb.types import Buffer


class Block:
    """One block, ready to decode.

    ``buf[base + f]`` is the byte at frame offset ``f``.  Records live in
    ``buf[rec_start:rec_end]``; ``restarts`` holds buffer positions of restart records.
    """

    __slots__ = (
        "buf",
        "base",
        "block_type",
        "block_len",
        "rec_start",
        "rec_end",
        "_restarts",
        "restart_count",
        "path",
        "file_pos",
        "full_size",
    )

    def __init__(
        self,
        buf: Buffer,
        base: int,
        header_off: int,
        block_type: int,
        block_len: int,
        path: str | None,
        file_pos: int,
    ) -> None:
        self.buf = buf
        self.base = base
        self.block_type = block_type
        self.block_len = block_len
        self.path = path
        self.file_pos = file_pos
        self.full_size = block_len
        end = base + block_len
        if block_len < header_off + 6 or end > len(buf):
            raise ReftableError(
                f"block length {block_len} out of range", path=path, offset=file_pos
            )
        n = int.from_bytes(buf[end - 2 : end], "big")
        rec_end = end - 2 - 3 * n
        rec_start = base + header_off + 4
        if n == 0 or rec_end < rec_start:
            raise ReftableError(f"bad restart count {n}", path=path, offset=file_pos)
        self.rec_start = rec_start
        self.rec_end = rec_end
        self.restart_count = n
        self._restarts: list[int] | None = None

    @property
    def restarts(self) -> list[int]:
        """Buffer positions of the restart records, checked when first needed.

        Only a seek uses them (``seek_restart`` falls back to a scan when they are
        damaged): Git lists the records of such a block, so gitodb does too.
        """
        if self._restarts is None:
            end = self.base + self.block_len
            table = bytes(self.buf[self.rec_end : end - 2])
            restarts = []
            prev = -1
            for i in range(0, 3 * self.restart_count, 3):
                r = self.base + int.from_bytes(table[i : i + 3], "big")
                if r < self.rec_start or r >= self.rec_end or r <= prev:
                    raise ReftableError(
                        f"restart offset {r - self.base} out of range",
                        path=self.path,
                        offset=self.file_pos,
                    )
                restarts.append(r)
                prev = r
            self._restarts = restarts
        return self._restarts

    def error(self, message: str, pos: int) -> ReftableError:
        """An error at buffer position ``pos`` of this block (reported as a file offset)."""
        return ReftableError(
            message,
            path=self.path,
            offset=self.file_pos + pos - self.base if pos >= self.base else self.file_pos,
        )

    def decode_key(self, pos: int, last_key: bytes) -> tuple[bytes, int, int]:
        """Decode the key of the record at ``pos``: (key, value type, position of value)."""
        buf = self.buf
        end = self.rec_end
        try:
            prefix, p = get_varint(buf, pos, end)
            st, p = get_varint(buf, p, end)
        except ValueError:
            raise self.error("truncated record key", pos) from None
        suffix_end = p + (st >> 3)
        if prefix > len(last_key) or suffix_end > end:
            raise self.error("record key out of range", pos)
        key = last_key[:prefix] + bytes(buf[p:suffix_end])
        return key, st & 7, suffix_end

    def restart_key(self, i: int) -> bytes:
        """The full key of restart record ``i`` (restart records share no prefix)."""
        pos = self.restarts[i]
        key, _, _ = self.decode_key(pos, b"")
        return key

    def seek_restart(self, key: bytes) -> int:
        """Buffer position of the last restart record whose key is <= ``key``.

        Binary search over the restart points; the caller then scans forward.  The
        restart table only speeds the search up: when it is damaged the scan starts
        at the first record instead, and finds the same records (Git lists them too).
        """
        try:
            restarts = self.restarts
        except ReftableError:
            return self.rec_start
        lo, hi = 0, len(restarts)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.restart_key(mid) <= key:
                lo = mid + 1
            else:
                hi = mid
        return restarts[lo - 1] if lo > 0 else restarts[0]


def parse_block_header(
    buf: Buffer, pos: int, path: str | None, expect: int | None = None
) -> tuple[int, int]:
    """(block type, block_len) of the block header at ``pos``; checks the type."""
    if pos + 4 > len(buf):
        raise ReftableError("truncated block header", path=path, offset=pos)
    btype = buf[pos]
    if btype not in BLOCK_TYPES or (expect is not None and btype != expect):
        raise ReftableError(f"unexpected block type 0x{btype:02x}", path=path, offset=pos)
    return btype, int.from_bytes(buf[pos + 1 : pos + 4], "big")


class BlockWriter:
    """Accumulates records for one block; ``add`` says whether the record fitted."""

    def __init__(
        self, block_type: int, block_size: int, header_off: int, restart_interval: int
    ) -> None:
        self.block_type = block_type
        self.block_size = block_size
        self.header_off = header_off
        self.restart_interval = restart_interval
        self.records = bytearray()
        self.restarts: list[int] = []
        self.entries = 0
        self.last_key = b""

    @property
    def next_offset(self) -> int:
        """Frame offset where the next record would start."""
        return self.header_off + 4 + len(self.records)

    def add(self, key: bytes, value_type: int, value: bytes) -> bool:
        """Append a record; False (nothing changed) if it does not fit the block."""
        restart = self.entries % self.restart_interval == 0
        if restart:
            prefix = 0
        else:
            last = self.last_key
            n = min(len(last), len(key))
            prefix = 0
            while prefix < n and last[prefix] == key[prefix]:
                prefix += 1
            restart = prefix == 0
        if restart and len(self.restarts) >= 0xFFFF:
            return False
        rec = b"".join(
            (
                put_varint(prefix),
                put_varint(((len(key) - prefix) << 3) | value_type),
                key[prefix:],
                value,
            )
        )
        nrestarts = len(self.restarts) + (1 if restart else 0)
        if self.next_offset + len(rec) + 3 * nrestarts + 2 > self.block_size:
            return False
        if restart:
            self.restarts.append(self.next_offset)
        self.records += rec
        self.entries += 1
        self.last_key = key
        return True

    def finish(self) -> bytes:
        """The block from its type byte on (uncompressed), restart table included."""
        tail = b"".join(r.to_bytes(3, "big") for r in self.restarts)
        block_len = self.next_offset + len(tail) + 2
        return b"".join(
            (
                bytes((self.block_type,)),
                block_len.to_bytes(3, "big"),
                self.records,
                tail,
                len(self.restarts).to_bytes(2, "big"),
            )
        )
