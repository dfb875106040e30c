"""The ``commits`` and ``changes`` tables: one walk over the history of the refs.

The commits are those ``git rev-list --all`` lists (every ref and HEAD), or those
of one revision when ``rev`` is given, in topological order (children first).
``reachable_from`` names HEAD and the branches, tags and remote-tracking refs whose
history holds the commit (or ``rev``); it is computed in the same pass: each commit
carries a bit set of the refs that reach it, handed down to its parents, so the
cost is one big-integer ``or`` per parent link.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from gitodb.bulk.columns import fixed_hex, list_of, repeated, taken
from gitodb.bulk.schema import SCHEMAS
from gitodb.bulk.text import str_and_bytes, text_and_bytes
from gitodb.errors import ObjectNotFoundError
from gitodb.history.graph import CommitGraph
from gitodb.history.revwalk import RevWalk
from gitodb.history.treediff import diff_trees
from gitodb.objects.commit import Commit
from gitodb.objects.signature import Signature
from gitodb.objects.tag import Tag
from gitodb.repo import Repository


def subject_bytes(message: bytes) -> bytes:
    """Git's ``%s``: the first paragraph of the message, its lines joined by spaces."""
    lines = message.split(b"\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    para: list[bytes] = []
    for line in lines:
        if not line.strip():
            break
        para.append(line.strip())
    return b" ".join(para)


def subject(message: bytes) -> str:
    """``subject_bytes`` as text (invalid UTF-8 as U+FFFD)."""
    return subject_bytes(message).decode("utf-8", "replace")


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
    """The walk and the ref bits of each starting commit (tags peeled by the walk)."""
    walk = RevWalk(repo, order="topo", graph=_KeepingGraph(repo))
    names: list[str] = []
    tips: dict[bytes, int] = {}
    odb = repo.odb
    for name, oid in _starts(repo, rev):
        # A ref to a tree or blob (or a tag of one) has no history: skip it as Git does.
        # The type from the header: only a tag is read whole (to peel it).
        target = oid
        type_name = odb.read_header(target)[0]
        while type_name == "tag":
            target = Tag(odb.read(target)[1], repo.object_format, target).object
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
) -> Iterator[pa.RecordBatch]:
    """Rows of the ``commits`` table, as record batches built column by column of at
    most ``max_rows`` rows / about ``max_bytes`` bytes."""
    walk, ref_names, masks = _walk(repo, rev)
    names = _Names()
    names_arr = pa.array(ref_names, pa.string())
    graph = walk.graph
    assert isinstance(graph, _KeepingGraph)
    fmt = repo.object_format
    rawsz = fmt.rawsz
    sch = SCHEMAS["commits"]
    max_rows = max(1, max_rows)
    nodes = walk.commits()
    done = False
    while not done:
        ids: list[bytes] = []
        trees: list[bytes] = []
        parents: list[bytes] = []
        parent_ends = array("i", [0])
        sigs: list[tuple[Any, ...]] = []
        subjects: list[tuple[str | None, bytes | None]] = []
        messages: list[tuple[str | None, bytes | None]] = []
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
            subjects.append(text_and_bytes(subject_bytes(msg)))
            messages.append(text_and_bytes(msg) if message else (None, None))
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
        by_column = list(zip(*sigs, strict=True))
        subject_cols = list(zip(*subjects, strict=True))
        message_cols = list(zip(*messages, strict=True))
        yield pa.RecordBatch.from_arrays(
            [
                repeated(repository, count),
                fixed_hex(ids, rawsz),
                fixed_hex(trees, rawsz),
                list_of(parent_ends, fixed_hex(parents, rawsz)),
                *(
                    pa.array(col, field.type)
                    for col, field in zip(by_column, list(sch)[4:16], strict=True)
                ),
                pa.array(subject_cols[0], pa.string()),
                pa.array(subject_cols[1], pa.binary()),
                pa.array(message_cols[0], pa.string()),
                pa.array(message_cols[1], pa.binary()),
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
