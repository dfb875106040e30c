"""Backend ``zlib-ng``: the ``zlib-ng`` package (``from zlib_ng import zlib_ng``)."""

from __future__ import annotations

from zlib_ng import zlib_ng  # ImportError when not installed

from .._dobj import NewStreamContext, make_ops, thread_local_prefix
from .base import Backend, PrefixContext


def load() -> Backend:
    import zlib_ng as package

    errors = (zlib_ng.error,)
    try:
        from ..reuse import DIRECT_OUTPUT_MIN, ZlibApiContext, ZlibApiLibrary, fresh_bytes
        from ..stream import ZlibApiStream

        lib = ZlibApiLibrary.zlib_ng(zlib_ng.__file__)

        def new_prefix_context() -> PrefixContext:
            return ZlibApiContext(lib)

        def new_reusable_stream() -> ZlibApiStream:
            return ZlibApiStream(lib)

        new_prefix_context()
        new_reusable_stream().reset()
        inflate, inflate_prefix = make_ops(
            zlib_ng.decompressobj, errors, thread_local_prefix(new_prefix_context),
            DIRECT_OUTPUT_MIN if fresh_bytes is not None else 1 << 62)
        reuse_note = "reused: one zng_stream, zng_inflateReset per stream (ctypes)"
    except Exception as e:  # reuse is only an optimisation: report why not
        inflate, inflate_prefix = make_ops(zlib_ng.decompressobj, errors)

        def new_prefix_context() -> PrefixContext:
            return NewStreamContext(inflate_prefix)

        reuse_note = f"not reusable ({e}): a new stream per reset"
        new_reusable_stream = None  # type: ignore[assignment]
    return Backend(
        name="zlib-ng",
        library_version=str(zlib_ng.ZLIBNG_RUNTIME_VERSION),
        binding=f"zlib-ng {package.__version__}",
        inflate=inflate,
        inflate_prefix=inflate_prefix,
        crc32=zlib_ng.crc32,
        crc32_combine=zlib_ng.crc32_combine,
        new_prefix_context=new_prefix_context,
        reuse_note=reuse_note,
        decompressobj=zlib_ng.decompressobj,
        stream_errors=errors,
        new_reusable_stream=new_reusable_stream,
        reusable_stream_note="" if new_reusable_stream is not None else reuse_note,
        deflate=zlib_ng.compress,
        compressobj=zlib_ng.compressobj,
    )
