"""Verify a stored pack against its index: what ``git verify-pack`` does.

Like Git (``verify-pack`` runs ``index-pack --verify``), the pack is indexed
from scratch: the pack checksum, every entry's zlib stream and every object id
are checked while indexing, then the index Git would write for this pack (same
version) is compared with the stored one byte for byte; a difference names the
first entry whose id, CRC-32 or offset disagrees.  ``format_stats`` gives the
``-v``/``-s`` report, byte-identical to Git's.
"""

from __future__ import annotations

import os

from gitodb.errors import PackError
from gitodb.objects import OBJ_OFS_DELTA, OBJ_REF_DELTA, TYPE_NAMES, ObjectFormat
from gitodb.pack.cache import DEFAULT_DELTA_BASE_CACHE_LIMIT
from gitodb.pack.idx import IDX_V2_MAGIC, OFFSET32_LIMIT, PackIndex
from gitodb.pack.index_write import IndexPackOptions, close_map, index_buffer, map_file
from gitodb.pack.indexer import PackIndexResult
from gitodb.types import Progress


def pack_name_for(arg: str) -> str:
    """verify-pack's rule: ``foo.idx``, ``foo`` and ``foo.pack`` all mean ``foo.pack``."""
    if arg.endswith(".idx"):
        return arg[:-4] + ".pack"
    if not arg.endswith(".pack"):
        return arg + ".pack"
    return arg


def index_pack_verify(
    pack_path: str,
    fmt: ObjectFormat,
    *,
    index_path: str | None = None,
    threads: int = 0,
    rev_index: bool = False,
    report: bool = False,
    progress: Progress | None = None,
    delta_base_cache_limit: int = DEFAULT_DELTA_BASE_CACHE_LIMIT,
) -> PackIndexResult:
    """Index ``pack_path`` and check its stored ``.idx`` (and ``.rev``) against the result.

    Raises ``PackError`` naming the file and what differs.  With ``report``, the
    result is returned even when the index differs, with the error attached as
    ``result.index_error`` (verify-pack prints its statistics before failing).
    ``progress`` (``gitodb.types.Progress``) hears of "Indexing objects" and
    "Resolving deltas" as they go.
    ``delta_base_cache_limit`` (``core.deltaBaseCacheLimit``) bounds what is kept.
    """
    if not pack_path.endswith(".pack"):
        raise PackError(f"packfile name '{pack_path}' does not end with '.pack'")
    if index_path is None:
        index_path = pack_path[:-5] + ".idx"
    try:
        with open(index_path, "rb") as f:
            stored = f.read()
    except OSError:
        raise PackError(
            f"Cannot open existing pack idx file for '{index_path}'", path=index_path
        ) from None
    version = 2 if stored[:4] == IDX_V2_MAGIC else 1
    m, _size = map_file(pack_path)
    try:
        result = index_buffer(
            m,
            fmt,
            IndexPackOptions(
                threads=threads, progress=progress, delta_base_cache_limit=delta_base_cache_limit
            ),
            pack_path,
            "Indexing objects",
            None,
            None,
        )
    finally:
        close_map(m)
    error = None
    fresh = result.index_bytes(version, _stored_offset32_limit(stored, fmt, version))
    if fresh != stored:
        error = PackError(
            f"sha1 file '{index_path}' validation error: "
            f"{_describe_index_difference(result, index_path, fmt, version)}",
            path=index_path,
        )
    elif rev_index:
        rev_path = index_path[:-4] + ".rev"
        try:
            with open(rev_path, "rb") as f:
                stored_rev = f.read()
        except OSError:
            stored_rev = None
        if stored_rev != result.rev_bytes():
            error = PackError(
                f"sha1 file '{rev_path}' validation error: reverse index differs from the pack's",
                path=rev_path,
            )
    if error is not None:
        if not report:
            raise error
        result.index_error = error
    return result


def _stored_offset32_limit(stored: bytes, fmt: ObjectFormat, version: int) -> int:
    """The 32-bit offset limit the stored index was written with (Git's read_idx_option).

    Git verifies against the layout of the index it finds: offsets it stored in
    the 64-bit table although they fit 31 bits (``--index-version=2,<limit>``)
    are expected there again.  They are the ones above the limit, so the limit is
    just below the smallest of them.  A damaged table gives the default.
    """
    if version != 2 or len(stored) < 8 + 1024:
        return OFFSET32_LIMIT
    nr = int.from_bytes(stored[8 + 1020 : 8 + 1024], "big")
    small_at = 8 + 1024 + nr * (fmt.rawsz + 4)
    big_at = small_at + 4 * nr
    if len(stored) < big_at:
        return OFFSET32_LIMIT
    lowest = None
    for i in range(nr):
        v = int.from_bytes(stored[small_at + 4 * i : small_at + 4 * i + 4], "big")
        if not v & 0x80000000:
            continue
        at = big_at + 8 * (v & 0x7FFFFFFF)
        if at + 8 > len(stored):
            return OFFSET32_LIMIT
        off = int.from_bytes(stored[at : at + 8], "big")
        lowest = off if lowest is None else min(lowest, off)
    if lowest is None or lowest > OFFSET32_LIMIT:
        return OFFSET32_LIMIT
    return max(lowest - 1, 0)


def _describe_index_difference(
    result: PackIndexResult, index_path: str, fmt: ObjectFormat, version: int
) -> str:
    """Say which check failed: the first id/CRC-32/offset that differs, or the layout."""
    try:
        idx = PackIndex(index_path, fmt, verify_checksum=False)
    except PackError as e:
        return f"index is unreadable: {e.message}"
    try:
        entries = sorted(result.idx_entries())
        if idx.count != len(entries):
            return f"index has {idx.count} objects, the pack has {len(entries)}"
        for i, (oid, crc, off) in enumerate(entries):
            try:
                got_oid = idx.oid_at(i)
                got_off = idx.offset_at(i)
                got_crc = idx.crc_at(i) if version == 2 else crc
            except (IndexError, PackError):
                return f"index has fewer objects than the pack's {len(entries)}"
            if got_oid != oid:
                return f"object {i} in the index is {got_oid.hex()}, the pack has {oid.hex()}"
            if got_off != off:
                return f"offset of {oid.hex()} is {got_off} in the index, {off} in the pack"
            if got_crc != crc:
                return (
                    f"CRC-32 of {oid.hex()} at offset {off} is {got_crc:08x} in the "
                    f"index, {crc:08x} over the pack data"
                )
        if idx.pack_checksum != result.pack_checksum:
            return "index names a different pack checksum"
        return "index checksum or layout differs"
    finally:
        idx.close()


def format_stats(result: PackIndexResult, stat_only: bool = False) -> str:
    """The ``git verify-pack -v`` (or ``-s``) report for an indexed pack, in pack order."""
    lines = []
    n = len(result.offsets)
    deltas = (OBJ_OFS_DELTA, OBJ_REF_DELTA)
    histogram: dict[int, int] = {}
    non_delta = 0
    for i in range(n):
        is_delta = result.types[i] in deltas
        if is_delta:
            histogram[result.depths[i]] = histogram.get(result.depths[i], 0) + 1
        else:
            non_delta += 1
        if stat_only:
            continue
        type_name = TYPE_NAMES[result.real_types[i]]
        line = (
            f"{result.oids[i].hex()} {type_name:<6} {result.sizes[i]} "
            f"{result.ends[i] - result.offsets[i]} {result.offsets[i]}"
        )
        if is_delta:
            line += f" {result.depths[i]} {result.oids[result.bases[i]].hex()}"
        lines.append(line)
    if non_delta:
        lines.append(f"non delta: {non_delta} object{'s' if non_delta != 1 else ''}")
    for depth in sorted(histogram):
        c = histogram[depth]
        lines.append(f"chain length = {depth}: {c} object{'s' if c != 1 else ''}")
    return "".join(line + "\n" for line in lines)


def verify_pack(
    arg: str,
    fmt: ObjectFormat,
    *,
    threads: int = 0,
    progress: Progress | None = None,
    delta_base_cache_limit: int = DEFAULT_DELTA_BASE_CACHE_LIMIT,
) -> PackIndexResult:
    """Verify the pack named by ``arg`` (``x.idx``, ``x.pack`` or ``x``); raise on damage.

    ``progress`` (``gitodb.types.Progress``) is told how far the check has got.
    """
    pack_path = pack_name_for(arg)
    index_path = pack_path[:-5] + ".idx"
    if not os.path.exists(pack_path):
        raise PackError(f"Cannot open existing pack file '{index_path}'")
    return index_pack_verify(
        pack_path,
        fmt,
        index_path=index_path,
        threads=threads,
        report=True,
        progress=progress,
        delta_base_cache_limit=delta_base_cache_limit,
    )
