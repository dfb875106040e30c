"""Commit and tag objects: header lines, then a blank line and the message."""

from __future__ import annotations

from dataclasses import dataclass, field

from gitodb.errors import ObjectFormatError


def parse_headers(data: bytes) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """Split a commit or tag into ``[(key, value)]`` and the message.

    Continuation lines (starting with a space, as in ``gpgsig``) are joined to the
    previous value with newlines, the leading space removed.
    """
    headers: list[tuple[bytes, bytes]] = []
    pos = 0
    end = len(data)
    while pos < end:
        nl = data.find(b"\n", pos)
        if nl < 0:
            nl = end
        line = data[pos:nl]
        pos = nl + 1
        if not line:
            return headers, data[pos:]
        if line[:1] == b" " and headers:
            key, value = headers[-1]
            headers[-1] = (key, value + b"\n" + line[1:])
            continue
        key, _, value = line.partition(b" ")
        headers.append((key, value))
    return headers, b""


@dataclass(frozen=True)
class Commit:
    """The parts of a commit gitodb uses: tree, parents, and the raw headers."""

    tree: bytes
    parents: list[bytes] = field(default_factory=list)
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    message: bytes = b""


def parse_commit(data: bytes, hexsz: int, *, path: str | None = None) -> Commit:
    """Parse a commit's content; raise ``ObjectFormatError`` if the tree line is bad."""
    headers, message = parse_headers(data)
    if not headers or headers[0][0] != b"tree":
        raise ObjectFormatError("bad commit: no tree line", path=path, offset=0)
    tree = _hex_id(headers[0][1], hexsz, "tree", path)
    parents = [_hex_id(v, hexsz, "parent", path) for k, v in headers[1:] if k == b"parent"]
    return Commit(tree, parents, headers, message)


@dataclass(frozen=True)
class Tag:
    """An annotated tag: the tagged object, its type, the tag name, the raw headers."""

    object: bytes
    type_name: str
    name: bytes
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    message: bytes = b""


def parse_tag(data: bytes, hexsz: int, *, path: str | None = None) -> Tag:
    """Parse a tag's content; raise ``ObjectFormatError`` without object/type lines."""
    headers, message = parse_headers(data)
    values = dict(headers)
    if b"object" not in values or b"type" not in values:
        raise ObjectFormatError("bad tag: no object or type line", path=path, offset=0)
    obj = _hex_id(values[b"object"], hexsz, "object", path)
    return Tag(obj, values[b"type"].decode("ascii", "replace"), values.get(b"tag", b""),
               headers, message)


def _hex_id(value: bytes, hexsz: int, what: str, path: str | None) -> bytes:
    if len(value) != hexsz:
        raise ObjectFormatError(f"bad {what} id", path=path, offset=0)
    try:
        return bytes.fromhex(value.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise ObjectFormatError(f"bad {what} id", path=path, offset=0) from None
