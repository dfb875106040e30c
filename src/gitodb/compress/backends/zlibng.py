"""Backend ``zlib-ng``: the ``zlib-ng`` package (``from zlib_ng import zlib_ng``)."""

from __future__ import annotations

from zlib_ng import zlib_ng  # ImportError when not installed

from .base import Backend
from .ops import binding_ops


def load() -> Backend:
    import zlib_ng as package

    errors = (zlib_ng.error,)
    return Backend(
        name="zlib-ng",
        library_version=str(zlib_ng.ZLIBNG_RUNTIME_VERSION),
        binding=f"zlib-ng {package.__version__}",
        crc32=zlib_ng.crc32,
        crc32_combine=zlib_ng.crc32_combine,
        decompressobj=zlib_ng.decompressobj,
        stream_errors=errors,
        deflate=zlib_ng.compress,
        compressobj=zlib_ng.compressobj,
        **binding_ops(zlib_ng.decompressobj, errors),
    )
