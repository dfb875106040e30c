"""Git's bytes as Arrow text, faithfully.

Paths, ref names, person names and messages are bytes in Git, usually UTF-8 but
not always (a Latin-1 file name, a commit with an ``encoding`` header).  Each such
column is a string column, decoded from UTF-8 with U+FFFD for invalid bytes, and
beside it a binary ``<column>_bytes`` column holding Git's bytes exactly when they
are not valid UTF-8, null when the string is already exact.  The bytes of a value
are ``row[c + "_bytes"]`` if it is not null, else ``row[c].encode()``.
"""

from __future__ import annotations


def text_and_bytes(raw: bytes | None) -> tuple[str | None, bytes | None]:
    """``(text, bytes or None)`` of Git's bytes ``raw`` (None stays None)."""
    if raw is None:
        return None, None
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace"), bytes(raw)


def str_and_bytes(value: str | None) -> tuple[str | None, bytes | None]:
    """The same for a name gitodb holds as a string with surrogate escapes (ref names:
    ``os.fsdecode`` style, invalid bytes as lone surrogates, which Arrow refuses)."""
    if value is None:
        return None, None
    try:
        value.encode("utf-8")
        return value, None
    except UnicodeEncodeError:
        raw = value.encode("utf-8", "surrogateescape")
        return raw.decode("utf-8", "replace"), raw
