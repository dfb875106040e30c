"""Quoting of atom values for ``--shell``, ``--perl``, ``--python`` and ``--tcl``."""

from __future__ import annotations

NONE, SHELL, PERL, PYTHON, TCL = "", "shell", "perl", "python", "tcl"

_TCL = {
    ord("\f"): b"\\f",
    ord("\r"): b"\\r",
    ord("\n"): b"\\n",
    ord("\t"): b"\\t",
    ord("\v"): b"\\v",
}


def quote(value: bytes, style: str) -> bytes:
    """``value`` quoted as a literal of the language ``style`` names (as Git's quote.c)."""
    if style == SHELL:
        return b"'" + value.replace(b"'", b"'\\''").replace(b"!", b"'\\!'") + b"'"
    if style == PERL:
        return b"'" + value.replace(b"\\", b"\\\\").replace(b"'", b"\\'") + b"'"
    if style == PYTHON:
        return (
            b"'" + value.replace(b"\\", b"\\\\").replace(b"'", b"\\'").replace(b"\n", b"\\n") + b"'"
        )
    if style == TCL:
        out = bytearray(b'"')
        for c in value:
            if c in b'[]{}$\\"':
                out += b"\\" + bytes([c])
            elif c in _TCL:
                out += _TCL[c]
            else:
                out.append(c)
        return bytes(out + b'"')
    return value
