"""Reverse indexes (``.rev``): index positions ordered by pack offset.

Layout: ``RIDX``, version 1, hash id (1 SHA-1, 2 SHA-256), then one big-endian
uint32 index position per object in pack-offset order, the pack checksum and
the checksum of everything before it.  When a pack has no ``.rev``, the same
order is computed from the index's offsets.
"""

from __future__ import annotations

import mmap
import os
import struct
import sys

from gitodb.errors import PackError, RevIndexChecksumError, report
from gitodb.lazymod import lazy_module
from gitodb.objects.format import ObjectFormat

TYPE_CHECKING = False
if TYPE_CHECKING:
    import array as array_module
    from array import array
    from collections.abc import Sequence
else:
    # ``array`` imports ``collections``: a ref listing needs neither
    array_module = lazy_module("array", globals(), "array_module")

RIDX_MAGIC = b"RIDX"

try:
    from gitodb._native import first_at_least_u32 as _first_at_least_u32
    from gitodb._native import rev_order as _c_rev_order
except ImportError:  # built without a C compiler
    _c_rev_order = _first_at_least_u32 = None  # type: ignore[assignment]


def compute_rev_order(offsets: Sequence[int]) -> array[int]:
    """Index positions sorted by their pack offset."""
    if (
        _c_rev_order is not None
        and isinstance(offsets, array_module.array)
        and offsets.typecode == "Q"
    ):
        order = array_module.array("I")
        order.frombytes(_c_rev_order(offsets))
        return order
    return array_module.array("I", sorted(range(len(offsets)), key=offsets.__getitem__))


def write_rev(offsets: Sequence[int], pack_checksum: bytes, fmt: ObjectFormat) -> bytes:
    """Return the bytes of the ``.rev`` for an index whose offsets (id order) are given."""
    return encode_rev(compute_rev_order(offsets), pack_checksum, fmt)


def encode_rev(order: array[int], pack_checksum: bytes, fmt: ObjectFormat) -> bytes:
    """The bytes of a reverse index holding ``order`` (index positions in pack
    order; a MIDX's: in pseudo-pack order) for the pack or MIDX ``pack_checksum``."""
    order = array_module.array("I", order)
    if sys.byteorder == "little":
        order.byteswap()
    body = b"".join(
        [RIDX_MAGIC, struct.pack(">II", 1, fmt.pack_hash_id), order.tobytes(), pack_checksum]
    )
    return body + fmt.new_hasher(body).digest()


def read_rev(
    path: str | os.PathLike[str], count: int, fmt: ObjectFormat, pack_checksum: bytes | None = None
) -> array[int]:
    """Read a ``.rev`` for an index of ``count`` objects; return the position order."""
    p = os.fspath(path)
    with open(p, "rb") as f:
        data = f.read()
    rawsz = fmt.rawsz
    expected = 12 + 4 * count + 2 * rawsz
    # Git's words, after "reverse-index file <path>" (see load_rev)
    if len(data) < 12 + 2 * rawsz:
        raise PackError("reverse-index file is too small", path=p, offset=len(data))
    if len(data) != expected:
        raise PackError(
            f"reverse-index file is corrupt (size {len(data)}, expected {expected})",
            path=p,
            offset=min(len(data), expected),
        )
    if data[:4] != RIDX_MAGIC:
        raise PackError("reverse-index file has unknown signature", path=p, offset=0)
    version, hash_id = struct.unpack_from(">II", data, 4)
    if version != 1:
        raise PackError(f"reverse-index file has unsupported version {version}", path=p, offset=4)
    if hash_id != fmt.pack_hash_id:
        raise PackError(f"reverse-index file has unsupported hash id {hash_id}", path=p, offset=8)
    end = len(data) - rawsz
    if fmt.new_hasher(memoryview(data)[:end]).digest() != data[end:]:
        raise RevIndexChecksumError("reverse-index file has a bad checksum", path=p, offset=end)
    if pack_checksum is not None and data[end - rawsz : end] != pack_checksum:
        raise PackError(
            "reverse-index file is corrupt (does not match its pack)", path=p, offset=end - rawsz
        )
    order = array_module.array("I", data[12 : 12 + 4 * count])
    if sys.byteorder == "little":
        order.byteswap()
    bad = _first_out_of_range(order, count)
    if bad >= 0:
        raise PackError(
            "reverse-index file is corrupt (entry out of range)", path=p, offset=12 + 4 * bad
        )
    return order


def _first_out_of_range(order: array[int], count: int) -> int:
    """The first i with ``order[i] >= count``, or -1 (in C when the core is built)."""
    if _first_at_least_u32 is not None and order.itemsize == 4:
        return _first_at_least_u32(order, count)
    for i, pos in enumerate(order):
        if pos >= count:
            return i
    return -1


def map_rev(path: str, count: int, fmt: ObjectFormat, pack_checksum: bytes) -> memoryview | None:
    """The ``.rev`` at ``path`` mapped read-only for bisection, or None if unusable.

    Only what costs O(1) is checked here (size, signature, version, hash id, the
    pack checksum it names): point lookups must not read the whole file.  The
    positions are checked as they are read; a caller that meets a bad one falls
    back to :func:`load_rev`, which reports the damage as Git does.
    """
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size != 12 + 4 * count + 2 * fmt.rawsz or size == 0:
                return None
            m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    view = memoryview(m)
    rawsz = fmt.rawsz
    end = size - rawsz
    if (
        view[:4] != RIDX_MAGIC
        or struct.unpack_from(">II", view, 4) != (1, fmt.pack_hash_id)
        or view[end - rawsz : end] != pack_checksum
    ):
        view.release()
        m.close()
        return None
    return view


def load_rev(path: str, count: int, fmt: ObjectFormat, pack_checksum: bytes) -> array[int] | None:
    """The order from the pack's ``.rev``, or None when it cannot be used.

    As Git, a damaged ``.rev`` never makes its pack unreadable: the caller computes
    the order instead.  Git prints an ``error:`` line for a file of the wrong
    size or signature (reported here as a ``GitodbWarning``) and does not check
    the checksum at all (a mismatch is dropped silently).
    """
    try:
        return read_rev(path, count, fmt, pack_checksum)
    except FileNotFoundError:
        return None
    except RevIndexChecksumError:
        return None
    except PackError as e:
        report("error", e.message.replace("reverse-index file", f"reverse-index file {path}", 1))
        return None
    except OSError as e:
        report("error", f"cannot read reverse-index file {path}: {e.strerror}")
        return None
