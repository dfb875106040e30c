"""Backend ``libdeflate``: libdeflate through the ``deflate`` package.

libdeflate only works on whole buffers: it cannot stream, and to inflate it
must be told the output size.  Its Python binding cannot say how much input a
stream used, so ``inflate_prefix`` goes to the next best backend (gitodb uses a
library only through its binding's public callables).  Streaming inflate and
streaming deflate go to the next best backend too.
"""

from __future__ import annotations

import deflate as package  # ImportError when not installed

from gitodb.errors import CompressionError
from gitodb.types import Buffer

from .base import Backend
from .crc32_combine import crc32_combine
from .ops import make_ops


def _library_version(path: str) -> str:
    """libdeflate's version if the extension carries it in its strings, else unknown."""
    try:
        with open(path, "rb") as f:
            found = version_in(f.read())
    except OSError:
        found = None
    if found:
        return found
    return f"unknown (bundled with deflate {package.__version__})"


_DIGITS = b"0123456789"


def version_in(data: bytes) -> str | None:
    """The first ``libdeflate[ v-]*<n>.<n>[.<n>]`` version in ``data`` (``re.search``'s
    leftmost match, by ``find``: loading the backend, at every command's first inflate,
    needs no ``re``), or None."""
    i = data.find(b"libdeflate")
    while i >= 0:
        j = i + len(b"libdeflate")
        while j < len(data) and data[j] in b" v-":
            j += 1
        end = _number(data, j)
        if end > j and data[end : end + 1] == b"." and (end2 := _number(data, end + 1)) > end + 1:
            end = end2
            if data[end : end + 1] == b"." and (end3 := _number(data, end + 1)) > end + 1:
                end = end3
            return data[j:end].decode()
        i = data.find(b"libdeflate", i + 1)
    return None


def _number(data: bytes, i: int) -> int:
    """Where the run of ASCII digits from ``i`` ends."""
    while i < len(data) and data[i] in _DIGITS:
        i += 1
    return i


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
                f"corrupt or truncated zlib stream, or longer than {size} bytes"
            ) from None
        if len(out) != size:
            raise CompressionError(f"zlib stream inflates to {len(out)} bytes, expected {size}")
        return bytes(out)

    def deflate(data: Buffer, level: int = -1) -> bytes:
        # Git's -1 is zlib's default 6; libdeflate's 0 is stored, 1-9 as zlib's.
        return bytes(zlib_compress(data, 6 if level == -1 else level))

    path = _deflate.__file__
    # The binding cannot report the input a stream used, so inflate_prefix (and
    # the reusable context) go to the next best backend; size 0, which the
    # binding gets wrong, goes to the standard library.
    import zlib

    stdlib_inflate = make_ops(zlib.decompressobj, (zlib.error,))[0]
    direct_min = 1 << 62

    def unusual_size(data: Buffer, size: int) -> bytes:
        return stdlib_inflate(data, size)

    return Backend(
        name="libdeflate",
        library_version=_library_version(path),
        binding=f"deflate {package.__version__}",
        inflate=inflate,
        inflate_prefix=None,  # type: ignore[arg-type]
        crc32=package.crc32,
        crc32_combine=crc32_combine,
        new_prefix_context=None,  # type: ignore[arg-type]
        reuse_note="none: the binding cannot report the input a stream used",
        decompressobj=None,
        stream_errors=(),
        deflate=deflate,
        compressobj=None,
        # The extension links libdeflate in and exports its C API (the native core's
        # per-object inflate calls libdeflate_zlib_decompress there, see walk.c).
        c_library=path,
        notes=[
            "no streaming: streaming inflate and deflate go to the next best backend",
            "crc32_combine in Python (GF(2) powers of x), the binding has none",
        ],
    )
