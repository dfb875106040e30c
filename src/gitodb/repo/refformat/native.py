"""for-each-ref's per-ref loop in the native core (``_native.format_refs``).

``compile_plan`` turns a parsed format into literal pieces and atom codes when every
atom is one the native core expands (``%(refname)``, ``%(objectname)``,
``%(objecttype)``, ``%(objectsize)`` and their ``*`` peeled forms), without
quoting or colour; else None, and the Python formatter (``Formatter.format``, the
reference) expands it.  ``render_native`` looks up every ref's object header in one
native call per pack (``ObjectDatabase.read_header_table``), asks the Python
formatter only for what the table left undecided and for peeled tags, and expands
the format for all refs in one call.
"""

from __future__ import annotations

from gitodb.objects.header import TYPE_NUMBERS

TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Iterator

    from gitodb.repo.refformat.atoms import Piece
    from gitodb.repo.refformat.formatter import Formatter, RefItem

try:
    from gitodb._native import format_refs as _format_refs
except ImportError:  # built without a C compiler: the Python formatter does it all
    _format_refs = None  # type: ignore[assignment]

# atom codes, as refformat.c numbers them
(
    LITERAL,
    REFNAME,
    OBJECTNAME,
    OBJECTTYPE,
    OBJECTSIZE,
    DEREF_OBJECTNAME,
    DEREF_OBJECTTYPE,
    DEREF_OBJECTSIZE,
) = range(8)

_CODES = {
    ("objectname", False): OBJECTNAME,
    ("objecttype", False): OBJECTTYPE,
    ("objectsize", False): OBJECTSIZE,
    ("objectname", True): DEREF_OBJECTNAME,
    ("objecttype", True): DEREF_OBJECTTYPE,
    ("objectsize", True): DEREF_OBJECTSIZE,
}

#: the codes that need the object's header (type or size)
_HEADER_CODES = {OBJECTTYPE, OBJECTSIZE}


def available() -> bool:
    """Whether the native core has the formatter."""
    return _format_refs is not None


def compile_plan(
    pieces: list[Piece], quote_style: str, reset_at_eol: bool
) -> tuple[tuple[int, bytes], ...] | None:
    """The format as ``(code, literal)`` steps for ``_native.format_refs``, or None."""
    if _format_refs is None or quote_style or reset_at_eol:
        return None
    plan: list[tuple[int, bytes]] = []
    for p in pieces:
        a = p.atom
        if a is None:
            plan.append((LITERAL, p.literal))
            continue
        if a.arg is not None or a.option or a.refname.kind:
            return None
        if a.name == "refname" and not a.deref:
            plan.append((REFNAME, b""))
            continue
        code = _CODES.get((a.name, a.deref))
        if code is None:
            return None
        plan.append((code, b""))
    return tuple(plan)


def render_native(
    fmt: Formatter,
    plan: tuple[tuple[int, bytes], ...],
    items: list[RefItem],
    omit_empty: bool,
) -> Iterator[bytes]:
    """The output (lines with their newlines) of ``plan`` for ``items``, in one chunk.

    A ref whose object cannot be read raises the Python formatter's error before
    any output, as Git (which computes every ref's atoms when it sorts) dies.
    """
    assert _format_refs is not None
    codes = {c for c, _ in plan}
    deref = bool(codes & {DEREF_OBJECTNAME, DEREF_OBJECTTYPE, DEREF_OBJECTSIZE})
    # str names go to C as they are (an ASCII one is its bytes); format_refs
    # encodes any other with surrogate escapes, as _enc does
    names = [i.name for i in items]
    oids = [i.oid for i in items]
    n = len(items)
    types, sizes = bytearray(n), bytearray(8 * n)
    if deref or codes & _HEADER_CODES:
        table = fmt.repo.odb.read_header_table(oids)
        if table is not None:
            types, sizes = table
    size_view = memoryview(sizes).cast("Q")
    peeled: list[tuple[bytes, int, int] | None] | None = [None] * n if deref else None
    need_header = deref or bool(codes & _HEADER_CODES)
    for i in range(n):
        if need_header and not types[i]:
            # the table did not decide it: the Python reader does (and reports)
            type_name, size = fmt.header(items[i].oid, items[i].name)
            types[i] = TYPE_NUMBERS[type_name]
            size_view[i] = size
        if peeled is not None and types[i] == 4:
            peeled[i] = fmt.peeled(items[i])
    size_view.release()
    yield _format_refs(plan, names, oids, types, sizes, peeled, omit_empty)
