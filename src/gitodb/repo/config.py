"""Git config files: the subset of the syntax Git writes and users commonly edit.

Keys are stored as Git canonicalises them: ``section.subsection.key`` with the
section and key lower-cased and the subsection kept as written.  Later values
win, ``-c key=value`` overrides win over files.
"""

from __future__ import annotations

import os

from gitodb.errors import ConfigError, report
from gitodb.lazyre import lazy
from gitodb.repo.config_include import MAX_INCLUDE_DEPTH, Includes, include_target

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

#: the section header's expression: ``_section_header`` parses it without ``re`` (the
#: tests hold the two equal)
_SECTION = lazy(
    r'(?s)^\[[ \t]*([A-Za-z0-9.-]+)(?:[ \t]+"((?:[^"\\\n]|\\.)*)")?'
    r"[ \t]*\][ \t]*(.*)$"
)
#: Git's isspace() (its own ctype table): not \v, \f or Unicode spaces
_BLANKS = " \t\r\n"
_VAR = lazy(r"[a-z][a-z0-9-]*")
_SECTION_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-")
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_VAR_CHARS = _LOWER + "0123456789-"
#: a backslash escape in a subsection name
_ESCAPED = lazy(r"\\(.)")
_TRUE = {"true", "yes", "on"}
_FALSE = {"false", "no", "off", ""}
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def _is_var(name: str) -> bool:
    """``_VAR.fullmatch(name)``: a lower-case letter, then letters, digits and '-'."""
    return name[:1] in _LOWER and name != "" and not name.strip(_VAR_CHARS)


def _section_header(text: str) -> tuple[str, str | None, str] | None:
    """``_SECTION.match(text).groups()`` for a line starting with ``[`` (None where it
    does not match): the name, the quoted subsection (escapes kept) or None, and
    what follows the ``]`` and its blanks.  A scan, not the expression: every
    command parses the config files, and ``re`` is start-up time."""
    n = len(text)
    i = 1
    while i < n and text[i] in " \t":
        i += 1
    j = i
    while j < n and text[j] in _SECTION_CHARS:
        j += 1
    if j == i:
        return None
    sub = None
    k = j
    while k < n and text[k] in " \t":
        k += 1
    if k > j and k < n and text[k] == '"':
        # (?:[^"\\\n]|\\.)* then '"': a backslash takes the next character whatever it is
        m = k + 1
        while m < n and text[m] != '"':
            if text[m] == "\\":
                m += 2
            elif text[m] == "\n":
                return None
            else:
                m += 1
        if m >= n:
            return None
        sub = text[k + 1 : m]
        k = m + 1
        while k < n and text[k] in " \t":
            k += 1
    if k >= n or text[k] != "]":
        return None
    k += 1
    while k < n and text[k] in " \t":
        k += 1
    return text[i:j], sub, text[k:]


class _IncludeFailed(Exception):
    """An include could not be followed; Git then names the line that asked for it."""

    def __init__(self, details: list[str]) -> None:
        super().__init__(*details)
        self.details = details


def _read_config_text(path: str | os.PathLike[str], name: str) -> str | None:
    """The text of a config file, None if it does not exist (Git skips it)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except IsADirectoryError:
        report("warning", f"unable to access '{name}': Is a directory")
        return None
    except OSError as e:
        raise ConfigError(f"unable to access '{name}': {e.strerror}", path=path) from None
    return data.decode("utf-8", errors="surrogateescape")


def parse_key(key: str) -> str:
    """Git's ``git_config_parse_key``: check a command-line key, return it canonical."""
    if not key:
        raise ConfigError("empty config key")
    last = key.rfind(".")
    if last <= 0:
        raise ConfigError(f"key does not contain a section: {key}")
    if last == len(key) - 1:
        raise ConfigError(f"key does not contain variable name: {key}")
    first = key.find(".")
    section, var = key[:first], key[last + 1 :]
    if not all(c.isascii() and (c.isalnum() or c == "-") for c in section + var) or not (
        var[0].isascii() and var[0].isalpha()
    ):
        raise ConfigError(f"invalid key: {key}")
    if "\n" in key:
        raise ConfigError(f"invalid key (newline): {key}")
    return canonical_key(key)


def canonical_key(key: str) -> str:
    """Lower-case the section and variable name, keep a subsection as written."""
    if key.count(".") == 1 and key[-1] != ".":  # no subsection: all of it lower-cased
        return key.lower()
    first, _, rest = key.partition(".")
    if not rest:
        raise ConfigError(f"key does not contain a section: {key}")
    sub, dot, var = rest.rpartition(".")
    # an empty subsection ([submodule ""]) is one, as in Git: "submodule..url"
    return f"{first.lower()}.{sub}.{var.lower()}" if dot else f"{first.lower()}.{var.lower()}"


def _unquote_value(raw: str, path: str, lineno: int) -> str:
    """Git's value rules: quotes group, backslash escapes, unquoted whitespace runs
    are kept between words but dropped at both ends, ``#``/``;`` start a comment."""
    if '"' not in raw and "\\" not in raw and "#" not in raw and ";" not in raw:
        # Most values: no quote, escape or comment; each blank between words is a
        # space, as the loop below makes it (one space per blank character).
        return raw.replace("\t", " ").replace("\r", " ").strip(" ")
    out: list[str] = []
    quoted = False
    pending_spaces = 0
    i = 0
    while i < len(raw):
        c = raw[i]
        i += 1
        if not quoted and c in "#;":
            break
        if not quoted and c in _BLANKS:
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


#: one entry of a config file: (key, value or None for a bare key, line number)
Entry = tuple[str, "str | None", int]


def parse_file(path: str | os.PathLike[str], name: str) -> Iterator[Entry] | None:
    """The entries of the config file at ``path`` in order (``name``: the file as
    messages name it), includes not followed; None if it does not exist.  The file is
    read now and parsed as the entries are taken, so a bad line raises only when
    reached, after the includes before it are followed, as in Git."""
    text = _read_config_text(path, name)
    return None if text is None else _entries(text, name)


def _entries(text: str, name: str) -> Iterator[Entry]:
    section = None
    # Git ends lines at \n only (\r before it is a blank)
    for lineno, line in enumerate(text.split("\n"), 1):
        text = line.strip(_BLANKS)
        if not text or text[0] in "#;":
            continue
        if text.startswith("["):
            header = _section_header(text)
            if header is None:
                raise ConfigError(f"bad config line {lineno} in file {name}", path=name)
            sname, sub, rest = header
            if sub is None and "." in sname:
                sname, _, sub = sname.partition(".")
                sname = f"{sname.lower()}.{sub.lower()}"
            else:
                sname = sname.lower()
                if sub is not None:
                    sname = sname + "." + (_ESCAPED.sub(r"\1", sub) if "\\" in sub else sub)
            section = sname
            text = rest.strip(_BLANKS)
            if not text or text[0] in "#;":
                continue
        var, eq, raw = text.partition("=")
        var = var.strip(_BLANKS).lower()
        if not _is_var(var):  # Git: a letter, then letters, digits and '-'
            raise ConfigError(f"bad config line {lineno} in file {name}", path=name)
        value = _unquote_value(raw, name, lineno) if eq else None
        if value is not None:
            value = value.partition("\0")[0]  # Git uses values as C strings
        # Git takes a key before any section header as it is (no section).
        yield (f"{section}.{var}" if section is not None else var, value, lineno)


class Config:
    """Values from config files plus ``-c`` overrides; multi-valued keys kept in order.

    Each value remembers where it came from (file and line, or the command line),
    so that a value Git would reject is reported with Git's words and place.
    """

    def __init__(self) -> None:
        self._values: dict[str, list[str | None]] = {}
        # per key, parallel to _values: (file as Git names it, line) or None (-c)
        self._origins: dict[str, list[tuple[str, int] | None]] = {}

    def read_file(
        self,
        path: str | os.PathLike[str],
        display: str | None = None,
        *,
        includes: Includes | None = None,
    ) -> None:
        """Add every entry of the config file at ``path`` (missing file: nothing).

        ``display`` is the file's name in messages (Git's: ``.git/config``).  With
        ``includes``, ``include.path`` and ``includeIf`` are followed (see
        ``gitodb.repo.config_include``).
        """
        name = display if display is not None else os.fspath(path)
        self.add_entries(parse_file(path, name), path, name, includes=includes)

    def add_entries(
        self,
        entries: Iterable[Entry] | None,
        path: str | os.PathLike[str],
        display: str | None = None,
        *,
        includes: Includes | None = None,
    ) -> None:
        """Add the entries ``parse_file`` read from ``path`` (None: a missing file), as
        ``read_file`` does: a file parsed once can be added to several configs."""
        if entries is None:
            return
        name = display if display is not None else os.fspath(path)
        source = os.fspath(path)
        for key, value, lineno in entries:
            try:
                self._entry(key, value, (name, lineno), source, name, includes)
            except _IncludeFailed as e:
                raise ConfigError(
                    f"bad config line {lineno} in file {name}", path=name, details=e.details
                ) from None

    def _entry(
        self,
        key: str,
        value: str | None,
        origin: tuple[str, int] | None,
        source: str | None,
        display: str | None,
        includes: Includes | None,
    ) -> None:
        """Store one entry; with ``includes``, follow it if it is an include."""
        if includes is not None:
            includes.check_entry(key, value)
        self.add(key, value, origin=origin)
        if includes is None:
            return
        if key == "include.path":
            self._include(value, key, source, display, includes, conditional=False)
        elif key.startswith("includeif.") and key.endswith(".path") and key.count(".") >= 2:
            if includes.condition(key[len("includeif.") : -len(".path")], source):
                self._include(value, key, source, display, includes, conditional=True)

    def _include(
        self,
        value: str | None,
        key: str,
        source: str | None,
        display: str | None,
        includes: Includes,
        *,
        conditional: bool,
    ) -> None:
        """Read the file an include names, in place."""
        try:
            target, shown = include_target(value, key, source, display)
        except ConfigError as e:
            raise _IncludeFailed([str(e)]) from None
        if not os.path.exists(target):
            return
        if os.path.isdir(target):
            report("warning", f"unable to access '{shown}': Is a directory")
            raise _IncludeFailed([])
        includes.depth += 1
        if includes.depth > MAX_INCLUDE_DEPTH:
            raise ConfigError(
                f"exceeded maximum include depth ({MAX_INCLUDE_DEPTH}) while including\n"
                f"\t{shown}\nfrom\n\t{display if display is not None else 'the command line'}\n"
                "This might be due to circular includes."
            )
        includes.conditional += conditional
        try:
            self.read_file(target, shown, includes=includes)
        finally:
            includes.depth -= 1
            includes.conditional -= conditional

    def add(self, key: str, value: str | None, *, origin: tuple[str, int] | None = None) -> None:
        """Append a value for ``key``; ``None`` is a bare key (boolean true).

        ``origin`` is ``(file, line)``; None means the command line.
        """
        k = canonical_key(key) if "." in key else key.lower()
        self._values.setdefault(k, []).append(value)
        self._origins.setdefault(k, []).append(origin)

    def apply_overrides(self, pairs: Iterable[str], *, includes: Includes | None = None) -> None:
        """Apply ``-c key=value`` settings (``-c key`` alone means true)."""
        self.apply_settings(
            ((k, v if eq else None) for k, eq, v in (p.partition("=") for p in pairs)),
            includes=includes,
        )

    def apply_settings(
        self, settings: Iterable[tuple[str, str | None]], *, includes: Includes | None = None
    ) -> None:
        """Apply command-line settings ``(key, value or None)``, checking keys as Git does."""
        for key, value in settings:
            try:
                k = parse_key(key)
                self._entry(k, value, None, None, None, includes)
            except (_IncludeFailed, ConfigError) as e:
                details = e.details if isinstance(e, _IncludeFailed) else [str(e)]
                if isinstance(e, ConfigError) and str(e).startswith("exceeded maximum"):
                    raise
                raise ConfigError("unable to parse command-line config", details=details) from None

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

    def _last(self, key: str) -> tuple[str, str | None, tuple[str, int] | None] | None:
        """``(canonical key, last value, its origin)``, or None if ``key`` is unset."""
        k = canonical_key(key)
        vals = self._values.get(k)
        if not vals:
            return None
        return k, vals[-1], self._origins[k][-1]

    def get_bool(self, key: str, default: bool = False) -> bool:
        """Value of ``key`` read as Git reads a boolean.

        A bare key is true, an empty value false (``-c key=``); true/yes/on and
        false/no/off in any case, or a number (non-zero is true).
        """
        last = self._last(key)
        if last is None:
            return default
        k, v, _origin = last
        b = parse_bool(v)
        if b is None:
            raise ConfigError(f"bad boolean config value '{v}' for '{k}'")
        return b

    def get_bool_or_str(
        self, key: str, words: Iterable[str], default: bool | str = False
    ) -> bool | str:
        """A boolean, or one of ``words`` (lower-cased), like ``core.logAllRefUpdates``.

        As Git, a bare key is an error here ("missing value").
        """
        last = self._last(key)
        if last is None:
            return default
        k, v, origin = last
        if v is None:
            where = (
                "from command-line config"
                if origin is None
                else f"in file '{origin[0]}' at line {origin[1]}"
            )
            what = "unable to parse" if origin is None else "bad config variable"
            raise ConfigError(f"{what} '{k}' {where}", details=[f"missing value for '{k}'"])
        if v.lower() in words:
            return v.lower()
        b = parse_bool(v)
        if b is None:
            raise ConfigError(f"bad boolean config value '{v}' for '{k}'")
        return b

    def get_int(self, key: str, default: int) -> int:
        """Value of ``key`` read as Git's ``git_config_int`` (32-bit, k/m/g units)."""
        return self._number(key, default, -(1 << 31), (1 << 31) - 1)

    def get_int64(self, key: str, default: int) -> int:
        """Value of ``key`` read as Git's ``git_config_int64``."""
        return self._number(key, default, -(1 << 63), (1 << 63) - 1)

    def get_ulong(self, key: str, default: int) -> int:
        """Value of ``key`` read as Git's ``git_config_ulong`` (no sign allowed)."""
        return self._number(key, default, 0, (1 << 64) - 1)

    def _number(self, key: str, default: int, lo: int, hi: int) -> int:
        last = self._last(key)
        if last is None:
            return default
        k, v, origin = last
        text = "" if v is None else v
        where = "" if origin is None else f" in file {origin[0]}"
        return parse_int(text, k, where=where, lo=lo, hi=hi)

    def names(self) -> list[str]:
        """Every key that has a value, canonical, in first-seen order."""
        return list(self._values)

    def __contains__(self, key: str) -> bool:
        return canonical_key(key) in self._values

    def keys(self, prefix: str = "") -> list[str]:
        """Canonical keys that are set, in first-set order; only those under ``prefix``."""
        return [k for k in self._values if k.startswith(prefix)]

    def origin(self, key: str) -> tuple[str, int] | None:
        """Where the last value of ``key`` was set: (file, line), or None (command line)."""
        origins = self._origins.get(canonical_key(key))
        return origins[-1] if origins else None


def parse_bool(value: str | None) -> bool | None:
    """Git's boolean: None (a bare key) is true, "" false; None back if not a boolean."""
    if value is None:
        return True
    low = value.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    try:
        return parse_int(value) != 0
    except ConfigError:
        return None


# strtoimax(base 0): optional blanks and sign, then decimal, 0x hex or 0 octal (the
# expression ``_number`` scans by; the tests hold the two equal)
_NUMBER = lazy(r"(?s)[ \t\n\v\f\r]*([-+]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)(.*)")


_HEXDIGITS = "0123456789abcdefABCDEF"


def _number(text: str) -> tuple[str, str, str] | None:
    """``_NUMBER.fullmatch(text).groups()`` (None where it does not match): the sign,
    the digits (``0x`` hex, ``0`` octal or decimal) and the rest, by a scan."""
    n = len(text)
    i = 0
    while i < n and text[i] in " \t\n\v\f\r":
        i += 1
    sign = ""
    if i < n and text[i] in "+-":
        sign = text[i]
        i += 1
    if i >= n:
        return None
    if text[i] == "0":
        if i + 2 < n and text[i + 1] in "xX" and text[i + 2] in _HEXDIGITS:
            j = i + 3
            while j < n and text[j] in _HEXDIGITS:
                j += 1
        else:
            j = i + 1
            while j < n and text[j] in "01234567":
                j += 1
    elif text[i] in "123456789":
        j = i + 1
        while j < n and text[j] in "0123456789":
            j += 1
    else:
        return None
    return sign, text[i:j], text[j:]


def parse_int(
    text: str, key: str = "", *, where: str = "", lo: int = -(1 << 63), hi: int = (1 << 63) - 1
) -> int:
    """Parse a Git config integer with an optional k, m or g unit suffix.

    As Git: C's base-0 number syntax, a unit (any case) and nothing after it;
    ``where`` is the `` in file X`` part of the message; ``lo <= value <= hi``.
    A minus sign is refused when ``lo`` is 0 (Git's unsigned parse).
    """
    m = _number(text)
    unit = m[2].lower() if m else None
    if m is None or unit not in _UNITS or (lo == 0 and "-" in text):
        raise ConfigError(f"bad numeric config value '{text}' for '{key}'{where}: invalid unit")
    digits = m[1]
    if digits[:2] in ("0x", "0X"):
        n = int(digits, 16)
    elif digits[0] == "0":
        n = int(digits, 8)
    else:
        n = int(digits)
    value = (-n if m[0] == "-" else n) * _UNITS[unit]
    if not lo <= value <= hi:
        raise ConfigError(f"bad numeric config value '{text}' for '{key}'{where}: out of range")
    return value


def set_config_value(path: str | os.PathLike[str], key: str, value: str | None) -> None:
    """Set ``key`` in the config file at ``path`` (None: remove it), as ``git config`` edits.

    The last occurrence is replaced, or the entry is added at the end of the last
    section of that name, or a new section is appended.  Removing the last entry of
    a section removes its header too.  Other lines stay as written; the file is
    replaced through its lock.
    """
    from gitodb.lockfile import LockFile

    k = canonical_key(key)
    section, _, var = k.rpartition(".")
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8", "surrogateescape").splitlines(keepends=True)
    except FileNotFoundError:
        lines = []
    # (index, section of the line, variable name or None for a header or other line)
    spans: list[tuple[int, str | None, str | None]] = []
    current: str | None = None
    for i, line in enumerate(lines):
        text = line.strip(_BLANKS)
        if text.startswith("["):
            header = _section_header(text)
            if header:
                sname, sub, rest = header
                if sub is None and "." in sname:
                    first, _, second = sname.partition(".")
                    current = f"{first.lower()}.{second.lower()}"
                else:
                    current = sname.lower() + ("" if sub is None else "." + sub)
                spans.append((i, current, None))
                text = rest.strip(_BLANKS)
                if not text or text[0] in "#;":
                    continue
        name = text.partition("=")[0].strip(_BLANKS).lower()
        if text and text[0] not in "#;" and _is_var(name):
            spans.append((i, current, name))
    hits = [i for i, sec, name in spans if sec == section and name == var]
    if value is not None:
        entry = f"\t{var} = {_quote_value(value)}\n"
        if hits:
            lines[hits[-1]] = entry
        else:
            in_section = [i for i, sec, _ in spans if sec == section]
            if in_section:
                at = in_section[-1] + 1
                lines.insert(at, entry)
            else:
                if lines and not lines[-1].endswith("\n"):
                    lines[-1] += "\n"
                sub_part = ""
                head = section
                if "." in section:
                    head, _, sub = section.partition(".")
                    sub_part = ' "' + sub.replace("\\", "\\\\").replace('"', '\\"') + '"'
                lines += [f"[{head}{sub_part}]\n", entry]
    else:
        if not hits:
            return
        drop = set(hits)
        # a header whose section has no entries left goes too
        headers = [i for i, sec, name in spans if sec == section and name is None]
        for h in headers:
            following = [span for span in spans if span[0] > h]
            nxt = next((i for i, _s, name in following if name is None), len(lines))
            keys = [i for i, _s, name in following if i < nxt and name is not None]
            if all(i in drop for i in keys):
                drop.add(h)
        lines = [line for i, line in enumerate(lines) if i not in drop]
    lock = LockFile(path)
    try:
        lock.write("".join(lines).encode("utf-8", "surrogateescape"))
        lock.commit()
    finally:
        lock.rollback()


def _quote_value(value: str) -> str:
    """A value as Git writes it: quoted when blanks at an end or a comment char would be lost."""
    escaped = (
        value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    )
    if value != value.strip(" ") or any(c in value for c in "#;"):
        return f'"{escaped}"'
    return escaped
