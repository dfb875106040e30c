"""Git attributes (``gitattributes``): parsing attribute files and answering for a path.

A file is lines of ``<pattern> <attr>...``; each attr is ``name`` (set), ``-name``
(unset), ``!name`` (unspecified) or ``name=value``.  ``[attr]<name> <attr>...``
defines a macro (only in the files Git allows it: the top-level ``.gitattributes``,
``$GIT_DIR/info/attributes``, the global and system files); ``binary`` is built
in as ``-diff -merge -text``.  A pattern without a slash matches a path's last
component, one with a slash matches from the directory of its file
(``wildmatch`` with WM_PATHNAME); a pattern ending in ``/`` names directories
only, so it never matches a file; ``!pattern`` is refused as Git refuses it.

``AttributeStack`` holds the files from lowest to highest precedence (builtin,
system, global, ``.gitattributes`` from the top directory down, info) and
``check(path)`` returns the determined attributes: for each attribute the last
matching line of the most specific file wins, and a macro set by a line sets
its attributes where they are still undetermined (Git's ``fill``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gitodb.objects.wildmatch import wildmatch

#: an attribute's state: True (set), False (unset), None (unspecified, "!name"), or a value
AttrValue = bool | str | None

_BLANK = " \t\r\n"
_NAME = re.compile(r"[a-zA-Z0-9_.][-a-zA-Z0-9_.]*")
_MACRO_PREFIX = "[attr]"
# Git ignores longer lines (ATTR_MAX_LINE_LENGTH) and larger files (ATTR_MAX_FILE_SIZE)
MAX_LINE_LENGTH = 2048
MAX_FILE_SIZE = 100 * 1024 * 1024
BUILTIN = b"[attr]binary -diff -merge -text\n"

#: where messages about a file go (Git prints them on stderr and goes on)
Warn = Callable[[str], None]


def _stderr(message: str) -> None:
    sys.stderr.write(message + "\n")


@dataclass(frozen=True)
class AttrLine:
    """One line: a pattern (or, for a macro, its name) and its states in order."""

    pattern: str
    states: tuple[tuple[str, AttrValue], ...]
    is_macro: bool = False
    must_be_dir: bool = False
    no_dir: bool = False  # no slash in the pattern: match the last path component


@dataclass
class AttrFile:
    """The lines of one attribute file and the directory it applies to (``""``: top)."""

    lines: list[AttrLine] = field(default_factory=list)
    origin: str = ""


def unquote_c_style(text: str) -> tuple[str, int] | None:
    """Git's ``unquote_c_style``: the C-quoted string at the start of ``text`` (which
    starts with ``"``): (value, length used), or None when it is malformed.  Bytes
    travel as ``surrogateescape`` characters."""
    escapes = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
    out: list[str] = []
    i = 1
    while i < len(text):
        c = text[i]
        if c == '"':
            return "".join(out), i + 1
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1 : i + 2]
        if nxt in escapes:
            out.append(escapes[nxt])
            i += 2
        elif nxt in ('"', "\\"):
            out.append(nxt)
            i += 2
        elif nxt and nxt in "0123":
            digits = text[i + 1 : i + 4]
            if len(digits) != 3 or not all(d in "01234567" for d in digits):
                return None
            # an octal escape is one byte of the (UTF-8) path
            out.append(bytes([int(digits, 8)]).decode("utf-8", "surrogateescape"))
            i += 4
        else:
            return None
    return None


_unquote = unquote_c_style


def _span(text: str, chars: str) -> int:
    i = 0
    while i < len(text) and text[i] in chars:
        i += 1
    return i


def _cspan(text: str, chars: str) -> int:
    i = 0
    while i < len(text) and text[i] not in chars:
        i += 1
    return i


def _valid_name(name: str) -> bool:
    return _NAME.fullmatch(name) is not None and not name.startswith("builtin_")


def _parse_states(
    text: str, src: str, lineno: int, warn: Warn
) -> tuple[tuple[str, AttrValue], ...] | None:
    states: list[tuple[str, AttrValue]] = []
    cp = text
    while cp:
        ep = _cspan(cp, _BLANK)
        equals = cp.find("=", 0, ep)
        word = cp[: equals if equals >= 0 else ep]
        value: AttrValue = True
        if word[:1] in ("-", "!"):
            value = False if word[0] == "-" else None
            word = word[1:]
        elif equals >= 0:
            value = cp[equals + 1 : ep]
        if not _valid_name(word):
            warn(f"{word} is not a valid attribute name: {src}:{lineno}")
            return None
        states.append((word, value))
        cp = cp[ep:]
        cp = cp[_span(cp, _BLANK) :]
    return tuple(states)


def parse_line(line: str, src: str, lineno: int, macro_ok: bool, warn: Warn) -> AttrLine | None:
    """One line of an attribute file (Git's ``parse_attr_line``), or None to skip it."""
    cp = line[_span(line, _BLANK) :]
    if not cp or cp.startswith("#"):
        return None
    if len(line.encode("utf-8", "surrogateescape")) >= MAX_LINE_LENGTH:
        warn(f"warning: ignoring overly long attributes line {lineno}")
        return None
    quoted = _unquote(cp) if cp.startswith('"') else None
    if quoted is not None:
        name, used = quoted
        states = cp[used:]
    else:
        used = _cspan(cp, _BLANK)
        name, states = cp[:used], cp[used:]
    is_macro = len(name) > len(_MACRO_PREFIX) and name.startswith(_MACRO_PREFIX)
    if is_macro:
        if not macro_ok:
            warn(f"{name} not allowed: {src}:{lineno}")
            return None
        rest = cp[len(_MACRO_PREFIX) :]
        rest = rest[_span(rest, _BLANK) :]
        end = _cspan(rest, _BLANK)
        name, states = rest[:end], rest[end:]
        if not _valid_name(name):
            warn(f"{name} is not a valid attribute name: {src}:{lineno}")
            return None
    parsed = _parse_states(states[_span(states, _BLANK) :], src, lineno, warn)
    if parsed is None:
        return None
    if is_macro:
        return AttrLine(name, parsed, is_macro=True)
    if name.startswith("!"):
        warn(
            "warning: Negative patterns are ignored in git attributes\n"
            "Use '\\!' for literal leading exclamation."
        )
        return None
    must_be_dir = name.endswith("/")
    if must_be_dir:
        name = name.rstrip("/")
    return AttrLine(name, parsed, must_be_dir=must_be_dir, no_dir="/" not in name)


def parse_file(
    data: bytes, src: str, *, origin: str = "", macro_ok: bool = True, warn: Warn = _stderr
) -> AttrFile:
    """An attribute file's content (Git's ``read_attr_from_buf``).

    ``origin`` is the directory the file is in, relative to the top (``""`` for the
    top and for files outside the tree); ``src`` names the file in messages.
    """
    if len(data) > MAX_FILE_SIZE:
        warn(f"warning: ignoring overly large gitattributes file '{src}'")
        return AttrFile(origin=origin)
    text = data.decode("utf-8", "surrogateescape")
    if text.startswith("\ufeff"):
        text = text[1:]
    out = AttrFile(origin=origin)
    for lineno, line in enumerate(text.split("\n"), 1):
        parsed = parse_line(line, src, lineno, macro_ok, warn)
        if parsed is not None:
            out.lines.append(parsed)
    return out


def _path_matches(path: str, line: AttrLine, origin: str, casefold: bool) -> bool:
    """Git's ``path_matches`` for a file (never a directory) ``path``."""
    if line.must_be_dir:
        return False
    pattern = line.pattern
    if line.no_dir:
        base = path.rsplit("/", 1)[-1]
        return wildmatch(pattern, base, casefold=casefold)
    if pattern.startswith("/"):
        pattern = pattern[1:]
    if origin:
        prefix = origin + "/"
        if not (path.lower().startswith(prefix.lower()) if casefold else path.startswith(prefix)):
            return False
        path = path[len(prefix) :]
    return wildmatch(pattern, path, pathname=True, casefold=casefold)


class AttributeStack:
    """Attribute files from lowest to highest precedence, and lookups against them."""

    def __init__(self, files: Iterable[AttrFile], *, casefold: bool = False) -> None:
        self.files = [parse_file(BUILTIN, "[builtin]"), *files]
        self.casefold = casefold
        # Git's determine_macros: the most specific definition wins
        self.macros: dict[str, AttrLine] = {}
        for f in reversed(self.files):
            for line in reversed(f.lines):
                if line.is_macro and line.pattern not in self.macros:
                    self.macros[line.pattern] = line

    def check(self, path: str) -> dict[str, AttrValue]:
        """Every attribute determined for ``path`` (a file path relative to the top).

        An attribute absent from the result is unspecified, as is one whose value
        is None (``!name``).
        """
        found: dict[str, AttrValue] = {}
        for f in reversed(self.files):
            for line in reversed(f.lines):
                if not line.is_macro and _path_matches(path, line, f.origin, self.casefold):
                    self._fill(line, found)
        return found

    def _fill(self, line: AttrLine, found: dict[str, AttrValue], depth: int = 0) -> None:
        for name, value in reversed(line.states):
            if name in found:
                continue
            found[name] = value
            macro = self.macros.get(name)
            if macro is not None and value is True and depth < 100:
                self._fill(macro, found, depth + 1)
