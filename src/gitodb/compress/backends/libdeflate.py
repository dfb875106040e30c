"""Backend ``libdeflate``: libdeflate through the ``deflate`` package.

libdeflate only works on whole buffers: it cannot stream, and to inflate it
must be told the output size.  Its Python binding cannot say how much input a
stream used, so ``inflate_prefix`` calls ``libdeflate_zlib_decompress_ex``
through ctypes on the same extension, with one decompressor reused for every
stream.  Streaming inflate and streaming deflate go to the next best backend.
"""

from __future__ import annotations

import re

import deflate as package  # ImportError when not installed

from gitodb.errors import CompressionError
from gitodb.types import Buffer

from .._dobj import make_ops, thread_local_prefix
from ..crc32_combine import crc32_combine
from .base import Backend, PrefixContext


def _library_version(path: str) -> str:
    """libdeflate's version if the extension carries it in its strings, else unknown."""
    try:
        with open(path, "rb") as f:
            m = re.search(rb"libdeflate[ v-]*(\d+\.\d+(?:\.\d+)?)", f.read())
    except OSError:
        m = None
    if m:
        return m.group(1).decode()
    return f"unknown (bundled with deflate {package.__version__})"


def load() -> Backend:
    from deflate import _deflate

    zlib_decompress, error = package.zlib_decompress, package.DeflateError
    zlib_compress = package.zlib_compress

    def inflate(data: Buffer, size: int) -> bytes:
        if not size or size >= direct_min:
            # Size 0: the binding returns b"" without looking at the data.  Large:
            # inflate straight into the result, no bytearray -> bytes copy.
            return unusual_size(data, size)
        try:
            out = zlib_decompress(data, size)
        except error:
            raise CompressionError(
                f"corrupt or truncated zlib stream, or longer than {size} bytes") from None
        if len(out) != size:
            raise CompressionError(f"zlib stream inflates to {len(out)} bytes, expected {size}")
        return bytes(out)

    def deflate(data: Buffer, level: int = -1) -> bytes:
        # Git's -1 is zlib's default 6; libdeflate's 0 is stored, 1-9 as zlib's.
        return bytes(zlib_compress(data, 6 if level == -1 else level))

    path = _deflate.__file__
    try:
        from ..reuse import (
            DIRECT_OUTPUT_MIN,
            LibdeflateContext,
            LibdeflateLibrary,
            fresh_bytes,
        )

        lib = LibdeflateLibrary(path)

        def new_prefix_context() -> PrefixContext:
            return LibdeflateContext(lib)

        # one decompressor per thread, reused for every call
        inflate_prefix = thread_local_prefix(new_prefix_context)
        new_prefix_context()  # prove it works here before promising it

        def unusual_size(data: Buffer, size: int) -> bytes:
            return inflate_prefix(data, size)[0]

        direct_min = DIRECT_OUTPUT_MIN if fresh_bytes is not None else 1 << 62
        reuse_note = ("reused: one libdeflate decompressor, libdeflate_zlib_decompress_ex "
                      "per stream (ctypes)")
        prefix = inflate_prefix
    except Exception as e:  # reuse is only an optimisation: report why not
        # Without ctypes, size 0 (which the binding gets wrong) goes to the stdlib.
        import zlib

        prefix = new_prefix_context = None  # type: ignore[assignment]
        stdlib_inflate = make_ops(zlib.decompressobj, (zlib.error,))[0]
        direct_min = 1 << 62

        def unusual_size(data: Buffer, size: int) -> bytes:
            return stdlib_inflate(data, size)

        reuse_note = f"unavailable ({e})"

    return Backend(
        name="libdeflate",
        library_version=_library_version(path),
        binding=f"deflate {package.__version__}",
        inflate=inflate,
        inflate_prefix=prefix,  # type: ignore[arg-type]
        crc32=package.crc32,
        crc32_combine=crc32_combine,
        new_prefix_context=new_prefix_context,  # type: ignore[arg-type]
        reuse_note=reuse_note,
        decompressobj=None,
        stream_errors=(),
        reusable_stream_note=("none: libdeflate cannot stream (whole buffers only), so "
                              "streaming inflate runs on the next best backend; its "
                              "one decompressor is reused by inflate_prefix instead"),
        deflate=deflate,
        compressobj=None,
        notes=["no streaming: streaming inflate and deflate go to the next best backend",
               "crc32_combine in Python (GF(2) powers of x), the binding has none"],
    )

