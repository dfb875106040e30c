"""One-shot inflate built on a ``zlib.decompressobj``-style object.

The standard library, zlib-ng and ISA-L bindings all offer ``decompressobj()``
with ``max_length``; asking for ``size + 1`` bytes bounds the allocation (a size
bomb stops one byte past the declared size) and tells "too long" apart from
"exact".  These functions are the hot path of object reading: keep them lean.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from gitodb.errors import CompressionError
from gitodb.types import Buffer


def size_error(out_len: int, size: int, eof: bool) -> CompressionError:
    """The error for a stream that did not inflate to exactly ``size`` bytes."""
    if out_len > size:
        return CompressionError(f"zlib stream inflates to more than {size} bytes")
    if not eof:
        return CompressionError(
            f"truncated zlib stream (inflated {out_len} of {size} bytes)")
    return CompressionError(f"zlib stream inflates to {out_len} bytes, expected {size}")


def corrupt(e: BaseException) -> CompressionError:
    """Our error for a backend's own exception about bad data."""
    return CompressionError(f"corrupt zlib stream: {e}")


def make_ops(decompressobj: Callable[[], Any], errors: tuple[Any, ...],
             large: Callable[[Buffer, int], tuple[bytes, int]] | None = None,
             large_min: int = 1 << 62,
             ) -> tuple[Callable[[Buffer, int], bytes],
                        Callable[[Buffer, int], tuple[bytes, int]]]:
    """Return ``(inflate, inflate_prefix)`` for a ``decompressobj`` factory.

    Outputs of ``large_min`` bytes or more go to ``large`` (an inflate_prefix
    that writes straight into the result) when given: the bindings grow their
    output in blocks and join them, one more copy of a large object.
    """

    def inflate(data: Buffer, size: int) -> bytes:
        if size >= large_min:
            return large(data, size)[0]  # type: ignore[misc]
        d = decompressobj()
        try:
            if len(data) <= size + (size >> 2) + 1024:
                out = d.decompress(data, size + 1)
            else:
                out = _windowed(d, data, size)[0]
        except errors as e:
            raise corrupt(e) from None
        if d.eof and len(out) == size:
            return out
        raise size_error(len(out), size, d.eof)

    def inflate_prefix(data: Buffer, size: int) -> tuple[bytes, int]:
        if size >= large_min:
            return large(data, size)  # type: ignore[misc]
        d = decompressobj()
        try:
            if len(data) <= size + (size >> 2) + 1024:
                out, fed = d.decompress(data, size + 1), len(data)
            else:
                out, fed = _windowed(d, data, size)
        except errors as e:
            raise corrupt(e) from None
        if d.eof and len(out) == size:
            return out, fed - len(d.unused_data)
        raise size_error(len(out), size, d.eof)

    return inflate, inflate_prefix


def _windowed(d: Any, data: Buffer, size: int) -> tuple[bytes, int]:
    """Feed ``data`` to ``d`` a window at a time; return (output, bytes fed).

    At the end of a stream the bindings copy all remaining input into
    ``unused_data``; a caller that passes "the rest of the pack" would pay a copy
    of it per object.  A stream of ``size`` bytes rarely needs more than
    ``size * 9/8`` of input (9-bit literals, the worst common case), so the
    first window almost always holds it.
    """
    mv = memoryview(data)
    n = mv.nbytes
    step = size + (size >> 3) + 64
    out = d.decompress(mv[:step], size + 1)
    fed = min(step, n)
    while not d.eof and len(out) <= size and fed < n and not d.unconsumed_tail:
        nxt = min(n, fed + max(step, 1 << 16))
        out += d.decompress(mv[fed:nxt], size + 1 - len(out))
        fed = nxt
    return out, fed


def thread_local_prefix(new_context: Callable[[], Any]
                        ) -> Callable[[Buffer, int], tuple[bytes, int]]:
    """An ``inflate_prefix`` on one reusable context per thread."""
    local = threading.local()

    def inflate_prefix(data: Buffer, size: int) -> tuple[bytes, int]:
        ctx = getattr(local, "ctx", None)
        if ctx is None:
            ctx = local.ctx = new_context()
        return ctx.inflate_prefix(data, size)  # type: ignore[no-any-return]

    return inflate_prefix


class NewStreamContext:
    """Prefix context for a backend that cannot reuse state: a new stream per call."""

    reuses_state = False
    __slots__ = ("inflate_prefix",)

    def __init__(self, inflate_prefix: Callable[[Buffer, int], tuple[bytes, int]]) -> None:
        self.inflate_prefix = inflate_prefix


def zlib_api_ops(decompressobj: Callable[[], Any], errors: tuple[Any, ...],
                 open_library: Callable[[Any], Any], reused_note: str) -> dict[str, Any]:
    """The inflate operations of a backend that has zlib's C API (stdlib zlib, zlib-ng).

    ``open_library(ZlibApiLibrary)`` opens that API through ctypes; when it
    works, ``inflate_prefix`` and the reusable stream reuse one inflate state, else
    every stream is a new binding stream and the note says why.  Returns the
    ``Backend`` fields ``inflate``, ``inflate_prefix``, ``new_prefix_context``,
    ``reuse_note``, ``new_reusable_stream`` and ``reusable_stream_note``.
    """
    try:
        from .reuse import DIRECT_OUTPUT_MIN, ZlibApiContext, ZlibApiLibrary, fresh_bytes
        from .stream import ZlibApiStream

        lib = open_library(ZlibApiLibrary)

        def new_prefix_context() -> Any:
            return ZlibApiContext(lib)

        def new_reusable_stream() -> ZlibApiStream:
            return ZlibApiStream(lib)

        new_prefix_context()  # prove it works here before promising it
        new_reusable_stream().reset()
        inflate, inflate_prefix = make_ops(
            decompressobj, errors, thread_local_prefix(new_prefix_context),
            DIRECT_OUTPUT_MIN if fresh_bytes is not None else 1 << 62)
        return {"inflate": inflate, "inflate_prefix": inflate_prefix,
                "new_prefix_context": new_prefix_context, "reuse_note": reused_note,
                "new_reusable_stream": new_reusable_stream, "reusable_stream_note": ""}
    except Exception as e:  # reuse is only an optimisation: report why not
        inflate, inflate_prefix = make_ops(decompressobj, errors)
        note = f"not reusable ({e}): a new stream per reset"
        return {"inflate": inflate, "inflate_prefix": inflate_prefix,
                "new_prefix_context": lambda: NewStreamContext(inflate_prefix),
                "reuse_note": note, "new_reusable_stream": None,
                "reusable_stream_note": note}
