"""``show-ref``'s listing straight from the ref store's ``RefTable``.

``git show-ref [--branches] [--tags] [-s]`` prints every ref's id and name, after
checking that its object exists: the store's table (``RefStore.ref_table``), one
native header lookup per pack over its ids (a type found is an object that exists)
and ``_native.format_ref_table`` give the lines without an object per ref.  The
CLI's ``iter_refs`` loop is the reference and the path for everything else.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.refs.table import RefTable
    from gitodb.repo import Repository

try:
    from gitodb._native import format_ref_table as _format_ref_table
except ImportError:  # built without a C compiler: the CLI's loop does it
    _format_ref_table = None  # type: ignore[assignment]

# refformat.c's atom codes (gitodb.repo.refformat.native lists them all)
_LITERAL, _REFNAME, _OBJECTNAME = 0, 1, 2


def show_ref_table(
    repo: Repository, prefixes: list[str], *, hash_only: bool = False
) -> tuple[bytes, tuple[str, bytes] | None] | None:
    """``git show-ref [--branches] [--tags] [-s]``'s lines for the refs under each of
    ``prefixes`` in turn ("" for all), from the ref table; None where the table path
    does not apply (then the caller lists ``iter_refs``).

    Git checks that each ref's object exists as it prints it: the second item is
    ``(name, id)`` of the first ref whose object is missing (the bytes are the lines
    before it; the caller dies), else None.
    """
    if _format_ref_table is None:
        return None
    table = repo.refs.ref_table()
    if table is None:
        return None
    plan = (
        ((_OBJECTNAME, b""),)
        if hash_only
        else ((_OBJECTNAME, b""), (_LITERAL, b" "), (_REFNAME, b""))
    )
    rawsz = table.rawsz
    chunks = []
    for prefix in prefixes:
        lo, hi = table.prefix_range(prefix.encode("utf-8", "surrogateescape"))
        types = repo.odb.read_header_table(table.ids[lo * rawsz : hi * rawsz], want_size=False)
        known = types[0] if types is not None else bytearray(hi - lo)
        # an object the packs did not show is looked for where it may be (loose, or a
        # damaged pack entry that still exists)
        for j in (i for i, t in enumerate(known) if not t):
            oid = table.oid(lo + j)
            if not repo.odb.contains(oid):
                chunks.append(_lines(plan, table, lo, lo + j))
                return b"".join(chunks), (table.name(lo + j), oid)
        chunks.append(_lines(plan, table, lo, hi))
    return b"".join(chunks), None


def _lines(plan: tuple[tuple[int, bytes], ...], table: RefTable, lo: int, hi: int) -> bytes:
    """``plan`` (no type or size atoms) for the refs ``lo..hi-1`` of ``table``."""
    assert _format_ref_table is not None
    n = hi - lo
    return _format_ref_table(
        plan, table.parts, table.rawsz, lo, hi, False, bytes(n), bytes(8 * n), False
    )
