"""Arrow columns built from buffers, for the tables' hot loops.

A ``pa.array`` of Python strings converts one object at a time; an object id
column is built instead from one ``bytes.hex()`` of all the ids, and a column that
repeats a few values (ref names in ``reachable_from``) by ``take`` from the values.
"""

from __future__ import annotations

from array import array

import pyarrow as pa


def fixed_hex(ids: list[bytes], width: int) -> pa.Array:
    """Binary ids of ``width`` bytes as a string array of their lower-case hex."""
    count = len(ids)
    data = b"".join(ids).hex().encode("ascii")
    offsets = array("i", range(0, 2 * width * count + 1, 2 * width))
    return pa.StringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data))


def list_of(offsets: array[int], values: pa.Array) -> pa.Array:
    """A list array: row ``i`` is ``values[offsets[i]:offsets[i + 1]]`` (int32 offsets)."""
    return pa.ListArray.from_arrays(
        pa.Array.from_buffers(pa.int32(), len(offsets), [None, pa.py_buffer(offsets)]), values
    )


def taken(values: pa.Array, indices: array[int]) -> pa.Array:
    """``values[indices]`` (int32 indices), copied in C."""
    return values.take(
        pa.Array.from_buffers(pa.int32(), len(indices), [None, pa.py_buffer(indices)])
    )


def repeated(value: str, count: int) -> pa.Array:
    """A string array of ``value`` ``count`` times."""
    # a typed scalar: repeating a Python str makes a large_string array to cast
    return pa.repeat(pa.scalar(value, pa.string()), count)
