"""Objects named in the compatibility format (``extensions.compatObjectFormat``).

Such a repository stores objects in its main format; each object also has an id
in the compatibility format (the hash of its content converted to that format,
see ``gitodb.objects.convert``), kept in the loose object map
(``gitodb.loose.objmap``) of each objects directory.  ``CompatObjects`` answers
both ways and computes the compatibility id of an object about to be written::

    compat = repo.compat                     # None without the extension
    if compat is not None:
        sha256_id = compat.to_compat(sha1_id)
        type_name, data = compat.read(sha256_id)   # content as in SHA-256

Git 2.55 maps only what it wrote as loose objects: packs carry no mapping, and
gitodb refuses (as Git's ``pack-objects`` does) to write packs in such a
repository, so nothing it writes is left unmapped.
"""

from __future__ import annotations

from gitodb.errors import ObjectNotFoundError
from gitodb.loose.objmap import LooseObjectMap
from gitodb.objects.convert import ObjectConvertError, convert_object
from gitodb.objects.format import ObjectFormat, format_by_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.repo import Repository

__all__ = ["CompatObjects", "ObjectConvertError", "compat_format", "open_compat"]


def compat_format(repo: Repository) -> ObjectFormat | None:
    """The compatibility format the repository's config names, or None."""
    name = repo.config.get("extensions.compatobjectformat")
    if not name:
        return None
    fmt = format_by_name(name)
    return None if fmt is repo.object_format else fmt


def open_compat(repo: Repository) -> CompatObjects | None:
    """``CompatObjects`` for ``repo``, or None when it has no compatibility format."""
    fmt = compat_format(repo)
    return CompatObjects(repo, fmt) if fmt is not None else None


class CompatObjects:
    """The id mapping of a repository with a compatibility format (see module docstring)."""

    def __init__(self, repo: Repository, compat: ObjectFormat) -> None:
        self.repo = repo
        self.main = repo.object_format
        self.compat = compat
        # the own objects directory first, then alternates: Git reads each source's map
        self.maps = [LooseObjectMap(d.path, self.main, compat) for d in repo.odb.dirs]
        self.primary = self.maps[0]

    def to_compat(self, main_oid: bytes) -> bytes | None:
        """The compatibility id of ``main_oid``, or None if no map knows it."""
        for m in self.maps:
            got = m.to_compat(main_oid)
            if got is not None:
                return got
        return None

    def to_main(self, compat_oid: bytes) -> bytes | None:
        """The main-format id of ``compat_oid``, or None if no map knows it."""
        for m in self.maps:
            got = m.to_main(compat_oid)
            if got is not None:
                return got
        return None

    def find_prefix(self, hex_prefix: str) -> list[bytes]:
        """Compatibility ids starting with ``hex_prefix`` (lower-case hex)."""
        found = {
            oid for m in self.maps for oid in m.compat_ids() if oid.hex().startswith(hex_prefix)
        }
        return sorted(found)

    def convert_to_compat(self, type_name: str, data: bytes) -> bytes:
        """Main-format content as it is in the compatibility format (``ObjectConvertError``)."""
        return convert_object(type_name, data, self.main, self.compat, self.to_compat)

    def compat_id(self, type_name: str, data: bytes) -> bytes:
        """The compatibility id of an object of main-format content ``data``."""
        content = self.convert_to_compat(type_name, data)
        h = self.compat.new_hasher(b"%s %d\0" % (type_name.encode(), len(content)))
        h.update(content)
        return h.digest()

    def record(self, main_oid: bytes, compat_oid: bytes) -> None:
        """Remember a pair in the primary objects directory's map."""
        self.primary.add(main_oid, compat_oid)

    def read(self, compat_oid: bytes) -> tuple[str, bytes]:
        """``(type_name, content)`` of an object named by its compatibility id.

        Raises ``ObjectNotFoundError`` when no map knows the id (or the object is
        gone), ``ObjectConvertError`` when it cannot be expressed in that format.
        """
        main_oid = self.to_main(compat_oid)
        if main_oid is None:
            raise ObjectNotFoundError(f"object {compat_oid.hex()} not found")
        type_name, data = self.repo.odb.read(main_oid)
        return type_name, self.convert_to_compat(type_name, data)
