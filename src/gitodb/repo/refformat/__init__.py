"""``for-each-ref`` as a library: ref selection, sorting and Git's format language.

Example::

    from gitodb.repo import Repository
    from gitodb.repo.refformat import RefFilter, list_refs
    repo = Repository(".")
    for line in list_refs(repo, "%(refname:short) %(objectname:short) %(subject)",
                          RefFilter(patterns=["refs/heads/"]), sort=["-committerdate"]):
        print(line.decode())

Every atom Git's ``ref-filter.c`` documents is parsed (bad arguments raise
``GitodbError`` with Git's message); ``%(describe)`` and ``%(signature)`` raise
"not supported" when a ref needs them.
"""

from __future__ import annotations

# small and import-free; imported here so that the package's ``quote`` is the function
# (a submodule imported later would otherwise leave the module in its place)
from gitodb.repo.refformat.quote import NONE, PERL, PYTHON, SHELL, TCL, quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gitodb.repo import Repository
    from gitodb.repo.refformat.atoms import MalformedFormatError, parse_atom, parse_format
    from gitodb.repo.refformat.filter import (
        RefFilter,
        SortKey,
        collect,
        match_as_path,
        parse_sort_key,
        sort_items,
        versioncmp,
    )
    from gitodb.repo.refformat.formatter import Formatter, RefItem, Value

#: where each name of the package lives: loaded on first use, so that a submodule
#: (``refformat.table``, the plain formats' path) can be imported without the
#: formatter's modules (``formatter``, ``filter`` and the object model behind them)
_LAZY = {
    "MalformedFormatError": "atoms",
    "parse_atom": "atoms",
    "parse_format": "atoms",
    "RefFilter": "filter",
    "SortKey": "filter",
    "collect": "filter",
    "match_as_path": "filter",
    "parse_sort_key": "filter",
    "sort_items": "filter",
    "versioncmp": "filter",
    "Formatter": "formatter",
    "RefItem": "formatter",
    "Value": "formatter",
}


def __getattr__(name: str) -> object:
    sub = _LAZY.get(name)
    if sub is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = __import__(f"{__name__}.{sub}", fromlist=[name])
    value = getattr(module, name)
    globals()[name] = value
    return value


DEFAULT_FORMAT = "%(objectname) %(objecttype)\t%(refname)"

__all__ = [
    "RefFilter",
    "SortKey",
    "Formatter",
    "RefItem",
    "Value",
    "MalformedFormatError",
    "collect",
    "sort_items",
    "parse_sort_key",
    "match_as_path",
    "versioncmp",
    "parse_atom",
    "parse_format",
    "quote",
    "list_refs",
    "iter_lines",
    "render",
    "DEFAULT_FORMAT",
    "NONE",
    "SHELL",
    "PERL",
    "PYTHON",
    "TCL",
]


def list_refs(
    repo: Repository,
    fmt: str = DEFAULT_FORMAT,
    filt: RefFilter | None = None,
    *,
    sort: list[str] | None = None,
    quote_style: str = NONE,
    color: bool = False,
    count: int = 0,
    omit_empty: bool = False,
) -> list[bytes]:
    """The formatted lines (without newlines) ``git for-each-ref`` would print."""
    return list(
        iter_lines(
            repo,
            fmt,
            filt,
            sort=sort,
            quote_style=quote_style,
            color=color,
            count=count,
            omit_empty=omit_empty,
        )
    )


def iter_lines(
    repo: Repository,
    fmt: str = DEFAULT_FORMAT,
    filt: RefFilter | None = None,
    *,
    sort: list[str] | None = None,
    quote_style: str = NONE,
    color: bool = False,
    count: int = 0,
    omit_empty: bool = False,
) -> Iterator[bytes]:
    """``list_refs`` one line at a time (the format and sort keys are checked first).

    ``sort`` lists keys as ``--sort`` takes them, in command-line order (the last is
    the primary key); None means ``refname``, an empty list no sorting.
    """
    formatter, items = _selected(repo, fmt, filt, sort, quote_style, color, count)
    formatter.prefetch(items)
    return _lines(formatter, items, omit_empty)


def render(
    repo: Repository,
    fmt: str = DEFAULT_FORMAT,
    filt: RefFilter | None = None,
    *,
    sort: list[str] | None = None,
    quote_style: str = NONE,
    color: bool = False,
    count: int = 0,
    omit_empty: bool = False,
    native: bool = True,
) -> Iterator[bytes]:
    """``git for-each-ref``'s output (whole lines, newlines included), in chunks.

    The format is expanded for all refs in one native call where the native core
    supports every atom of it (``native=False``: never), else line by line as
    ``iter_lines`` does; the bytes are the same.  The format and sort keys are
    checked before the first chunk; a ref whose values cannot be computed (a missing
    object) raises before any output, as Git dies before printing.
    """
    from gitodb.repo.refformat.native import render_native

    formatter, items = _selected(repo, fmt, filt, sort, quote_style, color, count)
    plan = formatter.native_plan if native else None
    if plan is not None:
        return render_native(formatter, plan, items, omit_empty)
    formatter.prefetch(items)
    # every line before the first: an error (a missing object) prints nothing, as Git
    return iter([b"".join([line + b"\n" for line in _lines(formatter, items, omit_empty)])])


def _selected(
    repo: Repository,
    fmt: str,
    filt: RefFilter | None,
    sort: list[str] | None,
    quote_style: str,
    color: bool,
    count: int,
) -> tuple[Formatter, list[RefItem]]:
    """The formatter of ``fmt`` and the refs to show, sorted and cut to ``count``."""
    from gitodb.repo.refformat.filter import RefFilter, collect, parse_sort_key, sort_items
    from gitodb.repo.refformat.formatter import Formatter

    formatter = Formatter(repo, fmt, quote_style=quote_style, color=color)
    keys = [parse_sort_key(k) for k in (["refname"] if sort is None else sort)]
    for k in keys:
        formatter.atom(k.atom)
    f = filt if filt is not None else RefFilter()
    items = collect(repo, f, formatter)
    formatter.prepare(items)
    if keys:
        items = sort_items(formatter, items, list(reversed(keys)), f.ignore_case)
    if count:
        items = items[:count]
    return formatter, items


def _lines(formatter: Formatter, items: list[RefItem], omit_empty: bool) -> Iterator[bytes]:
    for item in items:
        line = formatter.format(item)
        if omit_empty and not line:
            continue
        yield line
