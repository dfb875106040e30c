"""Writing ``multi-pack-index-<checksum>.bitmap`` (``multi-pack-index write --bitmap``).

What goes in, as Git 2.55 decides it:

- the starting points: every ref (or the ``--refs-snapshot`` file: one id per
  line, ``+`` marking a preferred tip), peeled, commits only; refs matching
  ``pack.preferBitmapTips`` (whole path components) are preferred too;
- the commits reached from them that the MIDX holds, in walk order, sorted by
  committer date, newest first (stably); with fewer than 100 every one gets a
  bitmap, else Git's spacing rule picks them (every commit of the first 100,
  then one per growing stride, a preferred tip or a merge in the stride first);
- each bitmap: every object reachable from the commit, as bits in pseudo-pack
  order, stored XORed against the one of the previous ten whose XOR takes
  fewer words, built word for word as Git's ``ewah_xor`` builds it;
- the type bitmaps of every MIDX object, and the name-hash cache: a MIDX write
  knows no paths, so Git copies the values of the pack bitmap it had loaded for
  the objects that bitmap covers, and writes 0 for the rest.

An object reachable from a starting point but not in the MIDX makes the bitmap
impossible (``GitodbError``), as it does for Git.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from gitodb.errors import GitodbError
from gitodb.lockfile import LockFile
from gitodb.objects.tree import iter_tree
from gitodb.pack.bitmap import TYPE_NAMES, BitmapIndex
from gitodb.pack.bitmap_write import BitmapEntry, encode_bitmap
from gitodb.pack.ewah import BitmapError, git_ewah_of, git_ewah_xor
from gitodb.pack.midx import MIDX_NAME, MultiPackIndex, load_midx
from gitodb.pack.midx_write import midx_bitmap_path

if TYPE_CHECKING:
    from gitodb.repo.odb import ObjectDatabase

__all__ = ["MidxBitmapError", "read_refs_snapshot", "select_commits", "write_midx_bitmap"]

_GITLINK = 0o160000
_TREE = 0o040000
#: Git's spacing of bitmapped commits (pack-bitmap-write.c)
_MUST_REGION = 100
_MIN_REGION = 20000
_MIN_COMMITS = 100
_MAX_COMMITS = 5000
_XOR_SEARCH = 10


class MidxBitmapError(GitodbError):
    """A MIDX bitmap cannot be written: ``details`` are Git's ``warning:`` lines, the
    message its ``error:`` line (Git then exits 255 and keeps no new MIDX)."""


def _closure_error(oid: bytes) -> MidxBitmapError:
    return MidxBitmapError(
        "could not write multi-pack bitmap",
        details=[
            "Failed to write bitmap index. Packfile doesn't have full closure "
            f"(object {oid.hex()} is missing)"
        ],
    )


def read_refs_snapshot(path: str, hexsz: int) -> list[tuple[bytes, bool]]:
    """The ``--refs-snapshot`` file: ``(id, preferred)`` per line (``+`` first: preferred)."""
    out = []
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f.read().splitlines(), 1):
            line = raw.decode("ascii", "replace")
            preferred = line.startswith("+")
            hexid = line[1:] if preferred else line
            hexid = hexid.split(" ", 1)[0]
            if len(hexid) != hexsz or any(c not in "0123456789abcdef" for c in hexid):
                raise GitodbError(f"could not parse line: {line}", path=path, offset=lineno)
            out.append((bytes.fromhex(hexid), preferred))
    return out


def _next_index(idx: int) -> int:
    if idx <= _MUST_REGION:
        return 0
    if idx <= _MIN_REGION:
        return min(idx - _MUST_REGION, _MIN_COMMITS)
    return max(min(idx - _MIN_REGION, _MAX_COMMITS), _MIN_COMMITS)


def select_commits(
    commits: list[bytes], preferred: set[bytes], is_merge: Callable[[bytes], bool]
) -> list[bytes]:
    """Git's choice of commits to bitmap among ``commits`` (newest first)."""
    n = len(commits)
    if n < _MIN_COMMITS:
        return list(commits)
    chosen: list[bytes] = []
    i = 0
    while True:
        step = _next_index(i)
        if i + step >= n:
            break
        if step == 0:
            pick = commits[i]
        else:
            pick = commits[i + step]
            for j in range(step + 1):
                cm = commits[i + j]
                if cm in preferred:
                    pick = cm
                    break
                if is_merge(cm):
                    pick = cm
        chosen.append(pick)
        i += step + 1
    return chosen


def _prefer_patterns(config_values: list[str]) -> Callable[[str], bool]:
    """``pack.preferBitmapTips``: a ref matches a value naming it or a directory of it."""

    def match(refname: str) -> bool:
        for v in config_values:
            v = v.rstrip("/")
            if refname == v or refname.startswith(v + "/"):
                return True
        return False

    return match


def _reachability(
    odb: ObjectDatabase,
    bit_of: dict[bytes, int],
    links: dict[bytes, tuple[bytes, list[bytes]]],
    wanted: set[bytes],
) -> dict[bytes, int]:
    """The reachability bits of the ``wanted`` commits.

    Commits go parents first; each starts from the union of its parents' bits and
    walks only the trees those do not hold yet (a tree's bit set means its whole
    subtree is set).  A commit's bits are dropped once its last child is done,
    unless it is wanted, so memory follows the width of history, not its length.
    """
    rawsz = odb.fmt.rawsz

    def bit(oid: bytes) -> int:
        pos = bit_of.get(oid)
        if pos is None:
            raise _closure_error(oid)
        return pos

    children: dict[bytes, int] = dict.fromkeys(links, 0)
    for _tree, parents in links.values():
        for p in parents:
            children[p] = children.get(p, 0) + 1
    # Parents-first order by an iterative depth-first walk (post-order).
    order: list[bytes] = []
    state: dict[bytes, int] = {}
    for root in links:
        if root in state:
            continue
        stack = [root]
        while stack:
            c = stack[-1]
            if c not in state:
                state[c] = 1
                stack.extend(p for p in links[c][1] if p not in state)
                continue
            stack.pop()
            if state[c] == 1:
                state[c] = 2
                order.append(c)
    # Working bitmaps are byte arrays (setting and testing a bit is O(1); a big
    # int would be copied at every shift); the results are ints.
    nbytes = (len(bit_of) + 7) // 8
    bits_of: dict[bytes, bytes] = {}
    out: dict[bytes, int] = {}
    for c in order:
        tree, parents = links[c]
        if not parents:
            cur = bytearray(nbytes)
        elif len(parents) == 1:
            cur = bytearray(bits_of[parents[0]])
        else:
            union = 0
            for p in parents:
                union |= int.from_bytes(bits_of[p], "little")
            cur = bytearray(union.to_bytes(nbytes, "little"))
        pos = bit(c)
        cur[pos >> 3] |= 1 << (pos & 7)
        todo = [tree]
        while todo:
            t = todo.pop()
            pos = bit(t)
            if cur[pos >> 3] >> (pos & 7) & 1:
                continue
            cur[pos >> 3] |= 1 << (pos & 7)
            _kind, data = odb.read(t)
            for mode, _name, child in iter_tree(data, rawsz):
                if mode == _GITLINK:
                    continue
                if mode == _TREE:
                    todo.append(child)
                else:
                    pos = bit(child)
                    cur[pos >> 3] |= 1 << (pos & 7)
        for p in parents:
            children[p] -= 1
            if not children[p]:
                del bits_of[p]
        if c in wanted:
            out[c] = int.from_bytes(cur, "little")
        if children[c]:
            bits_of[c] = bytes(cur)
    return out


def _xor_compressed(selected: list[tuple[int, int]]) -> list[BitmapEntry]:
    """Git's compression of the entries, in written order: each bitmap is stored
    XORed against the one of the previous ten whose XOR (built as Git's
    ``ewah_xor`` builds it) takes fewer words, if any does."""
    ewahs = [git_ewah_of(bits) for _pos, bits in selected]
    out = []
    for i, (pos, bits) in enumerate(selected):
        best, best_offset = ewahs[i], 0
        for k in range(1, _XOR_SEARCH + 1):
            if i - k < 0:
                break
            x = git_ewah_xor(ewahs[i - k], ewahs[i])
            if len(x.buffer) < len(best.buffer):
                best, best_offset = x, k
        out.append(BitmapEntry(pos, bits, xor_offset=best_offset, stored=best.serialise()))
    return out


def write_midx_bitmap(
    repo: object,
    objects_dir: str,
    *,
    refs_snapshot: str | None = None,
    prefer_tips: list[str] | None = None,
    midx_path: str | None = None,
    lookup_table: bool = False,
    warn: Callable[[str, str], None] | None = None,
    incremental: bool = False,
    below: int | None = None,
    name_hashes: bool = True,
) -> str | None:
    """Write the bitmap of ``objects_dir``'s MIDX (which must carry ``RIDX``, as
    ``write_midx(bitmap=True)`` writes it); return its path.

    ``repo`` is the ``Repository`` whose refs (or the ``refs_snapshot`` file) name
    the starting points; ``prefer_tips`` are the ``pack.preferBitmapTips`` values;
    ``midx_path`` is the MIDX file to read (default: the one in place; ``write_midx``
    passes its finished lock file); ``lookup_table`` adds the commit lookup table
    (``pack.writeBitmapLookupTable``).  A MIDX without objects gets no bitmap (Git's
    warning through ``warn``; None returned).  Raises ``MidxBitmapError`` when an
    object reachable from the starting points is not in the MIDX.

    With ``incremental``, ``midx_path`` is a new chain layer over the MIDX now in
    place (its base): as Git, bit positions run over the base's objects (each layer
    in its pseudo-pack order, base first) and then the layer's, commit bitmaps hold
    everything reachable, and the type bitmaps, the name-hash cache and the
    bitmapped commits are the layer's own.  ``below`` (default: all) is how many
    layers of the chain in place lie below the new one (a compaction replaces some);
    without ``name_hashes`` the file has no name-hash cache (Git's compaction writes
    none).
    """
    from gitodb.history.revwalk import RevWalk

    odb: ObjectDatabase = repo.odb  # type: ignore[attr-defined]
    fmt = odb.fmt
    pack_dir = os.path.join(objects_dir, "pack")
    base = load_midx(objects_dir, fmt) if incremental else None
    layers = base.layers[:below] if base is not None else []
    midx = MultiPackIndex(
        midx_path or os.path.join(pack_dir, MIDX_NAME), fmt, base=layers[-1] if layers else None
    )
    try:
        if midx.count == 0:
            if warn is not None:
                warn("warning", "refusing to write multi-pack .bitmap without any objects")
            return None
        order = midx.rev_positions()
        if order is None:
            raise GitodbError("multi-pack-index has no reverse index for a bitmap", path=midx.path)
        n = midx.count
        oids = midx.oid_list()
        bit_of: dict[bytes, int] = {}
        for layer in layers:
            layer_order = layer.rev_positions()
            if layer_order is None:
                raise GitodbError(
                    f"could not load reverse index for MIDX {layer.checksum.hex()}",
                    path=layer.path,
                )
            layer_oids = layer.oid_list()
            bit_of.update(
                (layer_oids[local], layer.base_objects + k) for k, local in enumerate(layer_order)
            )
        first = midx.base_objects
        bit_of.update((oids[local], first + bit) for bit, local in enumerate(order))
        # id-order positions (global in a chain) of the commits that may be bitmapped
        pos_of = {o: first + i for i, o in enumerate(oids)}
        tips = _tips(repo, refs_snapshot, prefer_tips or [], fmt.hexsz)
        walk = RevWalk(repo)  # type: ignore[arg-type]
        preferred: set[bytes] = set()
        for oid, pref in tips:
            walk.add(oid)
            if pref:
                preferred.add(oid)
        walked = [node for node in walk.commits() if node.id in bit_of]
        nodes = [node for node in walked if node.id in pos_of]
        merges = {node.id for node in nodes if len(node.parent_ids) > 1}
        hashes = _reused_name_hashes(odb, oids)
        # As Git 2.55 (measured): the commits from the walk's end back, sorted by
        # date, newest first (stably), picked, and written in reverse pick order.
        by_date = [node.id for node in sorted(reversed(nodes), key=lambda nd: -nd.date)]
        chosen = select_commits(by_date, preferred, merges.__contains__)[::-1]
        links = {node.id: (node.tree, list(node.parent_ids)) for node in walked}
        missing = [p for _t, ps in links.values() for p in ps if p not in links]
        if missing:
            raise _closure_error(missing[0])
        reach = _reachability(odb, bit_of, links, set(chosen))
        selected = [(pos_of[c], reach[c]) for c in chosen]
        types = [0, 0, 0, 0]
        for oid in oids:  # a layer's type bitmaps hold its own objects only
            kind, _size = odb.read_header(oid)
            types[TYPE_NAMES.index(kind)] |= 1 << bit_of[oid]
        data = encode_bitmap(
            fmt,
            midx.checksum,
            n,
            types,
            _xor_compressed(selected),
            hash_cache=hashes if name_hashes else None,
            lookup_table=lookup_table,
        )
        target = midx_bitmap_path(os.path.dirname(midx.path), midx.checksum)
    finally:
        midx.close()
        if base is not None:
            base.close()
    lock = LockFile(target, final_mode=0o444)
    try:
        lock.write(data)
        lock.commit()
    except BaseException:
        lock.rollback()
        raise
    return target


def _reused_name_hashes(odb: ObjectDatabase, oids: list[bytes]) -> list[int]:
    """The name-hash cache as Git fills it for a MIDX bitmap: from the bitmap Git
    would load before writing (a pack's), for the objects it covers; 0 elsewhere
    (a MIDX write knows no paths)."""
    hashes = [0] * len(oids)
    own = [p for p in odb.packs if p.path.startswith(odb.objects_dir + os.sep)]
    for pack in own:
        if not os.path.exists(pack.path[:-5] + ".bitmap"):
            continue
        try:
            old = BitmapIndex(
                pack.path[:-5] + ".bitmap",
                odb.fmt,
                num_objects=pack.count,
                checksum=pack.idx.pack_checksum,
            )
        except BitmapError:
            return hashes
        try:
            for i, oid in enumerate(oids):
                pos = pack.idx.find(oid)
                if pos >= 0:
                    hashes[i] = old.name_hash_at(pos) or 0
        finally:
            old.close()
        break
    return hashes


def _tips(
    repo: object, refs_snapshot: str | None, prefer: list[str], hexsz: int
) -> list[tuple[bytes, bool]]:
    """The starting points: commits only (tags peeled), preferred or not."""
    odb = repo.odb  # type: ignore[attr-defined]
    if refs_snapshot is not None:
        raw = read_refs_snapshot(refs_snapshot, hexsz)
    else:
        match = _prefer_patterns(prefer)
        refs = repo.refs  # type: ignore[attr-defined]
        raw = []
        for ref in refs.iter_refs("refs/"):
            oid = ref.oid if ref.target is None else refs.resolve(ref.name)
            if oid is not None:
                raw.append((oid, match(ref.name)))
    out = []
    for oid, pref in raw:
        peeled = _peel(odb, oid)
        if peeled is not None:
            out.append((peeled, pref))
    return out


def _peel(odb: ObjectDatabase, oid: bytes) -> bytes | None:
    """The commit ``oid`` names after peeling tags; None if it is no commit."""
    hexsz = odb.fmt.hexsz
    for _ in range(64):
        kind, data = odb.read(oid)
        if kind == "commit":
            return oid
        if kind != "tag" or not data.startswith(b"object "):
            return None
        oid = bytes.fromhex(data[7 : 7 + hexsz].decode("ascii"))
    return None
