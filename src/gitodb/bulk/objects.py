"""The ``objects`` table: every stored copy of an object, part by part.

A repository's parts are its own packs (one part each, named by the ``.pack``
file) and its loose objects (part ``loose``), so the entries of a large
repository are listed by several workers at once.  A pack part costs one header
walk of the pack (``PackFile.headers_by_position``, no object is inflated except
the first bytes of each delta) plus one entry-header parse per entry for the
delta base and the chain depth.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from gitodb.bulk.schema import SCHEMAS
from gitodb.errors import PackError
from gitodb.objects.header import OBJ_OFS_DELTA, OBJ_REF_DELTA, TYPE_NAMES
from gitodb.pack.entry import parse_entry_header, parse_ofs_distance
from gitodb.pack.reader import PackFile
from gitodb.repo import Repository

LOOSE_PART = "loose"


def own_pack_names(objects_dir: str) -> list[str]:
    """File names of the packs (with an ``.idx``) in ``objects_dir/pack``, sorted."""
    try:
        names = os.listdir(os.path.join(objects_dir, "pack"))
    except (FileNotFoundError, NotADirectoryError):
        return []
    packs = set(n for n in names if n.startswith("pack-") and n.endswith(".pack"))
    return sorted(n for n in packs if n[:-5] + ".idx" in names)


def own_pack(repo: Repository, name: str) -> PackFile:
    """The open ``PackFile`` of the repository's own pack ``name``; its error if unusable."""
    odb = repo.odb
    own = os.path.join(odb.objects_dir, "pack", name)
    for pack in odb.packs:
        if pack.path == own:
            return pack
    if not os.path.exists(own):
        raise PackError("packfile not found", path=own)
    # Not usable by the object database (it said why on stderr): raise the reason.
    return PackFile(own, repo.object_format, cache=odb.cache)


def object_rows(
    repo: Repository, repository: str, part: str, max_rows: int = 16384, max_bytes: int = 8 << 20
) -> Iterator[tuple[Any, ...] | pa.RecordBatch]:
    """Rows of the ``objects`` table for one part (a pack file name or ``loose``);
    a pack's come as record batches of at most ``max_rows`` rows / ``max_bytes``."""
    if part == LOOSE_PART:
        yield from _loose_rows(repo, repository)
    else:
        yield from _pack_rows(own_pack(repo, part), repository, part, max_rows, max_bytes)


def _loose_rows(repo: Repository, repository: str) -> Iterator[tuple[Any, ...]]:
    store = repo.odb.dirs[0].loose
    for oid in sorted(store.iter_oids()):
        header = store.read_header(oid)
        disk = store.disk_size(oid)
        if header is None or disk is None:
            continue  # removed since it was listed (pruned): no longer stored
        yield (repository, oid.hex(), header[0], header[1], disk, None, None, None, 0)


#: an objects row takes about this many bytes (two ids, a pack name, numbers)
_ROW_BYTES = 200


def _pack_rows(
    pack: PackFile, repository: str, name: str, max_rows: int, max_bytes: int
) -> Iterator[pa.RecordBatch]:
    """The pack's entries in pack order, as batches built column by column."""
    types, sizes = pack.headers_by_position()
    so = pack.sorted_offsets
    rev = pack.rev_order
    oids = pack.idx.oid_list()
    n = len(so)
    data_end = pack.data_end
    chain = _Chains(pack)
    sch = SCHEMAS["objects"]
    step = max(1, min(max_rows, max_bytes // _ROW_BYTES))
    names = TYPE_NAMES
    buf = pack.buf
    path = pack.path
    # Chain depth by pack-order position: two bytes an entry, whatever the pack size
    # (Git caps depth at 4095; deeper chains are counted exactly by _Chains).
    depth_by_k = array("H", bytes(2 * n))
    for start in range(0, n, step):
        stop = min(n, start + step)
        ids, kinds, sz, disk, offs, bases, depths = [], [], [], [], [], [], []
        for k in range(start, stop):
            off = so[k]
            p = rev[k]
            t, _size, hlen = parse_entry_header(buf, off, path)
            base_hex = None
            depth = 0
            if t == OBJ_OFS_DELTA:
                # The common case, inline: the base is earlier, its depth known.
                base_off = off - parse_ofs_distance(buf, off + hlen, path)[0]
                kb = bisect_left(so, base_off)
                if kb >= k or so[kb] != base_off:
                    raise PackError(
                        "OFS_DELTA base is not an entry of the pack", path=path, offset=off
                    )
                base_hex = oids[rev[kb]].hex()
                depth = depth_by_k[kb] + 1
            elif t == OBJ_REF_DELTA:
                base, depth = chain.base_and_depth(off)
                base_hex = base.hex() if base is not None else None
            if depth < 65535:
                depth_by_k[k] = depth
            ids.append(oids[p].hex())
            kinds.append(names[types[p]])
            sz.append(sizes[p])
            disk.append((so[k + 1] if k + 1 < n else data_end) - off)
            offs.append(off)
            bases.append(base_hex)
            depths.append(depth)
        count = stop - start
        yield pa.RecordBatch.from_arrays(
            [
                pa.array([repository] * count, pa.string()),
                pa.array(ids, pa.string()),
                pa.array(kinds, pa.string()),
                pa.array(sz, pa.int64()),
                pa.array(disk, pa.int64()),
                pa.array([name] * count, pa.string()),
                pa.array(offs, pa.int64()),
                pa.array(bases, pa.string()),
                pa.array(depths, pa.int32()),
            ],
            schema=sch,
        )


class _Chains:
    """Delta base ids and chain depths of a pack's entries, each entry parsed once.

    Walking the pack in offset order, an OFS_DELTA's base is always known already;
    a REF_DELTA's base may be stored later (a completed thin pack), so the chain is
    followed forward iteratively and every depth on the way remembered.
    """

    def __init__(self, pack: PackFile) -> None:
        self.pack = pack
        self.depth: dict[int, int] = {}
        # offset -> (base id, base offset or None when the base is outside the pack)
        self.link: dict[int, tuple[bytes, int | None] | None] = {}

    def _link(self, off: int) -> tuple[bytes, int | None] | None:
        got = self.link.get(off, False)
        if got is not False:
            return got  # type: ignore[return-value]
        pack = self.pack
        t, _size, hlen = parse_entry_header(pack.buf, off, pack.path)
        link: tuple[bytes, int | None] | None = None
        if t == OBJ_OFS_DELTA:
            base_off = off - parse_ofs_distance(pack.buf, off + hlen, pack.path)[0]
            link = (pack.oid_at_offset(base_off), base_off)
        elif t == OBJ_REF_DELTA:
            base = bytes(pack.buf[off + hlen : off + hlen + pack.fmt.rawsz])
            found = pack.find(base)
            link = (base, found if found >= 0 else None)
        self.link[off] = link
        return link

    def base_and_depth(self, off: int) -> tuple[bytes | None, int]:
        """``(direct base id or None, chain length)`` of the entry at ``off``."""
        link = self._link(off)
        if link is None:
            self.depth[off] = 0
            return None, 0
        known = self.depth.get(off)
        if known is not None:
            return link[0], known
        walked = [off]
        cur = link[1]
        extra = 1  # a base outside the pack ends the chain at depth 1 from there
        while cur is not None:
            d = self.depth.get(cur)
            if d is not None:
                extra = d + 1
                break
            nxt = self._link(cur)
            if nxt is None:
                self.depth[cur] = 0
                extra = 1
                break
            walked.append(cur)
            if len(walked) > self.pack.count:
                raise PackError("delta chain forms a cycle", path=self.pack.path, offset=off)
            cur = nxt[1]
        for i, w in enumerate(reversed(walked)):
            self.depth[w] = extra + i
        # The links of entries already passed are not needed again.
        for w in walked:
            self.link.pop(w, None)
        return link[0], self.depth[off]


__all__ = ["LOOSE_PART", "object_rows", "own_pack", "own_pack_names"]
