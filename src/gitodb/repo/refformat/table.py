"""``for-each-ref``'s plain formats straight from the ref store's ``RefTable``.

The default format and any other made only of ``%(refname)``, ``%(objectname)``,
``%(objecttype)`` and ``%(objectsize)`` (no quoting, sorted by ``refname`` or
``-refname``, no filter) need neither a ``RefItem`` per ref nor the formatter: the
store lists its refs as one table (``RefStore.ref_table``: packed-refs in one native
scan, loose refs overlaid), the object database looks up every shown object's type
in one native call per pack over the table's ids, and ``_native.format_ref_table``
writes the output.  ``render_table`` returns None for anything else, and
``gitodb.repo.refformat.formatter`` (the reference) does it; the bytes are the same.

This module imports neither the formatter nor the object model: it is what the
default ``for-each-ref`` loads.
"""

from __future__ import annotations

from gitodb.errors import GitodbError, ObjectNotFoundError, report
from gitodb.objects.header import TYPE_NUMBERS
from gitodb.repo.refformat.native import (
    DEREF_OBJECTNAME,
    DEREF_OBJECTSIZE,
    DEREF_OBJECTTYPE,
    OBJECTSIZE,
    OBJECTTYPE,
    compile_plan,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.refs.table import RefTable
    from gitodb.repo import Repository

try:
    from gitodb._native import format_ref_table as _format_ref_table
except ImportError:  # built without a C compiler: the formatter does it
    _format_ref_table = None  # type: ignore[assignment]

_DEREF = {DEREF_OBJECTNAME, DEREF_OBJECTTYPE, DEREF_OBJECTSIZE}
#: characters that make a pattern a glob (wildmatch's specials): the formatter's path
_GLOB = "*?[\\"


def render_table(
    repo: Repository,
    fmt: str,
    *,
    patterns: list[str] | None = None,
    sort: list[str] | None = None,
    count: int = 0,
    omit_empty: bool = False,
) -> bytes | None:
    """``git for-each-ref --format=fmt [--sort=...] [--count=n] [<pattern>...]``'s whole
    output, or None when this path does not apply (then the formatter's).

    ``patterns`` without glob characters select as Git's ``match_name_as_path`` does (a
    path prefix of the name, or the name itself); ``sort`` is as ``render`` takes it
    (None: by refname), only ``refname`` and ``-refname`` handled here.  A shown ref
    whose object cannot be found raises the formatter's error (``missing object <id>
    for <ref>``) before any output, the first such ref in output order, as Git dies.
    """
    if _format_ref_table is None:
        return None
    if sort is None or sort == ["refname"]:
        reverse = False
    elif sort == ["-refname"]:
        reverse = True
    else:
        return None
    if patterns and any(c in p for p in patterns for c in _GLOB):
        return None
    from gitodb.repo.refformat.atoms import parse_format  # (not on show-ref's path)

    plan = compile_plan(parse_format(fmt), "", False)
    if plan is None or any(code in _DEREF for code, _ in plan):
        return None
    broken: list[str] = []
    table = repo.refs.ref_table(broken)
    if table is None or b"\0" in table.parts[0]:
        return None  # (a NUL in a damaged reftable's name: the formatter's rules)
    runs = _runs(table, patterns) if patterns else [(0, len(table))]
    for name in broken:  # Git's filter_one, before any object is looked at
        if not patterns or _iterated(name, patterns):
            report("warning", f"ignoring broken ref {name}")
    rawsz = table.rawsz
    shown = []  # the runs shown, in output order, cut to count
    left = count or len(table)
    for lo, hi in reversed(runs) if reverse else runs:
        k = min(hi - lo, left)
        if k <= 0:
            break
        shown.append((hi - k, hi) if reverse else (lo, lo + k))
        left -= k
    codes = {code for code, _ in plan}
    headers = []
    for lo, hi in shown:  # every header before the first line, as Git dies first
        types, sizes = bytearray(hi - lo), bytearray(8 * (hi - lo))
        if codes & {OBJECTTYPE, OBJECTSIZE}:
            ids = table.ids[lo * rawsz : hi * rawsz]
            got = repo.odb.read_header_table(ids, want_size=OBJECTSIZE in codes)
            if got is not None:
                types, sizes = got
            _undecided(repo, table, lo, types, sizes, reverse)
        headers.append((types, sizes))
    return b"".join(
        _format_ref_table(plan, table.parts, rawsz, lo, hi, reverse, types, sizes, omit_empty)
        for (lo, hi), (types, sizes) in zip(shown, headers, strict=True)
    )


def _runs(table: RefTable, patterns: list[str]) -> list[tuple[int, int]]:
    """The ranges of ``table`` (in order, disjoint) whose names the literal
    ``patterns`` select: ``p`` itself and the names under ``p/`` (all names starting
    with ``p`` when it ends in "/")."""
    marks = bytearray(len(table))
    for text in patterns:
        p = text.encode("utf-8", "surrogateescape")
        if p.endswith(b"/"):
            lo, hi = table.prefix_range(p)
        else:
            lo, hi = table.prefix_range(p + b"/")
            exact, _ = table.prefix_range(p)
            if exact < len(table) and table.name_bytes(exact) == p:
                marks[exact] = 1
        marks[lo:hi] = b"\1" * (hi - lo)
    runs = []
    at = marks.find(1)
    while at >= 0:
        end = marks.find(0, at)
        end = len(marks) if end < 0 else end
        runs.append((at, end))
        at = marks.find(1, end)
    return runs


def _iterated(name: str, patterns: list[str]) -> bool:
    """Whether Git's iteration for literal ``patterns`` reaches ``name``: it walks the
    refs starting with each pattern as a string (``for_each_fullref_in_pattern``), and
    warns about a broken one there before any pattern test."""
    return any(name.startswith(p) for p in patterns)


def _undecided(
    repo: Repository,
    table: RefTable,
    lo: int,
    types: bytearray,
    sizes: bytearray,
    reverse: bool,
) -> None:
    """Fill in the headers the packs did not decide (loose, missing or unusual objects)
    through ``read_header``, in output order: the first missing one raises."""
    if types.find(0) < 0:
        return
    todo = [i for i, t in enumerate(types) if not t]
    size_view = memoryview(sizes).cast("Q")
    try:
        for j in reversed(todo) if reverse else todo:
            oid = table.oid(lo + j)
            try:
                type_name, size = repo.odb.read_header(oid)
            except ObjectNotFoundError:
                raise GitodbError(f"missing object {oid.hex()} for {table.name(lo + j)}") from None
            types[j] = TYPE_NUMBERS[type_name]
            size_view[j] = size
    finally:
        size_view.release()
