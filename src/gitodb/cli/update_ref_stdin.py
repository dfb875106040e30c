"""Parsing ``update-ref --stdin`` commands exactly as Git does (text and ``-z``).

Each command arrives as one buffer: in text mode the line with its ``\\n``; with
``-z`` the command token and its arguments, each followed by NUL.  Arguments are
read like Git's ``parse_arg``/``parse_next_oid`` (C-style quoting in text mode,
an empty value meaning the null id), and every error has Git's wording.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import BinaryIO

from gitodb.errors import GitodbError
from gitodb.refs.base import refname_format_ok

#: command -> number of arguments (Git's table; with -z, the first one is in the
#: command token and the rest are separate NUL-terminated tokens)
ARGS = {
    "update": 3,
    "create": 2,
    "delete": 2,
    "verify": 2,
    "symref-update": 4,
    "symref-create": 2,
    "symref-delete": 2,
    "symref-verify": 2,
    "option": 1,
    "start": 0,
    "prepare": 0,
    "abort": 0,
    "commit": 0,
}
_ESC = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    '"': '"',
}


def read_commands(stream: BinaryIO, z: bool) -> Iterator[tuple[str, str]]:
    """(command, rest of its buffer) one at a time, as input arrives."""
    term = "\0" if z else "\n"
    while True:
        first = _read_token(stream, z)
        if first is None:
            return
        if first.startswith(term):
            raise GitodbError("empty command in input")
        if first[:1].isspace():
            raise GitodbError(f"whitespace before command: {first}")
        cmd = None
        for name, nargs in ARGS.items():
            if first.startswith(name) and first[len(name) : len(name) + 1] == (
                " " if nargs else term
            ):
                cmd = name
                break
        if cmd is None:
            raise GitodbError(f"unknown command: {first}")
        buf = first
        for _ in range(1, ARGS[cmd] if z else 1):
            more = _read_token(stream, z)
            if more is None:
                break  # the command reports the missing argument
            buf += more
        yield cmd, buf[len(cmd) + (1 if ARGS[cmd] else 0) :]


def _read_token(stream: BinaryIO, z: bool) -> str | None:
    """One line (with its ``\\n``) or one NUL-terminated token (with its NUL)."""
    if not z:
        raw = stream.readline()
    else:
        buf = bytearray()
        while True:
            c = stream.read(1)
            if not c:
                break
            buf += c
            if c == b"\0":
                break
        raw = bytes(buf)
    if not raw:
        return None
    return raw.decode("utf-8", "surrogateescape")


def _unquote(text: str) -> tuple[str, int] | None:
    """Git's ``unquote_c_style``: (value, characters consumed) or None if malformed."""
    out: list[str] = []
    i = 1
    while i < len(text):
        c = text[i]
        if c == '"':
            return "".join(out), i + 1
        if c == "\\":
            i += 1
            if i >= len(text):
                return None
            e = text[i]
            if e in _ESC:
                out.append(_ESC[e])
            elif (
                "0" <= e <= "3"
                and i + 2 < len(text)
                and all("0" <= d <= "7" for d in text[i + 1 : i + 3])
            ):
                out.append(chr(int(text[i : i + 3], 8)))
                i += 2
            else:
                return None
        elif c == "\n":
            return None
        else:
            out.append(c)
        i += 1
    return None


class CommandParser:
    """Git's argument readers over one command's buffer."""

    def __init__(
        self, buf: str, z: bool, resolve: Callable[[str], bytes | None], null: bytes
    ) -> None:
        self.buf = buf
        self.pos = 0
        self.term = "\0" if z else "\n"
        self.z = z
        self.resolve = resolve
        self.null = null

    def _rest(self) -> str:
        return self.buf[self.pos :]

    def at_end(self) -> bool:
        """Whether only the terminator (or nothing) is left, as Git requires."""
        return self.pos >= len(self.buf) or self.buf[self.pos] == self.term

    def extra(self, what: str) -> None:
        """Refuse input after the last argument (``<what>: extra input: ...``)."""
        if not self.at_end():
            raise GitodbError(f"{what}: extra input: {self._rest()}")

    def _arg(self) -> str:
        rest = self._rest()
        if rest.startswith('"'):
            got = _unquote(rest)
            if got is None:
                raise GitodbError(f"badly quoted argument: {rest}")
            value, used = got
            after = rest[used : used + 1]
            if after not in ("", " ", self.term):
                raise GitodbError(f"unexpected character after quoted argument: {rest}")
            self.pos += used
            return value
        end = self.pos
        while end < len(self.buf) and not self.buf[end].isspace() and self.buf[end] != "\0":
            end += 1
        value = self.buf[self.pos : end]
        self.pos = end
        return value

    def refname(self) -> str | None:
        """The next ref name (None if missing); a malformed one is fatal."""
        if self.z:
            end = self.buf.find("\0", self.pos)
            end = len(self.buf) if end < 0 else end
            name = self.buf[self.pos : end]
            self.pos = end
        else:
            name = self._arg()
        if not name:
            return None
        if not refname_format_ok(name, allow_onelevel=True):
            raise GitodbError(f"invalid ref format: {name}")
        return name

    def next_arg(self) -> str | None:
        """Git's ``parse_next_arg``: the next argument (None if absent or empty)."""
        if self.pos >= len(self.buf) or self.buf[self.pos] == self.term and not self.z:
            return None
        if self.z:
            if self.buf[self.pos] != "\0":
                return None
            self.pos += 1
            end = self.buf.find("\0", self.pos)
            end = len(self.buf) if end < 0 else end
            arg = self.buf[self.pos : end]
            self.pos = end
        else:
            if self.buf[self.pos] != " ":
                return None
            self.pos += 1
            arg = self._arg()
        return arg or None

    def target(self) -> str | None:
        """A symref target argument (checked like a ref name), or None if absent."""
        arg = self.next_arg()
        if arg is not None and not refname_format_ok(arg, allow_onelevel=True):
            raise GitodbError(f"invalid ref format: {arg}")
        return arg

    def oid(self, command: str, ref: str, *, old: bool, allow_empty: bool = False) -> bytes | None:
        """Git's ``parse_next_oid``: the next id, the null id for an empty value,
        or None when the argument is absent."""
        which = "<old-oid>" if old else "<new-oid>"
        if self.pos >= len(self.buf):
            raise GitodbError(f"{command} {ref}: unexpected end of input when reading {which}")
        if not self.z:
            if self.buf[self.pos] == self.term:
                return None
            if self.buf[self.pos] != " ":
                raise GitodbError(f"{command} {ref}: expected SP but got: {self._rest()}")
            self.pos += 1
            arg = self._arg()
            if not arg:
                return self.null
        else:
            if self.buf[self.pos] != "\0":
                raise GitodbError(f"{command} {ref}: expected NUL but got: {self._rest()}")
            self.pos += 1
            if self.pos >= len(self.buf):
                raise GitodbError(f"{command} {ref}: unexpected end of input when reading {which}")
            end = self.buf.find("\0", self.pos)
            end = len(self.buf) if end < 0 else end
            arg = self.buf[self.pos : end]
            self.pos = end
            if not arg:
                if allow_empty:
                    sys.stderr.write(
                        f"warning: {command} {ref}: missing <new-oid>, treating as zero\n"
                    )
                    return self.null
                return None
        got = self.resolve(arg)
        if got is None:
            raise GitodbError(f"{command} {ref}: invalid {which}: {arg}")
        return got
