"""Backend ``isal``: Intel ISA-L through the ``isal`` package.

ISA-L compresses only at its own levels 0-3, and its level 0 is a fast
Huffman-only-ish mode, not "stored".  We map Git levels 1, 2, 3 to ISA-L
levels 1, 2, 3 (ISA-L's 3 is its best ratio, comparable to zlib's 6); Git's
0 (stored), -1 (zlib's default, 6) and 4-9 go to the next best backend, so a
level always means what ``core.compression`` means.
"""

from __future__ import annotations

import isal as package  # ImportError when not installed
from isal import isal_zlib

from .base import Backend, PrefixContext
from .ops import NewStreamContext, make_ops

ISAL_LEVELS = frozenset({1, 2, 3})


def load() -> Backend:
    errors = (isal_zlib.error,)
    inflate, inflate_prefix = make_ops(isal_zlib.decompressobj, errors)

    def new_prefix_context() -> PrefixContext:
        return NewStreamContext(inflate_prefix)

    return Backend(
        name="isal",
        library_version=package.ISAL_VERSION,
        binding=f"isal {package.__version__}",
        inflate=inflate,
        inflate_prefix=inflate_prefix,
        crc32=isal_zlib.crc32,
        crc32_combine=isal_zlib.crc32_combine,
        new_prefix_context=new_prefix_context,
        reuse_note=(
            "not reusable: the binding has no reset and ISA-L's inflate_state "
            "layout is build-specific, so a reset costs a new stream"
        ),
        decompressobj=isal_zlib.decompressobj,
        stream_errors=errors,
        deflate=isal_zlib.compress,
        compressobj=isal_zlib.compressobj,
        decodes_past_max_length=(
            "ISA-L decodes all the input it is given before max_length cuts the "
            "output, so damage after a header fails the header read"
        ),
        deflate_levels=ISAL_LEVELS,
        deflate_levels_note=(
            "ISA-L has only levels 0-3 and its 0 is not stored: Git levels "
            "1-3 map to ISA-L 1-3, the others go to the next best backend"
        ),
    )
