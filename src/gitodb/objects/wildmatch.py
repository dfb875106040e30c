"""Git's ``wildmatch``: shell-style patterns as ``.gitattributes`` and ``.gitignore`` use them.

``*`` matches any run of characters and ``?`` any one; ``[...]`` is a class
(``!`` or ``^`` negates it; ranges and ``[:alpha:]``-style names work inside);
a backslash makes the next character literal.  With ``pathname`` (Git's
``WM_PATHNAME``) none of those matches a ``/``, and ``**`` between slashes (or at
either end of the pattern) matches any number of whole directories, including
none.  Patterns are compiled to regular expressions once and cached.
"""

from __future__ import annotations

import re
from functools import lru_cache

_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9a-fA-F",
}


def wildmatch(pattern: str, text: str, *, pathname: bool = False, casefold: bool = False) -> bool:
    """Whether ``text`` matches ``pattern`` (Git's WM_PATHNAME and WM_CASEFOLD flags)."""
    rx = _compile(pattern, pathname, casefold)
    return rx is not None and rx.fullmatch(text) is not None


@lru_cache(maxsize=4096)
def _compile(pattern: str, pathname: bool, casefold: bool) -> re.Pattern[str] | None:
    """The regular expression for ``pattern``, or None when it can match nothing
    (an unterminated class or a trailing backslash, as in Git)."""
    star = "[^/]*" if pathname else ".*"
    one = "[^/]" if pathname else "."
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                return None
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif c == "?":
            out.append(one)
            i += 1
        elif c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            double = j - i >= 2
            at_start = i == 0 or pattern[i - 1] == "/"
            if pathname and double and at_start and (j == n or pattern[j] == "/"):
                if j == n:
                    out.append(".*")  # "/**" at the end (or a lone "**"): everything below
                    i = j
                else:
                    out.append("(?:.*/)?")  # "**/": zero or more directories
                    i = j + 1
            else:
                out.append(star)
                i = j
        elif c == "[":
            cls, i = _char_class(pattern, i + 1, pathname)
            if cls is None:
                return None
            out.append(cls)
        else:
            out.append(re.escape(c))
            i += 1
    flags = re.DOTALL | (re.IGNORECASE if casefold else 0)
    return re.compile("".join(out), flags)


def _char_class(pattern: str, i: int, pathname: bool) -> tuple[str | None, int]:
    """A ``[...]`` class starting after its ``[``: (regex, index after ``]``)."""
    n = len(pattern)
    negate = i < n and pattern[i] in "!^"
    if negate:
        i += 1
    parts: list[str] = []
    first = True
    while i < n:
        c = pattern[i]
        if c == "]" and not first:
            body = "".join(parts) or "\\x00-\\U0010ffff"
            if negate:
                extra = "/" if pathname else ""
                return f"[^{body}{re.escape(extra) if extra else ''}]", i + 1
            cls = f"[{body}]"
            return (f"(?!/){cls}" if pathname else cls), i + 1
        first = False
        if c == "[" and pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            if end < 0:
                return None, n
            name = pattern[i + 2 : end]
            if name not in _CLASSES:
                return None, n  # Git: an unknown class name matches nothing
            parts.append(_CLASSES[name])
            i = end + 2
            continue
        if c == "\\":
            if i + 1 >= n:
                return None, n
            c = pattern[i + 1]
            i += 1
        lo = c
        i += 1
        if i + 1 < n and pattern[i] == "-" and pattern[i + 1] != "]":
            hi = pattern[i + 1]
            i += 2
            if hi == "\\":
                if i >= n:
                    return None, n
                hi = pattern[i]
                i += 1
            if hi < lo:
                continue  # an empty range matches nothing
            parts.append(f"{re.escape(lo)}-{re.escape(hi)}")
        else:
            parts.append(re.escape(lo))
    return None, n
