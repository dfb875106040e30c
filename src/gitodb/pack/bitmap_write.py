"""Serialising ``.bitmap`` files (the layout is described in ``gitodb.pack.bitmap``).

``encode_bitmap`` lays out what a writer decided: the type bitmaps, the commit
entries (each with the XOR offset it was compressed against), the optional
lookup table and name-hash cache, and the trailing checksum.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from gitodb import trace2
from gitodb.objects.format import ObjectFormat
from gitodb.pack.bitmap import (
    BITMAP_SIGNATURE,
    MAX_XOR_OFFSET,
    OPT_FULL_DAG,
    OPT_HASH_CACHE,
    OPT_LOOKUP_TABLE,
)
from gitodb.pack.ewah import encode_ewah

__all__ = ["BitmapEntry", "encode_bitmap"]


@dataclass(frozen=True)
class BitmapEntry:
    """One bitmapped commit: its id-order position, its full reachability ``bits``,
    the XOR offset to store it against (0: stored whole) and the flag byte."""

    index_pos: int
    bits: int
    xor_offset: int = 0
    flags: int = 0
    #: the serialised EWAH to store, when the writer built it (Git's XOR encoding);
    #: else the canonical encoding of ``bits`` XOR the base's
    stored: bytes | None = None


def encode_bitmap(
    fmt: ObjectFormat,
    checksum: bytes,
    num_objects: int,
    types: Sequence[int],
    entries: Sequence[BitmapEntry],
    *,
    hash_cache: Sequence[int] | None = None,
    lookup_table: bool = False,
) -> bytes:
    """The bytes of a bitmap file for a pack or MIDX of ``num_objects`` objects whose
    checksum is ``checksum``; ``types`` are the commit, tree, blob and tag bitmaps."""
    if len(types) != 4:
        raise ValueError("four type bitmaps: commits, trees, blobs, tags")
    if hash_cache is not None and len(hash_cache) != num_objects:
        raise ValueError("the name-hash cache has one value per object")
    options = OPT_FULL_DAG
    if hash_cache is not None:
        options |= OPT_HASH_CACHE
    if lookup_table:
        options |= OPT_LOOKUP_TABLE
    out = bytearray(BITMAP_SIGNATURE + struct.pack(">HHI", 1, options, len(entries)) + checksum)
    # Git's bit sizes: a type bitmap ends at its last set bit, a commit bitmap at
    # the end of its last non-zero word.
    for bits in types:
        out += encode_ewah(bits, bits.bit_length())
    offsets = []
    for i, e in enumerate(entries):
        if not 0 <= e.xor_offset <= min(i, MAX_XOR_OFFSET):
            raise ValueError(f"entry {i}: XOR offset {e.xor_offset} out of range")
        offsets.append(len(out))
        out += struct.pack(">IBB", e.index_pos, e.xor_offset, e.flags)
        if e.stored is not None:
            out += e.stored
            continue
        stored = e.bits ^ entries[i - e.xor_offset].bits if e.xor_offset else e.bits
        out += encode_ewah(stored, -(-stored.bit_length() // 64) * 64)
    if lookup_table:
        with trace2.region("pack-bitmap-write", "writing_lookup_table"):
            # Sorted by commit position: the entry's file offset and the table row
            # of its XOR base (0xffffffff: none).
            rows = sorted(range(len(entries)), key=lambda i: entries[i].index_pos)
            row_of = {i: r for r, i in enumerate(rows)}
            for i in rows:
                e = entries[i]
                base = row_of[i - e.xor_offset] if e.xor_offset else 0xFFFFFFFF
                out += struct.pack(">IQI", e.index_pos, offsets[i], base)
    if hash_cache is not None:
        out += struct.pack(f">{num_objects}I", *hash_cache)
    out += fmt.new_hasher(bytes(out)).digest()
    return bytes(out)
