"""One-shot inflate built on a ``zlib.decompressobj``-style object.

The standard library, zlib-ng and ISA-L bindings all offer ``decompressobj()``
with ``max_length``; asking for ``size + 1`` bytes bounds the allocation (a size
bomb stops one byte past the declared size) and tells "too long" apart from
"exact".  These functions are the hot path of object reading: keep them lean.
"""

from __future__ import annotations

from gitodb.errors import CompressionError
from gitodb.lazyre import lazy
from gitodb.types import Buffer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def size_error(out_len: int, size: int, eof: bool) -> CompressionError:
    """The error for a stream that did not inflate to exactly ``size`` bytes."""
    if out_len > size:
        return CompressionError(f"zlib stream inflates to more than {size} bytes")
    if not eof:
        return CompressionError(f"truncated zlib stream (inflated {out_len} of {size} bytes)")
    return CompressionError(f"zlib stream inflates to {out_len} bytes, expected {size}")


# zlib's status codes as Git's ``zerr_to_string`` names them
_ZERR = {
    2: "needs dictionary",
    -2: "stream consistency error",
    -3: "data stream error",
    -4: "out of memory",
    -5: "needs more output",
}
# "Error <status> while decompressing data[: <zlib's msg>]" (stdlib zlib, zlib-ng)
_ZLIB_ERROR = lazy(r"(?s)Error (-?[0-9]+) while (?:de)?compressing data(?:: (.*))?")
# "Error <code> <text>" (ISA-L): its codes are its own, so only the text is kept
_ISAL_ERROR = lazy(r"(?s)Error (-?[0-9]+) (.*)")


def corrupt(e: BaseException) -> CompressionError:
    """Our error for a backend's own exception about bad data, in Git's words:
    ``inflate: <what zlib's status means> (<zlib's message or "no message">)``."""
    text = str(e)
    m = _ZLIB_ERROR.fullmatch(text)
    if m is not None:
        what = _ZERR.get(int(m.group(1)), "unknown error")
        return CompressionError(f"inflate: {what} ({m.group(2) or 'no message'})")
    m = _ISAL_ERROR.fullmatch(text)
    if m is not None:
        if "dictionary" in m.group(2).lower():
            return CompressionError("inflate: needs dictionary (no message)")
        return CompressionError(f"inflate: data stream error ({m.group(2)})")
    return CompressionError(f"inflate: data stream error ({text or 'no message'})")


def make_ops(
    decompressobj: Callable[[], Any],
    errors: tuple[Any, ...],
    large: Callable[[Buffer, int], tuple[bytes, int]] | None = None,
    large_min: int = 1 << 62,
) -> tuple[Callable[[Buffer, int], bytes], Callable[[Buffer, int], tuple[bytes, int]]]:
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
                out: bytes = d.decompress(data, size + 1)
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


class NewStreamContext:
    """Prefix context for a backend that cannot reuse state: a new stream per call."""

    reuses_state = False
    __slots__ = ("inflate_prefix",)

    def __init__(self, inflate_prefix: Callable[[Buffer, int], tuple[bytes, int]]) -> None:
        self.inflate_prefix = inflate_prefix


def binding_ops(decompressobj: Callable[[], Any], errors: tuple[Any, ...]) -> dict[str, Any]:
    """The inflate operations of a backend whose binding has ``decompressobj``.

    Everything goes through the binding's public callables (no ctypes, no
    library symbols): a new binding stream per call, which is also what the
    binding does for its own one-shot functions.  Returns the ``Backend`` fields
    ``inflate``, ``inflate_prefix``, ``new_prefix_context`` and ``reuse_note``.
    """
    inflate, inflate_prefix = make_ops(decompressobj, errors)
    return {
        "inflate": inflate,
        "inflate_prefix": inflate_prefix,
        "new_prefix_context": lambda: NewStreamContext(inflate_prefix),
        "reuse_note": "a new binding stream per call (its public decompressobj)",
    }


def make_head(
    decompressobj: Callable[[], Any], errors: tuple[Any, ...]
) -> Callable[[Buffer, int], bytes]:
    """``inflate_head(data, n) -> bytes``: up to the first ``n`` output bytes of a stream.

    Decoding stops where ``n`` bytes are out (damage later in the stream is not
    met, as Git reads object headers); fewer come back when ``data`` ends first.
    """

    def inflate_head(data: Buffer, n: int) -> bytes:
        try:
            return decompressobj().decompress(data, n)  # type: ignore[no-any-return]
        except errors as e:
            raise corrupt(e) from None

    return inflate_head
