"""Index a pack without an index: what ``git index-pack`` does.

The work is split by job, one module each:

* ``index_scan``: pass 1, walk the entries from the header on (boundaries,
  CRC-32s, non-delta ids, the trailer checksum);
* ``index_resolve``: pass 2, resolve every delta tree from its root, in threads
  or forked processes;
* ``index_thin``: ``--fix-thin``, append missing REF_DELTA bases;
* ``index_write``: the files (``.pack``/``.idx``/``.rev``/``.keep``) and the
  collision check against the repository;
* ``gitodb.objects.check.PackObjectChecker``: ``--strict``.

Every object id and the trailer are hashed with SHA-1DC (``fmt.hasher_factory``);
a collision attack raises ``ObjectCollisionError`` naming the pack and the offset
of the entry (Git dies with the same message).  :class:`PackIndexer` runs the
passes; its :class:`PackIndexResult` holds per-entry offsets, CRCs, ids, types
and chain depths.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gitodb import trace2
from gitodb.errors import PackError
from gitodb.objects import OBJ_OFS_DELTA, OBJ_REF_DELTA, ObjectFormat
from gitodb.pack.idx import OFFSET32_LIMIT, index_v2_sorted, write_index_v1, write_index_v2
from gitodb.pack.index_native import index_native
from gitodb.pack.index_resolve import DeltaResolver
from gitodb.pack.index_scan import (
    DEFAULT_CACHE_BUDGET,
    PACK_HEADER_SIZE,
    PACK_SIGNATURE,
    PackScanner,
    Progress,
    default_thread_count,
)
from gitodb.pack.index_thin import complete_thin_pack
from gitodb.pack.rev import write_rev

__all__ = [
    "DEFAULT_CACHE_BUDGET",
    "PACK_HEADER_SIZE",
    "PACK_SIGNATURE",
    "PackIndexResult",
    "PackIndexer",
    "Progress",
    "both_checks",
    "default_thread_count",
]

ObjectCheck = Callable[[int, bytes, bytes, int], None]


def both_checks(first: ObjectCheck | None, second: ObjectCheck | None) -> ObjectCheck | None:
    """One per-object check that runs ``first`` then ``second`` (either may be None)."""
    if first is None or second is None:
        return first or second

    def both(type_num: int, data: bytes, oid: bytes, offset: int) -> None:
        first(type_num, data, oid, offset)
        second(type_num, data, oid, offset)

    return both


@dataclass
class PackIndexResult:
    """What indexing a pack found, one list entry per pack entry in pack order."""

    fmt: ObjectFormat
    pack_checksum: bytes
    # Lists from the Python passes, arrays from the native core (index_native).
    offsets: Sequence[int]
    ends: Sequence[int]  # offset just past each entry
    crcs: Sequence[int]
    oids: list[bytes]
    types: Sequence[int]  # stored type (OFS_DELTA/REF_DELTA for deltas)
    real_types: Sequence[int]  # the object's type after resolving
    sizes: Sequence[int]  # size in the entry header (the delta's size for deltas)
    object_sizes: Sequence[int]  # the object's size after resolving
    depths: Sequence[int]  # delta chain length, 0 for non-deltas
    bases: Sequence[int]  # index of the direct base entry, -1 for non-deltas
    appended: int = 0  # objects appended by --fix-thin
    pack_bytes: bytes | None = None  # the completed pack when objects were appended
    index_error: PackError | None = None  # verify: how the stored index differs (if it does)
    order: Sequence[int] | None = None  # entries sorted by (id, offset), if known
    native: bool = False  # indexed by the native core (deferred_check not run)

    def id_order(self) -> Sequence[int]:
        """Entry numbers sorted by ``(id, offset)``: the order of the ``.idx``."""
        if self.order is None:
            oids, offsets = self.oids, self.offsets
            self.order = sorted(range(len(oids)), key=lambda i: (oids[i], offsets[i]))
        return self.order

    def idx_entries(self) -> list[tuple[bytes, int, int]]:
        """``(oid, crc32, offset)`` for every entry, as the index writers take them."""
        return list(zip(self.oids, self.crcs, self.offsets, strict=True))

    def index_bytes(self, version: int = 2, offset32_limit: int = OFFSET32_LIMIT) -> bytes:
        """The ``.idx`` for this pack, byte-identical to Git's."""
        if version == 1:
            return write_index_v1(self.idx_entries(), self.pack_checksum, self.fmt)
        if version == 2:
            sorted_oids = None
            if self.order is not None:
                sorted_oids = [self.oids[i] for i in self.order]
                # write_index_v2 breaks ties between equal ids by CRC, the order by offset.
                if any(a == b for a, b in zip(sorted_oids, sorted_oids[1:], strict=False)):
                    sorted_oids = None
            if sorted_oids is None:
                return write_index_v2(
                    self.idx_entries(), self.pack_checksum, self.fmt, offset32_limit=offset32_limit
                )
            order, crcs, offsets = self.order, self.crcs, self.offsets
            assert order is not None  # set with sorted_oids
            return index_v2_sorted(
                sorted_oids,
                array("I", [crcs[i] for i in order]),
                [offsets[i] for i in order],
                self.pack_checksum,
                self.fmt,
                offset32_limit=offset32_limit,
            )
        raise PackError(f"unknown index version {version}")

    def rev_bytes(self) -> bytes:
        """The ``.rev`` for this pack (positions in the index ordered by offset)."""
        order = self.id_order()
        return write_rev([self.offsets[i] for i in order], self.pack_checksum, self.fmt)


class PackIndexer(PackScanner):
    """Index one pack held in memory or mapped from a file (see ``PackScanner`` for
    the arguments): :meth:`run` scans, resolves and completes a thin pack.

    ``native`` False forces the Python reference (the differential tests use it).
    ``deferred_check``, like ``object_check`` a check of every object, is one the
    caller can run after indexing (the collision check against a repository): the
    native core does not run it, so it does not keep the core from the pack, and
    the result says ``native``, which tells the caller to run it; the reference
    runs it on every object as it is built.
    """

    native = True
    deferred_check: ObjectCheck | None = None

    def run(self) -> PackIndexResult:
        """Scan, resolve every delta (completing a thin pack if asked), return the result.

        The native core does it when it can (``index_native``); the Python passes
        below are the reference, and the path for everything the core leaves to it.
        """
        if self.native:
            done = index_native(self)
            if done is not None:
                done.native = True
                trace2.data("index-pack", "resolve", "native")
                return done
        trace2.data("index-pack", "resolve", "reference")
        self.object_check = both_checks(self.object_check, self.deferred_check)
        st = self.scan()
        count = len(st.offsets)
        resolver = DeltaResolver(st, self.fmt, self.path, self.progress, self.object_check)
        ndeltas = sum(1 for t in st.types if t == OBJ_OFS_DELTA or t == OBJ_REF_DELTA)
        resolver.total = ndeltas
        roots = [
            i
            for i in range(count)
            if st.oids[i] is not None
            and (st.offsets[i] in st.ofs_children or st.oids[i] in st.ref_children)
        ]
        resolver.resolve_roots(roots, self.threads)
        appended = 0
        pack_bytes = None
        if resolver.resolved < ndeltas and self.fix_thin:
            appended, pack_bytes = complete_thin_pack(self, st, resolver)
        if resolver.resolved < ndeltas:
            raise resolver.unresolved_error(ndeltas)
        if self.progress is not None and ndeltas:
            self.progress("Resolving deltas", resolver.resolved, ndeltas, True)
        if pack_bytes is not None:
            checksum = pack_bytes[-self.fmt.rawsz :]
        else:
            checksum = bytes(self.buf[-self.fmt.rawsz :])
        return PackIndexResult(
            fmt=self.fmt,
            pack_checksum=checksum,
            offsets=st.offsets,
            ends=st.ends,
            crcs=st.crcs,
            oids=st.oids,  # type: ignore[arg-type]
            types=st.types,
            real_types=resolver.real_types,
            sizes=st.sizes,
            object_sizes=resolver.result_sizes,
            depths=resolver.depths,
            bases=resolver.bases,
            appended=appended,
            pack_bytes=pack_bytes,
        )
