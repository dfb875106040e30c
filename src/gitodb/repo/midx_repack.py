"""``multi-pack-index repack``: gather the objects of small packs into one new pack.

Which packs, as Git's ``midx_repack``: with ``batch_size`` 0 every pack of the
MIDX; otherwise packs oldest first (by mtime), each counted at the share of its
size that the MIDX still takes objects from, skipping any whose share is at
least ``batch_size``, until the total reaches ``batch_size``.  Packs with a
``.keep`` (unless ``repack.packKeptObjects``), cruft packs (``.mtimes``) and empty
ones are never taken.  Nothing happens unless at least two packs are taken.

The objects the MIDX takes from those packs are written, in id order, to one new
pack by gitodb's own pack writer (whole objects: no deltas are searched, so the
pack is larger than ``git pack-objects`` would make it), then the MIDX is
written again; the old packs stay until ``expire``.
"""

from __future__ import annotations

import os

from gitodb.errors import GitodbError
from gitodb.objects.format import ObjectFormat
from gitodb.pack.idx import PackIndex
from gitodb.pack.midx import MIDX_NAME, MultiPackIndex
from gitodb.pack.midx_write import Progress, Warn, write_midx
from gitodb.pack.writer import PackWriter
from gitodb.repo.odb import ObjectDatabase


def _pack_info(pack_dir: str, name: str, fmt: ObjectFormat) -> tuple[int, int, int, bool] | None:
    """``(mtime, pack size, objects, keep)`` of a pack, or None if it cannot be opened
    or is a cruft pack."""
    stem = os.path.join(pack_dir, name[:-4])
    try:
        st = os.stat(stem + ".pack")
        idx = PackIndex(stem + ".idx", fmt, verify_checksum=False)
    except (OSError, GitodbError):  # as Git's open_pack_index failing: skipped
        return None
    count = idx.count
    idx.close()
    if os.path.exists(stem + ".mtimes"):
        return None  # cruft pack
    return int(st.st_mtime), st.st_size, count, os.path.exists(stem + ".keep")


def select_packs(
    m: MultiPackIndex, pack_dir: str, fmt: ObjectFormat, batch_size: int, pack_kept: bool
) -> list[int]:
    """The local pack-int-ids ``repack`` takes (see the module docstring)."""
    infos = [_pack_info(pack_dir, n, fmt) for n in m.pack_names]

    def wanted(i: int) -> bool:
        info = infos[i]
        return info is not None and (pack_kept or not info[3]) and info[2] > 0

    if batch_size == 0:
        return [i for i in range(m.num_packs) if wanted(i)]
    referenced = [0] * m.num_packs
    for j in range(m.count):
        referenced[m.pack_id_at(j) - m.base_packs] += 1
    # Oldest first; a stable sort keeps MIDX order for equal times, as Git's qsort.
    mtimes = [info[0] if info is not None else 0 for info in infos]
    order = sorted(range(m.num_packs), key=mtimes.__getitem__)
    chosen: list[int] = []
    total = 0
    for i in order:
        if total >= batch_size:
            break
        info = infos[i]
        if info is None or not wanted(i):
            continue
        # Git's fixed-point estimate (about four significant digits).
        expected = ((referenced[i] << 14) // info[2] * info[1] + (1 << 13)) >> 14
        if expected >= batch_size:
            continue
        total += expected
        chosen.append(i)
    return chosen


def midx_repack(
    objects_dir: str,
    fmt: ObjectFormat,
    *,
    batch_size: int,
    pack_kept_objects: bool = False,
    compression: int = -1,
    warn: Warn,
    progress: Progress | None = None,
) -> str | None:
    """Repack as ``git multi-pack-index repack --batch-size=<n>``; return the new
    pack's path, or None when there was nothing to do."""
    pack_dir = os.path.join(objects_dir, "pack")
    if not os.path.exists(os.path.join(pack_dir, MIDX_NAME)):
        return None
    m = MultiPackIndex(os.path.join(pack_dir, MIDX_NAME), fmt)
    try:
        chosen = set(select_packs(m, pack_dir, fmt, batch_size, pack_kept_objects))
        if len(chosen) <= 1:
            return None
        oids = [m.oid_at(j) for j in range(m.count) if m.pack_id_at(j) in chosen]
    finally:
        m.close()
    odb = ObjectDatabase(objects_dir, fmt)
    try:
        with PackWriter(pack_dir, fmt, level=compression, expected_count=len(oids)) as w:
            for oid in oids:
                t, data = odb.read(oid)
                w.add_object(t, data)
            written = w.finish()
    finally:
        odb.close()
    if progress is not None:
        progress("Writing objects", len(oids))
    write_midx(objects_dir, fmt, warn=warn, progress=progress)
    return written.pack_path if written is not None else None
