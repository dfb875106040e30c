"""The ``commits`` and ``changes`` tables: one walk over the history of the refs.

The commits are those ``git rev-list --all`` lists (every ref and HEAD), or those
of one revision when ``rev`` is given, in topological order (children first).
``reachable_from`` names HEAD and the branches, tags and remote-tracking refs whose
history holds the commit (or ``rev``); it is computed in the same pass: each commit
carries a bit set of the refs that reach it, handed down to its parents, so the
cost is one big-integer ``or`` per parent link.

A large repository's table is split into parts (``slice_part``): part ``k`` of ``n``
is the ``k``-th of ``n`` consecutive runs of rows of the same listing, cut where the
rows weighed by their ``reachable_from`` names reach ``k/n`` of the whole
(``slice_bounds``), so the parts concatenated in order are the unsplit table.  Each
part walks the whole history and hands the ref bits down through the rows before it
(the walk and that pass are about a third of the work), then reads, parses and
writes only its own rows, so two workers share one repository's table.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import Any

import pyarrow as pa

try:
    from gitodb import _native as _bulk_native
except ImportError:  # built without the native core
    _bulk_native = None  # type: ignore[assignment]

from gitodb.bulk.columns import fixed_hex, list_of, repeated, taken
from gitodb.bulk.schema import SCHEMAS
from gitodb.bulk.text import str_and_bytes, text_and_bytes
from gitodb.errors import ObjectNotFoundError
from gitodb.history import native
from gitodb.history.graph import CommitGraph
from gitodb.history.revwalk import RevWalk
from gitodb.history.treediff import diff_trees
from gitodb.objects.commit import Commit, subject_of
from gitodb.objects.header import OBJ_COMMIT, OBJ_TAG
from gitodb.objects.signature import Signature
from gitodb.objects.tag import Tag
from gitodb.repo import Repository


def subject(message: bytes) -> str:
    """Git's ``%s`` of a message as text (invalid UTF-8 as U+FFFD)."""
    return subject_of(message).decode("utf-8", "replace")


def _starts(repo: Repository, rev: str | None) -> list[tuple[str, bytes]]:
    """``(ref name, id)`` of the walk's starting points: HEAD and every ref, or ``rev``."""
    if rev is not None:
        return [(rev, repo.resolve(rev))]
    store = repo.refs
    out = []
    head = store.resolve("HEAD")
    if head is not None:
        out.append(("HEAD", head))
    for ref in store.iter_refs():
        oid = store.resolve(ref.name) if ref.target is not None else ref.oid
        if oid is not None:
            out.append((ref.name, oid))
    return out


#: refs listed in ``reachable_from`` (others, such as refs/pull/ or refs/notes/, are
#: walked but not named: a host's thousands of pull-request refs would make the
#: column quadratic)
LISTED_PREFIXES = ("refs/heads/", "refs/tags/", "refs/remotes/")

#: the part names of the slices of the listing (``slice_part``)
_SLICE_PREFIX = "rows-"


def slice_part(k: int, n: int) -> str:
    """The part name of the ``k``-th (from 0) of ``n`` slices of the listing."""
    return f"{_SLICE_PREFIX}{k + 1}-of-{n}"


def parse_slice(part: str) -> tuple[int, int] | None:
    """``(k, n)`` of a ``slice_part`` name, or None for any other part name."""
    if not part.startswith(_SLICE_PREFIX):
        return None
    a, of, b = part[len(_SLICE_PREFIX) :].partition("-of-")
    if not (of and a.isdigit() and b.isdigit()) or not 1 <= int(a) <= int(b):
        raise ValueError(f"bad part name '{part}'")
    return int(a) - 1, int(b)


#: what a row costs besides its reachable_from names, in names (measured on
#: libgit2: ~7 us a row, ~0.034 us a name written and compressed)
_ROW_WEIGHT = 200


def slice_bounds(counts: Sequence[int], piece: tuple[int, int]) -> tuple[int, int]:
    """Rows ``[start, stop)`` of slice ``piece`` (``(k, n)``) of a listing whose rows
    name ``counts[i]`` refs each: the slices are equal in rows weighed by their
    names (older commits are reached from more tags), so that they cost alike.
    Slice k starts at the row boundary where the rows before it weigh nearest to
    k/n of the whole (the earlier one on a tie)."""
    k, n = piece
    prefix = [0, *accumulate(_ROW_WEIGHT + c for c in counts)]
    total = prefix[-1]

    def boundary(j: int) -> int:
        # the first i with prefix[i] >= j/n of the total, or the one before it if
        # that is nearer (compared in integers: n * prefix against j * total)
        i = bisect_left(prefix, -(-j * total // n))
        if i > 0 and j * total - n * prefix[i - 1] <= n * prefix[i] - j * total:
            i -= 1
        return i

    return boundary(k), boundary(k + 1)


class _KeepingGraph(CommitGraph):
    """The walk's commit graph, keeping each commit's content (up to ``limit`` bytes in
    all) for the row that follows, so that a commit is read and inflated once."""

    def __init__(self, repo: Repository, limit: int = 64 << 20) -> None:
        super().__init__(repo)
        self.kept: dict[bytes, bytes] = {}
        self.room = limit
        read = self.odb.read

        def keeping_read(oid: bytes) -> tuple[str, bytes]:
            type_name, data = read(oid)
            if type_name == "commit" and self.room > len(data):
                self.kept[oid] = data
                self.room -= len(data)
            return type_name, data

        self.odb = _ReadThrough(self.odb, keeping_read)  # type: ignore[assignment]

    def take(self, oid: bytes) -> bytes:
        """The content of commit ``oid``: kept from the walk, or read again."""
        data = self.kept.pop(oid, None)
        if data is None:
            return bytes(self.repo.odb.read(oid)[1])
        self.room += len(data)
        return data


class _ReadThrough:
    """An object database whose ``read`` is replaced (everything else passes through)."""

    def __init__(self, odb: Any, read: Any) -> None:
        self._odb = odb
        self.read = read

    def __getattr__(self, name: str) -> Any:
        return getattr(self._odb, name)


def _walk(repo: Repository, rev: str | None) -> tuple[RevWalk, list[str], dict[bytes, int]]:
    """The Python walk and the ref bits of each starting commit (tags peeled by the
    walk)."""
    walk = RevWalk(repo, order="topo", graph=_KeepingGraph(repo))
    names: list[str] = []
    tips: dict[bytes, int] = {}
    odb = repo.odb
    fmt = repo.object_format
    for name, oid in _starts(repo, rev):
        # A ref to a tree or blob (or a tag of one) has no history: skip it as Git does.
        # The type from the header: only a tag is read whole (to peel it).
        target = oid
        type_name = odb.read_header(target)[0]
        while type_name == "tag":
            target = Tag(odb.read(target)[1], fmt, target).object
            try:
                type_name = odb.read_header(target)[0]
            except ObjectNotFoundError:
                type_name = ""
        if type_name != "commit":
            continue
        walk.add(oid, name=name)
        if rev is None and name != "HEAD" and not name.startswith(LISTED_PREFIXES):
            continue
        bit = 1 << len(names)
        # As text: a name that is not UTF-8 has U+FFFD here (its bytes are in refs).
        names.append(str_and_bytes(name)[0] or "")
        tips[target] = tips.get(target, 0) | bit
    return walk, names, tips


class _Names:
    """Positions of the ref names of a bit set, the tuples of recent sets kept (runs
    of commits share one)."""

    def __init__(self) -> None:
        self.cache: dict[int, tuple[int, ...]] = {}

    def __call__(self, mask: int) -> tuple[int, ...]:
        got = self.cache.get(mask)
        if got is not None:
            return got
        # The set bits, found by str.find over the binary digits (C speed, no per-bit
        # big-integer shifts): bit i is digit len(s) - 1 - i.
        s = bin(mask)
        last = len(s) - 1
        idx = []
        p = s.find("1", 2)
        while p >= 0:
            idx.append(last - p)
            p = s.find("1", p + 1)
        got = tuple(reversed(idx))
        if len(self.cache) >= 1024:
            self.cache.clear()
        self.cache[mask] = got
        return got


def _sig(sig: Signature | None) -> tuple[Any, ...]:
    """name, name bytes, email, email bytes, time, zone of a signature."""
    if sig is None:
        return None, None, None, None, None, None
    tz = sig.tz
    return (
        *text_and_bytes(sig.name),
        *text_and_bytes(sig.email),
        sig.timestamp,
        tz.decode("utf-8", "replace") if tz is not None else None,
    )


#: the bytes a commits row takes besides its message and reachable_from names
_ROW_BYTES = 300
#: ... and a reachable_from name (the estimate BatchBuilder uses for list items)
_NAME_BYTES = 24


def commit_rows(
    repo: Repository,
    repository: str,
    rev: str | None = None,
    message: bool = False,
    max_rows: int = 16384,
    max_bytes: int = 8 << 20,
    piece: tuple[int, int] | None = None,
) -> Iterator[pa.RecordBatch]:
    """Rows of the ``commits`` table, as record batches built column by column of at
    most ``max_rows`` rows / about ``max_bytes`` bytes; with ``piece`` ``(k, n)``, only
    the rows of that slice of the listing (``slice_bounds``).

    The native core lists the walk (``history.native.commit_walk``, from the refs
    typed by the packs' header table), hands down the ref bits, writes the
    ``reachable_from`` names and parses each batch of commits into column buffers
    (``_native/bulkcols.c``);
    without it (or where it does not apply) the Python walk and parsers build the
    same columns.  A batch whose commits the C parser does not accept (a continued
    author line, a time past int64...) is parsed in Python."""
    batches = _native_commit_rows(repo, repository, rev, message, max_rows, max_bytes, piece)
    if batches is None:
        batches = _python_commit_rows(repo, repository, rev, message, max_rows, max_bytes, piece)
    yield from batches


def _sig_columns(values: list[tuple[Any, ...]]) -> list[pa.Array]:
    """The 12 signature arrays (author then committer) from ``_sig`` pairs per row."""
    sch = SCHEMAS["commits"]
    by_column = list(zip(*values, strict=True))
    return [pa.array(col, f.type) for col, f in zip(by_column, list(sch)[4:16], strict=True)]


def _text_columns(raw: list[bytes | None]) -> list[pa.Array]:
    """A text column and its ``_bytes`` column from Git's bytes."""
    pairs = [text_and_bytes(v) for v in raw]
    return [
        pa.array([t for t, _b in pairs], pa.string()),
        pa.array([b for _t, b in pairs], pa.binary()),
    ]


def _python_columns(raws: list[bytes], fmt: Any, message: bool) -> list[pa.Array]:
    """tree .. message_bytes of the commits ``raws`` (17 arrays), parsed in Python."""
    trees: list[bytes] = []
    sigs: list[tuple[Any, ...]] = []
    subjects: list[bytes | None] = []
    messages: list[bytes | None] = []
    for raw in raws:
        commit = Commit(raw, fmt)
        msg = commit.message
        trees.append(commit.tree)
        sigs.append((*_sig(commit.author), *_sig(commit.committer)))
        subjects.append(subject_of(msg))
        messages.append(msg if message else None)
    return [
        fixed_hex(trees, fmt.rawsz),
        *_sig_columns(sigs),
        *_text_columns(subjects),
        *_text_columns(messages),
    ]


def _buffers_text(n: int, col: tuple[bytes, bytes, bytes | None, bool]) -> list[pa.Array]:
    """A text column and its ``_bytes`` column from ``commit_columns``' buffers."""
    offsets, data, valid, bad = col
    if bad:  # a value is not UTF-8: U+FFFD in the text, Git's bytes beside it
        ends = memoryview(offsets).cast("i")
        return _text_columns([data[ends[i] : ends[i + 1]] for i in range(n)])
    text = pa.StringArray.from_buffers(
        n, pa.py_buffer(offsets), pa.py_buffer(data), None if valid is None else pa.py_buffer(valid)
    )
    return [text, pa.nulls(n, pa.binary())]


def _buffers_int(n: int, col: tuple[bytes, bytes | None]) -> pa.Array:
    values, valid = col
    return pa.Array.from_buffers(
        pa.int64(), n, [None if valid is None else pa.py_buffer(valid), pa.py_buffer(values)]
    )


def _native_columns(n: int, cols: tuple[Any, ...], message: bool) -> list[pa.Array]:
    """The 17 arrays of ``_python_columns`` from ``commit_columns``' buffers."""
    tree, an, ae, at, atz, cn, ce, ct, ctz, subj, msg = cols
    return [
        pa.StringArray.from_buffers(
            n, pa.py_buffer(array("i", range(0, len(tree) + 1, len(tree) // n))), pa.py_buffer(tree)
        ),
        *_buffers_text(n, an),
        *_buffers_text(n, ae),
        _buffers_int(n, at),
        _buffers_text(n, atz)[0],
        *_buffers_text(n, cn),
        *_buffers_text(n, ce),
        _buffers_int(n, ct),
        _buffers_text(n, ctz)[0],
        *_buffers_text(n, subj),
        *(
            _buffers_text(n, msg)
            if message
            else (pa.nulls(n, pa.string()), pa.nulls(n, pa.binary()))
        ),
    ]


def _hex_column(data: bytes, hexsz: int) -> pa.Array:
    """A string array of ids from their hex run."""
    count = len(data) // hexsz
    offsets = array("i", range(0, hexsz * count + 1, hexsz))
    return pa.StringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data))


def _native_starts(
    repo: Repository, rev: str | None, reader: Any
) -> tuple[list[bytes], list[str], dict[bytes, int]]:
    """The native walk's start commits (in the order named, tags peeled), the ref
    names of ``reachable_from`` and the bits of each starting commit.

    The types of all the starts come from the packs' header table in one native call
    per pack (a ref to a commit is not read at all); only tags are read (to peel
    them), and what the table leaves (loose, damaged) is read through ``reader``."""
    fmt = repo.object_format
    named = _starts(repo, rev)
    table = repo.odb.read_header_table([oid for _name, oid in named])
    types = table[0] if table is not None else bytes(len(named))
    starts: list[bytes] = []
    names: list[str] = []
    tips: dict[bytes, int] = {}
    for k, (name, oid) in enumerate(named):
        # A ref to a tree or blob (or a tag of one) has no history: skip it as Git does.
        target, type_num = oid, types[k]
        if type_num != OBJ_COMMIT:
            if type_num not in (0, OBJ_TAG):
                continue
            type_num, data = reader.read(target)  # a missing target raises
            while type_num == OBJ_TAG:
                target = Tag(data, fmt, target).object
                try:
                    type_num, data = reader.read(target)
                except ObjectNotFoundError:
                    type_num = 0
            if type_num != OBJ_COMMIT:
                continue
        starts.append(target)
        if rev is None and name != "HEAD" and not name.startswith(LISTED_PREFIXES):
            continue
        bit = 1 << len(names)
        # As text: a name that is not UTF-8 has U+FFFD here (its bytes are in refs).
        names.append(str_and_bytes(name)[0] or "")
        tips[target] = tips.get(target, 0) | bit
    return starts, names, tips


def _native_listing(graph: CommitGraph, starts: list[bytes]) -> bytes | None:
    """``rev-list --topo-order --parents`` of ``starts`` from the native walk, or None
    where it does not apply; what ended the walk early (a missing or damaged parent)
    raises, before any row, as the Python topological walk does."""
    got = native.commit_walk(graph, starts, False)
    if got is None:
        return None
    (_count, text, _trees), error = native.run_walk(
        *got, lambda walk: walk.text(True, False, True, True)
    )
    if error is not None:
        raise error
    return bytes(text)


def _native_commit_rows(
    repo: Repository,
    repository: str,
    rev: str | None,
    message: bool,
    max_rows: int,
    max_bytes: int,
    piece: tuple[int, int] | None = None,
) -> Iterator[pa.RecordBatch] | None:
    """``commit_rows`` through the native core, or None where it does not apply (not
    built, ``GITODB_PURE_WALK``, a commit-graph chain, grafts...).  The walk runs
    here (its errors raise before any row, as the Python topological walk's do)."""
    if _bulk_native is None or not native.enabled():
        return None
    graph = CommitGraph(repo)
    if graph.grafts or graph.early_flags or not native.walk_usable(graph):
        return None
    reader = native.reader(repo)
    if reader is None:
        return None
    try:
        starts, ref_names, tips = _native_starts(repo, rev, reader)
        text = _native_listing(graph, starts)
        if text is None:
            reader.close()
            return None
        bit_of = _Names()
        bits = [(oid, i) for oid, mask in tips.items() for i in bit_of(mask)]
        rawsz = repo.object_format.rawsz
        reach = _bulk_native.ReachWalk(text, rawsz, bits, len(ref_names), ref_names)
        start, stop = 0, len(reach)
        if piece is not None:
            # One pass (~2% of the task) counts each row's names to place the slices.
            counted = array("i")
            counted.frombytes(_bulk_native.ReachWalk(text, rawsz, bits, len(ref_names)).counts())
            start, stop = slice_bounds(counted, piece)
            del counted
        reach.skip(start)  # the rows of the slices before: only their bits handed down
    except BaseException:
        reader.close()
        raise
    return _native_batches(
        repo, repository, reader, reach, message, max_rows, max_bytes, stop - start
    )


def _native_batches(
    repo: Repository,
    repository: str,
    reader: Any,
    reach: Any,
    message: bool,
    max_rows: int,
    max_bytes: int,
    left: int,
) -> Iterator[pa.RecordBatch]:
    fmt = repo.object_format
    rawsz, hexsz = fmt.rawsz, 2 * fmt.rawsz
    sch = SCHEMAS["commits"]
    rows = max(1, max_rows)
    if message:  # messages are the rows' bulk then: about 1 KiB a row
        rows = min(rows, max(1, max_bytes // 1024))
    items = max(1, max_bytes // _NAME_BYTES)
    read = reader.read
    try:
        while left > 0:
            got = reach.next(min(rows, left), items)
            if got is None:
                return
            left -= got[0]
            n, ids_hex, parent_ends, parents_hex, reach_ends, name_ends, name_data = got
            ids = bytes.fromhex(ids_hex.decode("ascii"))
            raws = []
            for k in range(0, n * rawsz, rawsz):
                data = read(ids[k : k + rawsz])[1]
                raws.append(data if type(data) is bytes else bytes(data))
            cols = _bulk_native.commit_columns(raws, rawsz, message)
            del ids
            arrays = (
                _native_columns(n, cols, message)
                if cols is not None
                else _python_columns(raws, fmt, message)
            )
            del raws
            yield pa.RecordBatch.from_arrays(
                [
                    repeated(repository, n),
                    _hex_column(ids_hex, hexsz),
                    arrays[0],
                    list_of(array("i", parent_ends), _hex_column(parents_hex, hexsz)),
                    *arrays[1:],
                    list_of(
                        array("i", reach_ends),
                        pa.StringArray.from_buffers(
                            len(name_ends) // 4 - 1,
                            pa.py_buffer(name_ends),
                            pa.py_buffer(name_data),
                        ),
                    ),
                ],
                schema=sch,
            )
    finally:
        reader.close()


def _python_commit_rows(
    repo: Repository,
    repository: str,
    rev: str | None,
    message: bool,
    max_rows: int,
    max_bytes: int,
    piece: tuple[int, int] | None = None,
) -> Iterator[pa.RecordBatch]:
    """``commit_rows`` in Python: the reference of the native path."""
    walk, ref_names, masks = _walk(repo, rev)
    names = _Names()
    names_arr = pa.array(ref_names, pa.string())
    graph = walk.graph
    assert isinstance(graph, _KeepingGraph)
    fmt = repo.object_format
    rawsz = fmt.rawsz
    sch = SCHEMAS["commits"]
    max_rows = max(1, max_rows)
    nodes: Iterator[Any] = walk.commits()
    if piece is not None:
        listed = list(nodes)
        counting = dict(masks)
        counts = []
        for node in listed:
            mask = counting.pop(node.id, 0)
            for p in node.parent_ids:
                counting[p] = counting.get(p, 0) | mask
            counts.append(mask.bit_count())
        del counting
        start, stop = slice_bounds(counts, piece)
        for node in listed[:start]:  # the slices before: only their bits handed down
            mask = masks.pop(node.id, 0)
            for p in node.parent_ids:
                masks[p] = masks.get(p, 0) | mask
            graph.room += len(graph.kept.pop(node.id, b""))
        nodes = iter(listed[start:stop])
    done = False
    while not done:
        ids: list[bytes] = []
        trees: list[bytes] = []
        parents: list[bytes] = []
        parent_ends = array("i", [0])
        sigs: list[tuple[Any, ...]] = []
        subjects: list[bytes | None] = []
        messages: list[bytes | None] = []
        reach = array("i")
        reach_ends = array("i", [0])
        weight = 0
        for node in nodes:
            oid = node.id
            mask = masks.pop(oid, 0)
            for p in node.parent_ids:
                masks[p] = masks.get(p, 0) | mask
            commit = Commit(graph.take(oid), fmt, oid)
            msg = commit.message
            ids.append(oid)
            trees.append(node.tree)  # the walk parsed them (or read the commit-graph)
            parents += node.parent_ids
            parent_ends.append(len(parents))
            sigs.append((*_sig(commit.author), *_sig(commit.committer)))
            subjects.append(subject_of(msg))
            messages.append(msg if message else None)
            got = names(mask)
            reach.extend(got)
            reach_ends.append(len(reach))
            weight += _ROW_BYTES + _NAME_BYTES * len(got) + (len(msg) if message else 0)
            if len(ids) >= max_rows or weight >= max_bytes:
                break
        else:
            done = True
        if not ids:
            return
        count = len(ids)
        yield pa.RecordBatch.from_arrays(
            [
                repeated(repository, count),
                fixed_hex(ids, rawsz),
                fixed_hex(trees, rawsz),
                list_of(parent_ends, fixed_hex(parents, rawsz)),
                *_sig_columns(sigs),
                *_text_columns(subjects),
                *_text_columns(messages),
                list_of(reach_ends, taken(names_arr, reach)),
            ],
            schema=sch,
        )


def _mode(mode: int | None) -> str | None:
    return f"{mode:06o}" if mode is not None else None


def change_rows(
    repo: Repository, repository: str, rev: str | None = None
) -> Iterator[tuple[Any, ...]]:
    """Rows of the ``changes`` table: each commit against its first parent."""
    walk, _names_unused, _tips = _walk(repo, rev)
    graph = walk.graph
    assert isinstance(graph, _KeepingGraph)
    graph.room = 0  # the changes need the trees, not the commits' content
    for node in walk.commits():
        parent = node.parent_ids[0] if node.parent_ids else None
        old_tree = graph.node(parent).tree if parent is not None else None
        c, p = node.id.hex(), parent.hex() if parent is not None else None
        for ch in diff_trees(repo, old_tree, node.tree):
            yield (
                repository,
                c,
                p,
                ch.status,
                *text_and_bytes(ch.path),
                _mode(ch.old_mode),
                _mode(ch.new_mode),
                ch.old_id.hex() if ch.old_id is not None else None,
                ch.new_id.hex() if ch.new_id is not None else None,
            )
