"""Trailers of a commit or tag message (``Signed-off-by: ...``), found as Git finds them.

The trailer block is the last paragraph of the message (never the first one, the
title) when all its lines are trailers (``token: value`` or continuation lines
that start with blank space), or when it holds a Git-generated trailer
(``Signed-off-by: ``, ``(cherry picked from commit ``) and at least a quarter of
its lines are trailers.  This is Git's ``trailer.c`` with the default separators
(``:``) and no configured trailers, and no ``---`` divider (as ``for-each-ref``
reads messages).

Example::

    opts = TrailerOptions(only=True, unfold=True)
    format_trailers(b"subject\\n\\nbody\\n\\nAcked-by: me\\n", opts)  # b"Acked-by: me\\n"
"""

from __future__ import annotations

from dataclasses import dataclass, field

_GIT_GENERATED = (b"Signed-off-by: ", b"(cherry picked from commit ")
_SPACE = b" \t\n\r\x0b\x0c"


@dataclass
class TrailerOptions:
    """What ``format_trailers`` prints (Git's ``process_trailer_options``)."""

    only: bool = False
    unfold: bool = False
    key_only: bool = False
    value_only: bool = False
    keys: list[bytes] = field(default_factory=list)
    separator: bytes | None = None
    key_value_separator: bytes | None = None

    def plain(self) -> bool:
        """True when the block is printed as it is in the message."""
        return not (
            self.only
            or self.unfold
            or self.keys
            or self.separator is not None
            or self.key_only
            or self.value_only
            or self.key_value_separator is not None
        )


def _is_blank(line: bytes) -> bool:
    return line.strip(_SPACE) == b""


def find_separator(line: bytes) -> int:
    """Position of the ``:`` after a token (letters, digits, ``-``, then blanks), or -1."""
    whitespace = False
    for i, c in enumerate(line):
        if c == 0x3A:
            return i
        if not whitespace and (chr(c).isalnum() and c < 0x80 or c == 0x2D):
            continue
        if i != 0 and c in (0x20, 0x09):
            whitespace = True
            continue
        break
    return -1


def _lines(buf: bytes) -> list[tuple[int, bytes]]:
    """``(offset, line with its LF)`` for every line of ``buf``."""
    out = []
    pos = 0
    while pos < len(buf):
        nl = buf.find(b"\n", pos)
        end = len(buf) if nl < 0 else nl + 1
        out.append((pos, buf[pos:end]))
        pos = end
    return out


def _end_of_message(buf: bytes) -> int:
    """The message end after trailing comment lines (``#``) are set aside."""
    lines = _lines(buf)
    end = len(buf)
    for pos, line in reversed(lines):
        if line.startswith(b"#") or _is_blank(line):
            if line.startswith(b"#"):
                end = pos
            continue
        break
    return end


def trailer_block(buf: bytes) -> tuple[int, int]:
    """``(start, end)`` of the trailer block in message ``buf`` (start == end: none)."""
    end = _end_of_message(buf)
    lines = _lines(buf[:end])
    # The first paragraph is the title and cannot hold trailers.
    title_end = 0
    for i, (_pos, line) in enumerate(lines):
        if line.startswith(b"#"):
            continue
        if _is_blank(line):
            title_end = i
            break
    else:
        return end, end
    only_spaces = True
    recognized = False
    trailer_lines = non_trailer = continuation = 0
    for i in range(len(lines) - 1, title_end - 1, -1):
        pos, line = lines[i]
        if line.startswith(b"#"):
            non_trailer += continuation
            continuation = 0
            continue
        if _is_blank(line):
            if only_spaces:
                continue
            non_trailer += continuation
            start = pos + len(line)
            if recognized and trailer_lines * 3 >= non_trailer:
                return start, end
            if trailer_lines and not non_trailer:
                return start, end
            return end, end
        only_spaces = False
        if line.startswith(_GIT_GENERATED):
            trailer_lines += 1
            continuation = 0
            recognized = True
            continue
        sep = find_separator(line)
        if sep >= 1 and line[:1] not in (b" ", b"\t"):
            trailer_lines += 1
            continuation = 0
        elif line[:1] in (b" ", b"\t"):
            continuation += 1
        else:
            non_trailer += 1 + continuation
            continuation = 0
    return end, end


@dataclass
class TrailerItem:
    """One trailer (``token``, ``value``) or a non-trailer line (``token`` None)."""

    raw: bytes
    token: bytes | None
    value: bytes


def parse_trailers(buf: bytes) -> list[TrailerItem]:
    """The items of the trailer block of ``buf``; continuation lines join their trailer."""
    start, end = trailer_block(buf)
    items: list[bytes] = []
    for _pos, line in _lines(buf[start:end]):
        if items and line[:1] in (b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c"):
            items[-1] += line
        else:
            items.append(line)
    out = []
    for raw in items:
        if raw.startswith(b"#"):
            continue
        sep = find_separator(raw)
        if sep >= 1:
            out.append(TrailerItem(raw, raw[:sep].strip(_SPACE), raw[sep + 1 :].strip(_SPACE)))
        else:
            out.append(TrailerItem(raw, None, raw))
    return out


def unfold(value: bytes) -> bytes:
    """A folded value on one line: each newline and the blanks after it become a space."""
    out = bytearray()
    i = 0
    while i < len(value):
        c = value[i]
        i += 1
        if c == 0x0A:
            while i < len(value) and value[i] in _SPACE:
                i += 1
            out.append(0x20)
        else:
            out.append(c)
    return bytes(out).strip(_SPACE)


def format_trailers(buf: bytes, opts: TrailerOptions) -> bytes:
    """The trailers of message ``buf`` as Git's ``format_trailers_from_commit`` prints them."""
    if opts.plain():
        start, end = trailer_block(buf)
        return buf[start:end]
    out = bytearray()
    for item in parse_trailers(buf):
        if item.token is not None:
            tok, val = item.token, item.value
            if opts.unfold:
                val = unfold(val)
            if opts.keys and not any(_key_matches(tok, k) for k in opts.keys):
                continue
            if opts.separator is not None and out:
                out += opts.separator
            if not opts.value_only:
                out += tok
            if not opts.key_only and not opts.value_only:
                out += opts.key_value_separator if opts.key_value_separator is not None else b": "
            if not opts.key_only:
                out += val
            if opts.separator is None:
                out += b"\n"
        elif not opts.only:
            if opts.separator is not None and out:
                out += opts.separator
            out += item.raw
            if opts.separator is not None:
                out[:] = bytes(out).rstrip(_SPACE)
    return bytes(out)


def _key_matches(token: bytes, key: bytes) -> bool:
    return token.lower() == key.lower()
