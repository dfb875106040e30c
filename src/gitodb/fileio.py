"""Positional and scatter reads and writes on a file descriptor, on every platform.

``os.pread``, ``os.preadv``, ``os.readv`` and ``os.pwrite`` are POSIX: Windows has
none of them.  Code that reads a file at an offset calls these functions instead;
where the ``os`` function exists it is used (one system call, the file position
untouched), otherwise the same result comes from ``lseek`` + ``read``/``write``,
putting the file position back afterwards.  The fallback is not atomic with
respect to other users of the same descriptor (another thread seeking it at the
same moment); gitodb never shares such a descriptor between threads.

The ``os`` functions are looked up at each call, not at import, so a test can take
them away (``monkeypatch.delattr(os, "pread")``) and exercise the fallback.
"""

from __future__ import annotations

import mmap
import os

from gitodb.types import Buffer

__all__ = ["pread", "preadinto", "pwrite", "readinto", "release_mapping"]


# A mapped file's pages are given back (MADV_DONTNEED) every this many bytes read by
# a pass over much of it (packs read once through), so they stop counting in RSS.
PAGE_DROP_STEP = 16 << 20


def pread(fd: int, n: int, offset: int) -> bytes:
    """Up to ``n`` bytes of ``fd`` from ``offset`` (fewer at the end of the file)."""
    native = getattr(os, "pread", None)
    if native is not None:
        data: bytes = native(fd, n, offset)
        return data
    saved = os.lseek(fd, 0, os.SEEK_CUR)
    try:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, n)
    finally:
        os.lseek(fd, saved, os.SEEK_SET)


def preadinto(fd: int, view: memoryview, offset: int) -> int:
    """Read from ``offset`` into ``view`` (writable); the number of bytes read."""
    native = getattr(os, "preadv", None)
    if native is not None:
        got: int = native(fd, [view], offset)
        return got
    data = pread(fd, len(view), offset)
    view[: len(data)] = data
    return len(data)


def readinto(fd: int, view: memoryview) -> int:
    """Read from the file position into ``view`` (writable); the number of bytes read."""
    native = getattr(os, "readv", None)
    if native is not None:
        got: int = native(fd, [view])
        return got
    data = os.read(fd, len(view))
    view[: len(data)] = data
    return len(data)


def pwrite(fd: int, data: Buffer, offset: int) -> int:
    """Write ``data`` at ``offset``, all of it; the number of bytes written."""
    native = getattr(os, "pwrite", None)
    view = memoryview(data).cast("B")
    if native is not None:
        done = 0
        while done < len(view):
            done += native(fd, view[done:], offset + done)
        return done
    saved = os.lseek(fd, 0, os.SEEK_CUR)
    try:
        os.lseek(fd, offset, os.SEEK_SET)
        done = 0
        while done < len(view):
            done += os.write(fd, view[done:])
        return done
    finally:
        os.lseek(fd, saved, os.SEEK_SET)


def release_mapping(view: memoryview, mapping: mmap.mmap) -> None:
    """Release a read-only file mapping and the view over it.

    While a slice of the view is still referenced elsewhere (say, by the traceback
    of an error being handled) the mapping cannot close; it then stays alive until
    that slice is dropped, rather than failing the close.
    """
    try:
        view.release()
        mapping.close()
    except BufferError:
        pass
