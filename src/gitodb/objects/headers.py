"""The header block of commits and tags: ``key SP value LF`` lines, then LF and a message.

A value spanning lines (``gpgsig``, ``mergetag``) continues on lines that start
with one space; the parsed value joins them with ``\\n`` and drops that space.
Every detail needed to give back the exact bytes is kept: a line without a space
(value None), a missing blank line (message None), a last line without LF.
"""

from __future__ import annotations

from gitodb.errors import ObjectFormatError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

try:  # the native core's one-pass parser (_native/histwalk.inc); this module is its reference
    from gitodb._native import parse_headers as _native_parse
except ImportError:
    _native_parse = None  # type: ignore[assignment]

Header = tuple[bytes, bytes | None]


class HeaderBlock:
    """Parsed headers, message, and whether the header section ended with LF."""

    __slots__ = ("headers", "message", "terminated")

    def __init__(
        self, headers: list[Header], message: bytes | None, terminated: bool = True
    ) -> None:
        self.headers = headers
        self.message = message
        self.terminated = terminated

    def get(self, key: bytes) -> bytes | None:
        """The value of the first header named ``key``, or None."""
        for k, v in self.headers:
            if k == key:
                return v
        return None

    def get_all(self, key: bytes) -> list[bytes]:
        """Values of every header named ``key``, in order."""
        return [v for k, v in self.headers if k == key and v is not None]


def parse_headers(data: bytes) -> HeaderBlock:
    """Split commit or tag content into headers and message (never fails)."""
    if _native_parse is not None and type(data) is bytes:
        headers, message, terminated = _native_parse(data)
        return HeaderBlock(headers, message, terminated)
    return parse_headers_python(data)


def parse_headers_python(data: bytes) -> HeaderBlock:
    """``parse_headers`` in Python: the native core's reference and fallback."""
    headers: list[Header] = []
    pos = 0
    end = len(data)
    while pos < end:
        nl = data.find(b"\n", pos)
        if nl < 0:
            line = data[pos:]
            _add_line(headers, line)
            return HeaderBlock(headers, None, terminated=False)
        line = data[pos:nl]
        pos = nl + 1
        if not line:
            return HeaderBlock(headers, data[pos:])
        _add_line(headers, line)
    return HeaderBlock(headers, None)


def _add_line(headers: list[Header], line: bytes) -> None:
    if line[:1] == b" " and headers and headers[-1][1] is not None:
        key, value = headers[-1]
        headers[-1] = (key, value + b"\n" + line[1:])  # type: ignore[operator]
        return
    key, sep, value = line.partition(b" ")
    headers.append((key, value if sep else None))


def serialize_headers(
    headers: Iterable[Header], message: bytes | None, terminated: bool = True
) -> bytes:
    """The bytes ``parse_headers`` read ``headers`` and ``message`` from."""
    out = bytearray()
    for key, value in headers:
        out += key
        if value is not None:
            out += b" "
            out += value.replace(b"\n", b"\n ")
        out += b"\n"
    if message is not None:
        out += b"\n"
        out += message
    elif not terminated and out:
        del out[-1]
    return bytes(out)


def check_header(key: bytes, value: bytes) -> None:
    """Refuse a header that would not read back as one header (used when creating)."""
    if not key or b" " in key or b"\n" in key:
        raise ObjectFormatError(f"invalid header name {key!r}")
    if b"\0" in key or b"\0" in value:
        raise ObjectFormatError(f"NUL in header {key!r}")
