"""Inflate state that is set up once and reset per stream, through ctypes.

The Python bindings create a new zlib stream per ``decompressobj()`` (CPython's
zlib allocates ~7 KiB of state plus a 32 KiB window through ``PyMem_RawMalloc``
each time); none exposes ``inflateReset``.  The libraries underneath do:

* the system ``libz.so.1`` that the standard library's ``zlib`` module links
  (``inflateInit2_`` / ``inflate`` / ``inflateReset`` / ``inflateEnd``);
* the ``zlib_ng`` extension, which exports zlib-ng's native API
  (``zng_inflateInit2`` / ``zng_inflate`` / ``zng_inflateReset``);
* the ``deflate`` extension, which exports libdeflate
  (``libdeflate_alloc_decompressor`` / ``libdeflate_zlib_decompress_ex``, which
  also reports the input consumed, so one decompressor serves every stream).

``stream.ZlibApiStream`` drives the same ``z_stream``/``zng_stream`` set-up as a
streaming inflater (``decompress(data, max_length)`` & co.).

A context owns one stream/decompressor, a reusable output buffer, and returns
``bytes``; after the first call, ``inflate_prefix`` allocates nothing but its
result.  A context is not thread-safe: use one per thread (``new_inflater()``).
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from typing import Any, cast

from gitodb.errors import CompressionError
from gitodb.types import Buffer

from ._dobj import size_error

_Z_OK, _Z_STREAM_END, _Z_BUF_ERROR = 0, 1, -5
_Z_FINISH = 4
_UINT_MAX = 0xFFFFFFFF
# Output buffers up to this size are kept for the next call; larger ones are not.
_KEEP_BUFFER = 1 << 20


class _ZStream(ctypes.Structure):
    """zlib's ``z_stream`` (LP64 and LLP64 agree on every offset we touch)."""

    _fields_ = [
        ("next_in", ctypes.c_char_p), ("avail_in", ctypes.c_uint),
        ("total_in", ctypes.c_ulong),
        ("next_out", ctypes.c_void_p), ("avail_out", ctypes.c_uint),
        ("total_out", ctypes.c_ulong),
        ("msg", ctypes.c_char_p), ("state", ctypes.c_void_p),
        ("zalloc", ctypes.c_void_p), ("zfree", ctypes.c_void_p), ("opaque", ctypes.c_void_p),
        ("data_type", ctypes.c_int), ("adler", ctypes.c_ulong), ("reserved", ctypes.c_ulong),
    ]


class _ZngStream(ctypes.Structure):
    """zlib-ng's native ``zng_stream`` (``adler`` is 32-bit, sizes are ``size_t``)."""

    _fields_ = [
        ("next_in", ctypes.c_char_p), ("avail_in", ctypes.c_uint32),
        ("total_in", ctypes.c_size_t),
        ("next_out", ctypes.c_void_p), ("avail_out", ctypes.c_uint32),
        ("total_out", ctypes.c_size_t),
        ("msg", ctypes.c_char_p), ("state", ctypes.c_void_p),
        ("zalloc", ctypes.c_void_p), ("zfree", ctypes.c_void_p), ("opaque", ctypes.c_void_p),
        ("data_type", ctypes.c_int), ("adler", ctypes.c_uint32), ("reserved", ctypes.c_ulong),
    ]


def _fresh_bytes_maker() -> Callable[[int], tuple[bytes, int]] | None:
    """``make(n) -> (bytes object of n uninitialised bytes, address of its data)``.

    Large outputs are inflated straight into the ``bytes`` object we return:
    a copy out of a scratch buffer costs a second large allocation, and on this
    VM the page faults of a fresh 1 MiB buffer cost about as much as inflating
    it (measured: libdeflate 1 MiB text 1.08 ms direct vs 2.5 ms with a copy).
    This is what C extensions do with ``PyBytes_FromStringAndSize(NULL, n)``;
    it relies on CPython's object layout, so it is checked once and only used
    on CPython.
    """
    if sys.implementation.name != "cpython":
        return None
    try:
        new = ctypes.pythonapi.PyBytes_FromStringAndSize
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_ssize_t]
        offset = bytes.__basicsize__ - 1  # ob_sval, the character data

        def make(n: int) -> tuple[bytes, int]:
            b = new(None, n)
            return b, id(b) + offset

        probe, addr = make(64)
        ctypes.memmove(addr, b"gitodb!!" * 8, 64)
        if probe != b"gitodb!!" * 8:
            return None
        return make
    except (AttributeError, OSError, ValueError):
        return None


fresh_bytes = _fresh_bytes_maker()
#: from this output size on, inflate straight into the result (see _fresh_bytes_maker)
DIRECT_OUTPUT_MIN = 64 * 1024


class _PyBuffer(ctypes.Structure):
    """CPython's ``Py_buffer``: a borrowed view of any buffer, read-only ones included."""

    _fields_ = [
        ("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
        ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
        ("format", ctypes.c_char_p), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
        ("suboffsets", ctypes.c_void_p), ("internal", ctypes.c_void_p),
    ]


def _buffer_api() -> tuple[Callable[..., int], Callable[..., None]] | None:
    if sys.implementation.name != "cpython":
        return None
    try:
        get = ctypes.pythonapi.PyObject_GetBuffer
        get.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
        get.restype = ctypes.c_int
        release = ctypes.pythonapi.PyBuffer_Release
        release.argtypes, release.restype = [ctypes.POINTER(_PyBuffer)], None
        return get, release
    except AttributeError:
        return None


_BUFFER_API = _buffer_api()


class _Input:
    """The address and length of a buffer's bytes for one C call, without a copy.

    A memoryview of a read-only ``mmap`` (how packs are read) cannot go through
    ctypes' own ``from_buffer``; ``PyObject_GetBuffer`` gives its address, and
    copying the rest of a pack per call instead would make scans quadratic.
    Use as ``with _Input(data) as (pointer, length): ...``.
    """

    __slots__ = ("data", "view")

    def __init__(self, data: Buffer) -> None:
        self.data = data
        self.view: _PyBuffer | None = None

    def __enter__(self) -> tuple[bytes | int, int]:
        data = self.data
        if type(data) is bytes:
            return data, len(data)
        if _BUFFER_API is not None:
            view = _PyBuffer()
            if _BUFFER_API[0](data, ctypes.byref(view), 0) == 0:  # PyBUF_SIMPLE
                self.view = view
                return view.buf or 0, view.len
        b = memoryview(data).tobytes()  # not CPython: ctypes can only take a copy
        self.data = b
        return b, len(b)

    def __exit__(self, *exc: object) -> None:
        if self.view is not None:
            _BUFFER_API[1](ctypes.byref(self.view))  # type: ignore[index]
            self.view = None


class _OutputBuffer:
    """A growable ctypes buffer reused across calls."""

    __slots__ = ("buf", "cap")

    def __init__(self) -> None:
        self.buf = ctypes.create_string_buffer(4096)
        self.cap = 4096

    def get(self, n: int) -> ctypes.Array[ctypes.c_char]:
        if n <= self.cap:
            return self.buf
        buf = ctypes.create_string_buffer(n)
        if n <= _KEEP_BUFFER:
            self.buf, self.cap = buf, n
        return buf


class ZlibApiLibrary:
    """The four inflate entry points of a zlib-API shared library."""

    def __init__(self, lib: ctypes.CDLL, prefix: str, stream_type: type[ctypes.Structure],
                 init: Callable[[Any], int]) -> None:
        self.stream_type = stream_type
        p = ctypes.POINTER(stream_type)
        self.inflate = getattr(lib, prefix + "inflate")
        self.inflate.argtypes, self.inflate.restype = [p, ctypes.c_int], ctypes.c_int
        self.reset = getattr(lib, prefix + "inflateReset")
        self.reset.argtypes, self.reset.restype = [p], ctypes.c_int
        self.end = getattr(lib, prefix + "inflateEnd")
        self.end.argtypes, self.end.restype = [p], ctypes.c_int
        self.init = init  # callable(stream) -> int
        # The same two entry points without argtypes, for the streaming inflater's
        # per-call path: checking a byref() against POINTER(stream) costs ~0.5 us
        # a call, more than inflateReset itself.  Callers pass byref(stream), int.
        self.inflate_unchecked = lib[prefix + "inflate"]
        self.inflate_unchecked.restype = ctypes.c_int
        self.reset_unchecked = lib[prefix + "inflateReset"]
        self.reset_unchecked.restype = ctypes.c_int

    @classmethod
    def system_zlib(cls, runtime_version: str) -> ZlibApiLibrary:
        """The system libz, checked to be the one the ``zlib`` module runs on."""
        lib = None
        for name in ("libz.so.1", "libz.dylib"):  # the usual sonames: no ldconfig run
            try:
                lib = ctypes.PyDLL(name)  # keeps the GIL, see LibdeflateLibrary
                break
            except OSError:
                continue
        if lib is None:
            from ctypes.util import find_library

            name = find_library("z") or "libz"
            lib = ctypes.PyDLL(name)
        lib.zlibVersion.restype = ctypes.c_char_p
        found = lib.zlibVersion().decode()
        if found != runtime_version:
            raise OSError(f"{name} is zlib {found}, the zlib module runs {runtime_version}")
        init2 = lib.inflateInit2_
        init2.argtypes = [ctypes.POINTER(_ZStream), ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        init2.restype = ctypes.c_int
        version = found.encode()
        size = ctypes.sizeof(_ZStream)
        return cls(lib, "", _ZStream, lambda s: init2(s, 15, version, size))

    @classmethod
    def zlib_ng(cls, extension_path: str) -> ZlibApiLibrary:
        """zlib-ng's native API, from the ``zlib_ng`` extension module itself."""
        lib = ctypes.PyDLL(extension_path)  # keeps the GIL, see LibdeflateLibrary
        init2 = lib.zng_inflateInit2
        init2.argtypes = [ctypes.POINTER(_ZngStream), ctypes.c_int32]
        init2.restype = ctypes.c_int32
        return cls(lib, "zng_", _ZngStream, lambda s: init2(s, 15))


class ZlibApiContext:
    """One inflate stream, ``inflateReset`` between streams."""

    reuses_state = True
    __slots__ = ("_lib", "_strm", "_ref", "_out")

    def __init__(self, lib: ZlibApiLibrary) -> None:
        self._lib = lib
        self._strm = lib.stream_type()
        self._ref = ctypes.byref(self._strm)
        if lib.init(self._ref) != _Z_OK:
            raise CompressionError("cannot initialise a zlib inflate stream")
        self._out = _OutputBuffer()

    def __del__(self) -> None:
        lib = getattr(self, "_lib", None)
        if lib is not None and self._strm.state:
            lib.end(self._ref)

    def inflate_prefix(self, data: Buffer, size: int) -> tuple[bytes, int]:
        """Inflate the stream at the start of ``data`` to exactly ``size`` bytes."""
        if size + 1 > _UINT_MAX or size < 0:
            raise CompressionError(f"cannot inflate {size} bytes in one call")
        if type(data) is bytes:
            return self._inflate(data, len(data), size)
        with _Input(data) as (src, n):
            return self._inflate(src, n, size)

    def _inflate(self, src: bytes | int, n: int, size: int) -> tuple[bytes, int]:
        lib, strm, ref = self._lib, self._strm, self._ref
        lib.reset(ref)
        strm.next_in = src  # type: ignore[assignment]
        strm.avail_in = min(n, _UINT_MAX)
        result: bytes | None = None
        # Z_FINISH: when the output fits, zlib needs no sliding window at all.
        if size >= DIRECT_OUTPUT_MIN and fresh_bytes is not None:
            result, dest = fresh_bytes(size)
            strm.next_out = dest
            strm.avail_out = size
            ret = lib.inflate(ref, _Z_FINISH)
            if ret in (_Z_OK, _Z_BUF_ERROR) and strm.avail_out == 0:
                # Output full but no end yet: the end-of-block code and trailer may
                # still be unread.  One spare byte tells "done" from "too long".
                strm.next_out = ctypes.addressof(self._out.buf)
                strm.avail_out = 1
                ret = lib.inflate(ref, _Z_FINISH)
                produced = size + 1 - strm.avail_out
            else:
                produced = size - strm.avail_out
        else:
            out = self._out.get(size + 1)
            strm.next_out = ctypes.addressof(out)
            strm.avail_out = size + 1
            ret = lib.inflate(ref, _Z_FINISH)
            produced = size + 1 - strm.avail_out
        if ret == _Z_STREAM_END and produced == size:
            if result is None:
                result = cast(bytes, out[:size])
            return result, n - strm.avail_in
        if ret in (_Z_OK, _Z_STREAM_END, _Z_BUF_ERROR):
            raise size_error(produced, size, ret == _Z_STREAM_END)
        msg = strm.msg.decode(errors="replace") if strm.msg else f"error {ret}"
        raise CompressionError(f"corrupt zlib stream: {msg}")


# libdeflate_result values
_LD_SUCCESS, _LD_BAD_DATA, _LD_SHORT_OUTPUT, _LD_INSUFFICIENT_SPACE = 0, 1, 2, 3


class LibdeflateLibrary:
    """libdeflate's decompressor entry points from the ``deflate`` extension."""

    def __init__(self, extension_path: str) -> None:
        # PyDLL keeps the GIL: for calls of a few microseconds, releasing and
        # retaking it cost ~2 us of ~10 us per 4 KiB block in our measurements.
        lib = ctypes.PyDLL(extension_path)
        self.alloc = lib.libdeflate_alloc_decompressor
        self.alloc.argtypes, self.alloc.restype = [], ctypes.c_void_p
        self.free = lib.libdeflate_free_decompressor
        self.free.argtypes, self.free.restype = [ctypes.c_void_p], None
        self.decompress_ex = lib.libdeflate_zlib_decompress_ex
        self.decompress_ex.argtypes = [
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
            ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
        self.decompress_ex.restype = ctypes.c_int


class LibdeflateContext:
    """One libdeflate decompressor for every stream; it reports input consumed."""

    reuses_state = True
    __slots__ = ("_lib", "_d", "_in_used", "_in_ref", "_out")

    def __init__(self, lib: LibdeflateLibrary) -> None:
        self._lib = lib
        self._d = lib.alloc()
        if not self._d:
            raise MemoryError("libdeflate_alloc_decompressor failed")
        self._in_used = ctypes.c_size_t()
        self._in_ref = ctypes.byref(self._in_used)
        self._out = _OutputBuffer()

    def __del__(self) -> None:
        lib = getattr(self, "_lib", None)
        if lib is not None and self._d:
            lib.free(self._d)

    def inflate_prefix(self, data: Buffer, size: int) -> tuple[bytes, int]:
        """Inflate the stream at the start of ``data`` to exactly ``size`` bytes."""
        if size < 0:
            raise CompressionError(f"cannot inflate {size} bytes")
        if type(data) is bytes:
            return self._inflate(data, len(data), size)
        with _Input(data) as (src, n):
            return self._inflate(src, n, size)

    def _inflate(self, src: bytes | int, n: int, size: int) -> tuple[bytes, int]:
        if size >= DIRECT_OUTPUT_MIN and fresh_bytes is not None:
            result, dest = fresh_bytes(size)
            # No actual_out pointer: libdeflate then insists on exactly `size` bytes.
            ret = self._lib.decompress_ex(self._d, src, n, dest, size, self._in_ref, None)
            if ret == _LD_SUCCESS:
                return result, self._in_used.value
        else:
            out = self._out.get(size)
            ret = self._lib.decompress_ex(self._d, src, n, out, size, self._in_ref, None)
            if ret == _LD_SUCCESS:
                return cast(bytes, out[:size]), self._in_used.value
        if ret == _LD_SHORT_OUTPUT:
            raise CompressionError(f"zlib stream inflates to fewer than {size} bytes")
        if ret == _LD_INSUFFICIENT_SPACE:
            raise CompressionError(f"zlib stream inflates to more than {size} bytes")
        raise CompressionError("corrupt or truncated zlib stream")
