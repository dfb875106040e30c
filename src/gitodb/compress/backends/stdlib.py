"""Backend ``zlib``: the standard library's zlib module (always available)."""

from __future__ import annotations

import zlib

from .base import Backend
from .crc32_combine import crc32_combine
from .ops import binding_ops


def load() -> Backend:
    errors = (zlib.error,)
    return Backend(
        name="zlib",
        library_version=zlib.ZLIB_RUNTIME_VERSION,
        binding="Python standard library",
        crc32=zlib.crc32,
        crc32_combine=crc32_combine,
        decompressobj=zlib.decompressobj,
        stream_errors=errors,
        deflate=zlib.compress,
        compressobj=zlib.compressobj,
        notes=["crc32_combine in Python (GF(2) powers of x), the binding has none"],
        **binding_ops(zlib.decompressobj, errors),
    )
