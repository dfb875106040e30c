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
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from gitodb.errors import ConfigError, ObjectFormatError, ObjectNotFoundError, ObjectTypeError
from gitodb.loose.write import read_exactly, write_loose_object, write_loose_stream
from gitodb.objects.blob import GitObject
from gitodb.objects.check import ObjectChecker
from gitodb.objects.commit import Commit
from gitodb.objects.format import ObjectFormat
from gitodb.objects.header import TYPE_NUMBERS
from gitodb.objects.tag import Tag
from gitodb.objects.tree import Tree

if TYPE_CHECKING:
    from gitodb.repo import Repository
    from gitodb.repo.config import Config

Buffer = bytes | bytearray | memoryview

DEFAULT_BIG_FILE_THRESHOLD = 512 * 1024 * 1024
# Git's defaults when neither the specific key nor core.compression is set.
DEFAULT_LOOSE_COMPRESSION = 1    # Z_BEST_SPEED
DEFAULT_PACK_COMPRESSION = -1    # Z_DEFAULT_COMPRESSION

# core.fsync components (Git 2.36+); the default syncs packs and their indexes, not loose
# objects.  Names that cover loose objects / packs:
_FSYNC_LOOSE = {"loose-object", "objects", "committed", "added", "all"}
_FSYNC_PACK = {"pack", "objects", "committed", "added", "all"}
_FSYNC_KNOWN = _FSYNC_LOOSE | _FSYNC_PACK | {
    "none", "default", "pack-metadata", "commit-graph", "index", "reference",
    "derived-metadata"}


@dataclass(frozen=True)
class WriteSettings:
    """How objects are written, read from a repository's config like Git does."""

    loose_compression: int = DEFAULT_LOOSE_COMPRESSION
    pack_compression: int = DEFAULT_PACK_COMPRESSION
    big_file_threshold: int = DEFAULT_BIG_FILE_THRESHOLD
    fsync_loose: bool = False
    fsync_pack: bool = True
    write_reverse_index: bool = True

    @classmethod
    def from_config(cls, config: Config) -> WriteSettings:
        """Read the settings; bad values raise ``ConfigError`` with Git's message."""
        core = config.get_int("core.compression", -2) if "core.compression" in config else None
        if core is not None and not -1 <= core <= 9:
            raise ConfigError(f"bad zlib compression level {core}")
        loose = config.get_int("core.loosecompression", 0) \
            if "core.loosecompression" in config else None
        if loose is not None and not -1 <= loose <= 9:
            raise ConfigError(f"bad zlib compression level {loose}")
        pack = config.get_int("pack.compression", 0) if "pack.compression" in config else None
        if pack is not None and not -1 <= pack <= 9:
            raise ConfigError(f"bad pack compression level {pack}")
        threshold = DEFAULT_BIG_FILE_THRESHOLD
        text = config.get("core.bigfilethreshold")
        if text is not None:
            threshold = config.get_int("core.bigfilethreshold", threshold)
            if threshold < 0:
                raise ConfigError(f"bad numeric config value '{text}' for "
                                  "'core.bigfilethreshold': invalid unit")
        fsync_loose, fsync_pack = _fsync_components(config)
        return cls(
            loose_compression=loose if loose is not None else (
                core if core is not None else DEFAULT_LOOSE_COMPRESSION),
            pack_compression=pack if pack is not None else (
                core if core is not None else DEFAULT_PACK_COMPRESSION),
            big_file_threshold=threshold,
            fsync_loose=fsync_loose,
            fsync_pack=fsync_pack,
            write_reverse_index=config.get_bool("pack.writereverseindex", True),
        )


def _fsync_components(config: Config) -> tuple[bool, bool]:
    """(sync loose objects, sync packs) from ``core.fsync`` and ``core.fsyncObjectFiles``."""
    loose, pack = False, True
    value = config.get("core.fsync")
    if value is not None:
        positive: set[str] = set()
        negative: set[str] = set()
        for item in (part.strip() for part in value.split(",")):
            if not item:
                continue
            if item == "none":
                loose, pack = False, False
                continue
            name = item[1:] if item.startswith("-") else item
            if name not in _FSYNC_KNOWN:
                continue  # Git warns about unknown components and ignores them.
            (negative if item.startswith("-") else positive).add(name)
        loose = (loose and not negative & _FSYNC_LOOSE) or bool(positive & _FSYNC_LOOSE)
        pack = (pack and not negative & _FSYNC_PACK) or bool(positive & _FSYNC_PACK)
    if config.get_bool("core.fsyncobjectfiles", False):
        loose = True
    return loose, pack


def compute_object_id(fmt: ObjectFormat, type_name: str, data: Buffer | None = None, *,
                      stream: BinaryIO | None = None, size: int | None = None) -> bytes:
    """Return the binary id of an object without storing it.

    Give either ``data``, or ``stream`` and its ``size`` (read in chunks; the size
    is needed up front because it is part of the hashed header).  Any type name
    is hashed as given, like ``git hash-object --literally``.
    """
    if data is not None:
        h = fmt.new_hasher(_header(type_name, len(data)))
        h.update(data)
        return h.digest()  # type: ignore[no-any-return]
    if stream is None or size is None:
        raise TypeError("compute_object_id needs data, or a stream and its size")
    h = fmt.new_hasher(_header(type_name, size))
    for chunk in read_exactly(stream, size):
        h.update(chunk)
    return h.digest()  # type: ignore[no-any-return]


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
            repo.common_dir, "objects")

    def exists(self, oid: bytes) -> bool:
        """Whether ``oid`` is stored already (loose, packed, or in an alternate)."""
        return bool(self.repo.odb.contains(oid))

    def write(self, type_name: str, data: Buffer) -> bytes:
        """Store ``data`` as a loose object of ``type_name``; return its id.

        Any type name is accepted (as ``--literally``); content is not checked here,
        see ``gitodb.objects.check``.  An object that exists already is not rewritten.
        """
        return write_loose_object(
            self.objects_dir, self.fmt, type_name, data,
            level=self.settings.loose_compression, fsync=self.settings.fsync_loose,
            exists=self.exists, oid=compute_object_id(self.fmt, type_name, data))

    def write_object(self, obj: GitObject, *, check_links: bool = True) -> bytes:
        """Store a ``Commit``, ``Tree``, ``Tag`` or ``Blob`` (serialised); return its id.

        The content is checked as ``git hash-object`` checks it
        (``gitodb.objects.check``), and with ``check_links`` the objects it names
        must exist with the right type, as ``git commit-tree``, ``mktree`` and
        ``mktag`` require.  Raises ``ObjectCheckError``/``ObjectTypeError``/
        ``ObjectNotFoundError`` and stores nothing on failure.
        """
        if obj.fmt is not self.fmt:
            raise ObjectFormatError(f"a {obj.fmt.name} object cannot be stored in a "
                                    f"{self.fmt.name} repository")
        data = obj.serialize()
        ObjectChecker(self.fmt).check(obj.type_name, data)
        if check_links:
            for oid, want, what in _links(obj):
                try:
                    got = self.repo.odb.read_header(oid)[0]
                except ObjectNotFoundError:
                    raise ObjectNotFoundError(f"{what}: object {oid.hex()} is unavailable") \
                        from None
                if got != want:
                    raise ObjectTypeError(f"{what}: object {oid.hex()} is a {got}, "
                                          f"not a {want}")
        return self.write(obj.type_name, data)

    def write_stream(self, type_name: str, stream: BinaryIO, size: int, *,
                     source: str | None = None, allow_pack: bool = True) -> bytes:
        """Store ``size`` bytes from ``stream`` as one object; return its id.

        Memory stays bounded whatever the size.  A blob larger than
        ``core.bigFileThreshold`` goes into a new pack of its own; anything else
        is written loose (always, with ``allow_pack=False``: ``--literally``).
        ``source`` names the stream in error messages.
        """
        if allow_pack and type_name == "blob" and size > self.settings.big_file_threshold:
            return self.write_stream_to_pack(type_name, stream, size, source=source)
        return write_loose_stream(
            self.objects_dir, self.fmt, type_name, stream, size,
            level=self.settings.loose_compression, fsync=self.settings.fsync_loose,
            exists=self.exists, source=source)

    def write_stream_to_pack(self, type_name: str, stream: BinaryIO, size: int, *,
                             source: str | None = None) -> bytes:
        """Stream one object into a new pack (with ``.idx`` and ``.rev``); return its id.

        If the object exists already, no pack is left behind.
        """
        if type_name not in TYPE_NUMBERS:
            raise ValueError(f"a pack cannot hold an object of type '{type_name}'")
        from gitodb.pack.writer import PackWriter

        s = self.settings
        with PackWriter(os.path.join(self.objects_dir, "pack"), self.fmt,
                        level=s.pack_compression, fsync=s.fsync_pack,
                        write_rev=s.write_reverse_index) as pack:
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
            (p, "commit", "commit parent") for p in obj.parents]
    if isinstance(obj, Tree):
        # Submodule commits live in another repository; Git does not look them up.
        return [(e.id, e.object_type, f"entry '{e.name.decode('utf-8', 'replace')}'")
                for e in obj if e.object_type != "commit"]
    if isinstance(obj, Tag):
        return [(obj.object, obj.type, "tagged object")]
    return []


def write_object(repo: Repository, type_name: str, data: Buffer) -> bytes:
    """Store an object from bytes in ``repo``; return its id (repo's object format)."""
    return ObjectWriter(repo).write(type_name, data)


def write_object_stream(repo: Repository, type_name: str, stream: BinaryIO, size: int) -> bytes:
    """Store an object of known ``size`` read from ``stream`` in ``repo``; return its id."""
    return ObjectWriter(repo).write_stream(type_name, stream, size)
