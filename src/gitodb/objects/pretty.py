"""``git cat-file -p`` output: trees listed like ``ls-tree``, everything else verbatim."""

from __future__ import annotations

from gitodb.lazyre import lazy
from gitodb.objects.tree import Tree, canonical_mode

# Bytes that make a path need C-style quoting, and the escape letter Git uses.
_C_ESCAPES = {
    7: b"a",
    8: b"b",
    9: b"t",
    10: b"n",
    11: b"v",
    12: b"f",
    13: b"r",
    0x22: b'"',
    0x5C: b"\\",
}


def _must_quote(c: int, quote_fully: bool) -> bool:
    return c < 0x20 or c == 0x22 or c == 0x5C or c == 0x7F or (quote_fully and c >= 0x80)


_NEEDS_QUOTE = {
    True: lazy(rb'[\x00-\x1f"\\\x7f-\xff]'),
    False: lazy(rb'[\x00-\x1f"\\\x7f]'),
}


def quote_path(name: bytes, quote_fully: bool = True) -> bytes:
    """Git's ``quote_c_style``: the name, or ``"..."`` with escapes if it needs any.

    ``quote_fully`` is ``core.quotePath`` (default true): bytes >= 0x80 become octal.
    """
    if _NEEDS_QUOTE[quote_fully].search(name) is None:
        return name
    out = bytearray(b'"')
    for c in name:
        if _must_quote(c, quote_fully):
            esc = _C_ESCAPES.get(c)
            out += b"\\" + esc if esc is not None else b"\\%03o" % c
        else:
            out.append(c)
    out += b'"'
    return bytes(out)


def format_tree(tree: Tree, *, quote_fully: bool = True) -> bytes:
    """A tree as ``git ls-tree`` (and so ``cat-file -p``) prints it."""
    lines = []
    for e in tree:
        mode = canonical_mode(e.mode)
        lines.append(
            b"%06o %s %s\t%s\n"
            % (mode, e.object_type.encode(), e.oid.hex().encode(), quote_path(e.name, quote_fully))
        )
    return b"".join(lines)
