"""Writing objects into a repository: small ones loose, big blobs streamed into a pack.

This is the library side of ``gitodb hash-object``::

    from gitodb.repo import Repository
    from gitodb.repo.write import ObjectWriter, compute_object_id

    repo = Repository("path/to/repo")
    writer = ObjectWriter(repo)
    oid = writer.write("blob", b"hello\\n")               # loose object
    with open("big.iso", "rb") as f:                       # big blob: into a new pack
        oid = writer.write_stream("blob", f, os.fstat(f.fileno()).st_size)
    oid = compute_object_id(repo.object_format, "blob", b"hello\\n")   # nothing stored
    tree = Tree.create([(0o100644, b"hello.txt", oid)], repo.object_format)
    writer.write_object(tree)                              # checked, then stored loose

Settings follow Git: loose objects are compressed at ``core.looseCompression``
(else ``core.compression``, else 1, best speed), packs at ``pack.compression``
(else ``core.compression``, else -1, zlib's default).  A blob of more than
``core.bigFileThreshold`` bytes (default 512 MiB) given as a stream goes into a
pack of its own, like Git's bulk-checkin; everything else is written loose.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from gitodb.durable import DEFAULT_POLICY, FsyncPolicy
from gitodb.errors import ConfigError, ObjectFormatError, ObjectNotFoundError, ObjectTypeError
from gitodb.loose.write import LooseBatch, read_exactly, write_loose_object, write_loose_stream
from gitodb.objects.blob import GitObject
from gitodb.objects.check import ObjectChecker
from gitodb.objects.commit import Commit
from gitodb.objects.format import ObjectFormat
from gitodb.objects.header import TYPE_NUMBERS
from gitodb.objects.tag import Tag
from gitodb.objects.tree import Tree
from gitodb.types import Buffer

if TYPE_CHECKING:
    from gitodb.repo import Repository
    from gitodb.repo.compat import CompatObjects
    from gitodb.repo.config import Config


DEFAULT_BIG_FILE_THRESHOLD = 512 * 1024 * 1024
# Git's defaults when neither the specific key nor core.compression is set.
DEFAULT_LOOSE_COMPRESSION = 1  # Z_BEST_SPEED
DEFAULT_PACK_COMPRESSION = -1  # Z_DEFAULT_COMPRESSION


@dataclass(frozen=True)
class WriteSettings:
    """How objects are written, read from a repository's config like Git does."""

    loose_compression: int = DEFAULT_LOOSE_COMPRESSION
    pack_compression: int = DEFAULT_PACK_COMPRESSION
    big_file_threshold: int = DEFAULT_BIG_FILE_THRESHOLD
    #: ``core.fsync``, ``core.fsyncMethod``, ``core.fsyncObjectFiles``
    fsync: FsyncPolicy = DEFAULT_POLICY
    write_reverse_index: bool = True

    @classmethod
    def from_config(cls, config: Config) -> WriteSettings:
        """Read the settings; bad values raise ``ConfigError`` with Git's message."""
        core = config.get_int("core.compression", -2) if "core.compression" in config else None
        if core is not None and not -1 <= core <= 9:
            raise ConfigError(f"bad zlib compression level {core}")
        loose = (
            config.get_int("core.loosecompression", 0)
            if "core.loosecompression" in config
            else None
        )
        if loose is not None and not -1 <= loose <= 9:
            raise ConfigError(f"bad zlib compression level {loose}")
        pack = config.get_int("pack.compression", 0) if "pack.compression" in config else None
        if pack is not None and not -1 <= pack <= 9:
            raise ConfigError(f"bad pack compression level {pack}")
        threshold = config.get_ulong("core.bigfilethreshold", DEFAULT_BIG_FILE_THRESHOLD)
        return cls(
            loose_compression=loose
            if loose is not None
            else (core if core is not None else DEFAULT_LOOSE_COMPRESSION),
            pack_compression=pack
            if pack is not None
            else (core if core is not None else DEFAULT_PACK_COMPRESSION),
            big_file_threshold=threshold,
            fsync=FsyncPolicy.from_config(config),
            write_reverse_index=config.get_bool("pack.writereverseindex", True),
        )


def compute_object_id(
    fmt: ObjectFormat,
    type_name: str,
    data: Buffer | None = None,
    *,
    stream: BinaryIO | None = None,
    size: int | None = None,
    source: str | None = None,
) -> bytes:
    """Return the binary id of an object without storing it.

    Give either ``data``, or ``stream`` and its ``size`` (read in chunks; the size
    is needed up front because it is part of the hashed header).  Any type name
    is hashed as given, like ``git hash-object --literally``.  ``source`` names
    the stream in the error when it ends early.
    """
    if data is not None:
        h = fmt.new_hasher(_header(type_name, len(data)))
        h.update(data)
        return h.digest()
    if stream is None or size is None:
        raise TypeError("compute_object_id needs data, or a stream and its size")
    h = fmt.new_hasher(_header(type_name, size))
    for chunk in read_exactly(stream, size, source):
        h.update(chunk)
    return h.digest()


def _header(type_name: str, size: int) -> bytes:
    # Literal types may be any string; Git writes the bytes of the name as given.
    return b"%s %d\0" % (type_name.encode("utf-8", "surrogateescape"), size)


class ObjectWriter:
    """Writes objects into one repository's object directory (see the module docstring)."""

    def __init__(self, repo: Repository, settings: WriteSettings | None = None) -> None:
        self.repo = repo
        self.fmt = repo.object_format
        self.settings = settings or WriteSettings.from_config(repo.config)
        self.objects_dir = os.environ.get("GIT_OBJECT_DIRECTORY") or os.path.join(
            repo.common_dir, "objects"
        )
        self._batch: LooseBatch | None = None

    @contextmanager
    def batch(self) -> Iterator[LooseBatch]:
        """Write the loose objects of the ``with`` block as one batch (Git's ODB transaction).

        Under ``core.fsyncMethod=batch`` they become visible together, after one
        fsync, when the block ends; an exception in the block drops them all.
        With any other setting the objects are written as usual.
        """
        if self._batch is not None:
            yield self._batch  # nested: part of the outer batch
            return
        with LooseBatch(self.objects_dir, self.settings.fsync) as b:
            self._batch = b
            try:
                yield b
            finally:
                self._batch = None

    def exists(self, oid: bytes) -> bool:
        """Whether ``oid`` is stored already (loose, packed, or in an alternate)."""
        return bool(self.repo.odb.contains(oid))

    def write(self, type_name: str, data: Buffer) -> bytes:
        """Store ``data`` as a loose object of ``type_name``; return its id.

        Any type name is accepted (as ``--literally``); content is not checked here,
        see ``gitodb.objects.check``.  An object that exists already is not rewritten.
        In a repository with a compatibility format the object's id in that format
        is computed first (``ObjectConvertError`` if it has none: nothing is
        written) and recorded in the loose object map once the object is stored.
        """
        compat = self.repo.compat
        compat_oid = compat.compat_id(type_name, bytes(data)) if compat is not None else None
        oid = write_loose_object(
            self.objects_dir,
            self.fmt,
            type_name,
            data,
            level=self.settings.loose_compression,
            fsync=self.settings.fsync,
            exists=self.exists,
            oid=compute_object_id(self.fmt, type_name, data),
            batch=self._batch,
        )
        if compat is not None and compat_oid is not None:
            compat.record(oid, compat_oid)
        return oid

    def write_object(self, obj: GitObject, *, check_links: bool = True) -> bytes:
        """Store a ``Commit``, ``Tree``, ``Tag`` or ``Blob`` (serialised); return its id.

        The content is checked as ``git hash-object`` checks it
        (``gitodb.objects.check``), and with ``check_links`` the objects it names
        must exist with the right type, as ``git commit-tree``, ``mktree`` and
        ``mktag`` require.  Raises ``ObjectCheckError``/``ObjectTypeError``/
        ``ObjectNotFoundError`` and stores nothing on failure.
        """
        if obj.fmt is not self.fmt:
            raise ObjectFormatError(
                f"a {obj.fmt.name} object cannot be stored in a {self.fmt.name} repository"
            )
        data = obj.serialize()
        ObjectChecker(self.fmt).check(obj.type_name, data)
        if check_links:
            for oid, want, what in _links(obj):
                try:
                    got = self.repo.odb.read_header(oid)[0]
                except ObjectNotFoundError:
                    raise ObjectNotFoundError(
                        f"{what}: object {oid.hex()} is unavailable"
                    ) from None
                if got != want:
                    raise ObjectTypeError(f"{what}: object {oid.hex()} is a {got}, not a {want}")
        return self.write(obj.type_name, data)

    def write_stream(
        self,
        type_name: str,
        stream: BinaryIO,
        size: int,
        *,
        source: str | None = None,
        allow_pack: bool = True,
    ) -> bytes:
        """Store ``size`` bytes from ``stream`` as one object; return its id.

        Memory stays bounded whatever the size.  A blob larger than
        ``core.bigFileThreshold`` goes into a new pack of its own; anything else
        is written loose (always, with ``allow_pack=False``: ``--literally``).
        ``source`` names the stream in error messages.
        """
        compat = self.repo.compat
        if compat is not None and type_name != "blob":
            # converting needs the whole content (and must succeed before anything is stored)
            return self.write(type_name, b"".join(read_exactly(stream, size, source)))
        if allow_pack and type_name == "blob" and size > self.settings.big_file_threshold:
            oid = self.write_stream_to_pack(type_name, stream, size, source=source)
        else:
            oid = write_loose_stream(
                self.objects_dir,
                self.fmt,
                type_name,
                stream,
                size,
                level=self.settings.loose_compression,
                fsync=self.settings.fsync,
                exists=self.exists,
                source=source,
                batch=self._batch,
            )
        if compat is not None:
            self._record_blob_compat(compat, oid)
        return oid

    def _record_blob_compat(self, compat: CompatObjects, oid: bytes) -> None:
        """Map a streamed blob: its content is the same in both formats, so it is
        hashed again from the store, in chunks (memory stays bounded)."""
        if compat.to_compat(oid) is not None:
            return
        self._forget_packs()
        src = self.repo.odb.open_stream(oid)
        try:
            h = compat.compat.new_hasher(_header("blob", src.size))
            while True:
                chunk = src.read(1 << 20)
                if not chunk:
                    break
                h.update(chunk)
        finally:
            src.close()
        compat.record(oid, h.digest())

    def write_stream_to_pack(
        self, type_name: str, stream: BinaryIO, size: int, *, source: str | None = None
    ) -> bytes:
        """Stream one object into a new pack (with ``.idx`` and ``.rev``); return its id.

        If the object exists already, no pack is left behind.
        """
        if type_name not in TYPE_NUMBERS:
            raise ValueError(f"a pack cannot hold an object of type '{type_name}'")
        from gitodb.pack.writer import PackWriter

        s = self.settings
        with PackWriter(
            os.path.join(self.objects_dir, "pack"),
            self.fmt,
            level=s.pack_compression,
            fsync=s.fsync,
            write_rev=s.write_reverse_index,
        ) as pack:
            oid = pack.add_stream(type_name, stream, size, exists=self.exists, source=source)
            pack.finish()
        self._forget_packs()
        return oid

    def _forget_packs(self) -> None:
        """Let the repository's odb see the new pack on its next lookup."""
        odb = self.repo.__dict__.get("odb")
        if odb is not None and hasattr(odb, "rescan_packs"):
            odb.rescan_packs()


def _links(obj: GitObject) -> list[tuple[bytes, str, str]]:
    """``(id, type it must have, what names it)`` for every object ``obj`` refers to."""
    if isinstance(obj, Commit):
        return [(obj.tree, "tree", "commit tree")] + [
            (p, "commit", "commit parent") for p in obj.parents
        ]
    if isinstance(obj, Tree):
        # Submodule commits live in another repository; Git does not look them up.
        return [
            (e.id, e.object_type, f"entry '{e.name.decode('utf-8', 'replace')}'")
            for e in obj
            if e.object_type != "commit"
        ]
    if isinstance(obj, Tag):
        return [(obj.object, obj.type, "tagged object")]
    return []


def write_object(repo: Repository, type_name: str, data: Buffer) -> bytes:
    """Store an object from bytes in ``repo``; return its id (repo's object format)."""
    return ObjectWriter(repo).write(type_name, data)


def write_object_stream(repo: Repository, type_name: str, stream: BinaryIO, size: int) -> bytes:
    """Store an object of known ``size`` read from ``stream`` in ``repo``; return its id."""
    return ObjectWriter(repo).write_stream(type_name, stream, size)
