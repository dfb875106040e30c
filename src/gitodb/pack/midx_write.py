"""Writing, verifying and expiring multi-pack-index files, byte for byte as Git 2.55.

What Git writes for a set of packs (see ``gitodb.pack.midx`` for the layout):

- the packs: those of the existing MIDX (in its order), then the other
  ``pack/*.idx`` in directory order (only names given with ``--stdin-packs``),
  finally sorted by ``.idx`` name for the ``PNAM`` chunk;
- one entry per object id; where several packs hold it, the copy kept is the
  preferred pack's, else the one in the pack with the newest mtime (seconds),
  else the one in the pack that came first above.  Objects of the packs of the
  existing MIDX come from the MIDX (its choice among them stands) and count as
  the oldest (mtime 0, as Git): a new pack's copy of such an object wins;
- ``LOFF`` only when some offset needs more than 32 bits; then every offset
  above 2^31-1 goes there.

The file is written under ``multi-pack-index.lock`` and renamed; stale
``multi-pack-index-*.rev``/``.bitmap`` files and an incremental chain are removed,
as Git does after writing a non-incremental MIDX.
"""

from __future__ import annotations

import os
import struct
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field

from gitodb.durable import env_bool
from gitodb.errors import GitodbError, MultiPackIndexError, PackError
from gitodb.lockfile import LockFile
from gitodb.objects.format import ObjectFormat
from gitodb.pack.idx import PackIndex
from gitodb.pack.midx import (
    CHUNK_BTMP,
    CHUNK_LOFF,
    CHUNK_OIDF,
    CHUNK_OIDL,
    CHUNK_OOFF,
    CHUNK_PNAM,
    CHUNK_RIDX,
    HEADER_SIZE,
    MIDX_CHAIN_DIR,
    MIDX_CHAIN_FILE,
    MIDX_NAME,
    MIDX_SIGNATURE,
    TOC_ENTRY_SIZE,
    MultiPackIndex,
)
from gitodb.pack.rev import encode_rev

Progress = Callable[[str, int], None]
Warn = Callable[[str, str], None]


class MidxWriteError(GitodbError):
    """A MIDX cannot be written for these packs (Git prints ``error:`` and exits 1)."""


@dataclass
class _Pack:
    idx_name: str
    path: str  # the .pack
    mtime: int
    from_midx: bool
    idx: PackIndex | None = None
    objects: int = field(default=0)


def _same_pack(a: str, b: str) -> bool:
    """Git's ``cmp_idx_or_pack_name``: names equal up to a ``.idx``/``.pack`` suffix."""

    def stem(n: str) -> str:
        for suf in (".idx", ".pack"):
            if n.endswith(suf):
                return n[: -len(suf)]
        return n

    return stem(a) == stem(b)


def _mtime(path: str) -> int:
    try:
        return int(os.stat(path).st_mtime)
    except OSError:
        return 0


def scan_pack_dir(
    pack_dir: str, fmt: ObjectFormat, warn: Warn, skip: Callable[[str], bool]
) -> list[tuple[str, str, PackIndex]]:
    """``(idx name, pack path, index)`` of the packs in ``pack_dir`` that ``skip(name)``
    does not leave out, in directory order: Git's readdir loop, whose order decides
    ties between packs.  A pack without its ``.pack`` or with an unreadable index
    gets Git's warning and is left out."""
    try:
        listing = os.listdir(pack_dir)
    except (FileNotFoundError, NotADirectoryError):
        listing = []
    out = []
    for name in listing:
        if not name.endswith(".idx") or skip(name):
            continue
        idx_path = os.path.join(pack_dir, name)
        pack_path = idx_path[:-4] + ".pack"
        if not os.path.exists(pack_path):
            warn("warning", f"failed to add packfile '{idx_path}'")
            continue
        try:
            idx = PackIndex(idx_path, fmt, verify_checksum=False)
        except PackError:
            warn("warning", f"failed to open pack-index '{idx_path}'")
            continue
        out.append((name, pack_path, idx))
    return out


def _open_existing(pack_dir: str, fmt: ObjectFormat, warn: Warn) -> MultiPackIndex | None:
    path = os.path.join(pack_dir, MIDX_NAME)
    if not os.path.exists(path):
        return None
    try:
        m = MultiPackIndex(path, fmt)
    except MultiPackIndexError as e:
        if not e.ignorable:
            raise
        for line in e.details:
            warn("error", line)
        warn("error", e.message)
        return None
    if not m.checksum_valid():
        warn("warning", "ignoring existing multi-pack-index; checksum mismatch")
        m.close()
        return None
    return m


def _chain_up_to_date(
    objects_dir: str, fmt: ObjectFormat, wanted: set[str] | None, drop: set[str], bitmap: bool
) -> bool:
    """Whether an incremental chain covers exactly the packs a write would index.

    Otherwise the chain's packs are indexed again from their ``.idx`` files (the
    chain is then removed), where Git takes each object from the chain.
    """
    if wanted is not None or drop or bitmap:
        return False
    pack_dir = os.path.join(objects_dir, "pack")
    if os.path.exists(os.path.join(pack_dir, MIDX_NAME)) or not os.path.exists(
        os.path.join(pack_dir, MIDX_CHAIN_DIR, MIDX_CHAIN_FILE)
    ):
        return False  # no chain (a single MIDX ignored as damaged is rewritten)
    from gitodb.pack.midx import load_midx

    try:
        chain = load_midx(objects_dir, fmt)
    except MultiPackIndexError:
        return False
    if chain is None:
        return False
    try:
        on_disk = {n for n in os.listdir(pack_dir) if n.endswith(".idx")}
        return on_disk == set(chain.pack_names)
    finally:
        chain.close()


def in_name_order(
    names: list[str], chosen: list[tuple[bytes, int, int]]
) -> tuple[list[str], list[tuple[bytes, int, int]], list[int]]:
    """The pack names sorted (``PNAM``'s order), ``chosen``'s ``(oid, pack, offset)``
    renumbered into that order, and the renumbering (old pack number -> new)."""
    order = sorted(range(len(names)), key=names.__getitem__)
    perm = [0] * len(names)
    for new, old in enumerate(order):
        perm[old] = new
    return [names[k] for k in order], [(o, perm[pid], off) for o, pid, off in chosen], perm


def _select(cands: list[tuple[bytes, bool, int, int, int]]) -> list[tuple[bytes, int, int]]:
    """Sort candidates by (id, preferred first, newest first, pack) and keep one per id."""
    cands.sort()
    out: list[tuple[bytes, int, int]] = []
    last = None
    for oid, _np, _m, pid, off in cands:
        if oid != last:
            out.append((oid, pid, off))
            last = oid
    return out


def encode_midx(
    pack_names: list[str],
    entries: list[tuple[bytes, int, int]],
    fmt: ObjectFormat,
    *,
    version: int = 1,
    preferred: int = -1,
    base_objects: int = 0,
    order: list[int] | None = None,
) -> bytes:
    """Serialise a MIDX: ``pack_names`` (sorted, except in a version 2 compacted layer),
    ``entries`` ``(oid, pack-int-id, offset)`` sorted by id.

    With ``preferred`` (a pack-int-id; set when a bitmap is written, as Git) the
    file also gets ``RIDX`` (positions in pseudo-pack order: the preferred pack's
    objects first, then by pack-int-id, each pack in offset order) and ``BTMP``
    (per pack, where its objects start in that order and how many there are).
    In a chain layer both count on from the ``base_objects`` of the layers below.
    ``order`` gives the pseudo-pack order outright (a compacted layer keeps the
    order of the layers it replaces, so the bitmaps of the layers above stay valid).
    """
    pnam = b"".join(n.encode("utf-8", "surrogateescape") + b"\0" for n in pack_names)
    pnam += b"\0" * (-len(pnam) % 4)
    counts = [0] * 256
    for oid, _p, _o in entries:
        counts[oid[0]] += 1
    fan = array("I")
    total = 0
    for c in counts:
        total += c
        fan.append(total)
    oidl = b"".join(e[0] for e in entries)
    large_needed = any(off > 0xFFFFFFFF for _o, _p, off in entries)
    ooff = bytearray()
    loff = bytearray()
    for _oid, pid, off in entries:
        if large_needed and off > 0x7FFFFFFF:
            ooff += struct.pack(">II", pid, 0x80000000 | (len(loff) // 8))
            loff += struct.pack(">Q", off)
        else:
            ooff += struct.pack(">II", pid, off)
    chunks: list[tuple[bytes, bytes]] = [
        (CHUNK_PNAM, pnam),
        (CHUNK_OIDF, struct.pack(">256I", *fan)),
        (CHUNK_OIDL, oidl),
        (CHUNK_OOFF, bytes(ooff)),
    ]
    if large_needed:
        chunks.append((CHUNK_LOFF, bytes(loff)))
    if preferred >= 0 or order is not None:
        if order is None:
            order = pseudo_pack_order(entries, preferred)
        chunks.append(
            (CHUNK_RIDX, struct.pack(f">{len(order)}I", *(base_objects + i for i in order)))
        )
        starts = [0] * len(pack_names)
        counts = [0] * len(pack_names)
        for at, i in enumerate(order):
            pid = entries[i][1]
            if not counts[pid]:
                starts[pid] = at
            counts[pid] += 1
        btmp = b"".join(
            struct.pack(">II", base_objects + a, n) for a, n in zip(starts, counts, strict=True)
        )
        chunks.append((CHUNK_BTMP, btmp))
    header = MIDX_SIGNATURE + struct.pack(
        ">BBBBI", version, fmt.pack_hash_id, len(chunks), 0, len(pack_names)
    )
    at = HEADER_SIZE + (len(chunks) + 1) * TOC_ENTRY_SIZE
    toc = bytearray()
    for cid, data in chunks:
        toc += cid + struct.pack(">Q", at)
        at += len(data)
    toc += b"\0\0\0\0" + struct.pack(">Q", at)
    body = b"".join([header, bytes(toc), *(d for _c, d in chunks)])
    return body + fmt.new_hasher(body).digest()


def pseudo_pack_order(entries: list[tuple[bytes, int, int]], preferred: int) -> list[int]:
    """Id-order positions of ``entries`` in pseudo-pack order (what ``RIDX`` holds and
    what a MIDX bitmap's bit positions count)."""
    return sorted(
        range(len(entries)),
        key=lambda i: (entries[i][1] != preferred, entries[i][1], entries[i][2]),
    )


def midx_bitmap_path(pack_dir: str, checksum: bytes) -> str:
    """Where the bitmap of the MIDX with ``checksum`` lives."""
    return os.path.join(pack_dir, f"multi-pack-index-{checksum.hex()}.bitmap")


def write_midx(
    objects_dir: str,
    fmt: ObjectFormat,
    *,
    preferred_pack: str | None = None,
    include: list[str] | None = None,
    drop: set[str] | None = None,
    version: int = 1,
    bitmap: bool = False,
    before_commit: Callable[[str], None] | None = None,
    warn: Warn,
    progress: Progress | None = None,
) -> str | None:
    """Write ``objects_dir/pack/multi-pack-index`` as ``git multi-pack-index write``.

    ``include`` is the ``--stdin-packs`` list of ``.idx`` names, ``drop`` names packs
    to leave out (``expire``).  ``bitmap`` prepares the file for a bitmap as Git
    does (a preferred pack, by default the oldest one with objects; ``RIDX`` and
    ``BTMP``); the bitmap itself is ``gitodb.history.midx_bitmap``'s to write.
    ``before_commit(path)`` runs on the finished file before it replaces the old
    one (the bitmap is written there: if it raises, no MIDX is written).
    Returns the path written, or None when the existing MIDX already covers
    exactly these packs (and has a bitmap, if one is wanted): Git keeps it.  ``warn(level, text)``
    receives Git's ``warning:``/``error:`` lines.  Raises ``MidxWriteError``.
    """
    pack_dir = os.path.join(objects_dir, "pack")
    existing = _open_existing(pack_dir, fmt, warn)
    wanted = set(include) if include is not None else None
    drop = drop or set()
    if existing is None and _chain_up_to_date(objects_dir, fmt, wanted, drop, bitmap):
        return None  # Git keeps a chain that covers every pack
    try:
        packs: list[_Pack] = []
        if existing is not None:
            for pid, name in enumerate(existing.pack_names):
                if name in drop or (wanted is not None and name not in wanted):
                    continue
                pack_path = os.path.join(pack_dir, name[:-4] + ".pack")
                if not os.path.exists(pack_path):
                    raise MidxWriteError(f"could not load pack {pid}")
                packs.append(_Pack(name, pack_path, _mtime(pack_path), True))

        def skip(name: str) -> bool:
            return (
                name in drop
                or (existing is not None and existing.contains_pack(name))
                or (wanted is not None and name not in wanted)
            )

        for name, pack_path, idx in scan_pack_dir(pack_dir, fmt, warn, skip):
            packs.append(_Pack(name, pack_path, _mtime(pack_path), False, idx, idx.count))
        return _write_packs(
            pack_dir,
            fmt,
            existing,
            packs,
            preferred_pack,
            version,
            bitmap,
            before_commit,
            warn,
            progress,
        )
    finally:
        if existing is not None:
            existing.close()


def _write_packs(
    pack_dir: str,
    fmt: ObjectFormat,
    existing: MultiPackIndex | None,
    packs: list[_Pack],
    preferred_pack: str | None,
    version: int,
    bitmap: bool,
    before_commit: Callable[[str], None] | None,
    warn: Warn,
    progress: Progress | None,
) -> str | None:
    try:
        preferred = -1
        if preferred_pack is not None:
            preferred = next(
                (i for i, p in enumerate(packs) if _same_pack(preferred_pack, p.idx_name)), -1
            )
            if preferred < 0:
                warn("warning", f"unknown preferred pack: '{preferred_pack}'")
        if not packs:
            raise MidxWriteError("no pack files to index.")
        if progress is not None:
            progress("Adding packfiles to multi-pack-index", len(packs))
        if (
            existing is not None
            and preferred_pack is None
            and all(p.from_midx for p in packs)
            and len(packs) == existing.num_packs
            and existing.version == version
            and (not bitmap or os.path.exists(midx_bitmap_path(pack_dir, existing.checksum)))
        ):
            # Up to date: Git keeps the file as it is, and without --bitmap drops
            # the bitmap it had.
            if not bitmap:
                try:
                    os.unlink(midx_bitmap_path(pack_dir, existing.checksum))
                except FileNotFoundError:
                    pass
            return None
        if bitmap and preferred < 0:
            # As Git: a bitmap needs a preferred pack; the oldest one with objects.
            for i, p in enumerate(packs):
                if p.idx is None:
                    p.idx = PackIndex(p.path[:-5] + ".idx", fmt, verify_checksum=False)
                    p.objects = p.idx.count
                if p.objects and (preferred < 0 or p.mtime < packs[preferred].mtime):
                    preferred = i
        if preferred >= 0:
            p = packs[preferred]
            if p.idx is None:
                p.idx = PackIndex(p.path[:-5] + ".idx", fmt, verify_checksum=False)
                p.objects = p.idx.count
            if not p.objects:
                raise MidxWriteError(f"cannot select preferred pack {p.path} with no objects")
        cands: list[tuple[bytes, bool, int, int, int]] = []
        midx_ids = {}
        for i, p in enumerate(packs):
            if p.from_midx and i != preferred:
                assert existing is not None
                midx_ids[existing.pack_names.index(p.idx_name)] = i
                continue
            assert p.idx is not None
            oids = p.idx.oid_list()
            offs = p.idx.offsets
            pref = i == preferred
            cands.extend(
                (oid, not pref, -p.mtime, i, off) for oid, off in zip(oids, offs, strict=True)
            )
        if existing is not None and midx_ids:
            for j in range(existing.count):
                local = existing.pack_id_at(j)
                i = midx_ids.get(local, -1)
                if i >= 0:
                    # As Git: an object the MIDX already has counts as from an "old"
                    # pack (mtime 0), so a new pack's copy of it wins
                    cands.append((existing.oid_at(j), True, 0, i, existing.offset_at(j)))
        chosen = _select(cands)
        names, entries, perm = in_name_order([p.idx_name for p in packs], chosen)
        data = encode_midx(
            names,
            entries,
            fmt,
            version=version,
            preferred=perm[preferred] if bitmap and preferred >= 0 else -1,
        )
        if progress is not None:
            progress("Writing chunks to multi-pack-index", data[6])
    finally:
        for p in packs:
            if p.idx is not None:
                p.idx.close()
    target = os.path.join(pack_dir, MIDX_NAME)
    lock = LockFile(target, final_mode=None)
    try:
        lock.write(data)
        if bitmap and env_bool("GIT_TEST_MIDX_WRITE_REV", False):
            # Git's test knob: the reverse index also as a file, as Git before 2.35
            _write_rev_file(pack_dir, data, entries, perm[preferred], fmt)
        if before_commit is not None:
            lock.close_fd()
            before_commit(lock.lock_path)
        lock.commit()
    except BaseException:
        lock.rollback()
        raise
    _clear_stale(pack_dir, data[-fmt.rawsz :].hex())
    return target


def _write_rev_file(
    pack_dir: str,
    data: bytes,
    entries: list[tuple[bytes, int, int]],
    preferred: int,
    fmt: ObjectFormat,
) -> None:
    """``multi-pack-index-<checksum>.rev`` for the MIDX ``data`` (its RIDX as a file)."""
    checksum = data[-fmt.rawsz :]
    order = array("I", pseudo_pack_order(entries, preferred))
    path = os.path.join(pack_dir, f"multi-pack-index-{checksum.hex()}.rev")
    lock = LockFile(path, final_mode=0o444)
    try:
        lock.write(encode_rev(order, checksum, fmt))
        lock.commit()
    except BaseException:
        lock.rollback()
        raise


def _clear_stale(pack_dir: str, keep_hash: str) -> None:
    """Remove ``multi-pack-index-*.{rev,bitmap}`` of other checksums and any chain."""
    keep = {f"multi-pack-index-{keep_hash}.rev", f"multi-pack-index-{keep_hash}.bitmap"}
    try:
        names = os.listdir(pack_dir)
    except OSError:
        return
    for n in names:
        if n.startswith("multi-pack-index-") and n.endswith((".rev", ".bitmap")) and n not in keep:
            try:
                os.unlink(os.path.join(pack_dir, n))
            except OSError:
                pass
    chain_dir = os.path.join(pack_dir, MIDX_CHAIN_DIR)
    try:
        layers = os.listdir(chain_dir)
    except OSError:
        return
    for n in layers:
        if n.startswith("multi-pack-index"):
            try:
                os.unlink(os.path.join(chain_dir, n))
            except OSError:
                pass


def verify_midx(
    objects_dir: str,
    fmt: ObjectFormat,
    *,
    progress: Progress | None = None,
    found: list[str] | None = None,
) -> list[str]:
    """Check ``objects_dir``'s MIDX as ``git multi-pack-index verify``; return the errors.

    The errors are Git's lines, printed bare as Git's verify does.  No MIDX is no
    error.  One Git cannot parse raises ``MultiPackIndexError`` (ignorable set:
    Git then also says ``multi-pack-index file exists, but failed to parse``); so
    does damage Git dies on midway (a bad pack-int-id), and then ``found`` (the list
    errors are appended to as they are found) holds what Git printed before dying.
    """
    from gitodb.pack.midx import load_midx

    errors: list[str] = found if found is not None else []
    midx = load_midx(objects_dir, fmt)
    if midx is None:
        return errors
    try:
        for m in midx.layers:  # an incremental chain: each layer, base first
            _verify_layer(m, os.path.join(objects_dir, "pack"), fmt, errors, progress)
    finally:
        midx.close()
    return errors


def _verify_layer(
    m: MultiPackIndex,
    pack_dir: str,
    fmt: ObjectFormat,
    errors: list[str],
    progress: Progress | None,
) -> None:
    """Git's checks of one MIDX file (pack-int-ids global, packs local to it)."""
    if not m.checksum_valid():
        errors.append("incorrect checksum")
    idxs: list[PackIndex | None] = []
    for i, name in enumerate(m.pack_names):
        idx_path = os.path.join(pack_dir, name)
        try:
            if not os.path.exists(idx_path[:-4] + ".pack"):
                raise PackError("pack missing", path=idx_path)
            idxs.append(PackIndex(idx_path, fmt, verify_checksum=False))
        except PackError:
            idxs.append(None)
            errors.append(f"failed to load pack in position {i}")
    if progress is not None:
        progress("Looking for referenced packfiles", m.num_packs)
    if m.count == 0:
        errors.append("the midx contains no oid")
        return
    prev = m.oid_at(0)
    for i in range(1, m.count):
        cur = m.oid_at(i)
        if prev >= cur:
            errors.append(
                f"oid lookup out of order: oid[{i - 1}] = {prev.hex()} >= {cur.hex()} = oid[{i}]"
            )
        prev = cur
    if progress is not None:
        progress("Verifying OID order in multi-pack-index", m.count - 1)
        progress("Sorting objects by packfile", m.count)
    # By pack, as Git (one pack's index in memory at a time); pack_id_at dies
    # on an id out of range, as Git's prepare_midx_pack.
    pairs = sorted((m.pack_id_at(i), i) for i in range(m.count))
    for _pid, i in pairs:
        oid = m.oid_at(i)
        # Found again by search, as Git's fill_midx_entry: an id out of order
        # may not be found at all.
        j = m.find(oid)
        idx = idxs[m.pack_id_at(j) - m.base_packs] if j >= 0 else None
        if idx is None:
            errors.append(f"failed to load pack entry for oid[{i}] = {oid.hex()}")
            continue
        m_off = m.offset_at(j)
        pos = idx.find(oid)
        p_off = idx.offset_at(pos) if pos >= 0 else 0
        if m_off != p_off:
            errors.append(
                f"incorrect object offset for oid[{i}] = {oid.hex()}: {m_off:x} != {p_off:x}"
            )
    if progress is not None:
        progress("Verifying object offsets", m.count)
    for idx in idxs:
        if idx is not None:
            idx.close()


def expire_midx(
    objects_dir: str, fmt: ObjectFormat, *, warn: Warn, progress: Progress | None = None
) -> list[str]:
    """``git multi-pack-index expire``: delete packs the MIDX no longer takes objects from.

    A pack with a ``.keep`` and a cruft pack (``.mtimes``) stay.  The MIDX is
    rewritten without the deleted packs; returns their ``.idx`` names.
    """
    pack_dir = os.path.join(objects_dir, "pack")
    m = _open_existing(pack_dir, fmt, warn)
    if m is None:
        return []
    try:
        used = [0] * m.num_packs
        for i in range(m.count):
            used[m.pack_id_at(i)] += 1
        if progress is not None:
            progress("Counting referenced objects", m.num_packs)
        gone = []
        for pid, name in enumerate(m.pack_names):
            stem = os.path.join(pack_dir, name[:-4])
            # As Git: kept packs stay, and so do cruft packs (their .mtimes records
            # when unreachable objects were last seen, which a MIDX cannot hold).
            if used[pid] or os.path.exists(stem + ".keep") or os.path.exists(stem + ".mtimes"):
                continue
            gone.append(name)
        if progress is not None:
            progress("Finding and deleting unreferenced packfiles", m.num_packs)
    finally:
        m.close()
    for name in gone:
        stem = os.path.join(pack_dir, name[:-4])
        # As Git's unlink_pack_path: the .pack last but the .idx, so a reader never
        # sees an index without its pack.
        for ext in (".pack", ".rev", ".bitmap", ".promisor", ".mtimes", ".idx"):
            try:
                os.unlink(stem + ext)
            except FileNotFoundError:
                pass
    if gone:
        try:
            write_midx(objects_dir, fmt, drop=set(gone), warn=warn)
        except MidxWriteError:
            # Every pack went: nothing is left to index.
            os.unlink(os.path.join(pack_dir, MIDX_NAME))
    return gone
