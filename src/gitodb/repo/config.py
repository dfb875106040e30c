"""Git config files: the subset of the syntax Git writes and users commonly edit.

Keys are stored as Git canonicalises them: ``section.subsection.key`` with the
section and key lower-cased and the subsection kept as written.  Later values
win, ``-c key=value`` overrides win over files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from gitodb.errors import ConfigError

_SECTION = re.compile(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_TRUE = {"true", "yes", "on", "1", ""}
_FALSE = {"false", "no", "off", "0"}
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def canonical_key(key: str) -> str:
    """Lower-case the section and variable name, keep a subsection as written."""
    first, _, rest = key.partition(".")
    if not rest:
        raise ConfigError(f"key does not contain a section: {key}")
    sub, _, var = rest.rpartition(".")
    return f"{first.lower()}.{sub}.{var.lower()}" if sub else f"{first.lower()}.{var.lower()}"


def _unquote_value(raw: str, path: str, lineno: int) -> str:
    """Git's value rules: quotes group, backslash escapes, unquoted whitespace runs
    are kept between words but dropped at both ends, ``#``/``;`` start a comment."""
    out: list[str] = []
    quoted = False
    pending_spaces = 0
    i = 0
    while i < len(raw):
        c = raw[i]
        i += 1
        if not quoted and c in "#;":
            break
        if not quoted and c.isspace():
            if out:
                pending_spaces += 1
            continue
        out.append(" " * pending_spaces)
        pending_spaces = 0
        if c == '"':
            quoted = not quoted
        elif c == "\\":
            if i >= len(raw):
                raise ConfigError(f"bad config line {lineno} in file {path}", path=path)
            esc = raw[i]
            i += 1
            if esc not in _ESCAPES:
                raise ConfigError(f"bad config line {lineno} in file {path}", path=path)
            out.append(_ESCAPES[esc])
        else:
            out.append(c)
    if quoted:
        raise ConfigError(f"bad config line {lineno} in file {path}", path=path)
    return "".join(out)


_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}


class Config:
    """Values from config files plus ``-c`` overrides; multi-valued keys kept in order."""

    def __init__(self) -> None:
        self._values: dict[str, list[str | None]] = {}

    def read_file(self, path: str | os.PathLike[str]) -> None:
        """Add every entry of the config file at ``path`` (missing file: nothing)."""
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return
        section = None
        for lineno, line in enumerate(lines, 1):
            text = line.strip()
            if not text or text[0] in "#;":
                continue
            if text.startswith("["):
                m = _SECTION.match(text)
                if not m:
                    raise ConfigError(f"bad config line {lineno} in file {os.fspath(path)}",
                                      path=path)
                name, sub, rest = m.groups()
                if sub is None and "." in name:
                    name, _, sub = name.partition(".")
                    name = f"{name.lower()}.{sub.lower()}"
                else:
                    name = name.lower()
                    if sub is not None:
                        name = name + "." + re.sub(r"\\(.)", r"\1", sub)
                section = name
                text = rest.strip()
                if not text or text[0] in "#;":
                    continue
            if section is None:
                raise ConfigError(f"bad config line {lineno} in file {os.fspath(path)}", path=path)
            var, eq, raw = text.partition("=")
            var = var.strip().lower()
            value = _unquote_value(raw, os.fspath(path), lineno) if eq else None
            self.add(f"{section}.{var}", value)

    def add(self, key: str, value: str | None) -> None:
        """Append a value for ``key``; ``None`` is a bare key (boolean true)."""
        self._values.setdefault(canonical_key(key), []).append(value)

    def apply_overrides(self, pairs: Iterable[str]) -> None:
        """Apply ``-c key=value`` settings (``-c key`` alone means true)."""
        for pair in pairs:
            key, eq, value = pair.partition("=")
            if not key:
                raise ConfigError(f"bogus config parameter: {pair}")
            self.add(key, value if eq else None)

    def get(self, key: str, default: str | None = None) -> str | None:
        """Last value of ``key`` or ``default``; a bare key gives the empty string."""
        vals = self._values.get(canonical_key(key))
        if not vals:
            return default
        return vals[-1] if vals[-1] is not None else ""

    def get_all(self, key: str) -> list[str]:
        """Every value of ``key`` in order."""
        return [v if v is not None else "" for v in self._values.get(canonical_key(key), [])]

    def get_raw_all(self, key: str) -> list[str | None]:
        """Every value of ``key`` in order, ``None`` for a bare key (no ``=``)."""
        return list(self._values.get(canonical_key(key), []))

    def get_bool(self, key: str, default: bool = False) -> bool:
        """Value of ``key`` read as Git reads a boolean."""
        vals = self._values.get(canonical_key(key))
        if not vals:
            return default
        v = vals[-1]
        if v is None:
            return True
        low = v.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        try:
            return parse_int(v, key) != 0
        except ConfigError:
            raise ConfigError(f"bad boolean config value '{v}' for '{key}'") from None

    def get_int(self, key: str, default: int) -> int:
        """Value of ``key`` read as Git reads an integer (k/m/g suffixes)."""
        v = self.get(key)
        return default if v is None else parse_int(v, key)

    def names(self) -> list[str]:
        """Every key that has a value, canonical, in first-seen order."""
        return list(self._values)

    def __contains__(self, key: str) -> bool:
        return canonical_key(key) in self._values


def parse_int(text: str, key: str = "") -> int:
    """Parse a Git config integer with an optional k, m or g unit suffix."""
    t = text.strip()
    unit = t[-1:].lower() if t[-1:].isalpha() else ""
    num = t[: -1] if unit else t
    if unit not in _UNITS or not re.fullmatch(r"[-+]?\d+", num):
        raise ConfigError(f"bad numeric config value '{text}' for '{key}': invalid unit")
    return int(num) * _UNITS[unit]
