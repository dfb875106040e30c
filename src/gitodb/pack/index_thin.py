"""Thin-pack completion (``index-pack --fix-thin``).

A thin pack's REF_DELTA entries may name bases the pack does not hold.  Each such
base that the repository has is appended to the pack as a full object, in Git's
order (unresolved deltas visited in pack order), its delta tree resolved, and the
header count and trailing checksum rewritten.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from gitodb import compress
from gitodb.errors import PackError
from gitodb.objects import TYPE_NAMES
from gitodb.pack.entry import encode_entry_header
from gitodb.pack.index_resolve import DeltaResolver
from gitodb.pack.index_scan import TYPE_PREFIX, ScanState, hasher_for

if TYPE_CHECKING:
    from gitodb.pack.indexer import PackIndexer


def complete_thin_pack(
    self: PackIndexer, st: ScanState, resolver: DeltaResolver
) -> tuple[int, bytes]:
    """Append missing REF_DELTA bases from the repository, like Git's --fix-thin.

    Unresolved REF_DELTAs are visited in pack order; for each one still
    unresolved, its base is read from the repository, appended as a full
    object and its delta tree resolved.  Returns ``(appended, new_pack)``.
    """
    rawsz = self.fmt.rawsz
    pending = sorted(i for i in st.ref_base if st.oids[i] is None)
    tail = bytearray()
    start = len(self.buf) - rawsz
    new_hash = hasher_for(self.fmt)
    appended = 0
    for i in pending:
        if st.oids[i] is not None:
            continue
        base_oid = st.ref_base[i]
        if base_oid not in st.ref_children:
            continue
        found = self.base_lookup(base_oid) if self.base_lookup is not None else None
        if found is None:
            continue
        type_name, data = found
        type_num = next(n for n, name in TYPE_NAMES.items() if name == type_name)
        h = new_hash(TYPE_PREFIX[type_num] + b"%d\0" % len(data))
        h.update(data)
        if h.digest() != base_oid:
            raise PackError(f"local object {base_oid.hex()} is corrupt")
        entry = encode_entry_header(type_num, len(data)) + compress.deflate(
            data, self.compression_level
        )
        offset = start + len(tail)
        tail += entry
        idx = len(st.offsets)
        st.offsets.append(offset)
        st.data_starts.append(offset)
        st.ends.append(offset + len(entry))
        st.types.append(type_num)
        st.sizes.append(len(data))
        st.crcs.append(compress.crc32(entry))
        st.oids.append(base_oid)
        st.cache.put(idx, type_num, data)
        if self.object_check is not None:
            self.object_check(type_num, data, base_oid, offset)
        resolver.add_entry(type_num, len(data))
        appended += 1
        resolver.resolve_roots([idx], 1)
    count = len(st.offsets)
    body = bytearray(self.buf[:start])
    body[8:12] = struct.pack(">I", count)
    body += tail
    body += new_hash(body).digest()
    return appended, bytes(body)
