"""Choosing and ordering refs for ``for-each-ref`` (Git's ``filter_refs`` and ``ref_sorting``).

``RefFilter`` holds the selection (patterns, exclusions, ``--points-at``,
``--merged``/``--no-merged``, ``--contains``/``--no-contains``, root refs);
``collect(repo, filt)`` returns the matching ``RefItem``s in name order;
``sort_items`` orders them by sort keys (``refname``, ``-creatordate``,
``version:refname``, ``*objectname``...), the last key given first, ties by name.
"""

from __future__ import annotations

from gitodb.errors import GitodbError
from gitodb.refs.wildmatch import wildmatch
from gitodb.repo.refformat.formatter import Formatter, RefItem
from gitodb.types import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.repo import Repository


def match_as_path(patterns: list[str], name: str, ignore_case: bool = False) -> bool:
    """Git's ``match_name_as_path``: a path prefix of ``name``, or a glob (``*`` stops at /)."""
    for p in patterns:
        n = len(p)
        if name.startswith(p) and (len(name) == n or name[n] == "/" or p.endswith("/")):
            return True
        if wildmatch(p, name, pathname=True, casefold=ignore_case):
            return True
    return False


class RefFilter(Record):
    """What to list; ids are binary.  Empty lists mean no such filter."""

    __slots__ = (
        "patterns",
        "excludes",
        "ignore_case",
        "include_root_refs",
        "points_at",
        "merged",
        "no_merged",
        "contains",
        "no_contains",
        "start_after",
    )
    patterns: list[str]
    excludes: list[str]
    ignore_case: bool
    include_root_refs: bool
    points_at: list[bytes]
    merged: list[bytes]
    no_merged: list[bytes]
    contains: list[bytes]
    no_contains: list[bytes]
    start_after: str | None

    def __init__(
        self,
        patterns: list[str] | None = None,
        excludes: list[str] | None = None,
        ignore_case: bool = False,
        include_root_refs: bool = False,
        points_at: list[bytes] | None = None,
        merged: list[bytes] | None = None,
        no_merged: list[bytes] | None = None,
        contains: list[bytes] | None = None,
        no_contains: list[bytes] | None = None,
        start_after: str | None = None,
    ) -> None:
        self.patterns = [] if patterns is None else patterns
        self.excludes = [] if excludes is None else excludes
        self.ignore_case = ignore_case
        self.include_root_refs = include_root_refs
        self.points_at = [] if points_at is None else points_at
        self.merged = [] if merged is None else merged
        self.no_merged = [] if no_merged is None else no_merged
        self.contains = [] if contains is None else contains
        self.no_contains = [] if no_contains is None else no_contains
        self.start_after = start_after


def _points_at(repo: Repository, fmt: Formatter, item: RefItem, wanted: list[bytes]) -> bool:
    """The ref's id, or any tag in the chain it starts, is one of ``wanted``."""
    from gitodb.objects.tag import Tag

    if item.oid in wanted:
        return True
    oid = item.oid
    for _ in range(64):
        try:
            kind, data = repo.odb.read(oid)
        except GitodbError:
            raise GitodbError(f"malformed object at '{item.name}'") from None
        if kind != "tag":
            return False
        try:
            oid = Tag(data, repo.object_format).object
        except GitodbError:
            raise GitodbError(f"malformed object at '{item.name}'") from None
        if oid in wanted:
            return True
    return False


def collect(repo: Repository, filt: RefFilter, fmt: Formatter) -> list[RefItem]:
    """The refs ``filt`` selects, as items in name order (broken refs are left out)."""
    refs = repo.refs
    stored = list(refs.iter_refs())
    if filt.include_root_refs:
        stored = sorted(
            list(refs.iter_root_refs()) + stored,
            key=lambda r: r.name.encode("utf-8", "surrogateescape"),
        )
    items = []
    if not (filt.patterns or filt.excludes or filt.start_after is not None or filt.points_at):
        # every stored ref (the default): the loop below without its per-ref tests
        for ref in stored:
            if ref.target is None:
                items.append(RefItem(ref.name, ref.oid, None, ref.peeled))  # type: ignore[arg-type]
                continue
            resolved = refs.resolve_ref(ref.name)
            if resolved is not None and resolved[1] is not None:
                items.append(RefItem(ref.name, resolved[1], ref.target))
        stored = []
    for ref in stored:
        if filt.patterns and not match_as_path(filt.patterns, ref.name, filt.ignore_case):
            continue
        if filt.excludes and match_as_path(filt.excludes, ref.name, filt.ignore_case):
            continue
        if filt.start_after is not None and ref.name.encode(
            "utf-8", "surrogateescape"
        ) <= filt.start_after.encode("utf-8", "surrogateescape"):
            continue
        if ref.target is not None:
            resolved = refs.resolve_ref(ref.name)
            if resolved is None or resolved[1] is None:
                continue
            item = RefItem(ref.name, resolved[1], symref=ref.target)
        else:
            assert ref.oid is not None
            item = RefItem(ref.name, ref.oid, peeled=ref.peeled)
        if filt.points_at and not _points_at(repo, fmt, item, filt.points_at):
            continue
        items.append(item)
    if filt.merged or filt.no_merged or filt.contains or filt.no_contains:
        items = _reach_filter(fmt, filt, items)
    return items


def _reach_filter(fmt: Formatter, filt: RefFilter, items: list[RefItem]) -> list[RefItem]:
    """Keep the refs to commits that ``--merged``/``--contains`` and their negations want."""
    merged = set().union(*(fmt.ancestors(c) for c in filt.merged)) if filt.merged else None
    unmerged = set().union(*(fmt.ancestors(c) for c in filt.no_merged)) if filt.no_merged else None
    out = []
    for item in items:
        commit = fmt._commit_of(item.oid)  # noqa: SLF001 - the formatter's reachability cache
        if commit is None:
            continue
        if merged is not None and commit not in merged:
            continue
        if unmerged is not None and commit in unmerged:
            continue
        if filt.contains or filt.no_contains:
            anc = fmt.ancestors(commit)
            if filt.contains and not any(c in anc for c in filt.contains):
                continue
            if filt.no_contains and any(c in anc for c in filt.no_contains):
                continue
        out.append(item)
    return out


class SortKey(Record):
    """One ``--sort`` key: the atom, reversed (``-``), version order (``version:``)."""

    __slots__ = ("atom", "reverse", "version")
    atom: str
    reverse: bool
    version: bool

    def __init__(self, atom: str, reverse: bool = False, version: bool = False) -> None:
        self.atom = atom
        self.reverse = reverse
        self.version = version


def parse_sort_key(text: str) -> SortKey:
    """``[-][version:|v:]<atom>``."""
    reverse = text.startswith("-")
    if reverse:
        text = text[1:]
    version = False
    for prefix in ("version:", "v:"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
            version = True
            break
    return SortKey(text, reverse, version)


def versioncmp(a: bytes, b: bytes) -> int:
    """glibc's ``strverscmp`` order (Git's ``versioncmp`` without ``versionsort.suffix``)."""
    s_n, s_i, s_f, s_z = 0, 3, 6, 9
    cmp_, len_ = 2, 3
    next_state = (s_n, s_i, s_z, s_n, s_i, s_i, s_n, s_f, s_f, s_n, s_f, s_z)
    result = (
        cmp_,
        cmp_,
        cmp_,
        cmp_,
        len_,
        cmp_,
        cmp_,
        cmp_,
        cmp_,
        cmp_,
        -1,
        -1,
        1,
        len_,
        len_,
        1,
        len_,
        len_,
        cmp_,
        cmp_,
        cmp_,
        cmp_,
        cmp_,
        cmp_,
        cmp_,
        cmp_,
        cmp_,
        cmp_,
        1,
        1,
        -1,
        cmp_,
        cmp_,
        -1,
        cmp_,
        cmp_,
    )
    if a == b:
        return 0
    a0, b0 = a + b"\0", b + b"\0"

    def cls(c: int) -> int:
        return (c == 0x30) + (0x30 <= c <= 0x39)

    i = 0
    c1, c2 = a0[0], b0[0]
    state = s_n + cls(c1)
    while c1 == c2:
        if c1 == 0:
            return 0
        state = next_state[state]
        i += 1
        c1, c2 = a0[i], b0[i]
        state += cls(c1)
    diff = c1 - c2
    r = result[state * 3 + cls(c2)]
    if r == cmp_:
        return diff
    if r == len_:
        j = i
        while 0x30 <= a0[j] <= 0x39:
            if not 0x30 <= b0[j] <= 0x39:
                return 1
            j += 1
        return -1 if 0x30 <= b0[j] <= 0x39 else diff
    return r


def _item_name(item: RefItem) -> str:
    return item.name


def sort_items(
    fmt: Formatter, items: list[RefItem], keys: list[SortKey], ignore_case: bool = False
) -> list[RefItem]:
    """``items`` ordered by ``keys`` (primary first), then by ref name."""
    atoms = [(fmt.atom(k.atom), k) for k in keys]
    if len(atoms) == 1:
        atom, key = atoms[0]
        if atom.name == "refname" and not (atom.deref or atom.refname.kind or key.version):
            # By plain name (the default): its value is the name, which also breaks
            # ties, so a key sort gives compare's order (stable for ignore_case's ties).
            if not ignore_case and "".join([i.name for i in items]).isascii():
                # ASCII names: code-point order is byte order, no key per name
                return sorted(items, key=_item_name, reverse=key.reverse)

            def name_key(item: RefItem) -> bytes:
                name = item.name.encode("utf-8", "surrogateescape")
                return name.lower() if ignore_case else name

            return sorted(items, key=name_key, reverse=key.reverse)

    def text(v: bytes) -> bytes:
        return v.lower() if ignore_case else v

    def compare(a: RefItem, b: RefItem) -> int:
        for atom, key in atoms:
            va, vb = fmt.value(a, atom), fmt.value(b, atom)
            if key.version:
                c = versioncmp(va.text, vb.text)
            elif atom.numeric:
                c = (va.number > vb.number) - (va.number < vb.number)
            else:
                ta, tb = text(va.text), text(vb.text)
                c = (ta > tb) - (ta < tb)
            if c:
                return -c if key.reverse else c
        na, nb = (text(x.name.encode("utf-8", "surrogateescape")) for x in (a, b))
        return (na > nb) - (na < nb)

    from functools import cmp_to_key  # (only when sorting: a command's start-up)

    return sorted(items, key=cmp_to_key(compare))
