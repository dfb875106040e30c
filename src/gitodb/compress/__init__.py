"""The narrow waist: every zlib and CRC-32 operation in gitodb goes through here.

PUBLIC CONTRACT (other modules rely on exactly these names and meanings):

``inflate(data, size) -> bytes``
    One-shot inflate of one complete zlib stream that must produce exactly
    ``size`` bytes.  Trailing bytes after the stream are ignored (pass a bounded
    slice: some backends copy what follows the stream).  Fewer or more bytes
    than ``size``, or a corrupt stream, raise ``CompressionError``.
``inflate_prefix(data, size) -> (bytes, consumed)``
    Inflate the zlib stream at the start of ``data`` (more may follow) that must
    produce exactly ``size`` bytes; return the output and the exact number of
    input bytes the stream occupied.
``Inflater`` / ``new_inflater(op="inflate-stream")``
    Streaming inflater (``op="inflate-head"``: on the backend that reads a
    stream's first bytes without decoding further, see ``new_inflater``):
    ``decompress(data, max_length=0)``, ``flush()``, ``eof``,
    ``unused_data``, ``unconsumed_tail``, ``consumed`` (input bytes of this stream
    consumed so far, exact once ``eof``), ``reset()`` to use it for the next
    stream, and ``inflate_prefix(data, size)`` as the module function on the
    ``inflate-reuse`` backend's context.
``inflate_head(data, n) -> bytes``
    Up to the first ``n`` output bytes of the zlib stream at the start of ``data``
    (fewer if ``data`` ends first), decoding no further: a delta's or an object's
    header.  A corrupt start raises ``CompressionError``.
``deflate(data, level=-1) -> bytes`` and ``Deflater(level)`` with
    ``compress(data)`` / ``flush()``.  Level is Git's ``core.compression``: -1
    default, 0 stored, 1-9.
``deflate_as_git(data, level=-1) -> bytes``
    Deflate on the standard library's zlib whatever the backend: the stream Git's
    own zlib writes, for output that prints the compressed bytes (binary patches).
``crc32(data, value=0) -> int`` (``value`` positional, as in ``zlib.crc32``)
    and ``crc32_combine(crc1, crc2, len2) -> int``.
``set_backend(name)``, ``active_backend(op=None)``, ``available_backends()``.
``max_inflated_size(compressed_len) -> int``
    The most bytes a zlib stream of ``compressed_len`` bytes can inflate to
    (deflate's ratio is at most ~1032:1).  Readers compare a declared size with
    it before they allocate or inflate anything.

Callers use these as module attributes (``compress.inflate``), never
``from gitodb.compress import inflate``: ``set_backend`` rebinds them to the
chosen backend's functions, so a call costs no dispatch.  In a hot loop, bind
``inflate = compress.inflate`` to a local first.

Backends: ``zlib`` (standard library), ``zlib-ng``, ``isal``, ``libdeflate``,
and ``auto`` (the default: the fastest installed one per operation, see
``selection.AUTO_RANKING``).  The default comes from ``GITODB_ZLIB_BACKEND``;
the CLI's ``--zlib-backend`` and ``set_backend`` override it.  An unknown or
uninstalled name raises ``BackendUnavailableError``, never a silent fallback
(for a bad ``GITODB_ZLIB_BACKEND``, already when this module is imported).
"""

from __future__ import annotations

import os
import sys

from gitodb.errors import CompressionError
from gitodb.types import Buffer

from . import selection
from .backends.base import GIT_LEVELS, Backend, PrefixContext
from .backends.ops import corrupt, make_head

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

try:  # the zlib the native core was linked with, when one was found at build time
    from gitodb._native import ZLIB_RUNTIME_VERSION as _NATIVE_ZLIB
except ImportError:  # built without a C compiler (or an older native core)
    _NATIVE_ZLIB = None

__all__ = [
    "BACKEND_NAMES",
    "Buffer",
    "Deflater",
    "Inflater",
    "active_backend",
    "available_backends",
    "crc32",
    "crc32_combine",
    "deflate",
    "deflate_as_git",
    "inflate",
    "inflate_head",
    "inflate_prefix",
    "native_inflate",
    "native_inflate_library",
    "new_inflater",
    "routing",
    "set_backend",
]

#: every name ``set_backend`` accepts
BACKEND_NAMES = ("auto", "zlib", "zlib-ng", "isal", "libdeflate")

ENV_VAR = "GITODB_ZLIB_BACKEND"

#: Deflate cannot expand data more than ~1032:1 (a 258-byte match costs 2 bits
#: at best); a little slack covers the zlib header and a final partial block.
MAX_INFLATE_RATIO = 1040
#: ``max_length`` beyond this cannot be passed to a C zlib binding (ssize_t)
_MAX_LENGTH = sys.maxsize


def max_inflated_size(compressed_len: int) -> int:
    """The largest output a zlib stream of ``compressed_len`` bytes can inflate to."""
    return compressed_len * MAX_INFLATE_RATIO + 64


# Bound on first use to the chosen backend's functions (``__getattr__`` below), and
# unbound by set_backend(): importing this module loads no compression library, and
# a process loads only the ones its operations are routed to.
inflate: Callable[[Buffer, int], bytes]
inflate_prefix: Callable[[Buffer, int], tuple[bytes, int]]
inflate_head: Callable[[Buffer, int], bytes]
deflate: Callable[..., bytes]
crc32: Callable[..., int]
crc32_combine: Callable[[int, int, int], int]

_selected = "auto"
_routes: dict[str, selection.Route] = {}


def _bad_level(level: int) -> CompressionError:
    return CompressionError(f"bad zlib compression level {level}")


def _make_deflate(primary: Backend, fallback: Backend | None) -> Callable[..., bytes]:
    """``deflate(data, level=-1)`` on ``primary``, levels it lacks on ``fallback``."""
    compress = primary.deflate
    assert compress is not None
    if fallback is None:

        def deflate(data: Buffer, level: int = -1) -> bytes:
            """Compress ``data`` as one zlib stream at Git's ``level`` (-1, 0-9)."""
            if level not in GIT_LEVELS:
                raise _bad_level(level)
            return compress(data, level)

        return deflate

    levels, other = primary.deflate_levels, fallback.deflate
    assert other is not None

    def deflate_split(data: Buffer, level: int = -1) -> bytes:
        """Compress ``data`` as one zlib stream at Git's ``level`` (-1, 0-9)."""
        if level in levels:
            return compress(data, level)
        if level not in GIT_LEVELS:
            raise _bad_level(level)
        return other(data, level)

    return deflate_split


def deflate_as_git(data: Buffer, level: int = -1) -> bytes:
    """``data`` as one zlib stream from the standard library's zlib (Git's own
    library and defaults), at Git's ``level`` (-1, 0-9), whatever the backend:
    other backends write other, equally valid, bytes."""
    if level not in GIT_LEVELS:
        raise _bad_level(level)
    from .backends import stdlib

    deflate = stdlib.load().deflate
    assert deflate is not None
    return deflate(data, level)


def set_backend(name: str | None) -> None:
    """Run on backend ``name`` (see ``BACKEND_NAMES``); None: back to the default.

    The default is ``$GITODB_ZLIB_BACKEND`` if set, else ``auto``.  Raises
    ``BackendUnavailableError`` for an unknown or uninstalled name and then
    leaves the current backend in place.
    """
    global _selected
    if name is None:
        name = os.environ.get(ENV_VAR) or "auto"
    selection.check_name(name)
    _selected = name
    _routes.clear()
    for attr in _BIND:
        globals().pop(attr, None)


def _route(op: str) -> selection.Route:
    """The route of ``op`` under the selected backend (computed on first use)."""
    got = _routes.get(op)
    if got is None:
        calibrated = _calibration() if _selected == "auto" else None
        describe = None
        if calibrated is not None:
            from . import calibrate

            describe = calibrate.summary
        got = _routes[op] = selection.route_op(_selected, op, calibrated, describe)
    return got


def _bind_head() -> Callable[[Buffer, int], bytes]:
    head = _route("inflate-head").backend
    assert head.decompressobj is not None
    return make_head(head.decompressobj, head.stream_errors)


def _bind_deflate() -> Callable[..., bytes]:
    d = _route("deflate")
    return _make_deflate(d.backend, d.level_fallback)


# module attribute -> what it is bound to: straight to the backend's functions, so a
# call costs no dispatch
_BIND: dict[str, Callable[[], Any]] = {
    "inflate": lambda: _route("inflate").backend.inflate,
    "inflate_prefix": lambda: _route("inflate-prefix").backend.inflate_prefix,
    "inflate_head": _bind_head,
    "deflate": _bind_deflate,
    "crc32": lambda: _route("crc32").backend.crc32,
    "crc32_combine": lambda: _route("crc32").backend.crc32_combine,
}


def __getattr__(name: str) -> Any:
    bind = _BIND.get(name)
    if bind is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = bind()
    return value


def native_inflate() -> str | None:
    """How the native core may inflate with the chosen backend's own library, without
    a Python call per object: ``"zlib"`` (the ``inflate`` backend is ``zlib`` and the
    core links that zlib), ``"libdeflate"`` (the backend is libdeflate, whose binding
    exports its C API: ``native_inflate_library()`` names the shared object), else
    None: then native loops call ``inflate``, the backend's binding."""
    chosen = _route("inflate").backend
    # The native walk may inflate through a C API only where that is the very
    # library the chosen backend runs on.
    if chosen.name == "zlib" and chosen.library_version == _NATIVE_ZLIB:
        return "zlib"
    if chosen.name == "libdeflate" and chosen.c_library:
        return "libdeflate"
    return None


def native_inflate_library() -> str:
    """The shared object whose C API ``native_inflate()`` names ("" for the linked zlib)."""
    return _route("inflate").backend.c_library


def _calibration() -> dict[str, Any] | None:
    """The stored ``gitodb calibrate`` record ``auto`` follows, if any (read once)."""
    global _calibrated
    if _calibrated is False:
        if not os.path.exists(calibration_file()):
            # most machines have no record: the module that reads (and makes) one,
            # with what it imports, is not start-up time of every command
            _calibrated = None
        else:
            from . import calibrate

            _calibrated = calibrate.load()
    return _calibrated  # type: ignore[return-value]


def calibration_file() -> str:
    """Where ``gitodb calibrate`` stores its record (``$XDG_CACHE_HOME/gitodb/...``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gitodb", "calibration.json")


_calibrated: dict[str, Any] | None | bool = False


def reload_calibration() -> None:
    """Read the stored calibration again (after ``gitodb calibrate``) and re-route."""
    global _calibrated
    _calibrated = False
    set_backend(_selected)


def active_backend(op: str | None = None) -> str:
    """The selected name (``auto`` or a backend), or the backend running ``op``.

    ``op`` is one of ``selection.OPERATIONS``: inflate, inflate-prefix,
    inflate-reuse, inflate-stream, deflate, deflate-stream, crc32.
    """
    if op is None:
        return _selected
    return _route(op).backend.name


def routing() -> selection.Routing:
    """The current per-operation routing with reasons (for ``version``)."""
    return selection.Routing(_selected, {op: _route(op) for op in selection.OPERATIONS})


def available_backends() -> list[str]:
    """Names of the installed backends."""
    return selection.installed()


class Inflater:
    """A streaming inflater that reports end of stream and input consumed.

    Streaming runs on the ``inflate-stream`` backend; ``inflate_prefix`` on the
    ``inflate-reuse`` backend's context.  Every stream is a binding stream (its
    public ``decompressobj``); ``reset()`` makes the next one.  Not thread-safe.
    """

    __slots__ = ("_decompressobj", "_errors", "_d", "consumed", "_new_ctx", "_ctx")

    def __init__(self, op: str = "inflate-stream") -> None:
        stream = _route(op).backend
        assert stream.decompressobj is not None
        self._decompressobj = stream.decompressobj
        self._errors = stream.stream_errors
        self._new_ctx = _route("inflate-reuse").backend.new_prefix_context
        self._d: Any = None  # created on first use: inflate_prefix-only users need none
        self._ctx: PrefixContext | None = None
        self.consumed = 0

    def _stream(self) -> Any:
        if self._d is None:
            self._d = self._decompressobj()
        return self._d

    def decompress(self, data: Buffer, max_length: int = 0) -> bytes:
        """Feed ``data``; return up to ``max_length`` bytes of output (0: no limit).

        Pass ``unconsumed_tail`` back in with the next call, like ``zlib``.
        ``consumed`` can go down in the call that reaches the stream's end: a
        backend that read input ahead (ISA-L) gives it back only then, in
        ``unused_data``.
        """
        d = self._stream()
        unused_before = len(d.unused_data)
        if max_length > _MAX_LENGTH:  # a declared size near 2**64: no limit is the same
            max_length = _MAX_LENGTH
        try:
            out: bytes = d.decompress(data, max_length)
        except self._errors as e:
            raise corrupt(e) from None
        # At the end of the stream the rest of the input is unused_data (and zlib
        # leaves a copy in unconsumed_tail too); before it, the rest is the tail.
        if d.eof:
            self.consumed += len(data) - (len(d.unused_data) - unused_before)
        else:
            self.consumed += len(data) - len(d.unconsumed_tail)
        return out

    def flush(self) -> bytes:
        """Return whatever output is still buffered (consumes ``unconsumed_tail``)."""
        d = self._stream()
        if d.eof:
            # All output is out at the end of the stream; zlib's flush() would
            # append its copy of the tail to unused_data a second time.
            return b""
        unused_before, tail_before = len(d.unused_data), len(d.unconsumed_tail)
        try:
            out: bytes = d.flush()
        except self._errors as e:
            raise corrupt(e) from None
        if d.eof:
            self.consumed += tail_before - (len(d.unused_data) - unused_before)
        else:
            self.consumed += tail_before - len(d.unconsumed_tail)
        return out

    @property
    def eof(self) -> bool:
        """True once the end of the zlib stream has been reached."""
        return self._d is not None and self._d.eof

    @property
    def unused_data(self) -> bytes:
        """Input that came after the end of the stream."""
        return b"" if self._d is None else self._d.unused_data

    @property
    def unconsumed_tail(self) -> bytes:
        """Input not yet used because ``max_length`` stopped the output.

        Empty once the stream has ended (the rest is ``unused_data``; CPython's
        zlib may still hold a stale copy of it as its own tail).
        """
        d = self._d
        return b"" if d is None or d.eof else d.unconsumed_tail

    def reset(self) -> None:
        """Make the inflater ready for a new stream (a new binding stream, made on use)."""
        self._d = None
        self.consumed = 0

    def inflate_prefix(self, data: Buffer, size: int) -> tuple[bytes, int]:
        """As the module's ``inflate_prefix``, reusing one inflate state.

        Independent of the streaming state (``eof``, ``consumed``, ...).
        """
        ctx = self._ctx
        if ctx is None:
            ctx = self._ctx = self._new_ctx()
        return ctx.inflate_prefix(data, size)


def new_inflater(op: str = "inflate-stream") -> Inflater:
    """Return a streaming inflater on the backend chosen for ``op``.

    ``"inflate-head"`` is for reading the first bytes of a stream: its backends
    stop decoding where ``max_length`` is reached, as zlib does, so damage later
    in the stream is not met (Git reads object headers that way).
    """
    return Inflater(op)


class Deflater:
    """A streaming deflater at Git's compression ``level`` (-1, 0-9)."""

    __slots__ = ("_c",)

    def __init__(self, level: int = -1) -> None:
        if level not in GIT_LEVELS:
            raise _bad_level(level)
        route = _route("deflate-stream")
        backend = route.backend
        if level not in backend.deflate_levels and route.level_fallback is not None:
            backend = route.level_fallback
        assert backend.compressobj is not None
        self._c = backend.compressobj(level)

    def compress(self, data: Buffer) -> bytes:
        """Feed ``data``; return compressed output produced so far."""
        out: bytes = self._c.compress(data)
        return out

    def flush(self) -> bytes:
        """Finish the stream and return the remaining output."""
        out: bytes = self._c.flush()
        return out


set_backend(None)
