"""Reading Git's commit-graph files: ``objects/info/commit-graph`` and split chains.

A commit-graph (``gitformat-commit-graph``) lists commits sorted by id with, for
each, its tree, its parents (as positions in the graph), its committer date and
generation numbers (topological level in ``CDAT``; corrected commit date offsets
in ``GDA2``/``GDO2``), and optionally changed-path Bloom filters (``BIDX``/``BDAT``).
A chain (``objects/info/commit-graphs/commit-graph-chain``) stacks layers, base
first, each naming the layers below it in ``BASE``; positions count from the base.

``load_commit_graph(objects_dir, fmt)`` returns a ``CommitGraphFile`` (the top
layer; ``.base`` below it) or None.  A file that does not parse is reported with
Git's ``error:`` line and not used, as Git does; its checksum is only checked by
``verify`` (``gitodb.history.commitgraph_write``).

Example::

    g = load_commit_graph(repo.odb.objects_dir, repo.object_format)
    pos = g.position(oid)
    tree, parents, date = g.commit_at(pos)
"""

from __future__ import annotations

import mmap
import os
import struct

from gitodb.errors import GitodbError, report
from gitodb.objects.format import ObjectFormat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.repo import Repository

try:
    from gitodb._native import find_oid as _find_oid
except ImportError:  # built without a C compiler
    _find_oid = None  # type: ignore[assignment]

SIGNATURE = b"CGPH"
HEADER_SIZE = 8
CHUNK_WIDTH = 12
PARENT_NONE = 0x70000000
EXTRA_EDGES = 0x80000000
LAST_EDGE = 0x80000000
OFFSET_OVERFLOW = 0x80000000
GENERATION_V1_MAX = 0x3FFFFFFF
BLOOM_HEADER_SIZE = 12

_BE32 = struct.Struct(">I")
_CDAT_TAIL = struct.Struct(">IIII")


class CommitGraphError(GitodbError):
    """A commit-graph file does not parse (Git's message)."""


class BloomSettings:
    """``BDAT``'s header: hash version (1 or 2), number of hashes, bits per entry."""

    __slots__ = ("hash_version", "num_hashes", "bits_per_entry", "max_changed_paths")

    def __init__(
        self,
        hash_version: int = 1,
        num_hashes: int = 7,
        bits_per_entry: int = 10,
        max_changed_paths: int = 512,
    ) -> None:
        self.hash_version = hash_version
        self.num_hashes = num_hashes
        self.bits_per_entry = bits_per_entry
        self.max_changed_paths = max_changed_paths


class CommitGraphFile:
    """One parsed commit-graph file (one layer of a chain)."""

    def __init__(
        self,
        path: str,
        data: bytes | mmap.mmap,
        fmt: ObjectFormat,
        base: CommitGraphFile | None = None,
    ) -> None:
        self.path = path
        self.data = data
        self.fmt = fmt
        self.base = base
        self.num_commits_in_base: int = (
            base.num_commits_in_base + base.num_commits if base is not None else 0
        )
        self._index: dict[bytes, int] | None = None
        self._oid_list: list[bytes] | None = None
        self._records: list[tuple[bytes, int, int, int, int]] | None = None
        self._parse()

    # -- parsing ---------------------------------------------------------------
    def _fail(self, message: str, first: str | None = None) -> CommitGraphError:
        """Git's error; ``first`` is the chunk reader's own line printed before it."""
        return CommitGraphError(
            message, path=self.path, details=[first] if first is not None else None
        )

    def _parse(self) -> None:
        d = self.data
        rawsz = self.fmt.rawsz
        size = len(d)
        if size < HEADER_SIZE + CHUNK_WIDTH + rawsz:
            raise self._fail("commit-graph file is too small")
        sig = bytes(d[:4])
        if sig != SIGNATURE:
            raise self._fail(
                f"commit-graph signature {_BE32.unpack(sig)[0]:X} does not "
                f"match signature {_BE32.unpack(SIGNATURE)[0]:X}"
            )
        if d[4] != 1:
            raise self._fail(f"commit-graph version {d[4]:X} does not match version 1")
        want_hash = 1 if rawsz == 20 else 2
        if d[5] != want_hash:
            raise self._fail(
                f"commit-graph hash version {d[5]:X} does not match version {want_hash:X}"
            )
        nchunks = d[6]
        self.num_bases = d[7]
        if size < HEADER_SIZE + (nchunks + 1) * CHUNK_WIDTH + rawsz:
            raise self._fail(f"commit-graph file is too small to hold {nchunks} chunks")
        chunks: dict[bytes, tuple[int, int]] = {}
        end_of_data = size - rawsz
        pos = HEADER_SIZE
        for i in range(nchunks + 1):
            cid = bytes(d[pos : pos + 4])
            off = struct.unpack_from(">Q", d, pos + 4)[0]
            nxt = struct.unpack_from(">Q", d, pos + 16)[0] if i < nchunks else None
            pos += CHUNK_WIDTH
            if i == nchunks:
                if cid != b"\0\0\0\0":
                    raise self._fail(f"final chunk has non-zero id {_BE32.unpack(cid)[0]:x}")
                break
            if cid == b"\0\0\0\0":
                raise self._fail("terminating chunk id appears earlier than expected")
            assert nxt is not None
            if off < HEADER_SIZE + (nchunks + 1) * CHUNK_WIDTH or nxt < off or nxt > end_of_data:
                raise self._fail(f"improper chunk offset(s) {off:x} and {nxt:x}")
            if cid in chunks:
                raise self._fail(f"duplicate chunk ID {_BE32.unpack(cid)[0]:x} found")
            chunks[cid] = (off, nxt - off)
        self.chunks = chunks

        fanout = chunks.get(b"OIDF")
        need = "commit-graph required OID fanout chunk missing or corrupted"
        if fanout is None:
            raise self._fail(need)
        if fanout[1] != 256 * 4:
            raise self._fail(need, "commit-graph oid fanout chunk is wrong size")
        self._fanout_off = fanout[0]
        prev = 0
        # _fan[b], _fan[b + 1]: the positions of the ids whose first byte is b
        self._fan = fan = [0]
        for i in range(256):
            v = _BE32.unpack_from(d, fanout[0] + 4 * i)[0]
            if v < prev:
                raise self._fail(need, "commit-graph fanout values out of order")
            prev = v
            fan.append(v)
        self.num_commits = prev
        lookup = chunks.get(b"OIDL")
        need = "commit-graph required OID lookup chunk missing or corrupted"
        if lookup is None:
            raise self._fail(need)
        if lookup[1] != self.num_commits * rawsz:
            raise self._fail(need, "commit-graph OID lookup chunk is the wrong size")
        self._oidl = lookup[0]
        cdat = chunks.get(b"CDAT")
        need = "commit-graph required commit data chunk missing or corrupted"
        if cdat is None:
            raise self._fail(need)
        if cdat[1] != self.num_commits * (rawsz + 16):
            raise self._fail(need, "commit-graph commit data chunk is wrong size")
        self._cdat = cdat[0]
        self._edge = chunks.get(b"EDGE")
        gda2 = chunks.get(b"GDA2")
        if gda2 is not None and gda2[1] != self.num_commits * 4:
            report("error", "commit-graph generations chunk is wrong size")
            gda2 = None
        self._gda2 = gda2
        self._gdo2 = chunks.get(b"GDO2")
        self.bloom: BloomSettings | None = None
        bidx = chunks.get(b"BIDX")
        bdat = chunks.get(b"BDAT")
        if bidx is not None and bidx[1] != self.num_commits * 4:
            report("warning", "commit-graph changed-path index chunk is too small")
            bidx = None
        if bidx is not None and bdat is not None and bdat[1] >= BLOOM_HEADER_SIZE:
            version, hashes, bits = struct.unpack_from(">III", d, bdat[0])
            if version in (1, 2):
                self.bloom = BloomSettings(version, hashes, bits)
        self._bidx = bidx
        self._bdat = bdat if self.bloom is not None else None
        self.base_hashes: list[bytes] = []
        base = chunks.get(b"BASE")
        if self.num_bases:
            if base is None or base[1] != self.num_bases * rawsz:
                raise self._fail("commit-graph base graphs chunk is too small")
            self.base_hashes = [
                bytes(d[base[0] + i * rawsz : base[0] + (i + 1) * rawsz])
                for i in range(self.num_bases)
            ]
        self.checksum = bytes(d[size - rawsz :])

    # -- lookups ---------------------------------------------------------------
    @property
    def total_commits(self) -> int:
        """Commits in this layer and every layer below it."""
        return self.num_commits_in_base + self.num_commits

    def _layer(self, pos: int) -> CommitGraphFile:
        g: CommitGraphFile = self
        while pos < g.num_commits_in_base:
            assert g.base is not None
            g = g.base
        return g

    def _oids(self) -> list[bytes]:
        """This layer's ids, decoded once (a walk touches most of them)."""
        if self._oid_list is None:
            rawsz = self.fmt.rawsz
            data = bytes(self.data[self._oidl : self._oidl + self.num_commits * rawsz])
            self._oid_list = [data[i : i + rawsz] for i in range(0, len(data), rawsz)]
        return self._oid_list

    def oid_at(self, pos: int) -> bytes:
        """The id of the commit at global position ``pos``."""
        g = self._layer(pos)
        return g._oids()[pos - g.num_commits_in_base]

    def position(self, oid: bytes) -> int | None:
        """The global position of commit ``oid``, or None."""
        g: CommitGraphFile | None = self
        native = _find_oid is not None and len(oid) == self.fmt.rawsz
        while g is not None:
            if native:
                # Straight in the mapping through the fan-out: O(log n) a lookup and
                # no per-file set-up (a point lookup, or --all's few thousand tips).
                first = oid[0]
                rawsz = len(oid)
                i = _find_oid(g.data, g._oidl, rawsz, rawsz, g._fan[first], g._fan[first + 1], oid)
                if i >= 0:
                    return g.num_commits_in_base + i
            else:
                if g._index is None:
                    first = g.num_commits_in_base
                    g._index = {o: first + i for i, o in enumerate(g._oids())}
                got = g._index.get(oid)
                if got is not None:
                    return got
            g = g.base
        return None

    def oids(self) -> list[bytes]:
        """Every commit id of this layer, in order."""
        return list(self._oids())

    def commit_at(self, pos: int) -> tuple[bytes, list[int], int, int]:
        """``(tree, parent positions, commit date, topological level)`` at ``pos``."""
        g = self._layer(pos)
        if g._records is None:
            rawsz = g.fmt.rawsz
            chunk = bytes(g.data[g._cdat : g._cdat + g.num_commits * (rawsz + 16)])
            g._records = list(struct.iter_unpack(f">{rawsz}sIIII", chunk))
        tree, p1, p2, gen_hi, date_lo = g._records[pos - g.num_commits_in_base]
        parents: list[int] = []
        if p1 != PARENT_NONE:
            parents.append(p1)
            if p2 != PARENT_NONE:
                if p2 & EXTRA_EDGES:
                    parents += g._extra_edges(p2 & ~EXTRA_EDGES)
                else:
                    parents.append(p2)
        date = ((gen_hi & 3) << 32) | date_lo
        return tree, parents, date, gen_hi >> 2

    def _extra_edges(self, start: int) -> list[int]:
        if self._edge is None:
            raise self._fail("commit-graph has no extra-edges chunk")
        off, size = self._edge
        out = []
        i = start
        while True:
            if (i + 1) * 4 > size:
                raise self._fail(f"invalid parent position {start + self.num_commits_in_base}")
            v = _BE32.unpack_from(self.data, off + 4 * i)[0]
            out.append(v & ~LAST_EDGE)
            if v & LAST_EDGE:
                return out
            i += 1

    def generation(self, pos: int) -> int:
        """The corrected commit date (generation v2) at ``pos``, or the topological
        level where the layer has no ``GDA2``."""
        g = self._layer(pos)
        tree, _p, date, level = g.commit_at(pos)
        del tree
        if g._gda2 is None:
            return level
        i = pos - g.num_commits_in_base
        v = _BE32.unpack_from(g.data, g._gda2[0] + 4 * i)[0]
        if v & OFFSET_OVERFLOW:
            if g._gdo2 is None:
                raise g._fail("commit-graph requires overflow generation data but has none")
            j = v & ~OFFSET_OVERFLOW
            if (j + 1) * 8 > g._gdo2[1]:
                raise g._fail("commit-graph overflow generation data is too small")
            v = struct.unpack_from(">Q", g.data, g._gdo2[0] + 8 * j)[0]
        return date + int(v)

    def bloom_filter(self, pos: int) -> bytes | None:
        """The changed-path filter of the commit at ``pos`` (None if its layer has none)."""
        g = self._layer(pos)
        if g._bidx is None or g._bdat is None:
            return None
        i = pos - g.num_commits_in_base
        end = _BE32.unpack_from(g.data, g._bidx[0] + 4 * i)[0]
        start = _BE32.unpack_from(g.data, g._bidx[0] + 4 * (i - 1))[0] if i else 0
        limit = g._bdat[1] - BLOOM_HEADER_SIZE
        if end > limit or start > limit or end < start:
            return None
        base = g._bdat[0] + BLOOM_HEADER_SIZE
        return bytes(g.data[base + start : base + end])

    def bloom_version(self, pos: int) -> int | None:
        """The hash version of the filter at ``pos`` (None if its layer has none)."""
        b = self._layer(pos).bloom
        return b.hash_version if b is not None else None

    def layers(self) -> list[CommitGraphFile]:
        """This layer and those below it, base first."""
        out: list[CommitGraphFile] = []
        g: CommitGraphFile | None = self
        while g is not None:
            out.append(g)
            g = g.base
        return out[::-1]


def _map(path: str) -> bytes | mmap.mmap | None:
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                return b""
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (FileNotFoundError, NotADirectoryError):
        return None


def graph_path(objects_dir: str) -> str:
    """Where the single commit-graph file lives."""
    return os.path.join(objects_dir, "info", "commit-graph")


def chain_dir(objects_dir: str) -> str:
    """The directory of a split commit-graph chain."""
    return os.path.join(objects_dir, "info", "commit-graphs")


def read_graph_file(
    path: str, fmt: ObjectFormat, base: CommitGraphFile | None = None
) -> CommitGraphFile | None:
    """Parse one file; None when it is absent; ``CommitGraphError`` when it is bad."""
    data = _map(path)
    if data is None:
        return None
    return CommitGraphFile(path, data, fmt, base)


def read_chain(objects_dir: str, fmt: ObjectFormat) -> CommitGraphFile | None:
    """The layers that ``commit-graph-chain`` lists, as Git loads them: a layer that
    is missing or does not match its base list ends the chain there (with Git's
    warning), and the layers below it are used."""
    chain = os.path.join(chain_dir(objects_dir), "commit-graph-chain")
    try:
        with open(chain, "rb") as f:
            lines = f.read().split(b"\n")
    except (FileNotFoundError, NotADirectoryError):
        return None
    hexsz = fmt.hexsz
    names = [ln for ln in lines if ln]
    top: CommitGraphFile | None = None
    below: list[bytes] = []
    for name in names:
        if len(name) != hexsz or any(c not in b"0123456789abcdef" for c in name):
            report(
                "warning",
                f"invalid commit-graph chain: line '{name.decode('utf-8', 'replace')}' not a hash",
            )
            break
        path = os.path.join(chain_dir(objects_dir), f"graph-{name.decode()}.graph")
        try:
            layer = read_graph_file(path, fmt, top)
        except CommitGraphError as e:
            for line in e.details:
                report("error", line)
            report("error", e.message)
            layer = None
        if layer is None or layer.base_hashes != below:
            report("warning", "unable to find all commit-graph files")
            break
        below = below + [bytes.fromhex(name.decode())]
        top = layer
    if top is not None:
        _drop_mixed_bloom_settings(top)
    return top


def _drop_mixed_bloom_settings(top: CommitGraphFile) -> None:
    """Git's ``validate_mixed_bloom_settings``: the topmost layer with filters sets
    their settings; a layer below whose filters were made otherwise (hash version,
    hashes, bits per entry) is read without them, with Git's warning."""
    settings: BloomSettings | None = None
    g: CommitGraphFile | None = top
    while g is not None:
        b = g.bloom
        if b is not None:
            if settings is None:
                settings = b
            elif (b.bits_per_entry, b.num_hashes, b.hash_version) != (
                settings.bits_per_entry,
                settings.num_hashes,
                settings.hash_version,
            ):
                g.bloom = None
                g._bidx = g._bdat = None
                report(
                    "warning",
                    f"disabling Bloom filters for commit-graph layer '{g.checksum.hex()}'"
                    " due to incompatible settings",
                )
        g = g.base


def load_commit_graph(objects_dir: str, fmt: ObjectFormat) -> CommitGraphFile | None:
    """The commit-graph Git would use: the single file, else the chain; None if
    there is none or it does not parse (reported as Git reports it)."""
    try:
        g = read_graph_file(graph_path(objects_dir), fmt)
    except CommitGraphError as e:
        for line in e.details:
            report("error", line)
        report("error", e.message)
        return None
    if g is not None:
        return g
    return read_chain(objects_dir, fmt)


def graph_compatible(repo: Repository, *, writing: bool = False) -> bool:
    """Git's ``commit_graph_compatible``: no grafts file, no shallow file, and no
    replace refs in use (``GIT_NO_REPLACE_OBJECTS`` turns those off; ``git
    commit-graph`` itself always does, so ``writing`` ignores them)."""
    if os.path.exists(os.path.join(repo.commondir, "info", "grafts")):
        return False
    if os.path.exists(os.path.join(repo.commondir, "shallow")):
        return False
    if (
        not writing
        and not os.environ.get("GIT_NO_REPLACE_OBJECTS")
        and repo.config.get_bool("core.usereplacerefs", True)
    ):
        if any(True for _r in repo.refs.iter_refs("refs/replace/")):
            return False
    return True
