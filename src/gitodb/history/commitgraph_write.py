"""Writing and verifying commit-graph files the way ``git commit-graph`` does.

``write_commit_graph(repo, ...)`` collects commits (every pack's commits by
default, ``reachable`` from the refs, or given ``commits``/``packs``), closes
them under parents, sorts them by id and writes Git's chunks in Git's order:
``OIDF OIDL CDAT GDA2 [GDO2] [EDGE] [BIDX BDAT] [BASE]``.  Generation numbers
are Git's: the topological level in ``CDAT`` and corrected commit dates as
offsets in ``GDA2``.  ``changed_paths`` adds Bloom filters (version 1, Git's
default).  ``split`` writes a new layer of a chain with the commits not in the
existing graph; with ``merge`` (bare ``--split``) the layers on top are merged into
it as Git does: while the top layer holds at most ``size_multiple`` times the
commits being written, or these are more than ``max_commits``, it is folded in.
Graph files the new state does not use are deleted when their mtime is not
after ``expire_time`` (default: now).

``verify_commit_graph(repo)`` checks a graph against the objects like
``git commit-graph verify`` and returns Git's error lines.
"""

from __future__ import annotations

import hashlib
import os
import struct
import sys
import time
from collections.abc import Callable, Iterable

from gitodb import trace2
from gitodb.durable import Component
from gitodb.errors import GitodbError, ObjectNotFoundError
from gitodb.history.bloom import changed_paths, make_filter
from gitodb.history.commitgraph import (
    EXTRA_EDGES,
    GENERATION_V1_MAX,
    LAST_EDGE,
    OFFSET_OVERFLOW,
    PARENT_NONE,
    BloomSettings,
    CommitGraphError,
    CommitGraphFile,
    chain_dir,
    graph_compatible,
    graph_path,
    load_commit_graph,
    read_graph_file,
)
from gitodb.lockfile import LockFile
from gitodb.objects.commit import parse_commit_date, parse_commit_links
from gitodb.objects.tag import Tag
from gitodb.types import Progress

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.pack.reader import PackFile
    from gitodb.repo import Repository

_V2_OFFSET_MAX = (1 << 31) - 1


class CommitGraphInputError(GitodbError):
    """A commit or pack given to ``write`` cannot be used (Git: ``error:``, exit 1)."""


class _Commit:
    __slots__ = ("oid", "tree", "parents", "date", "level", "gen")

    def __init__(self, oid: bytes, tree: bytes, parents: list[bytes], date: int) -> None:
        self.oid = oid
        self.tree = tree
        self.parents = parents
        self.date = date
        self.level = 0
        self.gen = 0


def _peel_commit(repo: Repository, oid: bytes) -> bytes | None:
    odb = repo.odb
    for _ in range(64):
        try:
            t, data = odb.read(oid)
        except ObjectNotFoundError:
            return None
        if t == "commit":
            return oid
        if t != "tag":
            return None
        oid = Tag(data, repo.object_format, oid).object
    return None


def _pack_commits(repo: Repository, packs: Iterable[PackFile]) -> list[bytes]:
    out = []
    odb = repo.odb
    for pack in packs:
        for oid in pack.idx.iter_oids():
            if odb.read_header(oid)[0] == "commit":
                out.append(oid)
    return out


def collect_commits(
    repo: Repository,
    *,
    reachable: bool = False,
    commits: Iterable[bytes] | None = None,
    packs: Iterable[str] | None = None,
) -> list[bytes]:
    """The starting commits of a write (before closing under parents)."""
    if reachable:
        out = []
        refs = repo.refs
        for ref in refs.iter_refs("refs/"):
            oid = ref.oid if ref.target is None else refs.resolve(ref.name)
            if oid is not None:
                c = _peel_commit(repo, oid)
                if c is not None:
                    out.append(c)
        return out
    if commits is not None:
        out = []
        for oid in commits:
            if not repo.odb.contains(oid):
                raise CommitGraphInputError(f"invalid object: {oid.hex()}")
            c = _peel_commit(repo, oid)
            if c is not None:
                out.append(c)  # other objects are skipped, as Git skips them
        return out
    all_packs = repo.odb.packs
    if packs is not None:
        by_name = {os.path.basename(p.idx_path): p for p in all_packs}
        chosen = []
        for name in packs:
            pack = by_name.get(os.path.basename(name))
            if pack is None:
                raise CommitGraphInputError(f"error adding pack {name}")
            chosen.append(pack)
        return _pack_commits(repo, chosen)
    return _pack_commits(repo, all_packs)


def _load(
    repo: Repository, starts: list[bytes], known: CommitGraphFile | None
) -> dict[bytes, _Commit]:
    """Every commit reachable from ``starts`` that ``known`` does not hold."""
    odb = repo.odb
    fmt = repo.object_format
    found: dict[bytes, _Commit] = {}
    stack = list(starts)
    while stack:
        oid = stack.pop()
        if oid in found or (known is not None and known.position(oid) is not None):
            continue
        try:
            t, data = odb.read(oid)
        except ObjectNotFoundError:
            raise GitodbError(f"unable to parse commit {oid.hex()}") from None
        if t != "commit":
            raise GitodbError(f"unable to parse commit {oid.hex()}")
        try:
            tree, parents, pos = parse_commit_links(data, fmt)
        except GitodbError:
            raise GitodbError(f"unable to parse commit {oid.hex()}") from None
        found[oid] = _Commit(oid, tree, parents, parse_commit_date(data, pos))
        stack.extend(parents)
    return found


def _generations(commits: dict[bytes, _Commit], base: CommitGraphFile | None) -> None:
    """Git's topological levels and corrected commit dates, without recursion."""

    def known(oid: bytes) -> tuple[int, int]:
        c = commits.get(oid)
        if c is not None:
            return c.level, c.gen
        assert base is not None
        pos = base.position(oid)
        assert pos is not None
        return base.commit_at(pos)[3], base.generation(pos)

    for start in commits.values():
        if start.level:
            continue
        stack = [start]
        while stack:
            c = stack[-1]
            pending = [commits[p] for p in c.parents if p in commits and not commits[p].level]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            if c.level:
                continue
            max_level = 0
            max_gen = 0
            for p in c.parents:
                level, gen = known(p)
                max_level = max(max_level, level)
                max_gen = max(max_gen, gen)
            c.level = min(max_level + 1, GENERATION_V1_MAX)
            if c.date and c.date > max_gen:
                max_gen = c.date - 1
            c.gen = max_gen + 1


def _build(
    repo: Repository,
    order: list[_Commit],
    base: CommitGraphFile | None,
    bloom: tuple[bytes, bytes] | None,
    generation_data: bool,
) -> bytes:
    """The graph file's bytes; ``bloom`` is the ``(BIDX, BDAT)`` pair, or None."""
    fmt = repo.object_format
    rawsz = fmt.rawsz
    n = len(order)
    offset = base.total_commits if base is not None else 0
    index = {c.oid: offset + i for i, c in enumerate(order)}

    def pos_of(oid: bytes) -> int:
        got = index.get(oid)
        if got is None:
            got = base.position(oid) if base is not None else None
        if got is None:
            raise GitodbError(f"missing parent {oid.hex()} for commit-graph")
        return got

    fanout = bytearray()
    counts = [0] * 256
    for c in order:
        counts[c.oid[0]] += 1
    total = 0
    for i in range(256):
        total += counts[i]
        fanout += struct.pack(">I", total)
    oidl = b"".join(c.oid for c in order)
    cdat = bytearray()
    edges = bytearray()
    n_edges = 0
    for c in order:
        ps = c.parents
        p1 = pos_of(ps[0]) if ps else PARENT_NONE
        if len(ps) < 2:
            p2 = PARENT_NONE
        elif len(ps) == 2:
            p2 = pos_of(ps[1])
        else:
            p2 = EXTRA_EDGES | n_edges
            for j, p in enumerate(ps[1:]):
                v = pos_of(p) | (LAST_EDGE if j == len(ps) - 2 else 0)
                edges += struct.pack(">I", v)
                n_edges += 1
        date = c.date
        cdat += c.tree + struct.pack(
            ">IIII", p1, p2, (c.level << 2) | ((date >> 32) & 3), date & 0xFFFFFFFF
        )
    chunks: list[tuple[bytes, bytes]] = [
        (b"OIDF", bytes(fanout)),
        (b"OIDL", oidl),
        (b"CDAT", bytes(cdat)),
    ]
    if generation_data:
        gda2 = bytearray()
        gdo2 = bytearray()
        overflows = 0
        for c in order:
            off = c.gen - c.date
            if off > _V2_OFFSET_MAX:
                gda2 += struct.pack(">I", OFFSET_OVERFLOW | overflows)
                gdo2 += struct.pack(">Q", off)
                overflows += 1
            else:
                gda2 += struct.pack(">I", off)
        chunks.append((b"GDA2", bytes(gda2)))
        if overflows:
            chunks.append((b"GDO2", bytes(gdo2)))
    if n_edges:
        chunks.append((b"EDGE", bytes(edges)))
    if bloom is not None:
        chunks += [(b"BIDX", bloom[0]), (b"BDAT", bloom[1])]
    bases = base.layers() if base is not None else []
    if bases:
        chunks.append((b"BASE", b"".join(g.checksum for g in bases)))
    del n
    out = bytearray(b"CGPH" + bytes([1, 1 if rawsz == 20 else 2, len(chunks), len(bases)]))
    off = 8 + 12 * (len(chunks) + 1)
    for cid, body in chunks:
        out += cid + struct.pack(">Q", off)
        off += len(body)
    out += b"\0\0\0\0" + struct.pack(">Q", off)
    for _cid, body in chunks:
        out += body
    out += hashlib.new(fmt.name, bytes(out)).digest()
    return bytes(out)


#: Git's test knobs for the filters' settings, with their defaults
_BLOOM_ENV = (
    ("GIT_TEST_BLOOM_SETTINGS_BITS_PER_ENTRY", "bits_per_entry"),
    ("GIT_TEST_BLOOM_SETTINGS_NUM_HASHES", "num_hashes"),
    ("GIT_TEST_BLOOM_SETTINGS_MAX_CHANGED_PATHS", "max_changed_paths"),
)


def _bloom_settings(
    repo: Repository, top: CommitGraphFile | None, changed_paths: bool | None
) -> tuple[bool, BloomSettings]:
    """Whether to write filters, and their settings, as Git's ``write_commit_graph``
    decides: ``commitGraph.changedPathsVersion`` (-1: the existing graph's version,
    else 1), the ``GIT_TEST_BLOOM_SETTINGS_*`` knobs; a top layer with filters turns
    them on (unless ``--no-changed-paths``) and its settings win."""
    settings = BloomSettings()
    version = _changed_paths_version(repo)
    for env, attr in _BLOOM_ENV:
        value = os.environ.get(env)
        if value:
            setattr(settings, attr, int(value, 0))
    if changed_paths is not False and top is not None and top.bloom is not None:
        changed_paths = True
        if version == -1:
            version = top.bloom.hash_version
        settings.bits_per_entry = top.bloom.bits_per_entry
        settings.num_hashes = top.bloom.num_hashes
        settings.max_changed_paths = BloomSettings().max_changed_paths
    settings.hash_version = 2 if version == 2 else 1
    return bool(changed_paths), settings


def _changed_paths_version(repo: Repository) -> int:
    return repo.config.get_int("commitgraph.changedpathsversion", -1)


class _FilterStats:
    """What Git's ``compute_bloom_filters`` counts (its trace2 data)."""

    __slots__ = ("computed", "not_computed", "trunc_empty", "trunc_large", "upgraded")

    def __init__(self) -> None:
        self.computed = self.not_computed = self.trunc_empty = 0
        self.trunc_large = self.upgraded = 0

    def report(self) -> None:
        for key, value in (
            ("filter-computed", self.computed),
            ("filter-not-computed", self.not_computed),
            ("filter-trunc-empty", self.trunc_empty),
            ("filter-trunc-large", self.trunc_large),
            ("filter-upgraded", self.upgraded),
        ):
            trace2.data("commit-graph", key, str(value))


def _bloom_chunks(
    repo: Repository,
    order: list[_Commit],
    known: CommitGraphFile | None,
    settings: BloomSettings,
    max_new: int,
    by_position: bool,
) -> tuple[bytes, bytes]:
    """``BIDX`` and ``BDAT`` for ``order`` (Git's ``compute_bloom_filters``).

    Filters are taken in generation order (graph order when the commits came from
    packs), each from the graph being replaced (``known``) when it has one of the
    same hash version, or a version 1 filter taken as version 2 when no path of the
    commit's or its first parent's tree has a byte above 0x7f; else computed while
    fewer than ``max_new`` (negative: no limit) were.  A commit without one gets an
    empty entry, which readers take as "no filter".
    """
    stats = _FilterStats()
    limit = max_new if max_new >= 0 else len(order)
    upgrade = os.environ.get("GIT_TEST_UPGRADE_BLOOM_FILTERS", "1").lower() not in (
        "0",
        "false",
        "no",
        "off",
    )
    high_bits: dict[bytes, bool] = {}
    filters: dict[bytes, bytes] = {}
    todo = order if by_position else sorted(order, key=lambda c: (c.gen, c.date))
    for c in todo:
        old = old_version = None
        if known is not None:
            pos = known.position(c.oid)
            if pos is not None:
                old = known.bloom_filter(pos)
                old_version = known.bloom_version(pos)
        may_compute = stats.computed < limit
        if old:  # an empty one was never computed
            if old_version == settings.hash_version:
                filters[c.oid] = old
                stats.not_computed += 1
                continue
            if (
                may_compute
                and upgrade
                and not _has_high_bit_paths(repo, c.tree, high_bits)
                and not (
                    c.parents and _has_high_bit_paths(repo, _tree_of(repo, c.parents[0]), high_bits)
                )
            ):
                filters[c.oid] = old
                stats.upgraded += 1
                continue
        if not may_compute:
            stats.not_computed += 1
            continue
        parent_tree = _tree_of(repo, c.parents[0]) if c.parents else None
        paths = changed_paths(repo, parent_tree, c.tree, settings.max_changed_paths)
        if paths is None:
            stats.trunc_large += 1
        elif not paths:
            stats.trunc_empty += 1
        filters[c.oid] = make_filter(paths, settings)
        stats.computed += 1
    stats.report()
    trace2.data_json(
        "bloom",
        "settings",
        {
            "hash_version": settings.hash_version,
            "num_hashes": settings.num_hashes,
            "bits_per_entry": settings.bits_per_entry,
            "max_changed_paths": settings.max_changed_paths,
        },
    )
    bidx = bytearray()
    bdat = bytearray(
        struct.pack(">III", settings.hash_version, settings.num_hashes, settings.bits_per_entry)
    )
    end = 0
    for c in order:
        f = filters.get(c.oid, b"")
        end += len(f)
        bidx += struct.pack(">I", end)
        bdat += f
    return bytes(bidx), bytes(bdat)


def _tree_of(repo: Repository, commit: bytes) -> bytes:
    return repo.odb.commit(commit).tree


def _has_high_bit_paths(repo: Repository, tree: bytes, seen: dict[bytes, bool]) -> bool:
    """Whether a name anywhere under ``tree`` has a byte above 0x7f (Git's
    ``has_entries_with_high_bit``; ``seen`` remembers the trees already looked at)."""
    got = seen.get(tree)
    if got is not None:
        return got
    found = False
    for entry in repo.odb.tree(tree):
        if any(b & 0x80 for b in entry.name) or (
            entry.object_type == "tree" and _has_high_bit_paths(repo, entry.oid, seen)
        ):
            found = True
            break
    seen[tree] = found
    return found


def write_commit_graph(
    repo: Repository,
    *,
    reachable: bool = False,
    commits: Iterable[bytes] | None = None,
    packs: Iterable[str] | None = None,
    changed_paths: bool | None = None,
    split: bool = False,
    replace: bool = False,
    append: bool = False,
    merge: bool = False,
    size_multiple: int = 2,
    max_commits: int = 0,
    expire_time: int | None = None,
    max_new_filters: int | None = None,
    progress: Progress | None = None,
    objects_dir: str | None = None,
) -> str | None:
    """Write a commit-graph (see the module docstring); return its path, or None
    when nothing was written (no commits, or a repository whose history grafts,
    replace refs or a shallow file change: Git writes no graph for those).

    ``max_new_filters`` bounds how many changed-path filters are computed (the
    others are reused from the graph being replaced, or left out; negative: no
    bound; None: ``commitGraph.maxNewFilters``).  ``progress``
    (``gitodb.types.Progress``) is called as ``(title, count, count, True)`` as
    each of Git's phases completes, ``title`` being Git's.  ``objects_dir``: the
    object directory whose graph is written (``--object-dir``: the repository's own,
    the default, or one of its alternates).
    """

    def phase(title: str, count: int) -> None:
        if progress is not None:
            progress(title, count, count, True)

    objects_dir = objects_dir or repo.odb.objects_dir
    if not graph_compatible(repo, writing=True):
        return None
    version = _changed_paths_version(repo)
    if version < -1 or version > 2:
        sys.stderr.write(
            "warning: attempting to write a commit-graph, but"
            f" 'commitGraph.changedPathsVersion' ({version}) is not supported\n"
        )
        return None
    try:
        existing = load_commit_graph(objects_dir, repo.object_format)
    except CommitGraphError:
        existing = None
    if changed_paths is None and repo.config.get_bool("commitgraph.changedpaths", False):
        changed_paths = True
    # Git keeps computing filters when the graph it replaces has them.
    changed_paths, settings = _bloom_settings(repo, existing, changed_paths)
    if max_new_filters is None:
        max_new_filters = repo.config.get_int("commitgraph.maxnewfilters", -1)
    starts = collect_commits(repo, reachable=reachable, commits=commits, packs=packs)
    if append and existing is not None and not split:
        starts += [oid for g in existing.layers() for oid in g.oids()]
    # A split layer goes on top of the existing graph; ``replace`` starts a new chain.
    base = existing if split and not replace else None
    if split and replace and existing is not None:
        starts += [oid for g in existing.layers() for oid in g.oids()]
    found = _load(repo, starts, base)
    phase("Expanding reachable commits in commit graph", len(found))
    if not found:
        return None  # Git writes no file without commits
    # Layers this write takes the place of (Git marks them with the time now, so
    # that --expire-time decides about them as of this write).
    dropped: list[str] = []
    if split and replace and existing is not None:
        dropped = [g.path for g in existing.layers()]
    if split and merge and base is not None:
        top = base
        base, merged = _merge_strategy(base, len(found), size_multiple, max_commits)
        if merged:
            found.update(_load(repo, merged, base))
            keep = {id(g) for g in base.layers()} if base is not None else set()
            dropped = [g.path for g in top.layers() if id(g) not in keep]
    _generations(found, base)
    phase("Computing commit graph topological levels", len(found))
    phase("Computing commit graph generation numbers", len(found))
    order = sorted(found.values(), key=lambda c: c.oid)
    generation_data = repo.config.get("commitgraph.generationversion") not in ("1",)
    bloom = None
    if changed_paths:
        by_position = not reachable and commits is None  # from packs: graph order
        bloom = _bloom_chunks(repo, order, existing, settings, max_new_filters, by_position)
    data = _build(repo, order, base, bloom, generation_data)
    if bloom is not None:
        phase("Computing commit changed paths Bloom filters", len(order))
    phase("Writing out commit graph in 4 passes", 4 * len(order))
    fsync = repo.fsync_policy
    if not split:
        info = os.path.join(objects_dir, "info")
        os.makedirs(info, exist_ok=True)
        path = graph_path(objects_dir)
        with LockFile(path, final_mode=0o444) as lock:
            lock.write(data)
            if fsync.wants(Component.COMMIT_GRAPH):
                fsync.sync(Component.COMMIT_GRAPH, lock.fd, lock.lock_path)
            lock.commit()
        # As Git: a single file replaces a chain; its layers expire.
        chain = os.path.join(chain_dir(objects_dir), "commit-graph-chain")
        if os.path.exists(chain):
            os.unlink(chain)
            _expire_layers(chain_dir(objects_dir), set(), expire_time)
        return path
    cdir = chain_dir(objects_dir)
    os.makedirs(cdir, exist_ok=True)
    rawsz = repo.object_format.rawsz
    single = graph_path(objects_dir)
    if base is not None and base.path == single:
        # The single file becomes the chain's base layer, as Git moves it.
        os.rename(single, os.path.join(cdir, f"graph-{base.checksum.hex()}.graph"))
    name = f"graph-{data[-rawsz:].hex()}.graph"
    import tempfile  # on use: only writing needs it

    fd, tmp = tempfile.mkstemp(prefix="tmp_graph_", dir=cdir)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o444)
        os.replace(tmp, os.path.join(cdir, name))
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    hashes = [g.checksum.hex() for g in base.layers()] if base is not None else []
    hashes.append(data[-rawsz:].hex())
    with LockFile(os.path.join(cdir, "commit-graph-chain"), final_mode=0o444) as lock:
        lock.write("".join(h + "\n" for h in hashes).encode())
        lock.commit()
    if os.path.exists(single):
        os.unlink(single)  # the chain replaces the single file
    for path in dropped:
        try:
            st = os.stat(path)
            os.utime(path, (st.st_atime, time.time()))
        except FileNotFoundError:
            pass
    _expire_layers(cdir, {f"graph-{h}.graph" for h in hashes}, expire_time)
    return os.path.join(cdir, name)


def _merge_strategy(
    top: CommitGraphFile, new_commits: int, size_multiple: int, max_commits: int
) -> tuple[CommitGraphFile | None, list[bytes]]:
    """Git's ``split_graph_merge_strategy``: the new base and the ids of the layers
    folded into the layer being written.

    Going down from the top, a layer is merged while it holds no more than
    ``size_multiple`` times the commits gathered so far, or while those are more
    than ``max_commits`` (when set); the count grows by each merged layer.
    """
    g: CommitGraphFile | None = top
    count = new_commits
    merged: list[bytes] = []
    while g is not None and (
        g.num_commits <= size_multiple * count or (max_commits and count > max_commits)
    ):
        count += g.num_commits
        merged.extend(g.oids())
        g = g.base
    return g, merged


def _expire_layers(cdir: str, keep: set[str], expire_time: int | None) -> None:
    """Delete ``graph-*.graph`` files not in ``keep`` whose mtime is not after
    ``expire_time`` (Git's ``expire_commit_graphs``; default: now)."""
    limit = int(time.time()) if expire_time is None else expire_time
    try:
        entries = os.listdir(cdir)
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        if not (entry.startswith("graph-") and entry.endswith(".graph")) or entry in keep:
            continue
        path = os.path.join(cdir, entry)
        try:
            if int(os.stat(path).st_mtime) > limit:
                continue
            os.unlink(path)
        except FileNotFoundError:
            pass


VERIFY_ERROR = 1
VERIFY_HASH_ERROR = 2


def verify_commit_graph(
    repo: Repository,
    *,
    shallow: bool = False,
    emit: Callable[[str], None] | None = None,
    progress: Progress | None = None,
    objects_dir: str | None = None,
) -> tuple[list[str], int]:
    """Git's ``commit-graph verify``: ``(report lines, status)``; the status has bit 1
    for damaged content and bit 2 for a bad checksum (Git's exit code); ``([], 0)``
    when there is no graph or it is sound.  The top layer is checked first, then
    (unless ``shallow``) the layers below it.  ``emit`` receives each line as it is
    found (a parent position outside the graph raises ``CommitGraphError`` like
    Git's ``die``, after the lines found before it).  ``progress``
    (``gitodb.types.Progress``) hears ``("Verifying commits in commit graph", n, n,
    True)`` once the graph's ``n`` commits are checked.  ``objects_dir``: the object
    directory whose graph is checked (the repository's own by default, or one of its
    alternates)."""
    objects_dir = objects_dir or repo.odb.objects_dir
    fmt = repo.object_format
    try:
        top = read_graph_file(graph_path(objects_dir), fmt)
        if top is None:
            from gitodb.history.commitgraph import read_chain

            top = read_chain(objects_dir, fmt)
    except CommitGraphError as e:
        found = [f"error: {line}" for line in e.details] + [f"error: {e.message}"]
        for line in found:
            if emit is not None:
                emit(line)
        return found, VERIFY_ERROR
    if top is None:
        return [], 0
    lines: list[str] = _Lines(emit)
    status = 0
    layers = top.layers()[::-1]
    for g in layers[:1] if shallow else layers:
        got = _verify_layer(repo, top, g, lines)
        status |= got
        if got & VERIFY_ERROR and not lines[-1:]:
            break
    if progress is not None:
        progress("Verifying commits in commit graph", top.total_commits, top.total_commits, True)
    return list(lines), status


class _Lines(list[str]):
    """The report lines, each also handed to ``emit`` when it is added."""

    def __init__(self, emit: Callable[[str], None] | None) -> None:
        super().__init__()
        self.emit = emit

    def append(self, line: str) -> None:
        super().append(line)
        if self.emit is not None:
            self.emit(line)


def _verify_layer(
    repo: Repository, top: CommitGraphFile, g: CommitGraphFile, lines: list[str]
) -> int:
    fmt = repo.object_format
    rawsz = fmt.rawsz
    data = g.data
    status = 0

    def report(message: str) -> None:
        nonlocal status
        status |= VERIFY_ERROR
        lines.append(message)

    digest = hashlib.new(fmt.name, bytes(data[: len(data) - rawsz])).digest()
    if digest != g.checksum:
        lines.append("the commit-graph file has incorrect checksum and is likely corrupt")
        status |= VERIFY_HASH_ERROR
    first = g.num_commits_in_base
    oids = g.oids()
    fan_pos = 0
    for i, oid in enumerate(oids):
        if i and oids[i - 1] >= oid:
            report(f"commit-graph has incorrect OID order: {oids[i - 1].hex()} then {oid.hex()}")
        while oid[0] > fan_pos:
            have = struct.unpack_from(">I", data, g._fanout_off + 4 * fan_pos)[0]
            if have != i:
                report(
                    f"commit-graph has incorrect fanout value: fanout[{fan_pos}] = {have} != {i}"
                )
            fan_pos += 1
    while fan_pos < 256:
        have = struct.unpack_from(">I", data, g._fanout_off + 4 * fan_pos)[0]
        if have != g.num_commits:
            report(
                f"commit-graph has incorrect fanout value: fanout[{fan_pos}] = {have} "
                f"!= {g.num_commits}"
            )
        fan_pos += 1
    for i in range(g.num_commits):
        # Git parses every commit from the graph first; a parent outside it is fatal.
        _tree, parents, _date, _level = g.commit_at(first + i)
        for p in parents:
            if p >= top.total_commits:
                raise CommitGraphError(f"invalid parent position {p}")
    if status & VERIFY_ERROR:
        return status
    odb = repo.odb
    seen_zero: bytes | None = None
    seen_nonzero: bytes | None = None
    for i, oid in enumerate(oids):
        pos = first + i
        try:
            t, raw = odb.read(oid)
            if t != "commit":
                raise ObjectNotFoundError(oid.hex())
            real_tree, real_parents, dpos = parse_commit_links(raw, fmt)
        except GitodbError:
            report(f"failed to parse commit {oid.hex()} from object database for commit-graph")
            continue
        tree, parents, date, _level = g.commit_at(pos)
        graph_parents = [top.oid_at(p) for p in parents]
        if tree != real_tree:
            report(
                f"root tree OID for commit {oid.hex()} in commit-graph is {tree.hex()} != "
                f"{real_tree.hex()}"
            )
        max_gen = 0
        for j, gp in enumerate(graph_parents):
            if j >= len(real_parents):
                report(f"commit-graph parent list for commit {oid.hex()} is too long")
                break
            if gp != real_parents[j]:
                report(
                    f"commit-graph parent for {oid.hex()} is {gp.hex()} != {real_parents[j].hex()}"
                )
            max_gen = max(max_gen, top.generation(parents[j]))
        if len(real_parents) > len(graph_parents):
            report(f"commit-graph parent list for commit {oid.hex()} terminates early")
        gen = g.generation(pos)
        if gen == 0:
            seen_zero = seen_zero or oid
        else:
            seen_nonzero = seen_nonzero or oid
        if seen_zero:
            continue
        if g._gda2 is None and max_gen == GENERATION_V1_MAX:
            max_gen -= 1
        if gen < max_gen + 1:
            report(f"commit-graph generation for commit {oid.hex()} is {gen} < {max_gen + 1}")
        real_date = parse_commit_date(raw, dpos)
        if date != real_date:
            report(f"commit date for commit {oid.hex()} in commit-graph is {date} != {real_date}")
    if seen_zero and seen_nonzero:
        report(
            "commit-graph has both zero and non-zero generations (e.g., commits "
            f"'{seen_zero.hex()}' and '{seen_nonzero.hex()}')"
        )
    return status
