"""Git's ``wildmatch``: shell globs over ref names, with ``WM_PATHNAME`` and ``WM_CASEFOLD``.

With ``pathname``, ``*``, ``?`` and brackets never match ``/``; ``**`` between
slashes (or at either end) matches any number of directories.  Without it, ``*``
matches across ``/`` too.  A backslash quotes the next character.

Example::

    wildmatch("refs/tags/v*", "refs/tags/v1.0", pathname=True)      # True
    wildmatch("refs/*", "refs/tags/v1.0", pathname=True)            # False
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

_CLASSES = {
    "alnum": r"a-zA-Z0-9",
    "alpha": r"a-zA-Z",
    "blank": r" \t",
    "cntrl": r"\x00-\x1f\x7f",
    "digit": r"0-9",
    "graph": r"!-~",
    "lower": r"a-z",
    "print": r" -~",
    "punct": r"!-/:-@\[-`{-~",
    "space": r" \t\n\r\x0b\x0c",
    "upper": r"A-Z",
    "xdigit": r"0-9a-fA-F",
}


def _bracket(pat: str, i: int, pathname: bool) -> tuple[str, int] | None:
    import re  # (with _build's: only once a pattern is matched)

    """The regex of the bracket expression at ``pat[i] == '['`` and the index after it."""
    j = i + 1
    negate = j < len(pat) and pat[j] in "!^"
    if negate:
        j += 1
    parts: list[str] = []
    first = True
    while j < len(pat):
        c = pat[j]
        if c == "]" and not first:
            body = "".join(parts)
            if pathname:
                return (f"[^/{body}]" if negate else f"(?!/)[{body}]"), j + 1
            return (f"[^{body}]" if negate else f"[{body}]"), j + 1
        first = False
        if c == "[" and pat.startswith("[:", j):
            end = pat.find(":]", j + 2)
            if end >= 0 and pat[j + 2 : end] in _CLASSES:
                parts.append(_CLASSES[pat[j + 2 : end]])
                j = end + 2
                continue
        if c == "\\" and j + 1 < len(pat):
            j += 1
            c = pat[j]
        if j + 2 < len(pat) and pat[j + 1] == "-" and pat[j + 2] != "]":
            hi = pat[j + 2]
            k = j + 3
            if hi == "\\" and k < len(pat):
                hi = pat[k]
                k += 1
            if ord(hi) >= ord(c):
                parts.append(f"{re.escape(c)}-{re.escape(hi)}")
            j = k
            continue
        parts.append(re.escape(c))
        j += 1
    return None  # an unclosed bracket matches nothing, as in Git


#: compiled patterns (``_compile``'s cache; emptied when it holds ``_CACHE_SIZE``)
_CACHE: dict[tuple[str, bool, bool], re.Pattern[str] | None] = {}
_CACHE_SIZE = 256


def _compile(pattern: str, pathname: bool, casefold: bool) -> re.Pattern[str] | None:
    key = (pattern, pathname, casefold)
    try:
        return _CACHE[key]
    except KeyError:
        pass
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    got = _CACHE[key] = _build(pattern, pathname, casefold)
    return got


def _build(pattern: str, pathname: bool, casefold: bool) -> re.Pattern[str] | None:
    # (re here, not at the module's top: every ref command imports this module,
    # and most never match a pattern)
    import re

    out: list[str] = []
    i = 0
    n = len(pattern)
    any_char = "[^/]" if pathname else "."
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif c == "?":
            out.append(any_char)
            i += 1
        elif c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            stars = j - i
            if (
                pathname
                and stars >= 2
                and (i == 0 or pattern[i - 1] == "/")
                and (j == n or pattern[j] == "/")
            ):
                if j == n:
                    out.append(".*")  # "/**" at the end: everything below
                else:
                    out.append("(?:.*/)?")  # "**/": zero or more directories
                    j += 1
            else:
                out.append("[^/]*" if pathname else ".*")
            i = j
        elif c == "[":
            got = _bracket(pattern, i, pathname)
            if got is None:
                return None
            out.append(got[0])
            i = got[1]
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out), re.DOTALL | (re.IGNORECASE if casefold else 0))


def wildmatch(pattern: str, name: str, *, pathname: bool = False, casefold: bool = False) -> bool:
    """True if ``name`` matches the glob ``pattern`` (see the module docstring)."""
    rx = _compile(pattern, pathname, casefold)
    return rx is not None and rx.fullmatch(name) is not None
