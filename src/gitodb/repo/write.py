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
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from gitodb.durable import DEFAULT_POLICY, FsyncPolicy
from gitodb.errors import (
    ConfigError,
    GitodbError,
    ObjectCheckError,
    ObjectFormatError,
    ObjectNotFoundError,
    ObjectParseError,
    ObjectTypeError,
    report,
)
from gitodb.loose.read import inflate_loose
from gitodb.loose.write import (
    LooseBatch,
    loose_object_path,
    read_exactly,
    write_loose_object,
    write_loose_stream,
)
from gitodb.objects.attributes import unquote_c_style
from gitodb.objects.blob import GitObject
from gitodb.objects.check import ObjectChecker, check_tag_input
from gitodb.objects.commit import Commit
from gitodb.objects.format import ObjectFormat
from gitodb.objects.fsck import FsckSeverities
from gitodb.objects.header import TYPE_NUMBERS
from gitodb.objects.tag import Tag, parse_tag_fields
from gitodb.objects.tree import Tree, tree_sort_key
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
            repo.commondir, "objects"
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

    def read_back(self, oid: bytes) -> tuple[str, bytes]:
        """``(type, content)`` of an object this writer stored, even one still pending
        in its batch; else as the repository reads it (``ObjectNotFoundError``)."""
        pending = self._batch.pending_file(oid) if self._batch is not None else None
        path = pending or loose_object_path(self.objects_dir, oid)
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            return self.repo.odb.read(oid)
        return inflate_loose(raw, path)

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

    def write_tag_checked(self, data: bytes, *, strict: bool = True) -> bytes:
        """Store tag content as ``git mktag`` does; return its id.

        The content must pass Git's fsck of a tag (``fsck.<msgId>`` settings apply;
        ``extraHeaderEntry`` is a warning), every warning counting as an error with
        ``strict`` (others are reported as ``GitodbWarning``s); the tagged object
        must exist (replace refs honoured) with the type the tag names.  Raises
        ``ObjectCheckError`` (details: Git's ``error:`` lines), ``ObjectNotFoundError``
        or ``ObjectTypeError`` with Git's messages; nothing is stored then.
        """
        from gitodb.refs.base import refname_format_ok
        from gitodb.repo.replace import replace_map, replaced

        severities = FsckSeverities(strict=True)
        severities.set("extraHeaderEntry", "warn")
        severities.apply_config(self.repo.config, "fsck.")
        failed, found = check_tag_input(
            self.fmt, data, severities, strict=strict, refname_ok=refname_format_ok
        )
        # a failing tag's errors come last (every earlier error stops the check)
        errors = [text for level, text in found if level == "error"] if failed else []
        for level, text in found:
            if level == "warning" or not failed:
                report(level, f"tag input does not pass fsck: {text}")
        if failed:
            raise ObjectCheckError(
                "tag on stdin did not pass our strict fsck check",
                details=[f"tag input does not pass fsck: {line}" for line in errors],
            )
        try:
            target, type_bytes, _name = parse_tag_fields(data, self.fmt)
        except ObjectParseError:  # fsck passed what the parser refuses
            raise ObjectCheckError("tag on stdin did not pass our strict fsck check") from None
        want = type_bytes.decode("ascii")
        read_oid = replaced(replace_map(self.repo), target)
        try:
            got, content = self.repo.odb.read(read_oid)
        except ObjectNotFoundError:
            raise ObjectNotFoundError(f"could not read tagged object '{target.hex()}'") from None
        if got != want:
            raise ObjectTypeError(
                f"object '{target.hex()}' tagged as '{want}', but is a '{got}' type"
            )
        if compute_object_id(self.fmt, got, content) != read_oid:
            raise GitodbError("tag on stdin did not refer to a valid object")
        return self.write("tag", data)

    def assert_type(self, oid: bytes, want: str) -> None:
        """Git's ``assert_oid_type``: ``oid`` is an object of type ``want`` (replace
        refs honoured), else ``ObjectTypeError`` ``<id> is not a valid '<type>' object``."""
        from gitodb.repo.replace import replace_map, replaced

        try:
            got: str | None = self.repo.odb.read_header(replaced(replace_map(self.repo), oid))[0]
        except ObjectNotFoundError:
            got = None
        if got != want:
            raise ObjectTypeError(f"{oid.hex()} is not a valid '{want}' object")

    def write_commit_tree(
        self,
        tree: bytes,
        parents: list[bytes],
        message: bytes,
        *,
        author: bytes,
        committer: bytes,
        encoding: str | None = None,
    ) -> bytes:
        """Store a commit as ``git commit-tree`` writes it; return its id.

        ``tree`` must be a tree and every parent a commit (replace refs honoured
        for the check); ``author``/``committer`` are ident lines
        (``gitodb.repo.ident.ident_line``).  ``encoding`` (``i18n.commitEncoding``)
        other than UTF-8 is recorded in an ``encoding`` header; otherwise a message
        that is not UTF-8 has its stray bytes read as Latin-1, with Git's warning.
        Raises ``ObjectTypeError`` (``<id> is not a valid 'tree' object``) or
        ``CommitMessageError`` for a NUL in the message.
        """
        for oid, want in [*((p, "commit") for p in parents), (tree, "tree")]:
            self.assert_type(oid, want)
        if b"\0" in message:
            raise CommitMessageError("a NUL byte in commit log message not allowed.")
        utf8 = encoding is None or encoding.lower() in ("utf-8", "utf8")
        if utf8:
            fixed = utf8_or_latin1(message)
            if fixed != message:
                report(
                    "Warning",
                    "commit message did not conform to UTF-8.\n"
                    "You may want to amend it after fixing the message, or set the config\n"
                    "variable i18n.commitEncoding to the encoding your project uses.",
                )
                message = fixed
        head = [b"tree %s\n" % tree.hex().encode()]
        head += [b"parent %s\n" % p.hex().encode() for p in parents]
        head.append(b"author %s\n" % author)
        head.append(b"committer %s\n" % committer)
        if not utf8:
            assert encoding is not None
            head.append(b"encoding %s\n" % encoding.encode())
        return self.write("commit", b"".join(head) + b"\n" + message)

    def check_tree_input(self, entry: TreeInput, *, allow_missing: bool = False) -> None:
        """``git mktree``'s check of one entry: no slash in the name, and the object
        exists with the type its mode says (replace refs honoured), unless
        ``allow_missing`` or it is a gitlink.  Raises ``GitodbError``,
        ``ObjectNotFoundError`` or ``ObjectTypeError`` with Git's messages."""
        from gitodb.repo.replace import replace_map, replaced

        want = entry.object_type
        try:
            got = self.repo.odb.read_header(replaced(replace_map(self.repo), entry.oid))[0]
        except ObjectNotFoundError:
            if allow_missing or want == "commit":
                got = want
            else:
                raise ObjectNotFoundError(
                    f"entry '{_shown(entry.name)}' object {entry.oid.hex()} is unavailable"
                ) from None
        if got != want:
            raise ObjectTypeError(
                f"entry '{_shown(entry.name)}' object {entry.oid.hex()} is a {got} "
                f"but specified type was ({want})"
            )
        if b"/" in entry.name:
            raise GitodbError(f"path {_shown(entry.name)} contains slash")

    def write_tree_entries(
        self, entries: list[TreeInput], *, allow_missing: bool = False, check: bool = True
    ) -> bytes:
        """Store a tree of ``entries``, sorted into Git's order, as ``git mktree``
        does; return its id.  With ``check`` every entry is checked first
        (``check_tree_input``); names are not checked further (mktree writes what
        it is given, duplicates too)."""
        if check:
            for e in entries:
                self.check_tree_input(e, allow_missing=allow_missing)
        ordered = sorted(entries, key=lambda e: tree_sort_key(e.name, e.mode))
        data = b"".join(b"%o %s\0%s" % (e.mode, e.name, e.oid) for e in ordered)
        return self.write("tree", data)

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


class CommitMessageError(GitodbError):
    """A commit message Git refuses to store (a NUL byte in it)."""


def utf8_or_latin1(data: bytes) -> bytes:
    """Git's ``verify_utf8``: ``data`` with every byte that does not start a valid
    UTF-8 character (no overlong forms, surrogates, noncharacters or code points
    past U+10FFFF) re-encoded as the Latin-1 character it would be."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        c = data[i]
        if c < 0x80:
            out.append(c)
            i += 1
            continue
        size = 2 if 0xC0 <= c < 0xE0 else 3 if 0xE0 <= c < 0xF0 else 4 if 0xF0 <= c < 0xF8 else 0
        chunk = data[i : i + size] if size else b""
        try:
            ch = chunk.decode("utf-8") if size and len(chunk) == size else ""
        except UnicodeDecodeError:
            ch = ""
        cp = ord(ch) if len(ch) == 1 else -1
        if cp < 0 or (cp & 0xFFFE) == 0xFFFE or 0xFDD0 <= cp <= 0xFDEF:
            out += bytes([c]).decode("latin-1").encode()
            i += 1
            continue
        out += chunk
        i += size
    return bytes(out)


def _shown(name: bytes) -> str:
    return name.decode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class TreeInput:
    """One entry for ``ObjectWriter.write_tree_entries``: mode, name, id."""

    mode: int
    name: bytes
    oid: bytes

    @property
    def object_type(self) -> str:
        """The type the mode implies (Git's ``object_type``)."""
        kind = self.mode & 0o170000
        if kind == 0o040000:
            return "tree"
        if kind == 0o160000:
            return "commit"
        return "blob"


def parse_mktree_line(line: bytes, fmt: ObjectFormat, *, nul_terminated: bool = False) -> TreeInput:
    """One line of ``git ls-tree`` output (``<mode> SP <type> SP <id> TAB <name>``) as
    ``git mktree`` reads it; the name may be C-quoted unless ``nul_terminated``.
    Raises ``GitodbError`` with Git's messages."""
    shown = _shown(line)
    m = re.match(rb"[ \t\n\v\f\r]*[+-]?([0-7]+)", line)
    if m is None or line[m.end() : m.end() + 1] != b" ":
        raise GitodbError(f"input format error: {shown}")
    mode = int(m.group(1), 8) & 0xFFFFFFFF
    if line[m.start(1) - 1 : m.start(1)] == b"-":
        mode = (-mode) & 0xFFFFFFFF
    type_start = m.end() + 1
    sp = line.find(b" ", type_start)
    hexsz = fmt.hexsz
    hex_id = line[sp + 1 : sp + 1 + hexsz] if sp >= 0 else b""
    if (
        sp < 0
        or len(hex_id) != hexsz
        or hex_id.strip(b"0123456789abcdef")
        or line[sp + 1 + hexsz : sp + 2 + hexsz] != b"\t"
    ):
        raise GitodbError(f"input format error: {shown}")
    type_text = line[type_start:sp]
    path = line[sp + 2 + hexsz :]
    if not nul_terminated and path.startswith(b'"'):
        got = unquote_c_style(_shown(path))
        if got is None:
            raise GitodbError("invalid quoting")
        path = got[0].encode("utf-8", "surrogateescape")
    entry = TreeInput(mode, path, bytes.fromhex(hex_id.decode()))
    if type_text.decode("utf-8", "surrogateescape") not in TYPE_NUMBERS:
        raise GitodbError(f'invalid object type "{_shown(type_text)}"')
    if type_text.decode() != entry.object_type:
        raise GitodbError(
            f"entry '{_shown(path)}' object type ({_shown(type_text)}) doesn't match "
            f"mode type ({entry.object_type})"
        )
    return entry


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
