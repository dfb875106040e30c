"""``show-ref``'s listing straight from the ref store's ``RefTable``.

``git show-ref [--branches] [--tags] [-s]`` prints every ref's id and name, after
checking that its object exists: the store's table (``RefStore.ref_table``), one
native search of each pack's index over its ids (``PackIndex.mark_present``) and
``_native.format_ref_table`` give the lines without an object per ref.  The
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
    if table is None or b"\0" in table.parts[0]:
        return None  # (a NUL in a damaged reftable's name: Git prints up to it)
    plan = (
        ((_OBJECTNAME, b""),)
        if hash_only
        else ((_OBJECTNAME, b""), (_LITERAL, b" "), (_REFNAME, b""))
    )
    rawsz = table.rawsz
    chunks = []
    for prefix in prefixes:
        lo, hi = table.prefix_range(prefix.encode("utf-8", "surrogateescape"))
        # in a pack's index: present, as Git's has_object (which reads no entry) says
        known = bytearray(hi - lo)
        ids = table.ids[lo * rawsz : hi * rawsz]
        for pack in repo.odb.packs:
            pack.idx.mark_present(ids, known, 1)
        # an object the indexes do not list may be loose (or missing)
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
