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
from collections.abc import Iterator
from typing import Any

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


def object_rows(repo: Repository, repository: str, part: str) -> Iterator[tuple[Any, ...]]:
    """Rows of the ``objects`` table for one part (a pack file name or ``loose``)."""
    if part == LOOSE_PART:
        yield from _loose_rows(repo, repository)
    else:
        yield from _pack_rows(own_pack(repo, part), repository, part)


def _loose_rows(repo: Repository, repository: str) -> Iterator[tuple[Any, ...]]:
    store = repo.odb.dirs[0].loose
    for oid in sorted(store.iter_oids()):
        header = store.read_header(oid)
        disk = store.disk_size(oid)
        if header is None or disk is None:
            continue  # removed since it was listed (pruned): no longer stored
        yield (repository, oid.hex(), header[0], header[1], disk, None, None, None, 0)


def _pack_rows(pack: PackFile, repository: str, name: str) -> Iterator[tuple[Any, ...]]:
    types, sizes = pack.headers_by_position()
    so = pack.sorted_offsets
    rev = pack.rev_order
    oids = pack.idx.oid_list()
    n = len(so)
    data_end = pack.data_end
    chain = _Chains(pack)
    for k in range(n):
        off = so[k]
        p = rev[k]
        base, depth = chain.base_and_depth(off)
        end = so[k + 1] if k + 1 < n else data_end
        yield (repository, oids[p].hex(), TYPE_NAMES[types[p]], sizes[p], end - off, name, off,
               base.hex() if base is not None else None, depth)


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
            base = bytes(pack.buf[off + hlen:off + hlen + pack.fmt.rawsz])
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
        extra = 1   # a base outside the pack ends the chain at depth 1 from there
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
