"""``gitodb.history.posixre``: POSIX extended regular expressions as glibc reads them.

glibc's own ``regcomp``/``regexec`` (through ctypes) is the reference: random
patterns over ERE's alphabet compile, or fail with glibc's message, and match the
same lines once translated for Python.  Skipped where the C library is not glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitodb.history.posixre import PosixRegexError, translate

REG_EXTENDED, REG_NEWLINE = 1, 4  # glibc's values


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version.restype = ctypes.c_char_p
        libc.gnu_get_libc_version()
    except (OSError, AttributeError):
        return None
    return libc


LIBC = _libc()
pytestmark = pytest.mark.skipif(LIBC is None, reason="needs glibc")


def _glibc(pattern: bytes, lines: list[bytes]) -> str | list[bool]:
    """glibc's verdict: its error message, or whether each line matches."""
    assert LIBC is not None
    buf = ctypes.create_string_buffer(256)  # larger than glibc's regex_t
    rc = LIBC.regcomp(buf, pattern, REG_EXTENDED | REG_NEWLINE)
    if rc:
        msg = ctypes.create_string_buffer(200)
        LIBC.regerror(rc, buf, msg, 200)
        return msg.value.decode()
    try:
        return [LIBC.regexec(buf, line, 0, None, 0) == 0 for line in lines]
    finally:
        LIBC.regfree(buf)


def _ours(pattern: bytes, lines: list[bytes]) -> str | list[bool]:
    try:
        compiled = re.compile(translate(pattern.decode("latin-1")).encode("latin-1"), re.M)
    except PosixRegexError as e:
        return str(e)
    return [compiled.search(line) is not None for line in lines]


_ALPHABET = "ab.^$*+?|()[]{}\\,-:12 w<>="
_patterns = st.text(_ALPHABET, max_size=10) | st.sampled_from(
    ["[[:alpha:]]+", "[^[:space:]]x", "\\<ab", "b\\>", "(a|b)\\1", "a{1,2}b", "[]a-]", "x{,2}"]
)
_lines = st.lists(st.text("ab-: ]1\t", max_size=8).map(str.encode), min_size=1, max_size=4)


@settings(max_examples=400, deadline=None)
@given(_patterns, _lines)
def test_patterns_match_as_glibc(pattern: str, lines: list[bytes]) -> None:
    theirs = _glibc(pattern.encode(), lines)
    if isinstance(theirs, str) and theirs in ("Invalid regular expression",):
        return  # glibc's catch-all for forms it reads differently in places
    assert _ours(pattern.encode(), lines) == theirs


@pytest.mark.parametrize(
    "pattern",
    ["(", "[a", "*a", "\\", "a{1", "a{1,0}", "[b-a]", "\\1", "[[:foo:]]", "a{x}", "^*", "[]"],
)
def test_errors_are_glibcs(pattern: str) -> None:
    theirs = _glibc(pattern.encode(), [b""])
    assert isinstance(theirs, str)
    assert _ours(pattern.encode(), [b""]) == theirs
