"""POSIX extended regular expressions (what Git compiles with ``REG_EXTENDED`` for
``-G``, ``-S --pickaxe-regex``), translated into Python's ``re`` syntax.

``translate(pattern)`` reads the pattern as glibc's ``regcomp`` does and writes the
same expression for Python, or raises ``PosixRegexError`` with glibc's message for
a pattern glibc refuses.  What differs between the two syntaxes:

- escapes: ``\\w \\W \\s \\S \\b \\B`` and back-references are the same; GNU's
  ``\\<`` and ``\\>`` (a word starts, ends) become lookarounds, ``\\``` and ``\\'``
  become ``\\A`` and ``\\Z``; any other escaped character is that character
  (``\\t`` is ``t``);
- brackets: no escapes inside (a backslash is itself), named classes
  (``[:alpha:]``...), a ``]`` first is a member;
- a ``)`` with no ``(`` open is a literal; a quantifier after a quantifier
  (``a**``, ``a*?``) applies to the whole repeated atom, where Python refuses the
  first and reads the second as laziness.

Matching is Python's (leftmost-first where POSIX is leftmost-longest): the same
lines match; only the extent of a match with alternatives can differ.
"""

from __future__ import annotations

import re

_CLASSES = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "0-9a-zA-Z",
    "upper": "A-Z",
    "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v",
    "blank": " \\t",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "xdigit": "0-9A-Fa-f",
    "cntrl": "\\x00-\\x1f\\x7f",
    "print": "\\x20-\\x7e",
    "graph": "\\x21-\\x7e",
}
_ANCHORS = {
    "<": r"(?<!\w)(?=\w)",  # a word starts
    ">": r"(?<=\w)(?!\w)",  # a word ends
    "`": r"\A",
    "'": r"\Z",
    "b": r"\b",
    "B": r"\B",
}

# glibc's regerror texts
_BAD_PRECEDING = "Invalid preceding regular expression"
_BAD_BRACKET = "Unmatched [, [^, [:, [., or [="
_BAD_INTERVAL = "Invalid content of \\{\\}"
_DUP_MAX = 0x7FFF  # RE_DUP_MAX


class PosixRegexError(ValueError):
    """A pattern glibc's ``regcomp`` refuses; the message is glibc's."""


def translate(pattern: str) -> str:
    """``pattern`` (POSIX ERE, GNU flavour) as an equivalent Python expression."""
    out: list[str] = []
    opens: list[int] = []  # where each open group starts in ``out``
    groups = 0  # groups closed so far (back-references may name them)
    atom = -1  # where the last repeatable item starts in ``out``, -1: none
    repeated = False  # the last item already has a quantifier
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        i += 1
        if c in "*+?{":
            if atom < 0:
                raise PosixRegexError(_BAD_PRECEDING)
            if c == "{":
                quantifier, i = _interval(pattern, i)
            else:
                quantifier = c
            if repeated:  # a**: the repeated atom repeated again
                out[atom:] = ["(?:", *out[atom:], ")"]
            out.append(quantifier)
            repeated = True
            continue
        repeated = False
        start = len(out)
        if c == "\\":
            if i == n:
                raise PosixRegexError("Trailing backslash")
            c = pattern[i]
            i += 1
            if c in _ANCHORS:
                out.append(_ANCHORS[c])
                atom = -1
                continue
            if c in "wWsS":
                out.append("\\" + c)
            elif c in "123456789":
                if int(c) > groups:
                    raise PosixRegexError("Invalid back reference")
                out.append("\\" + c)
            else:
                out.append(re.escape(c))
        elif c == "[":
            text, i = _bracket(pattern, i)
            out.append(text)
        elif c == "(":
            opens.append(len(out))
            out.append("(")
            atom = -1
            continue
        elif c == ")" and opens:
            start = opens.pop()
            groups += 1
            out.append(")")
        elif c in "|^$":  # nothing to repeat after these
            out.append(c)
            atom = -1
            continue
        elif c == ".":
            out.append(c)
        else:
            out.append(re.escape(c))
        atom = start
    if opens:
        raise PosixRegexError("Unmatched ( or \\(")
    return "".join(out)


def _interval(pattern: str, i: int) -> tuple[str, int]:
    """The ``{m,n}`` that starts at ``pattern[i]`` (after its ``{``) in Python's
    form, and the index after its ``}``, read as glibc's ``parse_dup_op`` reads it."""
    start, i, stop = _number(pattern, i)
    end = -2
    if start == -1:  # nothing before the comma is 0; nothing at all is wrong
        if stop != ",":
            raise PosixRegexError(_BAD_INTERVAL)
        start = 0
    if start != -2:
        if stop == "}":
            end = start
        elif stop == ",":
            end, i, stop = _number(pattern, i)
    if start == -2 or end == -2:
        raise PosixRegexError("Unmatched \\{" if stop is None else _BAD_INTERVAL)
    if (end != -1 and start > end) or stop != "}":
        raise PosixRegexError(_BAD_INTERVAL)
    if max(start, end) > _DUP_MAX:
        raise PosixRegexError("Regular expression too big")
    return f"{{{start},{'' if end == -1 else end}}}", i


def _number(pattern: str, i: int) -> tuple[int, int, str | None]:
    """glibc's ``fetch_number``: the digits up to a ``,`` or ``}`` (-1: none, -2:
    something else among them), the index after that character, and the
    character (None: the pattern ended first)."""
    num = -1
    while i < len(pattern):
        c = pattern[i]
        i += 1
        if c == "\\" and i < len(pattern):  # one token; an escaped comma is a comma
            c = pattern[i]
            i += 1
            if c == ",":
                return num, i, c
            num = -2
            continue
        if c in ",}":
            return num, i, c
        if not "0" <= c <= "9" or num == -2:
            num = -2
        else:
            num = int(c) if num == -1 else min(_DUP_MAX + 1, num * 10 + int(c))
    return -2, i, None


def _bracket(pattern: str, i: int) -> tuple[str, int]:
    """The bracket expression that starts at ``pattern[i]`` (after its ``[``) as
    Python's, and the index after its ``]``, read as glibc's ``parse_bracket_exp``."""
    n = len(pattern)
    if i == n:
        raise PosixRegexError("Invalid regular expression")
    parts = ["["]
    if pattern[i] == "^":
        parts.append("^")
        i += 1
    first = True
    while True:
        if i == n:
            raise PosixRegexError(_BAD_BRACKET)
        if pattern[i] == "]" and not first:
            return "".join(parts) + "]", i + 1
        if pattern[i] == "-" and not first and pattern[i + 1 : i + 2] != "]":
            raise PosixRegexError("Invalid range end")  # a-b-c, or a - that starts one
        first = False
        low, text, i = _element(pattern, i)
        if i < n and pattern[i] == "-" and low != "" and i + 1 == n:
            raise PosixRegexError(_BAD_BRACKET)  # a range that the end cuts off
        if i + 1 < n and pattern[i] == "-" and pattern[i + 1] != "]":
            high, high_text, i = _element(pattern, i + 1)
            if not low or not high or ord(low) > ord(high):
                raise PosixRegexError("Invalid range end")
            text += "-" + high_text
        parts.append(text)


def _element(pattern: str, i: int) -> tuple[str, str, int]:
    """One member of a bracket at ``pattern[i]``: the character (``""`` for a class,
    which cannot bound a range), its text for Python's brackets, and the index
    after it."""
    if i == len(pattern):
        raise PosixRegexError(_BAD_BRACKET)
    c = pattern[i]
    if c == "[" and i + 1 < len(pattern) and pattern[i + 1] in ":.=":
        kind = pattern[i + 1]
        end = pattern.find(kind + "]", i + 2)
        if end < 0:
            raise PosixRegexError(_BAD_BRACKET)
        name = pattern[i + 2 : end]
        if kind == ":":
            if name not in _CLASSES:
                raise PosixRegexError("Invalid character class name")
            return "", _CLASSES[name], end + 2
        if len(name) != 1:  # [.x.] and [=x=]: only single characters here
            raise PosixRegexError("Invalid collation character")
        if kind == "=":  # an equivalence class: no range may start at it
            return "", re.escape(name), end + 2
        c, i = name, end + 1
    # no escapes in POSIX brackets: what Python would read specially is escaped
    return c, ("\\" + c if c in "\\[]^-" else c), i + 1
