"""The ``working-tree-encoding`` attribute: UTF-8 in Git, another encoding on disk.

Git stores text as UTF-8 and re-encodes it for the work tree when a path has
``working-tree-encoding=<enc>`` (``encode_to_git`` on the way in,
``encode_to_worktree`` on the way out).  Git converts with iconv; here Python's
codecs do it, which know the same names for the encodings people use (UTF-16/32
with or without byte order, the ISO-8859 and Windows code pages, SHIFT-JIS...).
Git's own additions are kept: ``UTF-16LE-BOM`` (little-endian with a byte order
mark), the byte-order-mark rules for ``UTF-16``/``UTF-32`` and their ``BE``/``LE``
forms, and ``core.checkRoundtripEncoding`` (default ``SHIFT-JIS``), whose
encodings must convert back to the same bytes when an object is written.

Lines Git prints without stopping go to ``say`` (``hint:``/``error:`` lines);
what Git dies on raises ``EncodingError``.  Content that cannot be converted
without dying is returned unchanged, as Git leaves it.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable

from gitodb.errors import GitodbError

_BOMS = {
    "16": (codecs.BOM_UTF16_BE, codecs.BOM_UTF16_LE),
    "32": (codecs.BOM_UTF32_BE, codecs.BOM_UTF32_LE),
}


class EncodingError(GitodbError):
    """Content Git refuses to convert (its ``fatal:`` line); ``hints`` come first."""

    def __init__(self, message: str, hints: list[str] | None = None) -> None:
        super().__init__(message)
        self.hints = list(hints or [])


def _utf_name(enc: str) -> str | None:
    """``UTF-16le`` -> ``16LE``: the part after ``UTF`` and an optional ``-``, or None."""
    if enc[:3].upper() != "UTF":
        return None
    rest = enc[3:]
    return (rest[1:] if rest.startswith("-") else rest).upper()


def same_encoding(a: str, b: str) -> bool:
    """Git's ``same_encoding``: UTF names compared without the ``-``, others by case."""
    ua, ub = _utf_name(a), _utf_name(b)
    if ua is not None and ub is not None:
        return ua == ub
    return a.lower() == b.lower()


def attribute_encoding(value: object) -> str | None:
    """Git's ``git_path_check_encoding``: the encoding to convert for, None for
    none (unset, empty or UTF-8); a true/false attribute is an ``EncodingError``."""
    if value is True or value is False:
        raise EncodingError("true/false are no valid working-tree-encodings")
    if not isinstance(value, str) or not value or same_encoding(value, "UTF-8"):
        return None
    return value


def _codec(enc: str, writing: bool) -> tuple[str, bytes]:
    """The Python codec for Git's name ``enc`` and a prefix to write before the text."""
    name = _utf_name(enc)
    if name == "16LE-BOM":
        # Git's own name: little-endian with a mark; read as UTF-16 (the mark decides)
        return ("utf-16-le", codecs.BOM_UTF16_LE) if writing else ("utf-16", b"")
    if name is not None:
        return f"utf-{name}", b""  # iconv also knows UTF16LE, Python only UTF-16LE
    return enc, b""


def _reencode(data: bytes, to_enc: str, from_enc: str) -> bytes | None:
    """``data`` from ``from_enc`` to ``to_enc``, or None when either is unknown or
    the bytes are not valid in ``from_enc`` (iconv's failures)."""
    source, _ = _codec(from_enc, False)
    target, prefix = _codec(to_enc, True)
    try:
        return prefix + data.decode(source).encode(target)
    except (LookupError, UnicodeError):
        return None


def _has_bom(data: bytes, width: str) -> bool:
    return any(data.startswith(bom) for bom in _BOMS[width])


def _validate(path: str, enc: str, data: bytes) -> tuple[str, str] | None:
    """Git's ``validate_encoding``: ``(hint, error)`` when the byte order mark is
    wrong for ``enc``, else None."""
    name = _utf_name(enc)
    if name is None:
        return None
    m = re.fullmatch(r"(16|32)(BE|LE)?", name)
    if m is None:
        return None
    width, order = m.group(1), m.group(2)
    if order and _has_bom(data, width):
        return (
            f"The file '{path}' contains a byte order mark (BOM). "
            f"Please use UTF-{width} as working-tree-encoding.",
            f"BOM is prohibited in '{path}' if encoded as {enc}",
        )
    if not order and not _has_bom(data, width):
        return (
            f"The file '{path}' is missing a byte order mark (BOM). "
            f"Please use UTF-{width}BE or UTF-{width}LE (depending on the byte order) "
            "as working-tree-encoding.",
            f"BOM is required in '{path}' if encoded as {enc}",
        )
    return None


def _listed(enc: str, roundtrip: str) -> bool:
    """Whether ``enc`` is in ``core.checkRoundtripEncoding`` (comma or space separated)."""
    return any(same_encoding(enc, item) for item in re.split(r"[, ]+", roundtrip) if item)


def encode_to_git(
    path: str,
    data: bytes,
    enc: str,
    *,
    write: bool,
    say: Callable[[str], None],
    roundtrip: str = "SHIFT-JIS",
) -> bytes:
    """Work-tree content in ``enc`` as Git stores it (UTF-8).  ``write``: an object
    is being written, so Git dies where it would otherwise report and go on."""
    if not data:
        return data
    problem = _validate(path, enc, data)
    if problem is not None:
        hint, error = problem
        if write:
            raise EncodingError(error, hints=[hint])
        say(f"hint: {hint}")
        say(f"error: {error}")
        return data
    out = _reencode(data, "UTF-8", enc)
    if out is None:
        message = f"failed to encode '{path}' from {enc} to UTF-8"
        if write:
            raise EncodingError(message)
        say(f"error: {message}")
        return data
    if write and _listed(enc, roundtrip) and _reencode(out, enc, "UTF-8") != data:
        raise EncodingError(f"encoding '{path}' from {enc} to UTF-8 and back is not the same")
    return out


def encode_to_worktree(path: str, data: bytes, enc: str, *, say: Callable[[str], None]) -> bytes:
    """Content as Git stores it (UTF-8) in ``enc`` for the work tree; unchanged, with
    Git's ``error:`` line, when it cannot be converted."""
    if not data:
        return data
    out = _reencode(data, enc, "UTF-8")
    if out is None:
        say(f"error: failed to encode '{path}' from UTF-8 to {enc}")
        return data
    return out
