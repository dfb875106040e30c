"""Reftable records (ref, log, obj, index) and how their values are encoded.

Names are bytes at this layer; the refs layer decodes them.  Records are
``NamedTuple`` so that decoding a million log records stays cheap.
"""

from __future__ import annotations

from gitodb.reftable.basics import (
    LOG_DELETION,
    LOG_UPDATE,
    MAX_UPDATE_INDEX,
    REF_DELETION,
    REF_SYMREF,
    REF_VAL1,
    REF_VAL2,
    put_varint,
)
from gitodb.types import NamedTuple


class RefRecord(NamedTuple):
    """One ref: ``value_type`` 0 deletion, 1 id, 2 id + peeled, 3 symref ``target``."""

    name: bytes
    update_index: int
    value_type: int
    oid: bytes | None = None
    peeled: bytes | None = None
    target: bytes | None = None

    @property
    def is_deletion(self) -> bool:
        return self.value_type == REF_DELETION


class LogRecord(NamedTuple):
    """One reflog entry (``value_type`` 1) or a log tombstone (``value_type`` 0)."""

    refname: bytes
    update_index: int
    value_type: int
    old: bytes = b""
    new: bytes = b""
    name: bytes = b""
    email: bytes = b""
    time: int = 0
    tz_offset: int = 0
    message: bytes = b""

    @property
    def is_deletion(self) -> bool:
        return self.value_type == LOG_DELETION

    @property
    def key(self) -> bytes:
        return log_key(self.refname, self.update_index)


class IndexRecord(NamedTuple):
    """An index entry: the last key of a block and that block's file position."""

    last_key: bytes
    position: int


class ObjRecord(NamedTuple):
    """An abbreviated object id and the positions of ref blocks that mention it."""

    prefix: bytes
    positions: tuple[int, ...]


def log_key(refname: bytes, update_index: int) -> bytes:
    """``refname \\0 reverse_int64(update_index)``: newest entry of a ref sorts first."""
    return refname + b"\0" + (MAX_UPDATE_INDEX - update_index).to_bytes(8, "big")


def split_log_key(key: bytes) -> tuple[bytes, int]:
    """Inverse of ``log_key``."""
    return key[:-9], MAX_UPDATE_INDEX - int.from_bytes(key[-8:], "big")


def encode_ref_value(rec: RefRecord, min_update_index: int) -> bytes:
    """The bytes after a ref record's key: update index delta, then the value."""
    out = put_varint(rec.update_index - min_update_index)
    vt = rec.value_type
    if vt == REF_VAL1:
        assert rec.oid is not None
        return out + rec.oid
    if vt == REF_VAL2:
        assert rec.oid is not None and rec.peeled is not None
        return out + rec.oid + rec.peeled
    if vt == REF_SYMREF:
        assert rec.target is not None
        return out + put_varint(len(rec.target)) + rec.target
    return out


def encode_log_value(rec: LogRecord) -> bytes:
    """The bytes after a log record's key (nothing for a tombstone)."""
    if rec.value_type != LOG_UPDATE:
        return b""
    return b"".join(
        (
            rec.old,
            rec.new,
            put_varint(len(rec.name)),
            rec.name,
            put_varint(len(rec.email)),
            rec.email,
            put_varint(rec.time),
            (rec.tz_offset & 0xFFFF).to_bytes(2, "big"),
            put_varint(len(rec.message)),
            rec.message,
        )
    )


def encode_obj_value(positions: tuple[int, ...]) -> tuple[int, bytes]:
    """(value type, bytes) of an obj record: count in the type if 1..7, then deltas."""
    n = len(positions)
    parts = [] if 0 < n < 8 else [put_varint(n)]
    prev = 0
    for i, p in enumerate(positions):
        parts.append(put_varint(p if i == 0 else p - prev))
        prev = p
    return (n if 0 < n < 8 else 0), b"".join(parts)
