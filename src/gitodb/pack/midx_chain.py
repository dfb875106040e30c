"""Incremental multi-pack-index chains: new layers (``git multi-pack-index write
--incremental``) and compaction (``git multi-pack-index compact``).

A chain (``pack/multi-pack-index.d/``) is a list of MIDX layers, base first, named by
``multi-pack-index-chain`` (one checksum a line).  Each layer is an ordinary MIDX
file ``multi-pack-index-<checksum>.midx`` (0444) whose header counts no base files
(Git 2.55 writes 0 there; the chain file alone orders the layers).  A new layer holds:

- the packs in ``pack/*.idx`` that no layer of the chain covers yet (with
  ``--stdin-packs``, those named), sorted by name, with pack-int-ids local to the
  layer (a reader adds the packs below);
- their objects minus those the chain already holds, one copy per id chosen as
  in a full write (preferred pack, else newest pack, else directory order).

A non-incremental ``pack/multi-pack-index`` is first made the chain's base layer
(linked into the directory with its ``.rev``/``.bitmap``, then removed), as Git
does.  With ``write_chain=False`` the layer is written but the chain file is left
as it is (Git's ``--no-write-chain-file``, for a caller that links layers itself).
Git 2.55 takes ``--base=<checksum>|none`` for a new layer too, but writes the same
layer whatever it says (compared: the objects of every layer are left out, with
``none`` and with an unknown checksum alike), so it changes nothing here either.
With ``bitmap`` a layer gets ``RIDX`` and ``BTMP`` (positions counting on from the
objects below it, as Git writes them) and ``before_commit`` writes its bitmap
(``gitodb.history.midx_bitmap``) before the layer is named in the chain.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from gitodb.lockfile import LockFile
from gitodb.objects.format import ObjectFormat
from gitodb.pack.idx import PackIndex
from gitodb.pack.midx import (
    MIDX_CHAIN_DIR,
    MIDX_CHAIN_FILE,
    MIDX_NAME,
    MidxSet,
    MultiPackIndex,
    load_midx,
)
from gitodb.pack.midx_write import (
    MidxWriteError,
    Progress,
    Warn,
    _mtime,
    _same_pack,
    _select,
    encode_midx,
    in_name_order,
    scan_pack_dir,
)


def layer_path(pack_dir: str, checksum: str) -> str:
    """Where the chain layer with ``checksum`` (hex) lives."""
    return os.path.join(pack_dir, MIDX_CHAIN_DIR, f"multi-pack-index-{checksum}.midx")


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except FileExistsError:
        pass
    except OSError:
        with open(src, "rb") as f:
            data = f.read()
        with open(dst, "wb") as f:
            f.write(data)


def _convert_single(pack_dir: str, single: MidxSet) -> str:
    """Make the non-incremental MIDX the chain's base layer; return its checksum."""
    checksum = single.layers[0].checksum.hex()
    os.makedirs(os.path.join(pack_dir, MIDX_CHAIN_DIR), exist_ok=True)
    _link_or_copy(os.path.join(pack_dir, MIDX_NAME), layer_path(pack_dir, checksum))
    for ext in (".bitmap", ".rev"):
        src = os.path.join(pack_dir, f"multi-pack-index-{checksum}{ext}")
        if os.path.exists(src):
            _link_or_copy(src, os.path.join(pack_dir, MIDX_CHAIN_DIR, os.path.basename(src)))
    return checksum


def write_midx_layer(
    objects_dir: str,
    fmt: ObjectFormat,
    *,
    write_chain: bool = True,
    preferred_pack: str | None = None,
    include: list[str] | None = None,
    version: int = 1,
    bitmap: bool = False,
    before_commit: Callable[[str], None] | None = None,
    warn: Warn,
    progress: Progress | None = None,
) -> str | None:
    """Write a new layer for the packs no layer covers yet; return its checksum (hex).

    Returns None, changing nothing, when every pack is covered already (Git says
    nothing then).  ``include`` (``--stdin-packs``) limits the new packs to those
    ``.idx`` names.  Raises ``MidxWriteError``.
    """
    pack_dir = os.path.join(objects_dir, "pack")
    current = load_midx(objects_dir, fmt)
    single = current is not None and os.path.basename(current.path) == MIDX_NAME
    try:
        chain = [m.checksum.hex() for m in current.layers] if current is not None else []
        covered = current.pack_names if current is not None else []
        packs = _new_packs(pack_dir, fmt, set(covered), warn, include)
        try:
            if not packs:
                return None
            if progress is not None:
                progress("Adding packfiles to multi-pack-index", len(packs))
            data = _encode_layer(packs, current, preferred_pack, fmt, version, bitmap, warn)
        finally:
            for _name, _mtime_s, idx in packs:
                idx.close()
        checksum = data[-fmt.rawsz :].hex()
        if single:
            assert current is not None
            _convert_single(pack_dir, current)
    finally:
        if current is not None:
            current.close()
    os.makedirs(os.path.join(pack_dir, MIDX_CHAIN_DIR), exist_ok=True)
    lock = LockFile(layer_path(pack_dir, checksum), final_mode=0o444)
    try:
        lock.write(data)
        if before_commit is not None:
            lock.close_fd()
            before_commit(lock.lock_path)
        lock.commit()
    except BaseException:
        lock.rollback()
        raise
    if write_chain:
        _write_chain_file(pack_dir, [*chain, checksum])
        if single:
            os.unlink(os.path.join(pack_dir, MIDX_NAME))
            for ext in (".bitmap", ".rev"):
                try:
                    os.unlink(os.path.join(pack_dir, f"multi-pack-index-{chain[0]}{ext}"))
                except FileNotFoundError:
                    pass
    return checksum


def _new_packs(
    pack_dir: str,
    fmt: ObjectFormat,
    covered: set[str],
    warn: Warn,
    include: list[str] | None = None,
) -> list[tuple[str, int, PackIndex]]:
    """``(idx name, pack mtime, index)`` of the packs no layer covers, in directory order."""

    def skip(name: str) -> bool:
        return name in covered or (include is not None and name not in include)

    found = scan_pack_dir(pack_dir, fmt, warn, skip)
    return [(name, _mtime(path), idx) for name, path, idx in found]


def _encode_layer(
    packs: list[tuple[str, int, PackIndex]],
    current: MidxSet | None,
    preferred_pack: str | None,
    fmt: ObjectFormat,
    version: int,
    bitmap: bool,
    warn: Warn,
) -> bytes:
    preferred = -1
    if preferred_pack is not None:
        preferred = next((i for i, p in enumerate(packs) if _same_pack(preferred_pack, p[0])), -1)
        if preferred < 0:
            warn("warning", f"unknown preferred pack: '{preferred_pack}'")
    if bitmap and preferred < 0:
        # As a full write: a bitmap needs a preferred pack; the oldest one with objects
        for i, (_name, mtime, idx) in enumerate(packs):
            if idx.count and (preferred < 0 or mtime < packs[preferred][1]):
                preferred = i
    if preferred >= 0 and not packs[preferred][2].count:
        raise MidxWriteError(f"cannot select preferred pack {packs[preferred][0]} with no objects")
    base_layers = current.layers if current is not None else []

    def in_base(oid: bytes) -> bool:
        return any(m.find(oid) >= 0 for m in base_layers)

    cands: list[tuple[bytes, bool, int, int, int]] = []
    for i, (_name, mtime, idx) in enumerate(packs):
        pref = i == preferred
        cands.extend(
            (oid, not pref, -mtime, i, off)
            for oid, off in zip(idx.oid_list(), idx.offsets, strict=True)
            if not (base_layers and in_base(oid))
        )
    chosen = _select(cands)
    names, entries, perm = in_name_order([p[0] for p in packs], chosen)
    return encode_midx(
        names,
        entries,
        fmt,
        version=version,
        preferred=perm[preferred] if bitmap and preferred >= 0 else -1,
        base_objects=current.count if current is not None else 0,
    )


def _write_chain_file(pack_dir: str, checksums: list[str]) -> None:
    """``multi-pack-index-chain``: the layers' checksums, base first (under its lock)."""
    lock = LockFile(os.path.join(pack_dir, MIDX_CHAIN_DIR, MIDX_CHAIN_FILE))
    try:
        lock.write("".join(f"{c}\n" for c in checksums).encode("ascii"))
        lock.commit()
    except BaseException:
        lock.rollback()
        raise


def compact_midx_layers(
    objects_dir: str,
    fmt: ObjectFormat,
    first: str,
    last: str,
    *,
    base: str | None = None,
    write_chain: bool = True,
    bitmap: bool = False,
    before_commit: Callable[[str, int], None] | None = None,
) -> str:
    """``git multi-pack-index compact <first> <last>``: one layer for the layers from
    ``first`` to ``last`` (checksums); return its checksum (hex).  ``base`` names the
    layer to put it on instead of the one below ``first`` (``"none"``: the chain's
    root); as Git, the layers between that base and ``first`` leave the chain.

    The new layer (MIDX version 2) keeps the packs in layer order, each object where
    its layer had it, and (with ``bitmap``, which adds ``RIDX`` and ``BTMP``) the
    layers' pseudo-pack order one after the other, so the layers above it (and their
    bitmaps) stay as they are.  ``before_commit(path,
    below)`` writes its bitmap (``below``: the layers under it).  The replaced
    layers' files are removed once the chain names the new one.  Raises
    ``MidxWriteError`` with Git's messages.
    """
    pack_dir = os.path.join(objects_dir, "pack")
    chain = load_midx(objects_dir, fmt)
    if chain is None or os.path.basename(chain.path) == MIDX_NAME:
        if chain is not None:
            chain.close()
        raise MidxWriteError(f"could not find MIDX: {first}")
    try:
        hashes = [m.checksum.hex() for m in chain.layers]
        for name in (first, last):
            if name not in hashes:
                raise MidxWriteError(f"could not find MIDX: {name}")
        lo, hi = hashes.index(first), hashes.index(last)
        if lo == hi:
            raise MidxWriteError("MIDX compaction endpoints must be unique")
        if lo > hi:
            raise MidxWriteError(f"MIDX {first} must be an ancestor of {last}")
        below = lo  # the layers the new one is put on
        if base is not None:
            if base == "none":
                below = 0
            elif base in hashes[:lo]:
                below = hashes.index(base) + 1
            else:
                raise MidxWriteError(f"could not find base MIDX: {base}")
        base_objects = sum(m.count for m in chain.layers[:below])
        data = _encode_compacted(chain.layers[lo : hi + 1], base_objects, fmt, bitmap)
    finally:
        chain.close()
    checksum = data[-fmt.rawsz :].hex()
    lock = LockFile(layer_path(pack_dir, checksum), final_mode=0o444)
    try:
        lock.write(data)
        if before_commit is not None:
            lock.close_fd()
            before_commit(lock.lock_path, below)
        lock.commit()
    except BaseException:
        lock.rollback()
        raise
    if write_chain:
        _write_chain_file(pack_dir, [*hashes[:below], checksum, *hashes[hi + 1 :]])
        for old in hashes[below : hi + 1]:
            for ext in (".midx", ".bitmap", ".rev"):
                try:
                    os.unlink(layer_path(pack_dir, old)[: -len(".midx")] + ext)
                except FileNotFoundError:
                    pass
    return checksum


def _encode_compacted(
    sources: list[MultiPackIndex], base_objects: int, fmt: ObjectFormat, bitmap: bool
) -> bytes:
    """The layer replacing ``sources`` (base first): their packs and objects as they were."""
    names: list[str] = []
    found: dict[bytes, tuple[int, int]] = {}
    for m in sources:
        first_pack = len(names) - m.base_packs
        names.extend(m.pack_names)
        pids, offs = m.columns()
        for oid, pid, off in zip(m.oid_list(), pids, offs, strict=True):
            found.setdefault(oid, (first_pack + pid, off))
    entries = [(oid, *found[oid]) for oid in sorted(found)]
    order: list[int] | None = None
    if bitmap:
        at = {e[0]: i for i, e in enumerate(entries)}
        order = []
        for m in sources:
            rev = m.rev_positions()
            if rev is None:  # a layer without a reverse index: by pack, then offset
                rev = m.pseudo_pack_order(0)
            order.extend(at[m.oid_at(i)] for i in rev)
    return encode_midx(
        names,
        entries,
        fmt,
        version=2,
        base_objects=base_objects,
        order=order,
    )


__all__ = ["MidxWriteError", "compact_midx_layers", "layer_path", "write_midx_layer"]
