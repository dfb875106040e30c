"""The narrow waist: every zlib and CRC-32 operation in gitodb goes through here.

PUBLIC CONTRACT (other modules rely on exactly these names and meanings):

``inflate(data, size) -> bytes``
    One-shot inflate of one complete zlib stream that must produce exactly
    ``size`` bytes.  Trailing bytes after the stream are ignored.  Fewer or
    more bytes than ``size``, or a corrupt stream, raise ``CompressionError``.
``inflate_prefix(data, size) -> (bytes, consumed)``
    Inflate the zlib stream at the start of ``data`` (more may follow) that must
    produce exactly ``size`` bytes; return the output and the exact number of
    input bytes the stream occupied.
``Inflater`` / ``new_inflater()``
    Streaming inflater: ``decompress(data, max_length=0)``, ``flush()``, ``eof``,
    ``unused_data``, ``unconsumed_tail``, ``consumed`` (input bytes of this stream
    consumed so far, exact once ``eof``), ``reset()`` to reuse it for the next
    stream, and ``inflate_prefix(data, size)`` as the module function.
``deflate(data, level=-1) -> bytes`` and ``Deflater(level)`` with
    ``compress(data)`` / ``flush()``.  Level is Git's ``core.compression``: -1
    default, 0 stored, 1-9.
``crc32(data, value=0) -> int`` and ``crc32_combine(crc1, crc2, len2) -> int``.
``set_backend(name)``, ``active_backend()``, ``available_backends()``.

This first version runs everything on the standard library; the backend
selection fills in the rest behind the same names.
"""

from __future__ import annotations

import zlib as _zlib

from gitodb.errors import CompressionError

Buffer = bytes | bytearray | memoryview


def inflate(data: Buffer, size: int) -> bytes:
    """Inflate one zlib stream that must produce exactly ``size`` bytes."""
    out, _ = inflate_prefix(data, size)
    return out


def inflate_prefix(data: Buffer, size: int) -> tuple[bytes, int]:
    """Inflate the zlib stream at the start of ``data`` into exactly ``size`` bytes.

    Returns the output and how many input bytes the stream used.
    """
    d = _zlib.decompressobj()
    try:
        out = d.decompress(data, size + 1)
    except _zlib.error as e:
        raise CompressionError(f"corrupt zlib stream: {e}") from None
    if len(out) != size or not d.eof:
        if len(out) > size:
            raise CompressionError(f"zlib stream inflates to more than {size} bytes")
        if not d.eof and len(out) == size and not d.unconsumed_tail:
            raise CompressionError("truncated zlib stream")
        raise CompressionError(f"zlib stream inflates to {len(out)} bytes, expected {size}")
    return out, len(data) - len(d.unused_data)


class Inflater:
    """A streaming inflater that reports end of stream and input consumed."""

    def __init__(self) -> None:
        self._d = _zlib.decompressobj()
        self.consumed = 0

    def decompress(self, data: Buffer, max_length: int = 0) -> bytes:
        """Feed ``data``; return up to ``max_length`` bytes (0: no limit)."""
        d = self._d
        try:
            out = d.decompress(data, max_length)
        except _zlib.error as e:
            raise CompressionError(f"corrupt zlib stream: {e}") from None
        self.consumed += len(data) - len(d.unused_data) - len(d.unconsumed_tail)
        return out

    def flush(self) -> bytes:
        """Return whatever output is still buffered."""
        try:
            return self._d.flush()
        except _zlib.error as e:
            raise CompressionError(f"corrupt zlib stream: {e}") from None

    @property
    def eof(self) -> bool:
        return self._d.eof

    @property
    def unused_data(self) -> bytes:
        return self._d.unused_data

    @property
    def unconsumed_tail(self) -> bytes:
        return self._d.unconsumed_tail

    def reset(self) -> None:
        """Make the inflater ready for a new stream."""
        self._d = _zlib.decompressobj()
        self.consumed = 0

    def inflate_prefix(self, data: Buffer, size: int) -> tuple[bytes, int]:
        """As the module's ``inflate_prefix``, reusing this inflater's state."""
        self.reset()
        return inflate_prefix(data, size)


def new_inflater() -> Inflater:
    """Return a streaming inflater on the active backend."""
    return Inflater()


def deflate(data: Buffer, level: int = -1) -> bytes:
    """Compress ``data`` as one zlib stream at Git's ``level`` (-1, 0-9)."""
    return _zlib.compress(data, level)


class Deflater:
    """A streaming deflater at Git's compression ``level``."""

    def __init__(self, level: int = -1) -> None:
        self._c = _zlib.compressobj(level)

    def compress(self, data: Buffer) -> bytes:
        """Feed ``data``; return compressed output produced so far."""
        return self._c.compress(data)

    def flush(self) -> bytes:
        """Finish the stream and return the remaining output."""
        return self._c.flush()


def crc32(data: Buffer, value: int = 0) -> int:
    """CRC-32 of ``data`` continuing from ``value``."""
    return _zlib.crc32(data, value)


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """CRC-32 of A+B given crc(A), crc(B) and len(B)."""
    raise NotImplementedError("filled in by the backend layer")
