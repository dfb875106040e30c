"""Writing incremental multi-pack-index chains, as ``git multi-pack-index write --incremental``.

A chain (``pack/multi-pack-index.d/``) is a list of MIDX layers, base first, named by
``multi-pack-index-chain`` (one checksum a line).  Each layer is an ordinary MIDX
file ``multi-pack-index-<checksum>.midx`` (0444) whose header counts no base files
(Git 2.55 writes 0 there; the chain file alone orders the layers) and which holds:

- the packs in ``pack/*.idx`` that no layer of the chain covers yet, sorted by
  name, with pack-int-ids local to the layer (a reader adds the packs below);
- their objects minus those the chain already holds, one copy per id chosen as
  in a full write (preferred pack, else newest pack, else directory order).

A non-incremental ``pack/multi-pack-index`` is first made the chain's base layer
(linked into the directory with its ``.rev``/``.bitmap``, then removed), as Git
does.  With ``write_chain=False`` the layer is written but the chain file is left
as it is (Git's ``--no-write-chain-file``, for a caller that links layers itself).  Git
2.55 takes ``--base=<checksum>|none`` there too, but the layer it writes is the
same whatever the base (checked against it: objects of every layer are left out,
``none`` and unknown checksums included), so the layer does not depend on it
here either.  With ``bitmap`` the layer gets ``RIDX`` and ``BTMP`` (positions
counting on from the objects below it, as Git writes them) and ``before_commit``
writes its bitmap (``gitodb.history.midx_bitmap``) before the layer is named in the
chain.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from gitodb.errors import PackError
from gitodb.lockfile import LockFile
from gitodb.objects.format import ObjectFormat
from gitodb.pack.idx import PackIndex
from gitodb.pack.midx import (
    MIDX_CHAIN_DIR,
    MIDX_CHAIN_FILE,
    MIDX_NAME,
    MidxSet,
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
    version: int = 1,
    bitmap: bool = False,
    before_commit: Callable[[str], None] | None = None,
    warn: Warn,
    progress: Progress | None = None,
) -> str | None:
    """Write a new layer for the packs no layer covers yet; return its checksum (hex).

    Returns None, changing nothing, when every pack is covered already (Git says
    nothing then).  Raises ``MidxWriteError``.
    """
    pack_dir = os.path.join(objects_dir, "pack")
    current = load_midx(objects_dir, fmt)
    single = current is not None and os.path.basename(current.path) == MIDX_NAME
    try:
        chain = [m.checksum.hex() for m in current.layers] if current is not None else []
        covered = current.pack_names if current is not None else []
        packs = _new_packs(pack_dir, fmt, set(covered), warn)
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
    pack_dir: str, fmt: ObjectFormat, covered: set[str], warn: Warn
) -> list[tuple[str, int, PackIndex]]:
    """``(idx name, pack mtime, index)`` of the packs no layer covers, in directory order."""
    out: list[tuple[str, int, PackIndex]] = []
    try:
        listing = os.listdir(pack_dir)
    except (FileNotFoundError, NotADirectoryError):
        listing = []
    for name in listing:
        if not name.endswith(".idx") or name in covered:
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
        out.append((name, _mtime(pack_path), idx))
    return out


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
    order = sorted(range(len(packs)), key=lambda k: packs[k][0])
    perm = [0] * len(packs)
    for new, old in enumerate(order):
        perm[old] = new
    entries = [(oid, perm[pid], off) for oid, pid, off in chosen]
    return encode_midx(
        [packs[k][0] for k in order],
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


__all__ = ["MidxWriteError", "layer_path", "write_midx_layer"]
