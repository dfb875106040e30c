"""Whitespace errors and conflict markers in what a change adds (``diff-tree --check``).

``parse_rule(text)`` reads ``core.whitespace`` (and a ``whitespace=<rules>``
attribute) as Git's ``parse_whitespace_rule``: comma-separated names, each a prefix
of ``trailing-space`` (both ``blank-at-eol`` and ``blank-at-eof``),
``space-before-tab``, ``indent-with-non-tab``, ``tab-in-indent``, ``cr-at-eol``,
``blank-at-eol``, ``blank-at-eof``; ``-name`` turns one off; ``tabwidth=<n>``.  The
default is trailing-space and space-before-tab, tab width 8.  ``path_rule`` applies
the ``whitespace`` attribute over it.

``check_file(path, old, new, rule)`` is Git's ``builtin_checkdiff`` for one file:
each added line (Git's default line diff) is checked, and each problem is reported
as ``<path>:<line>: <what>.`` followed by the line with its ``+``; a change that
leaves more blank lines at the end of the file than before reports the first of
them (``new blank line at EOF``).
"""

from __future__ import annotations

from collections.abc import Callable

from gitodb.errors import GitodbError
from gitodb.history.linediff import diff_data, split_lines

BLANK_AT_EOL = 0o100
SPACE_BEFORE_TAB = 0o200
INDENT_WITH_NON_TAB = 0o400
CR_AT_EOL = 0o1000
BLANK_AT_EOF = 0o2000
TAB_IN_INDENT = 0o4000
TRAILING_SPACE = BLANK_AT_EOL | BLANK_AT_EOF
TAB_WIDTH_MASK = 0o77
DEFAULT_RULE = TRAILING_SPACE | SPACE_BEFORE_TAB | 8

# name, bits, whether it loosens the checks, whether the bare attribute leaves it out
_NAMES = (
    ("trailing-space", TRAILING_SPACE, False, False),
    ("space-before-tab", SPACE_BEFORE_TAB, False, False),
    ("indent-with-non-tab", INDENT_WITH_NON_TAB, False, False),
    ("cr-at-eol", CR_AT_EOL, True, False),
    ("blank-at-eol", BLANK_AT_EOL, False, False),
    ("blank-at-eof", BLANK_AT_EOF, False, False),
    ("tab-in-indent", TAB_IN_INDENT, False, True),
)
_SPACE = b" \t\n\v\f\r"
MARKER_SIZE = 7  # conflict-marker-size's default


def parse_rule(text: str | None, warn: Callable[[str], None] | None = None) -> int:
    """Git's ``parse_whitespace_rule`` (``warn(message)`` hears an out-of-range tab
    width); ``GitodbError`` for tab-in-indent with indent-with-non-tab."""
    rule = DEFAULT_RULE
    for item in (text or "").split(","):
        item = item.lstrip(", \t\n\r")
        negated = item.startswith("-")
        if negated:
            item = item[1:]
        if not item:
            if negated:
                break  # Git stops at a lone "-"
            continue
        for name, bits, _loosens, _excluded in _NAMES:
            if name.startswith(item):
                rule = rule & ~bits if negated else rule | bits
                break
        if item.startswith("tabwidth="):
            value = item[len("tabwidth=") :]
            width = _atoi(value)
            if 0 < width < 0o100:
                rule = (rule & ~TAB_WIDTH_MASK) | width
            elif warn is not None:
                warn(f"tabwidth {value} out of range")
    if rule & TAB_IN_INDENT and rule & INDENT_WITH_NON_TAB:
        raise GitodbError("cannot enforce both tab-in-indent and indent-with-non-tab")
    return rule


def _atoi(text: str) -> int:
    digits = ""
    for c in text.lstrip():
        if not "0" <= c <= "9":
            break
        digits += c
    return int(digits) if digits else 0


def marker_size(value: object) -> int:
    """The ``conflict-marker-size`` attribute's length (Git's ``atoi``; 7 unless it
    is a positive number)."""
    size = _atoi(value) if isinstance(value, str) else 0
    return size if size > 0 else MARKER_SIZE


def path_rule(value: object, core_rule: int) -> int:
    """The rule for a path whose ``whitespace`` attribute is ``value`` (True: every
    check but tab-in-indent; False: none; None: ``core.whitespace``'s)."""
    if value is True:
        rule = core_rule & TAB_WIDTH_MASK
        for _name, bits, loosens, excluded in _NAMES:
            if not loosens and not excluded:
                rule |= bits
        return rule
    if value is False:
        return core_rule & TAB_WIDTH_MASK
    if isinstance(value, str):
        return parse_rule(value)
    return core_rule


def error_string(bits: int) -> str:
    """Git's ``whitespace_error_string``: what ``bits`` found, in words."""
    words = []
    if bits & TRAILING_SPACE == TRAILING_SPACE:
        words.append("trailing whitespace")
    else:
        if bits & BLANK_AT_EOL:
            words.append("trailing whitespace")
        if bits & BLANK_AT_EOF:
            words.append("new blank line at EOF")
    if bits & SPACE_BEFORE_TAB:
        words.append("space before tab in indent")
    if bits & INDENT_WITH_NON_TAB:
        words.append("indent with spaces")
    if bits & TAB_IN_INDENT:
        words.append("tab in indent")
    return ", ".join(words)


def check_line(line: bytes, rule: int) -> int:
    """Git's ``ws_check``: the problems of one line (newline included or not)."""
    result = 0
    end = len(line)
    if end and line[end - 1] == 10:
        end -= 1
    if rule & CR_AT_EOL and end and line[end - 1] == 13:
        end -= 1
    trailing = end
    if rule & BLANK_AT_EOL:
        while trailing > 0 and line[trailing - 1] in _SPACE:
            trailing -= 1
        if trailing < end:
            result |= BLANK_AT_EOL
    written = 0
    i = 0
    while i < trailing:
        c = line[i]
        if c == 32:
            i += 1
            continue
        if c != 9:
            break
        if rule & SPACE_BEFORE_TAB and written < i:
            result |= SPACE_BEFORE_TAB
        elif rule & TAB_IN_INDENT:
            result |= TAB_IN_INDENT
        written = i + 1
        i += 1
    if rule & INDENT_WITH_NON_TAB and i - written >= (rule & TAB_WIDTH_MASK):
        result |= INDENT_WITH_NON_TAB
    return result


def _conflict_marker(line: bytes, size: int) -> bool:
    """Git's ``is_conflict_marker`` (``line`` without its ``+``)."""
    if len(line) < size + 1 or line[:1] not in (b"=", b">", b"<", b"|"):
        return False
    return line[:size] == line[:1] * size and line[size] in _SPACE


def _trailing_blank(data: bytes) -> int:
    """Git's ``count_trailing_blank``: blank lines at the end (not the first line)."""
    if not data:
        return 0
    ptr = len(data) - 1
    if data[ptr] == 10:
        ptr -= 1
    count = 0
    while ptr > 0:
        eol = data.rfind(b"\n", 0, ptr + 1)
        if data[eol + 1 : ptr + 1].strip(_SPACE):
            break
        count += 1
        ptr = eol - 1
    return count


def _count_lines(data: bytes) -> int:
    """Git's ``count_lines``: lines, an unterminated last one included."""
    if not data:
        return 0
    return data.count(b"\n") + (not data.endswith(b"\n"))


def check_file(
    path: bytes, old: bytes, new: bytes, rule: int, marker_size: int = MARKER_SIZE
) -> tuple[bytes, bool]:
    """``--check``'s report of one file (see the module docstring) and whether it
    found anything."""
    out: list[bytes] = []
    lines = split_lines(new)
    for e in diff_data(old, new):
        for k in range(e.i2, e.i2 + e.n2):
            line = lines[k]
            where = b"%s:%d: " % (path, k + 1)
            if _conflict_marker(line, marker_size):
                out.append(where + b"leftover conflict marker\n")
            bad = check_line(line, rule)
            if bad:
                # xdiff hands a last line without its newline over with one
                end = b"" if line.endswith(b"\n") else b"\n"
                out.append(where + error_string(bad).encode() + b".\n+" + line + end)
    if rule & BLANK_AT_EOF:
        before, after = _trailing_blank(old), _trailing_blank(new)
        if after > before:
            at = _count_lines(new) - after + 1
            out.append(b"%s:%d: %s.\n" % (path, at, error_string(BLANK_AT_EOF).encode()))
    return b"".join(out), bool(out)
