"""Git's delta format: two size varints, then copy-from-base and insert opcodes.

A copy opcode (high bit set) names which offset and size bytes follow; a size of
zero means 0x10000.  An insert opcode 1-127 is followed by that many literal
bytes.  Opcode 0 is reserved.  Every bound is checked before data is touched,
and output grows only as opcodes produce it, so a delta that declares a huge
result size cannot make us allocate it up front.

``apply_delta`` runs on the optional C accelerator ``gitodb._native`` when
it was built (same checks, no GIL held); ``apply_delta_python`` is the reference
and the fallback.  Delta application is a third of the time of reading or
indexing a pack with long delta chains, hence the accelerator.
"""

from __future__ import annotations

from gitodb.errors import DeltaError
from gitodb.types import Buffer

try:
    from gitodb._native import apply_delta as _c_apply_delta
    from gitodb._native import delta_sizes as _c_delta_sizes
except ImportError:  # built without a C compiler: the pure-Python code below runs
    _c_apply_delta = _c_delta_sizes = None  # type: ignore[assignment]


def _varint(delta: Buffer, pos: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise DeltaError("delta header truncated or too long", offset=pos)
        c = delta[pos]
        pos += 1
        if shift == 63 and c & 0x7E:  # more than 64 bits
            raise DeltaError("delta header truncated or too long", offset=pos)
        value |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return value, pos


def delta_sizes_python(delta: Buffer) -> tuple[int, int, int]:
    """Return ``(base_size, result_size, header_length)`` of a delta."""
    end = len(delta)
    src, pos = _varint(delta, 0, end)
    dst, pos = _varint(delta, pos, end)
    return src, dst, pos


delta_sizes = delta_sizes_python if _c_delta_sizes is None else _c_delta_sizes


def apply_delta(
    base: Buffer, delta: Buffer, *, path: str | None = None, offset: int | None = None
) -> bytes:
    """Apply ``delta`` to ``base`` and return the result (see ``apply_delta_python``)."""
    if _c_apply_delta is None:
        return apply_delta_python(base, delta, path=path, offset=offset)
    try:
        return _c_apply_delta(base, delta)
    except ValueError as e:
        raise DeltaError(str(e), path=path, offset=offset) from None


def apply_delta_python(
    base: Buffer, delta: Buffer, *, path: str | None = None, offset: int | None = None
) -> bytes:
    """Apply ``delta`` to ``base`` and return the result.

    ``path``/``offset`` name the pack entry in errors.  Raises ``DeltaError`` when
    the base size does not match, a copy reaches outside the base, an insert runs
    past the delta, an opcode is reserved, or the result has the wrong size.
    """
    try:
        src_size, dst_size, pos = delta_sizes(delta)
    except DeltaError as e:
        raise DeltaError(e.message, path=path, offset=offset) from None
    base_len = len(base)
    if src_size != base_len:
        raise DeltaError(
            f"delta base size mismatch: delta says {src_size}, base has {base_len}",
            path=path,
            offset=offset,
        )
    base_mv = base if isinstance(base, memoryview) else memoryview(base)
    delta_mv = delta if isinstance(delta, memoryview) else memoryview(delta)
    out = bytearray()
    try:
        produced = _run_opcodes(base_mv, delta, delta_mv, pos, dst_size, out)
    except IndexError:
        raise DeltaError("delta copy opcode truncated", path=path, offset=offset) from None
    except DeltaError as e:
        raise DeltaError(e.message, path=path, offset=offset) from None
    if produced != dst_size:
        raise DeltaError(
            f"delta result has {produced} bytes, expected {dst_size}", path=path, offset=offset
        )
    return bytes(out)


def _run_opcodes(
    base_mv: memoryview,
    delta: Buffer,
    delta_mv: memoryview,
    pos: int,
    dst_size: int,
    out: bytearray,
) -> int:
    """Append the result of the opcodes from ``pos`` to ``out``; return bytes produced."""
    base_len = len(base_mv)
    end = len(delta)
    produced = 0
    while pos < end:
        op = delta[pos]
        pos += 1
        if op & 0x80:
            # Copy: up to 4 offset bytes and 3 size bytes, present per flag bit.
            cp_off = 0
            if op & 0x01:
                cp_off = delta[pos]
                pos += 1
            if op & 0x02:
                cp_off |= delta[pos] << 8
                pos += 1
            if op & 0x04:
                cp_off |= delta[pos] << 16
                pos += 1
            if op & 0x08:
                cp_off |= delta[pos] << 24
                pos += 1
            cp_size = 0
            if op & 0x10:
                cp_size = delta[pos]
                pos += 1
            if op & 0x20:
                cp_size |= delta[pos] << 8
                pos += 1
            if op & 0x40:
                cp_size |= delta[pos] << 16
                pos += 1
            if cp_size == 0:
                cp_size = 0x10000
            stop = cp_off + cp_size
            if stop > base_len or produced + cp_size > dst_size:
                raise DeltaError(
                    f"delta copy out of bounds (offset {cp_off}, size {cp_size}, "
                    f"base {base_len}, result {dst_size})"
                )
            out += base_mv[cp_off:stop]
            produced += cp_size
        elif op:
            stop = pos + op
            if stop > end or produced + op > dst_size:
                raise DeltaError("delta insert out of bounds")
            out += delta_mv[pos:stop]
            pos = stop
            produced += op
        else:
            raise DeltaError("delta uses reserved opcode 0")
    return produced


def native_available() -> bool:
    """True if the C accelerator ``gitodb.pack._cdelta`` is built and importable."""
    return _c_apply_delta is not None
