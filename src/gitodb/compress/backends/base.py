"""What a backend is: a bundle of operations plus what it cannot do.

A backend module exposes ``load() -> Backend``; ``load`` raises ``ImportError``
when the library is not installed.  Every function in a ``Backend`` raises
``CompressionError`` on bad data (never the library's own exception class).
An operation a backend cannot do is ``None``; selection routes it to the next
best backend.
"""

from __future__ import annotations

from gitodb.types import Buffer, NamedTuple, Protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

#: Git's ``core.compression`` levels: -1 (library default), 0 (stored), 1-9.
GIT_LEVELS = frozenset(range(-1, 10))


class PrefixContext(Protocol):
    """Reusable one-shot inflate state: ``inflate_prefix`` many streams in a row."""

    reuses_state: bool

    def inflate_prefix(self, data: Buffer, size: int) -> tuple[bytes, int]: ...


class Backend(NamedTuple):
    """One zlib implementation, wrapped so that it speaks gitodb's contract."""

    name: str
    #: version of the compression library itself (not of its Python binding)
    library_version: str
    #: ``inflate(data, size) -> bytes`` (exact size; trailing input ignored)
    inflate: Callable[[Buffer, int], bytes]
    #: ``inflate_prefix(data, size) -> (bytes, consumed)``
    inflate_prefix: Callable[[Buffer, int], tuple[bytes, int]]
    #: ``crc32(data, value=0) -> int`` (value positional, as in the stdlib)
    crc32: Callable[..., int]
    #: ``crc32_combine(crc1, crc2, len2) -> int``
    crc32_combine: Callable[[int, int, int], int]
    #: ``new_prefix_context() -> PrefixContext``
    new_prefix_context: Callable[[], PrefixContext]
    #: how ``new_prefix_context`` reuses state, for ``version --build-options``
    reuse_note: str
    #: ``decompressobj()`` like ``zlib.decompressobj`` (``decompress(data, max_length)``,
    #: ``flush``, ``eof``, ``unused_data``, ``unconsumed_tail``), or None: cannot stream
    decompressobj: Callable[..., Any] | None
    #: the exception classes ``decompressobj`` objects raise on bad data
    stream_errors: tuple[Any, ...]
    #: ``deflate(data, git_level) -> bytes`` or None
    deflate: Callable[[Buffer, int], bytes] | None
    #: ``compressobj(git_level)`` with ``compress``/``flush``, or None
    compressobj: Callable[[int], Any] | None
    #: the Git levels ``deflate``/``compressobj`` accept; others go elsewhere
    deflate_levels: frozenset[int] = GIT_LEVELS
    #: why some levels are missing, for ``version --build-options``
    deflate_levels_note: str = ""
    #: the CPython binding's distribution name and version
    binding: str = ""
    #: why ``decompress(data, max_length)`` may decode past ``max_length`` (so a
    #: damaged tail fails a read of the first bytes), or "" when it stops there
    decodes_past_max_length: str = ""
    notes: Sequence[str] = ()
    #: the loaded shared object of the binding that exports the library's own C API
    #: (libdeflate's ``libdeflate_zlib_decompress``...), or "": the native core may
    #: then inflate through that very library without a Python call per object
    c_library: str = ""
