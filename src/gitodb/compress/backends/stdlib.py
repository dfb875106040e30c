"""Backend ``zlib``: the standard library's zlib module (always available)."""

from __future__ import annotations

import zlib

from .._dobj import NewStreamContext, make_ops, thread_local_prefix
from ..crc32_combine import crc32_combine
from .base import Backend, PrefixContext


def load() -> Backend:
    errors = (zlib.error,)
    try:
        from ..reuse import DIRECT_OUTPUT_MIN, ZlibApiContext, ZlibApiLibrary, fresh_bytes
        from ..stream import ZlibApiStream

        lib = ZlibApiLibrary.system_zlib(zlib.ZLIB_RUNTIME_VERSION)

        def new_prefix_context() -> PrefixContext:
            return ZlibApiContext(lib)

        def new_reusable_stream() -> ZlibApiStream:
            return ZlibApiStream(lib)

        new_prefix_context()  # prove it works here before promising it
        new_reusable_stream().reset()
        inflate, inflate_prefix = make_ops(
            zlib.decompressobj, errors, thread_local_prefix(new_prefix_context),
            DIRECT_OUTPUT_MIN if fresh_bytes is not None else 1 << 62)
        reuse_note = "reused: one libz stream, inflateReset per stream (ctypes)"
    except Exception as e:  # reuse is only an optimisation: report why not
        inflate, inflate_prefix = make_ops(zlib.decompressobj, errors)

        def new_prefix_context() -> PrefixContext:
            return NewStreamContext(inflate_prefix)

        reuse_note = f"not reusable ({e}): a new stream per reset"
        new_reusable_stream = None  # type: ignore[assignment]
    return Backend(
        name="zlib",
        library_version=zlib.ZLIB_RUNTIME_VERSION,
        binding="Python standard library",
        inflate=inflate,
        inflate_prefix=inflate_prefix,
        crc32=zlib.crc32,
        crc32_combine=crc32_combine,
        new_prefix_context=new_prefix_context,
        reuse_note=reuse_note,
        decompressobj=zlib.decompressobj,
        stream_errors=errors,
        new_reusable_stream=new_reusable_stream,
        reusable_stream_note="" if new_reusable_stream is not None else reuse_note,
        deflate=zlib.compress,
        compressobj=zlib.compressobj,
        notes=["crc32_combine in Python (GF(2) powers of x), the binding has none"],
    )
