"""Atomic loose-object writes: temporary file in the target directory, then link into place.

A loose object is ``zlib(<type> <size>\\0<content>)`` at ``objects/xx/yyyy…``.  The
writer compresses into a temporary file created next to its final name (mode
0444, ``O_EXCL``), then hard-links it into place and removes the temporary name.
Linking never replaces an existing file, so two processes writing the same
object at once both succeed and one intact file remains.  On any error or
interruption the temporary file (and a fan-out directory this call created) is
removed: the store is left as it was.

Objects whose id is only known after reading all the data (``write_loose_stream``)
are compressed into a temporary file directly under ``objects/`` and linked into
their fan-out directory once the id is known, as Git's ``stream_loose_object`` does.

Whether a finished file is synced before it is linked follows ``core.fsync`` (see
``gitodb.durable``; by Git's default loose objects are not).  ``LooseBatch`` is
Git's ODB transaction for ``core.fsyncMethod=batch``: its objects stay under
their temporary names until one fsync has made them all durable.
"""

from __future__ import annotations

import enum
import errno
import os
import stat
from collections.abc import Callable, Iterator
from typing import BinaryIO

from gitodb import fileio
from gitodb.durable import DEFAULT_POLICY, Component, FsyncPolicy, full_sync
from gitodb.errors import ObjectWriteError
from gitodb.objects.format import ObjectFormat
from gitodb.types import Buffer

#: Bytes read from a source stream per step; bounds memory for any object size.
CHUNK_SIZE = 1 << 20

#: Mode of object files, as Git creates them (before the umask).
OBJECT_FILE_MODE = 0o444


def object_header(type_name: str, size: int) -> bytes:
    """``<type> <size>\\0``; any type name (``--literally``) is written as its bytes."""
    return b"%s %d\0" % (type_name.encode("utf-8", "surrogateescape"), size)


def loose_object_path(objects_dir: str | os.PathLike[str], oid: bytes) -> str:
    """Return the path of the loose object ``oid`` under ``objects_dir``."""
    hexid = oid.hex()
    return os.path.join(os.fspath(objects_dir), hexid[:2], hexid[2:])


def create_temp_file(directory: str, prefix: str) -> tuple[int, str]:
    """Create ``<directory>/<prefix><random>`` exclusively, mode 0444; return (fd, path)."""
    for _ in range(100):
        path = os.path.join(directory, prefix + os.urandom(4).hex()[:6])
        try:
            fd = os.open(
                path,
                os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                OBJECT_FILE_MODE,
            )
        except FileExistsError:
            continue
        return fd, path
    raise ObjectWriteError("unable to create temporary file", path=directory)


def link_into_place(temp_path: str, final_path: str, *, keep_temp: bool = False) -> bool:
    """Move ``temp_path`` to ``final_path`` without replacing an existing file.

    Returns True if this call created ``final_path``, False if it already existed
    (an object of the same id: the same content).  The temporary name is gone
    afterwards either way, unless ``keep_temp`` and ``final_path`` existed.
    """
    try:
        os.link(temp_path, final_path)
        created = True
    except FileExistsError:
        if keep_temp:
            return False
        created = False
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK, errno.ENOSYS):
            raise
        # A file system without hard links: rename is atomic too, and replacing an
        # object file with identical content is harmless.
        os.replace(temp_path, final_path)
        return True
    try:
        os.unlink(temp_path)
    except OSError:
        # The object is in place; a temporary name that cannot be removed is only
        # litter (Git warns and goes on), not a reason to fail the write.
        pass
    return created


class Existing(enum.Enum):
    """What ``Staging.place`` does when the final name is already taken.

    Git's writers differ here, and each gitodb writer says which one it is:

    - ``KEEP``: the existing file stays and the new one is dropped (loose objects:
      the same name is the same object, and zlib output may differ byte for byte,
      so Git skips its collision check for them);
    - ``CHECK``: the existing file stays if its bytes are the same, otherwise the
      write fails (Git 2.48+'s collision check when it finalizes a ``.pack``,
      ``.idx`` or ``.rev`` in the object store: ``index-pack --stdin``, bulk-checkin);
    - ``REPLACE``: the new file takes the name (``index-pack <pack>`` and ``-o``:
      Git unlinks the old index and writes a new one);
    - ``REFUSE``: an existing file is an error (``index-pack --stdin <pack>``: Git
      creates the named pack with ``O_EXCL``).
    """

    KEEP = "keep"
    CHECK = "check"
    REPLACE = "replace"
    REFUSE = "refuse"


class Staging:
    """The temporary files of one write, placed into their names or all removed.

    Every writer stages the same way: ``temp()`` creates ``<dir>/<prefix><random>``
    exclusively (mode 0444) in the destination directory, ``write()`` fills a new one
    and syncs it as ``core.fsync`` says for its ``component``, ``place()`` gives it
    its final name (what happens to a file already there is ``existing``, see
    ``Existing``) and ``abort()`` removes every temporary file and every file this
    staging created, so a failed write leaves nothing behind.
    """

    def __init__(
        self, fsync: FsyncPolicy = DEFAULT_POLICY, existing: Existing = Existing.KEEP
    ) -> None:
        self.fsync = fsync
        self.existing = existing
        self.temps: list[str] = []
        self.placed: list[str] = []

    def temp(self, directory: str, prefix: str) -> tuple[int, str]:
        """A new temporary file in ``directory``: ``(fd, path)``, open for writing."""
        directory = directory or "."
        try:
            fd, path = create_temp_file(directory, prefix)
        except OSError as e:
            raise ObjectWriteError(
                f"unable to create temporary file: {e.strerror}", path=directory
            ) from e
        self.temps.append(path)
        return fd, path

    def write(
        self,
        directory: str,
        prefix: str,
        data: Buffer,
        component: Component = Component.PACK_METADATA,
    ) -> str:
        """A new temporary file holding ``data``, synced per ``component``; its path."""
        fd, path = self.temp(directory, prefix)
        try:
            write_all(fd, data)
            self.fsync.sync(component, fd, path)
        except OSError as e:
            raise ObjectWriteError(f"write error: {e.strerror}", path=path) from e
        finally:
            os.close(fd)
        return path

    def place(self, temp_path: str, final_path: str, existing: Existing | None = None) -> bool:
        """Give ``temp_path`` its final name; True if this call created ``final_path``.

        ``existing`` (default: this staging's) says what happens to a file already
        there.  ``False`` means it was kept (``KEEP``, or ``CHECK`` with the same
        bytes); ``CHECK`` with different bytes and ``REFUSE`` raise
        ``ObjectWriteError``, the temporary file staying staged (``abort()`` removes it).
        """
        existing = existing or self.existing
        try:
            if existing is Existing.REPLACE:
                os.replace(temp_path, final_path)
                created = True
            elif existing is Existing.REFUSE:
                if not link_into_place(temp_path, final_path, keep_temp=True):
                    raise ObjectWriteError(
                        f"unable to create '{final_path}': File exists", path=final_path
                    )
                created = True
            elif existing is Existing.CHECK and os.path.lexists(final_path):
                if not same_contents(temp_path, final_path):
                    ext = final_path.rpartition(".")[2]
                    raise ObjectWriteError(
                        f"unable to rename temporary '*.{ext}' file to '{final_path}'",
                        path=final_path,
                    )
                _remove_quietly(temp_path)
                created = False
            else:
                created = link_into_place(temp_path, final_path)
        except OSError as e:
            raise ObjectWriteError(
                f"unable to rename temporary file to '{final_path}': {e.strerror}",
                path=temp_path,
            ) from e
        # A file that replaced another is not removed by abort(): what it replaced is
        # gone anyway, and it is complete (index-pack's .rev before a failed .idx).
        if created and existing is not Existing.REPLACE:
            self.placed.append(final_path)
        self.temps.remove(temp_path)
        return created

    def forget(self, temp_path: str) -> None:
        """Remove the staged temporary file ``temp_path`` now (it was superseded)."""
        _remove_quietly(temp_path)
        self.temps.remove(temp_path)

    def abort(self) -> None:
        """Remove the temporary files and the files placed so far."""
        for path in self.temps + self.placed:
            _remove_quietly(path)
        self.temps.clear()
        self.placed.clear()


def same_contents(a: str, b: str) -> bool:
    """True if the files ``a`` and ``b`` hold the same bytes (Git's collision check)."""
    with open(a, "rb") as fa, open(b, "rb") as fb:
        if os.fstat(fa.fileno()).st_size != os.fstat(fb.fileno()).st_size:
            return False
        while True:
            x = fa.read(CHUNK_SIZE)
            if x != fb.read(CHUNK_SIZE):
                return False
            if not x:
                return True


def _ensure_dir(path: str) -> bool:
    """Create directory ``path`` if missing; return True if this call created it."""
    try:
        os.mkdir(path, 0o777)
    except FileExistsError:
        return False
    return True


def _remove_quietly(path: str, *, directory: bool = False) -> None:
    try:
        (os.rmdir if directory else os.unlink)(path)
    except OSError:
        pass


def write_all(fd: int, data: Buffer) -> None:
    """``os.write`` until all of ``data`` is written (a short write is not an error)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _LooseFile:
    """One temporary object file being filled; removed again unless committed."""

    def __init__(
        self, directory: str, prefix: str, level: int, fsync: FsyncPolicy, in_batch: bool = False
    ) -> None:
        # Imported here, not at the top: hashing without writing never needs zlib,
        # and hash-object's start-up time counts.
        from gitodb import compress

        self.fd, self.path = create_temp_file(directory, prefix)
        self.deflater = compress.Deflater(level)
        self.fsync = fsync
        self.in_batch = in_batch
        self.pending: list[bytes] = []
        self.pending_len = 0

    def feed(self, data: Buffer) -> None:
        out = self.deflater.compress(data)
        if out:
            self.pending.append(out)
            self.pending_len += len(out)
            if self.pending_len >= CHUNK_SIZE:
                self._drain()

    def _drain(self) -> None:
        if self.pending:
            write_all(self.fd, b"".join(self.pending))
            self.pending.clear()
            self.pending_len = 0

    def close(self) -> None:
        """Finish the zlib stream, write it out and close the file."""
        self.pending.append(self.deflater.flush())
        self._drain()
        # Synced before the link that gives it its final name: a crash never leaves
        # a named object that is empty or short.
        self.fsync.sync_loose(self.fd, self.path, in_batch=self.in_batch)
        fd, self.fd = self.fd, -1
        os.close(fd)

    def discard(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        _remove_quietly(self.path)


class LooseBatch:
    """Loose objects written as one batch: Git's ODB transaction for ``fsyncMethod=batch``.

    With ``core.fsyncMethod=batch`` (and loose objects among the synced
    components), each object written through this batch only gets its pages
    written out (no disk cache flush) and keeps its temporary name.
    :meth:`commit` then issues one real fsync (on a scratch file
    ``objects/bulk_fsync_*``, as Git does) and only after it links every object
    to its final name, so none is visible before all are durable.  Without that
    setting the batch changes nothing: objects are written as usual.
    Use as a context manager; leaving it by an exception removes the pending files.
    """

    def __init__(
        self, objects_dir: str | os.PathLike[str], fsync: FsyncPolicy = DEFAULT_POLICY
    ) -> None:
        self.objects_dir = os.fspath(objects_dir)
        self.fsync = fsync
        self.active = fsync.batch_enabled(Component.LOOSE_OBJECT)
        self._pending: dict[bytes, tuple[str, str]] = {}  # oid -> (temp path, final path)
        self._made_dirs: list[str] = []  # fan-out directories this batch created

    def __contains__(self, oid: bytes) -> bool:
        return oid in self._pending

    def pending_file(self, oid: bytes) -> str | None:
        """The temporary file holding ``oid`` until :meth:`commit`, or None."""
        entry = self._pending.get(oid)
        return entry[0] if entry is not None else None

    def _add(self, oid: bytes, temp_path: str, final_path: str, made_dir: bool) -> None:
        self._pending[oid] = (temp_path, final_path)
        if made_dir:
            self._made_dirs.append(os.path.dirname(final_path))

    def commit(self) -> None:
        """Make the pending objects durable with one fsync, then give them their names."""
        if not self._pending:
            return
        try:
            if self.fsync.enabled:
                fd, path = create_temp_file(self.objects_dir, "bulk_fsync_")
                try:
                    full_sync(fd, path)
                finally:
                    os.close(fd)
                    _remove_quietly(path)
            # Objects linked before a failure stay: they are complete, and another
            # writer may already rely on them (Git never removes a stored object).
            for temp_path, final_path in self._pending.values():
                link_into_place(temp_path, final_path)
        except BaseException as e:
            self.abort()
            if isinstance(e, OSError):
                raise ObjectWriteError(
                    f"unable to write loose object file: {e.strerror}", path=self.objects_dir
                ) from e
            raise
        self._pending.clear()
        self._made_dirs.clear()

    def abort(self) -> None:
        """Remove every pending object; nothing of the batch becomes visible."""
        for temp_path, _final in self._pending.values():
            _remove_quietly(temp_path)
        for directory in self._made_dirs:
            _remove_quietly(directory, directory=True)  # only if empty
        self._pending.clear()
        self._made_dirs.clear()

    def __enter__(self) -> LooseBatch:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def _publish(
    out: _LooseFile, oid: bytes, final: str, batch: LooseBatch | None, made_dir: bool
) -> None:
    """Give a closed object file its final name, or leave that to ``batch``."""
    if batch is not None and batch.active:
        batch._add(oid, out.path, final, made_dir)
    else:
        link_into_place(out.path, final)


def write_loose_object(
    objects_dir: str | os.PathLike[str],
    fmt: ObjectFormat,
    type_name: str,
    data: Buffer,
    *,
    level: int = 1,
    fsync: FsyncPolicy = DEFAULT_POLICY,
    exists: Callable[[bytes], bool] | None = None,
    oid: bytes | None = None,
    batch: LooseBatch | None = None,
) -> bytes:
    """Store ``data`` as a loose object of ``type_name``; return its binary id.

    ``level`` is the zlib level (Git's ``core.looseCompression``), ``fsync`` the
    ``core.fsync`` policy.  If the object already exists as a loose file (or
    ``exists(oid)`` says it is stored elsewhere, or it is pending in ``batch``),
    nothing is written; a loose file's mtime is refreshed, as Git does.  ``oid``
    may be passed when the caller has already computed it.
    """
    header = object_header(type_name, len(data))
    if oid is None:
        h = fmt.new_hasher(header)
        h.update(data)
        oid = h.digest()
    final = loose_object_path(objects_dir, oid)
    if (
        (batch is not None and oid in batch)
        or _freshen(final)
        or (exists is not None and exists(oid))
    ):
        return oid
    fanout = os.path.dirname(final)
    made_dir = _ensure_dir(fanout)
    out: _LooseFile | None = None
    try:
        out = _LooseFile(
            fanout, "tmp_obj_", level, fsync, in_batch=batch is not None and batch.active
        )
        out.feed(header)
        out.feed(data)
        out.close()
        _publish(out, oid, final, batch, made_dir)
    except BaseException as e:
        if out is not None:
            out.discard()
        if made_dir:
            _remove_quietly(fanout, directory=True)
        if isinstance(e, OSError):
            raise ObjectWriteError(
                f"unable to write loose object file: {e.strerror}", path=final
            ) from e
        raise
    return oid


def write_loose_stream(
    objects_dir: str | os.PathLike[str],
    fmt: ObjectFormat,
    type_name: str,
    stream: BinaryIO,
    size: int,
    *,
    level: int = 1,
    fsync: FsyncPolicy = DEFAULT_POLICY,
    exists: Callable[[bytes], bool] | None = None,
    source: str | None = None,
    batch: LooseBatch | None = None,
) -> bytes:
    """Store ``size`` bytes read from ``stream`` as a loose object; return its binary id.

    The data is read, hashed and compressed in chunks, so memory stays bounded.
    ``source`` names the stream in errors.  A stream that ends early raises
    ``ObjectWriteError`` and leaves nothing behind.  ``fsync`` and ``batch`` as
    for :func:`write_loose_object`.
    """
    objects_dir = os.fspath(objects_dir)
    header = object_header(type_name, size)
    hasher = fmt.new_hasher(header)
    in_batch = batch is not None and batch.active
    try:
        out = _LooseFile(objects_dir, "tmp_obj_", level, fsync, in_batch=in_batch)
    except OSError as e:
        raise ObjectWriteError(
            f"unable to create temporary file: {e.strerror}", path=objects_dir
        ) from e
    made_dir = False
    fanout = ""
    try:
        out.feed(header)
        for chunk in read_exactly(stream, size, source):
            hasher.update(chunk)
            out.feed(chunk)
        out.close()
        oid = hasher.digest()
        final = loose_object_path(objects_dir, oid)
        if (
            (batch is not None and oid in batch)
            or _freshen(final)
            or (exists is not None and exists(oid))
        ):
            out.discard()
            return oid
        fanout = os.path.dirname(final)
        made_dir = _ensure_dir(fanout)
        _publish(out, oid, final, batch, made_dir)
    except BaseException as e:
        out.discard()
        if made_dir:
            _remove_quietly(fanout, directory=True)
        if isinstance(e, OSError):
            raise ObjectWriteError(
                f"unable to write loose object file: {e.strerror}", path=objects_dir
            ) from e
        raise
    return oid


def read_exactly(
    stream: BinaryIO, size: int, source: str | None = None, chunk_size: int = CHUNK_SIZE
) -> Iterator[memoryview]:
    """Yield memoryviews over exactly the next ``size`` bytes of ``stream``.

    Each view is valid only until the next one is requested.  A regular file is
    read with ``pread`` (see ``iter_file_chunks``); other streams through one
    reused buffer.  A stream that ends early raises
    ``ObjectWriteError`` with Git's message.
    """
    fd = _regular_file_fd(stream)
    if fd is not None and size > 0:
        start = stream.tell()
        yield from iter_file_chunks(fd, start, size, source, chunk_size)
        stream.seek(start + size)
        return
    buf = bytearray(min(chunk_size, max(size, 1)))
    view = memoryview(buf)
    readinto = getattr(stream, "readinto", None)
    left = size
    while left > 0:
        want = min(left, len(buf))
        if readinto is not None:
            got = readinto(view[:want])
        else:
            piece = stream.read(want)
            got = len(piece)
            view[:got] = piece
        if not got:
            raise _short_read(size, source)
        left -= got
        yield view[:got]


def _short_read(size: int, source: str | None) -> ObjectWriteError:
    return ObjectWriteError(f"failed to read {size} bytes from '{source or 'stream'}'")


def _regular_file_fd(stream: object) -> int | None:
    """The descriptor behind ``stream`` if it is a seekable regular file, else None."""
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
        if not stat.S_ISREG(os.fstat(fd).st_mode) or not stream.seekable():  # type: ignore[attr-defined]
            return None
    except (AttributeError, OSError, ValueError):
        return None
    return int(fd)


def iter_file_chunks(
    fd: int, start: int, size: int, source: str | None = None, chunk_size: int = CHUNK_SIZE
) -> Iterator[memoryview]:
    """Yield ``size`` bytes of regular file ``fd`` from offset ``start`` as memoryviews.

    Read with ``pread`` into one reused buffer, so resident memory stays bounded
    for any file size.  Not ``mmap``: the file being stored may shrink while it
    is read, and touching a mapped page past the new end kills the process
    (SIGBUS); a read just comes back short, which is Git's "failed to read" error.
    """
    buf = bytearray(min(chunk_size, size))
    view = memoryview(buf)
    pos = start
    end = start + size
    try:
        while pos < end:
            want = min(len(buf), end - pos)
            got = fileio.preadinto(fd, view[:want], pos)
            if got <= 0:
                raise _short_read(size, source)
            piece = view[:got]
            try:
                yield piece
            finally:
                piece.release()
            pos += got
    finally:
        view.release()


def _freshen(path: str) -> bool:
    """If ``path`` exists, bump its mtime like Git's ``freshen_file``; return whether it exists."""
    try:
        os.utime(path)
    except OSError:
        return os.path.exists(path)
    return True
