"""Streaming pack writer: objects go into a new pack without ever being held whole.

The pack is written to ``objects/pack/tmp_pack_<random suffix>``: the ``PACK`` header, one
entry per object (entry header, then the zlib stream at ``pack.compression``),
then the checksum of everything before it.  Per ``core.fsync`` (Git's default
syncs both) the pack is synced before its ``.idx``/``.rev`` are written and those
before anything is renamed, so a named file is never short after a crash.
``finish()`` writes the ``.idx`` (v2)
and ``.rev`` next to it under temporary names, then moves them into place as
``pack-<checksum>.{pack,rev,idx}`` in that order: the ``.idx`` last, because it is
what makes a pack visible to readers.  Any failure before that removes every
file this writer created, so the object store is left as it was.

Like Git's bulk-checkin, an object that turns out to exist already (known only
once its data has been hashed) is cut off the pack again, and a pack left with
no objects is not kept at all.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import Any, BinaryIO

from gitodb import compress, fileio
from gitodb.durable import DEFAULT_POLICY, Component, FsyncPolicy
from gitodb.errors import ObjectWriteError, PackError
from gitodb.loose.write import (
    CHUNK_SIZE,
    Existing,
    Staging,
    read_exactly,
    write_all,
)
from gitodb.objects.format import ObjectFormat
from gitodb.objects.header import TYPE_NUMBERS, object_header
from gitodb.pack.entry import encode_entry_header
from gitodb.pack.idx import write_index_v2
from gitodb.pack.rev import write_rev
from gitodb.types import Buffer

PACK_SIGNATURE = b"PACK"
PACK_VERSION = 2


@dataclass(frozen=True)
class WrittenPack:
    """A pack that ``PackWriter.finish`` moved into place."""

    checksum: bytes
    pack_path: str
    idx_path: str
    rev_path: str | None
    oids: tuple[bytes, ...]


class PackWriter:
    """Writes objects into one new pack in ``pack_dir``; use as a context manager.

    ``level`` is the zlib level (Git's ``pack.compression``), ``fsync`` the
    ``core.fsync`` policy (components ``pack`` and ``pack-metadata``), and
    ``write_rev`` whether a ``.rev`` is written (``pack.writeReverseIndex``).
    ``expected_count`` is written into the header up front; a different final
    count is fixed up (re-reading the pack once) when the pack is finished.
    """

    def __init__(
        self,
        pack_dir: str | os.PathLike[str],
        fmt: ObjectFormat,
        *,
        level: int = -1,
        fsync: FsyncPolicy = DEFAULT_POLICY,
        write_rev: bool = True,
        expected_count: int = 1,
    ) -> None:
        self.pack_dir = os.fspath(pack_dir)
        self.fmt = fmt
        self.level = level
        self.fsync = fsync
        self.write_rev = write_rev
        self._header_count = expected_count
        self._entries: list[tuple[bytes, int, int]] = []  # (oid, crc32, offset)
        self._oids: set[bytes] = set()
        # Git's bulk-checkin finalizes its pack with the collision check: a pack of the
        # same name stays if its bytes are the same, else the write fails.
        self._staging = Staging(fsync, Existing.CHECK)
        try:
            os.makedirs(self.pack_dir, exist_ok=True)
        except OSError as e:
            raise ObjectWriteError(
                f"unable to create temporary file: {e.strerror}", path=self.pack_dir
            ) from e
        self._fd, self._pack_tmp = self._staging.temp(self.pack_dir, "tmp_pack_")
        self._hasher: Any = fmt.new_hasher()
        self._offset = 0
        self._pending: list[bytes] = []
        self._pending_len = 0
        try:
            self._emit(PACK_SIGNATURE + struct.pack(">II", PACK_VERSION, expected_count))
        except BaseException:
            self.abort()
            raise

    # -- low-level output -------------------------------------------------------------

    def _emit(self, data: Buffer) -> None:
        """Append ``data`` to the pack (buffered) and to the running checksum."""
        self._pending.append(bytes(data))
        self._pending_len += len(data)
        self._offset += len(data)
        if self._pending_len >= CHUNK_SIZE:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        self._pending_len = 0
        self._hasher.update(data)
        write_all(self._fd, data)

    # -- adding objects ---------------------------------------------------------------

    def add_object(self, type_name: str, data: Buffer, *, exists: Any = None) -> bytes:
        """Add an object from bytes; return its id (see ``add_stream``)."""
        return self._add(type_name, len(data), (memoryview(data),), exists)

    def add_stream(
        self,
        type_name: str,
        stream: BinaryIO,
        size: int,
        *,
        exists: Any = None,
        source: str | None = None,
    ) -> bytes:
        """Add ``size`` bytes read from ``stream`` as one object; return its binary id.

        The data is read, hashed and compressed in chunks.  If ``exists(oid)`` is
        true, or the object is already in this pack, its entry is cut off again.
        """
        return self._add(type_name, size, read_exactly(stream, size, source), exists)

    def _add(self, type_name: str, size: int, chunks: Any, exists: Any) -> bytes:
        if self._fd < 0:
            raise PackError("pack writer is already finished", path=self._pack_tmp)
        type_num = TYPE_NUMBERS[type_name]
        try:
            self._flush()
            start = self._offset
            hasher_before = self._hasher.copy()
            oid = self._write_entry(type_num, type_name, size, chunks)
        except BaseException as e:
            self.abort()
            if isinstance(e, OSError):
                raise ObjectWriteError(
                    f"unable to write pack: {e.strerror}", path=self._pack_tmp
                ) from e
            raise
        if oid in self._oids or (exists is not None and exists(oid)):
            try:
                self._truncate(start, hasher_before)
            except OSError as e:
                self.abort()
                raise ObjectWriteError(
                    f"unable to write pack: {e.strerror}", path=self._pack_tmp
                ) from e
        else:
            self._oids.add(oid)
        return oid

    def _write_entry(self, type_num: int, type_name: str, size: int, chunks: Any) -> bytes:
        start = self._offset
        entry_header = encode_entry_header(type_num, size)
        crc32 = compress.crc32
        crc = crc32(entry_header)
        self._emit(entry_header)
        object_hasher = self.fmt.new_hasher(object_header(type_name, size))
        deflater = compress.Deflater(self.level)
        for chunk in chunks:
            object_hasher.update(chunk)
            out = deflater.compress(chunk)
            if out:
                crc = crc32(out, crc)
                self._emit(out)
        out = deflater.flush()
        crc = crc32(out, crc)
        self._emit(out)
        oid: bytes = object_hasher.digest()
        self._flush()
        self._entries.append((oid, crc, start))
        return oid

    def _truncate(self, offset: int, hasher: Any) -> None:
        """Cut the last entry off again (it was already stored)."""
        self._entries.pop()
        os.ftruncate(self._fd, offset)
        os.lseek(self._fd, offset, os.SEEK_SET)
        self._offset = offset
        self._hasher = hasher

    # -- finishing --------------------------------------------------------------------

    @property
    def count(self) -> int:
        """Number of objects in the pack so far."""
        return len(self._entries)

    def finish(self) -> WrittenPack | None:
        """Complete the pack, write ``.idx``/``.rev`` and move all into place.

        Returns ``None`` (and leaves nothing behind) if the pack holds no objects.
        """
        if not self._entries:
            self.abort()
            return None
        try:
            self._flush()
            if self.count != self._header_count:
                self._fix_header()
            checksum: bytes = self._hasher.digest()
            write_all(self._fd, checksum)
            self.fsync.sync(Component.PACK, self._fd, self._pack_tmp)
            os.close(self._fd)
            self._fd = -1
            idx_bytes = write_index_v2(self._entries, checksum, self.fmt)
            staging = self._staging
            idx_tmp = staging.write(self.pack_dir, "tmp_idx_", idx_bytes)
            rev_tmp = None
            if self.write_rev:
                offsets = [off for _oid, _crc, off in sorted(self._entries)]
                rev_tmp = staging.write(
                    self.pack_dir, "tmp_rev_", write_rev(offsets, checksum, self.fmt)
                )
            base = os.path.join(self.pack_dir, f"pack-{checksum.hex()}")
            staging.place(self._pack_tmp, base + ".pack")  # the pack before its .idx
            rev_path = None
            if rev_tmp is not None:
                rev_path = base + ".rev"
                staging.place(rev_tmp, rev_path)
            staging.place(idx_tmp, base + ".idx")
        except BaseException as e:
            self.abort()
            if isinstance(e, OSError):
                raise ObjectWriteError(
                    f"unable to write pack: {e.strerror}", path=self._pack_tmp
                ) from e
            raise
        return WrittenPack(
            checksum,
            base + ".pack",
            base + ".idx",
            rev_path,
            tuple(oid for oid, _crc, _off in self._entries),
        )

    def _fix_header(self) -> None:
        """Write the real object count into the header and re-checksum the pack."""
        fileio.pwrite(self._fd, struct.pack(">I", self.count), 8)
        hasher = self.fmt.new_hasher()
        pos = 0
        while pos < self._offset:
            data = fileio.pread(self._fd, min(CHUNK_SIZE, self._offset - pos), pos)
            if not data:
                raise PackError("pack shrank while being written", path=self._pack_tmp, offset=pos)
            hasher.update(data)
            pos += len(data)
        self._hasher = hasher
        self._header_count = self.count

    def abort(self) -> None:
        """Remove every file this writer created; the store is left as it was."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self._staging.abort()
        self._entries.clear()

    def __enter__(self) -> PackWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None or self._fd >= 0:
            self.abort()
