"""A streaming inflater over one ctypes-driven zlib stream, reset per stream.

``ZlibApiStream`` behaves like a ``zlib.decompressobj()`` (``decompress(data,
max_length)``, ``flush()``, ``eof``, ``unused_data``, ``unconsumed_tail``) but
keeps one ``z_stream``/``zng_stream`` (see ``reuse.ZlibApiLibrary``) for every
stream: ``reset()`` is ``inflateReset``, which keeps the ~7 KiB state and the
32 KiB window allocated, where the bindings' ``decompressobj()`` allocates both
again.  It also tracks ``consumed`` itself (input of this stream used so far).

How it differs inside, not in what callers see:

* ``inflate`` runs with ``Z_FINISH``.  zlib then skips copying the output into
  its sliding window when a stream completes within the call (the common case:
  one pack entry or loose object per call); when it does not complete, zlib
  sets up the window and continues as with ``Z_NO_FLUSH`` on the next call, and
  reports ``Z_BUF_ERROR``, which here only means "not finished yet".
* Outputs of 64 KiB or more are inflated straight into the returned ``bytes``
  when ``max_length`` says how much to expect (see ``reuse.fresh_bytes``).

Like the bindings, the input is only read during a call: the rest of it is
copied into ``unused_data`` (after the end of the stream) or
``unconsumed_tail`` (when ``max_length`` stopped the output), so nothing keeps
the caller's buffer (say, a view of an ``mmap``) exported between calls.
"""

from __future__ import annotations

import ctypes
from typing import Any, cast

from gitodb.errors import CompressionError
from gitodb.types import Buffer

from .reuse import (
    _BUFFER_API,
    DIRECT_OUTPUT_MIN,
    ZlibApiLibrary,
    _PyBuffer,
    fresh_bytes,
)

_Z_OK, _Z_STREAM_END, _Z_NEED_DICT, _Z_BUF_ERROR = 0, 1, 2, -5
_Z_FINISH = 4
_UINT_MAX = 0xFFFFFFFF
#: output chunk when ``max_length`` sets no limit (and the scratch buffer's size)
_CHUNK = 64 * 1024


class ZlibApiStream:
    """One reusable inflate stream with ``zlib.decompressobj``'s interface."""

    reuses_state = True
    __slots__ = ("_lib", "_strm", "_ref", "_inflate", "_reset", "_scratch", "_scratch_addr",
                 "_view", "_view_addr", "eof", "unused_data", "unconsumed_tail", "consumed")

    def __init__(self, lib: ZlibApiLibrary) -> None:
        self._lib = lib
        self._strm = lib.stream_type()
        self._ref = ctypes.byref(self._strm)
        if lib.init(self._ref) != _Z_OK:
            raise CompressionError("cannot initialise a zlib inflate stream")
        self._inflate = lib.inflate_unchecked
        self._reset = lib.reset_unchecked
        self._scratch = ctypes.create_string_buffer(_CHUNK)
        self._scratch_addr = ctypes.addressof(self._scratch)
        # One Py_buffer for borrowing the address of non-bytes input, reused.
        self._view = _PyBuffer()
        self._view_addr = ctypes.addressof(self._view)
        self.eof = False
        self.unused_data = b""
        self.unconsumed_tail = b""
        self.consumed = 0

    def __del__(self) -> None:
        lib = getattr(self, "_lib", None)
        if lib is not None and self._strm.state:
            lib.end(self._ref)

    def reset(self) -> None:
        """Start a new stream on the same state (``inflateReset``)."""
        self._reset(self._ref)
        self.eof = False
        self.unused_data = self.unconsumed_tail = b""
        self.consumed = 0

    def decompress(self, data: Buffer, max_length: int = 0) -> bytes:
        """Feed ``data``; return up to ``max_length`` bytes of output (0: no limit)."""
        if max_length < 0:
            raise ValueError("max_length must be non-negative")
        if self.eof:  # as the bindings: input after the end is unused
            if len(data):
                self.unused_data += bytes(data)
            return b""
        if len(data) > _UINT_MAX:  # avail_in is 32 bits
            return self._decompress_huge(data, max_length)
        if type(data) is bytes:
            return self._run(data, len(data), data, max_length)
        if _GET_BUFFER is None:  # not CPython: ctypes can only take a copy
            b = memoryview(data).tobytes()
            return self._run(b, len(b), b, max_length)
        view_addr = self._view_addr
        _GET_BUFFER(data, view_addr, 0)  # PyBUF_SIMPLE; raises on failure
        try:
            return self._run(self._view.buf or 0, self._view.len, data, max_length)
        finally:
            _RELEASE_BUFFER(view_addr)

    def flush(self) -> bytes:
        """Inflate what ``unconsumed_tail`` still holds, without an output limit.

        As the bindings: a stream that has not ended is no error here; ``eof``
        stays False and the caller decides (it knows whether input is missing).
        """
        if self.eof:
            return b""
        # Even with no input left, zlib may hold output back (a match cut short
        # by a full output buffer): always ask.
        tail = self.unconsumed_tail
        return self._run(tail, len(tail), tail, 0)

    def _run(self, src: bytes | int, n: int, data: Buffer, max_length: int) -> bytes:
        """Inflate ``n`` bytes at ``src`` (``data``'s bytes) into up to ``max_length``."""
        strm, ref, inflate = self._strm, self._ref, self._inflate
        strm.next_in = src  # type: ignore[assignment]
        strm.avail_in = n
        limit = max_length if max_length else _UINT_MAX
        # Never allocate more than this input can inflate to (deflate expands at
        # most ~1032:1): a corrupt size must not cost a huge buffer up front.
        if DIRECT_OUTPUT_MIN < max_length <= (n << 10) + n + _CHUNK \
                and fresh_bytes is not None:
            # Callers that know the size ask for size + 1 (to notice a longer
            # stream): inflate the first max_length - 1 bytes into the result.
            result, dest = fresh_bytes(max_length - 1)
            strm.next_out = dest
            strm.avail_out = max_length - 1
            ret = inflate(ref, _Z_FINISH)
            produced = max_length - 1 - strm.avail_out
            if produced < max_length - 1:
                result = result[:produced]
            elif ret == _Z_OK or ret == _Z_BUF_ERROR:
                parts = [result]
                ret = self._more(parts, 1, ret)
                result = b"".join(parts)
        else:
            size = min(limit, _CHUNK)
            strm.next_out = self._scratch_addr
            strm.avail_out = size
            ret = inflate(ref, _Z_FINISH)
            produced = size - strm.avail_out
            result = cast(bytes, self._scratch[:produced])
            if produced == size and size < limit and (ret == _Z_OK or ret == _Z_BUF_ERROR):
                parts = [result]
                ret = self._more(parts, limit - size, ret)
                result = b"".join(parts)
        avail_in = strm.avail_in
        self.consumed += n - avail_in
        if ret == _Z_STREAM_END:
            self.eof = True
            self.unconsumed_tail = b""
            if avail_in:
                self.unused_data = _rest(data, n - avail_in)
        elif ret == _Z_OK or ret == _Z_BUF_ERROR:
            # Z_BUF_ERROR: no progress possible now (input used up, or output full).
            if avail_in:
                self.unconsumed_tail = _rest(data, n - avail_in)
            elif self.unconsumed_tail:
                self.unconsumed_tail = b""
        else:
            self._fail(ret)
        return result

    def _more(self, parts: list[bytes], room: int, ret: int) -> int:
        """Keep inflating into scratch chunks while output fills; ``room``: max bytes."""
        strm, ref, inflate = self._strm, self._ref, self._inflate
        while room and strm.avail_out == 0 and (ret == _Z_OK or ret == _Z_BUF_ERROR):
            size = min(room, _CHUNK)
            strm.next_out = self._scratch_addr
            strm.avail_out = size
            ret = inflate(ref, _Z_FINISH)
            produced = size - strm.avail_out
            if produced:
                parts.append(cast(bytes, self._scratch[:produced]))
            room -= produced
            if not produced and ret == _Z_BUF_ERROR:
                break
        return int(ret)

    def _decompress_huge(self, data: Buffer, max_length: int) -> bytes:
        """More input than ``avail_in`` can hold: feed it 1 GiB at a time."""
        mv = _bytes_view(data)
        parts: list[bytes] = []
        got = pos = 0
        while pos < len(mv):
            piece = mv[pos:pos + (1 << 30)]
            pos += len(piece)
            out = self.decompress(piece, max_length - got if max_length else 0)
            parts.append(out)
            got += len(out)
            if self.eof:
                self.unused_data += bytes(mv[pos:])
                break
            if self.unconsumed_tail or (max_length and got >= max_length):
                self.unconsumed_tail += bytes(mv[pos:])
                break
        return b"".join(parts)

    def _fail(self, ret: int) -> None:
        strm = self._strm
        if ret == _Z_NEED_DICT:
            msg = "stream needs a preset dictionary"
        else:
            msg = strm.msg.decode(errors="replace") if strm.msg else f"error {ret}"
        raise CompressionError(f"corrupt zlib stream: {msg}")


def _buffer_api() -> tuple[Any, Any]:
    """``PyObject_GetBuffer``/``PyBuffer_Release`` taking the ``Py_buffer`` address as
    an int: the ``POINTER(Py_buffer)`` argtype check costs ~0.5 us a call."""
    if _BUFFER_API is None:
        return None, None
    get = ctypes.pythonapi["PyObject_GetBuffer"]
    get.argtypes, get.restype = [ctypes.py_object, ctypes.c_void_p, ctypes.c_int], ctypes.c_int
    release = ctypes.pythonapi["PyBuffer_Release"]
    release.argtypes, release.restype = [ctypes.c_void_p], None
    return get, release


_GET_BUFFER, _RELEASE_BUFFER = _buffer_api()


def _bytes_view(data: Buffer) -> memoryview:
    """``data`` as a flat view of bytes (a view of wider items counts items)."""
    mv = memoryview(data)
    return mv if mv.itemsize == 1 and mv.ndim == 1 else mv.cast("B")


def _rest(data: Buffer, start: int) -> bytes:
    """A copy of ``data``'s bytes from ``start`` on."""
    if type(data) is bytes:
        return data[start:]
    return bytes(_bytes_view(data)[start:])
