"""Git's color specifications (``green``, ``bold red blue``, ``#ff0000``, ``reset``) as ANSI."""

from __future__ import annotations

_NAMES = ("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white")
_ATTRS = {"bold": 1, "dim": 2, "italic": 3, "ul": 4, "blink": 5, "reverse": 7, "strike": 9}
_NEG = {1: 22, 2: 22, 3: 23, 4: 24, 5: 25, 7: 27, 9: 29}
RESET = "\033[m"


def _color(word: str, background: bool) -> str | None:
    base = 40 if background else 30
    if word == "normal":
        return ""
    if word == "default":
        return str(base + 9)
    if word in _NAMES:
        return str(base + _NAMES.index(word))
    if word.startswith("bright") and word[6:] in _NAMES:
        return str(base + 60 + _NAMES.index(word[6:]))
    if word.startswith("#") and len(word) == 7:
        try:
            r, g, b = (int(word[k : k + 2], 16) for k in (1, 3, 5))
        except ValueError:
            return None
        return f"{base + 8};2;{r};{g};{b}"
    if word.isdigit() or (word.startswith("-") and word[1:].isdigit()):
        n = int(word)
        if n == -1:
            return ""
        if 0 <= n < 8:
            return str(base + n)
        if 8 <= n < 16:
            return str(base + 60 + n - 8)
        if n < 256:
            return f"{base + 8};5;{n}"
    return None


def parse_color(spec: str) -> str | None:
    """The escape sequence for ``spec``, or None if Git would not accept it."""
    words = spec.split()
    if not words:
        return ""
    if words == ["reset"]:
        return RESET
    attrs: list[str] = []
    colors: list[str] = []
    reset = False
    for w in words:
        if w == "reset":
            reset = True
            continue
        neg = w.startswith("no")
        name = w[3:] if w.startswith("no-") else w[2:] if neg else w
        if name in _ATTRS and (neg or name == w):
            attrs.append(str(_NEG[_ATTRS[name]] if neg and name != w else _ATTRS[w]))
            continue
        if len(colors) >= 2:
            return None
        got = _color(w, background=len(colors) == 1)
        if got is None:
            return None
        colors.append(got)
    codes = (["0"] if reset else []) + attrs + [c for c in colors if c]
    if not codes:
        return ""
    return "\033[" + ";".join(codes) + "m"
