"""The object database of a repository: loose objects, packs, and alternates.

Lookups go the way Git's do: packs first (most recently hit pack first), then loose
objects, in the repository's own object directory and then in each alternate
(``objects/info/alternates``, relative or absolute, chained).  When an object is not
found anywhere, ``objects/pack`` directories are scanned again for packs that another
process added since (Git's "reprepare"), and the packs are tried once more.

Every call that takes an id takes an ``ObjectIdLike``: an ``ObjectId``, a binary id,
full hex, or an abbreviated hex ``str`` (resolved like Git: unique, at least four
digits; see ``object_id``).  The database holds ``mmap``s of its packs: ``close()``
(or a ``with`` block) releases them, and a later call opens what it needs again.
Pickling keeps only the paths, so a database sent to another process opens there.

Example::

    import gitodb
    with gitodb.open("path/to/repo") as repo:
        type_name, data = repo.odb.read("922b6ba8")
"""

from __future__ import annotations

import os

from gitodb.errors import (
    AmbiguousObjectNameError,
    DeltaError,
    GitodbError,
    MultiPackIndexError,
    ObjectFormatError,
    ObjectNotFoundError,
    ObjectTypeError,
    PackError,
    report,
)
from gitodb.objects.format import ObjectFormat, format_by_name
from gitodb.objects.header import TYPE_NAMES, TYPE_NUMBERS
from gitodb.objects.oid import MINIMUM_ABBREV, ObjectId, ObjectIdLike, is_hex
from gitodb.objects.stream import ObjectStream
from gitodb.pack.cache import DEFAULT_DELTA_BASE_CACHE_LIMIT, DeltaBaseCache
from gitodb.pack.idx import PackIndex
from gitodb.pack.reader import PackFile
from gitodb.types import NamedTuple, cached_property

try:
    from gitodb._native import pack_headers as _pack_headers
except ImportError:  # built without a C compiler: read_headers' Python loop
    _pack_headers = None  # type: ignore[assignment]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from array import array
    from collections.abc import Iterable, Iterator
    from typing import Any

    from gitodb.loose.read import LooseObjectStore
    from gitodb.objects.blob import Blob, GitObject
    from gitodb.objects.commit import Commit
    from gitodb.objects.tag import Tag
    from gitodb.objects.tree import Tree
    from gitodb.pack.midx import MidxSet
    from gitodb.repo import Repository

# Git reads alternates files of alternates down to this depth.
MAX_ALTERNATE_DEPTH = 5


def _load_midx(objects_dir: str, fmt: ObjectFormat) -> MidxSet | None:
    """``gitodb.pack.midx.load_midx``, whose module is imported only where a directory
    holds a multi-pack-index (its ``MIDX_NAME`` or ``MIDX_CHAIN_DIR``): most do not."""
    pack_dir = os.path.join(objects_dir, "pack")
    if not any(
        os.path.exists(os.path.join(pack_dir, name))
        for name in ("multi-pack-index", "multi-pack-index.d")
    ):
        return None
    from gitodb.pack.midx import load_midx

    return load_midx(objects_dir, fmt)


# mark_present: the marks of ids found in a named pack (1 + its number) or elsewhere.
_NAMED_PACKS = 254
_ELSEWHERE = 255


class ObjectInfo(NamedTuple):
    """Where and how an object is stored.

    ``disk_size`` is the loose file's size, or the bytes of the pack entry;
    ``delta_base`` is the id of the base of a deltified pack entry, else None;
    ``pack`` is the ``.pack`` path and ``offset`` the entry offset (None when loose);
    ``path`` is the file that holds the object.
    """

    oid: ObjectId
    type_name: str
    size: int
    disk_size: int
    delta_base: ObjectId | None
    path: str
    pack: str | None = None
    offset: int | None = None


class _BytesStream(ObjectStream):
    """A stream over an object already in memory (deltified pack entries)."""

    def __init__(self, type_name: str, data: bytes) -> None:
        self.type_name = type_name
        self.size = len(data)
        self._data = data
        self._pos = 0
        self._pending = b""
        self._remaining = 0

    def read(self, n: int = -1) -> bytes:
        # By position: the base class's slicing of what is pending would copy the
        # rest of a large object at every read.
        end = self.size if n < 0 else min(self.size, self._pos + n)
        out = self._data[self._pos : end]
        self._pos = end
        return out

    def _next_chunk(self) -> bytes:
        return b""  # never called: read() above serves everything from memory

    def close(self) -> None:
        self._data = b""


class ObjectDirectory:
    """One ``objects`` directory: its loose objects and the packs in ``pack/``."""

    def __init__(self, path: str, fmt: ObjectFormat) -> None:
        self.path = path
        self.fmt = fmt
        self.pack_dir = os.path.join(path, "pack")

    @cached_property
    def loose(self) -> LooseObjectStore:
        """The loose objects, read where a lookup misses the packs (so a command whose
        objects are all packed never imports the loose reader)."""
        from gitodb.loose.read import LooseObjectStore

        return LooseObjectStore(self.path, self.fmt)

    def pack_names(self) -> list[str]:
        """``.pack`` paths that have an ``.idx``, newest first (Git's preference order)."""
        try:
            names = os.listdir(self.pack_dir)
        except (FileNotFoundError, NotADirectoryError):
            return []
        found = []
        for n in names:
            # any name: Git reads every <name>.pack that has a <name>.idx
            if n.endswith(".idx") and len(n) > 4:
                pack = os.path.join(self.pack_dir, n[:-4] + ".pack")
                try:
                    found.append((-os.stat(pack).st_mtime_ns, pack))
                except FileNotFoundError:
                    continue
        found.sort()
        return [p for _m, p in found]


def _alternates_file(objects_dir: str) -> bytes | None:
    """The bytes of ``objects_dir/info/alternates``, or None (Git's warning if unreadable)."""
    path = os.path.join(objects_dir, "info", "alternates")
    try:
        with open(path, "rb") as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:  # a directory, unreadable: Git warns and goes on without it
        report("warning", f"unable to access '{path}': {e.strerror}")
        return None


def _parse_alternates(raw: bytes, objects_dir: str) -> list[str]:
    """Absolute paths named by an alternates file (relative ones from ``objects_dir``)."""
    out = []
    # Git hands the file's content on as one C string: a NUL ends it.
    # Entries are separated by \n only and taken as they are (no blanks stripped).
    for line in raw.partition(b"\0")[0].decode("utf-8", "surrogateescape").split("\n"):
        if not line or line.startswith("#"):
            continue
        if line.startswith('"') and line.endswith('"'):
            line = line[1:-1]
        out.append(os.path.normpath(os.path.join(objects_dir, line)))
    return out


class _UnusablePack:
    """The ids of a pack that cannot be read, standing in for a loose store.

    Enumeration lists them; every read finds nothing (so callers say "missing").
    """

    def __init__(self, path: str, oids: list[bytes]) -> None:
        self.path = path
        self._oids = oids

    def iter_oids(self) -> list[bytes]:
        return self._oids

    def read(self, oid: bytes) -> None:
        return None

    def read_header(self, oid: bytes) -> None:
        return None

    def disk_size(self, oid: bytes) -> None:
        return None

    def open_stream(self, oid: bytes) -> None:
        return None

    def path_of(self, oid: bytes) -> str:
        return self.path


class ObjectDatabase:
    """Read objects from loose files, packs and alternates; see the module docstring.

    The contract other modules rely on: ``read(oid) -> (type_name, data)``,
    ``read_header(oid) -> (type_name, size)``, ``contains(oid) -> bool``; a missing
    object raises ``ObjectNotFoundError``.
    """

    def __init__(
        self,
        objects_dir: str | os.PathLike[str],
        fmt: ObjectFormat,
        *,
        alternates: list[str] | None = None,
        delta_base_cache_limit: int = DEFAULT_DELTA_BASE_CACHE_LIMIT,
        multi_pack_index: bool = True,
    ) -> None:
        self.objects_dir = os.path.abspath(os.fspath(objects_dir))
        self.fmt = fmt
        self._alternates = list(alternates or [])  # kept for pickling
        self._rawsz = fmt.rawsz
        self.cache = DeltaBaseCache(delta_base_cache_limit)
        self.dirs = self._collect_dirs(alternates or [])
        self.packs: list[PackFile] = []
        self._pack_paths: set[str] = set()
        #: (pack key, offset) of entries that failed to read: other copies are used
        self._bad_entries: set[tuple[int, int]] = set()
        #: packs whose .pack cannot be opened (their ids are known from a sound .idx)
        self.unusable: list[_UnusablePack] = []
        self._unusable_paths: set[str] = set()
        self._resolving: set[bytes] = set()
        #: ``core.multiPackIndex``: use each directory's multi-pack-index for lookups
        self.use_midx = multi_pack_index
        #: per directory path: its MIDX (None: none, or unusable) and, by pack-int-id,
        #: the pack each names (None: gone, so its objects are not found through it)
        self.midx: dict[str, tuple[MidxSet, list[PackFile | None]] | None] = {}
        #: paths of packs a MIDX covers: lookups go through the MIDX, not their .idx
        self._midx_covered: set[str] = set()
        #: per directory path: pack-int-id -> ``.pack`` path of packs a MIDX names
        #: whose ``.pack`` is there but whose ``.idx`` is missing or unusable
        self._midx_unindexed: dict[str, dict[int, str]] = {}
        self._said_unindexed: set[str] = set()
        self._midx_unindexed_any = False
        self._kept_packs: list[PackFile] | None = None  # in_kept_pack's, found once
        self.rescan_packs()

    @classmethod
    def for_repository(cls, repo: Repository) -> ObjectDatabase:
        """The object database of ``repo`` (``GIT_OBJECT_DIRECTORY`` and
        ``GIT_ALTERNATE_OBJECT_DIRECTORIES`` honoured, ``core.deltaBaseCacheLimit`` used)."""
        objects_dir = os.environ.get("GIT_OBJECT_DIRECTORY") or os.path.join(
            repo.commondir, "objects"
        )
        extra = [
            p for p in os.environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES", "").split(os.pathsep) if p
        ]
        limit = repo.config.get_ulong("core.deltabasecachelimit", DEFAULT_DELTA_BASE_CACHE_LIMIT)
        return cls(
            objects_dir,
            repo.object_format,
            alternates=extra,
            delta_base_cache_limit=limit,
            multi_pack_index=repo.config.get_bool("core.multipackindex", True),
        )

    # -- layout ----------------------------------------------------------------
    def _collect_dirs(self, extra: list[str]) -> list[ObjectDirectory]:
        """The own directory, then alternates in Git's order, each once.

        As Git: ``extra`` (``GIT_ALTERNATE_OBJECT_DIRECTORIES``) first, then the
        alternates file; each alternate's own alternates right after it (depth
        first).  An alternates file read deeper than ``MAX_ALTERNATE_DEPTH`` is
        ignored with Git's error; a missing alternate is skipped with Git's error.
        """
        seen: set[str] = set()
        dirs: list[ObjectDirectory] = []

        def add(path: str, depth: int) -> None:
            if not seen:  # the own directory's real path, needed once there is another
                seen.add(os.path.realpath(self.objects_dir))
            real = os.path.realpath(path)
            if real in seen:
                return
            if not os.path.isdir(path):
                report("error", f"unable to normalize alternate object path: {path}")
                return
            seen.add(real)
            dirs.append(ObjectDirectory(path, self.fmt))
            read_alternates(path, depth + 1)

        def read_alternates(path: str, depth: int) -> None:
            raw = _alternates_file(path)
            if raw is None:
                return
            if depth > MAX_ALTERNATE_DEPTH:
                report("error", f"{path}: ignoring alternate object stores, nesting too deep")
                return
            for alt in _parse_alternates(raw, path):
                add(alt, depth)

        dirs.append(ObjectDirectory(self.objects_dir, self.fmt))
        for p in extra:
            add(os.path.abspath(p), 0)
        read_alternates(self.objects_dir, 0)
        return dirs

    def rescan_packs(self) -> bool:
        """Open packs that appeared since the last scan; return True if any did."""
        added = False
        for d in self.dirs:
            for pack_path in d.pack_names():
                if pack_path in self._pack_paths:
                    continue
                try:
                    # As Git: opening a pack checks the index's layout, not its checksum
                    # (hashing the whole .idx is O(n) per pack; fsck/verify-pack do it).
                    pack = PackFile(
                        pack_path,
                        self.fmt,
                        cache=self.cache,
                        verify_index_checksum=False,
                        external_reader=self._read_external_base,
                        external_type=self._external_base_type,
                    )
                except PackError as e:
                    self._pack_unusable(pack_path, e)
                    continue
                self.packs.append(pack)
                self._pack_paths.add(pack_path)
                added = True
        if self.use_midx:
            self._attach_midx(added)
        return added

    def _attach_midx(self, added: bool) -> None:
        """Load each directory's MIDX once and map its pack-int-ids to open packs.

        As Git: a damaged header or chunk table is reported and the packs are read
        through their own indexes; a damaged required chunk is fatal.  A pack the
        MIDX names that is gone stays ``None`` (its objects are not found through
        the MIDX, as Git's ``prepare_midx_pack`` fails).
        """
        fresh = [d for d in self.dirs if d.path not in self.midx]
        if not fresh and not added:
            return
        for d in fresh:
            try:
                found = _load_midx(d.path, self.fmt)
            except MultiPackIndexError as e:
                if not e.ignorable:
                    raise
                for line in e.details:
                    report("error", line)
                report("error", e.message)
                found = None
            self.midx[d.path] = (found, []) if found is not None else None
        by_path = {p.path: p for p in self.packs}
        for d in self.dirs:
            entry = self.midx.get(d.path)
            if entry is None:
                continue
            slots = entry[1]
            paths = [
                os.path.join(d.pack_dir, n[:-4] + ".pack") if n.endswith(".idx") else None
                for n in entry[0].pack_names
            ]
            slots[:] = [by_path.get(p) if p is not None else None for p in paths]
            self._midx_covered.update(p.path for p in slots if p is not None)
            # As Git: the MIDX names a pack it cannot open without its .idx (Git's
            # open_packed_git checks the pack against its index); lookups landing
            # there say so and go on to other copies.
            self._midx_unindexed[d.path] = {
                pid: p
                for pid, (p, slot) in enumerate(zip(paths, slots, strict=True))
                if slot is None and p is not None and os.path.exists(p)
            }
            self._midx_unindexed_any |= bool(self._midx_unindexed[d.path])

    def _pack_unusable(self, pack_path: str, e: PackError) -> None:
        """As Git: a pack that cannot be opened is not fatal, its objects are missing.

        Git says why (an ``error:`` line each time it tries); if the ``.idx`` itself is
        sound, the pack's ids are still enumerated (``cat-file --batch-all-objects``
        then reports them missing), else the pack is not looked at at all.
        """
        if pack_path in self._unusable_paths:
            return  # said once per process (Git repeats it at every attempt)
        report("error", str(e))
        self._unusable_paths.add(pack_path)
        try:
            idx = PackIndex(pack_path[:-5] + ".idx", self.fmt)
        except PackError:
            return
        self.unusable.append(_UnusablePack(pack_path, idx.oid_list()))
        idx.close()

    def close(self) -> None:
        """Release every pack and index mapping and the delta-base cache.

        The database stays usable: the next lookup opens the packs again.  Objects
        already returned stay valid (they are copies).
        """
        for p in self.packs:
            p.close()
        self.packs.clear()
        self._pack_paths.clear()
        for entry in self.midx.values():
            if entry is not None:
                entry[0].close()
        self.midx.clear()
        self._midx_covered.clear()
        self._midx_unindexed.clear()
        self._midx_unindexed_any = False
        self.cache.clear()

    def __enter__(self) -> ObjectDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __reduce__(self) -> tuple[object, tuple[str, str, list[str], int]]:
        # By path: packs are mmaps, which do not pickle; the copy opens its own.
        return _reopen, (self.objects_dir, self.fmt.name, self._alternates, self.cache.limit)

    # -- ids ---------------------------------------------------------------------
    def object_id(self, value: ObjectIdLike) -> ObjectId:
        """The ``ObjectId`` ``value`` names, as every id-taking call reads its argument.

        ``value`` is an ``ObjectId``, a binary id (``bytes`` of the format's length),
        full hex (``str``, or ASCII ``bytes`` of the hex length), or an abbreviated
        hex ``str`` of at least four digits, which must name exactly one object here
        (``ObjectNotFoundError`` if none does, ``AmbiguousObjectNameError`` with the
        ``candidates`` if several do).  Anything else is an ``ObjectFormatError``.
        """
        fmt = self.fmt
        if isinstance(value, (bytes, bytearray, memoryview)):
            if len(value) == fmt.rawsz:
                return value if type(value) is ObjectId else ObjectId(value)
            try:
                value = bytes(value).decode("ascii")
            except UnicodeDecodeError:
                raise ObjectFormatError(f"not a {fmt.name} object id: {value!r}") from None
            if len(value) != fmt.hexsz:  # abbreviations are str only: bytes are ids
                raise ObjectFormatError(f"not a {fmt.name} object id: {value!r}")
        if isinstance(value, str) and is_hex(value):
            if len(value) == fmt.hexsz:
                return ObjectId(value)
            if MINIMUM_ABBREV <= len(value) < fmt.hexsz:
                return self._resolve_abbrev(value.lower())
        raise ObjectFormatError(f"not a {fmt.name} object id: {value!r}")

    def _resolve_abbrev(self, prefix: str) -> ObjectId:
        matches = self.find_prefix(prefix)
        if len(matches) == 1:
            return ObjectId(matches[0])
        if not matches:
            raise ObjectNotFoundError(f"no object named {prefix}")
        err = AmbiguousObjectNameError(f"short object ID {prefix} is ambiguous")
        err.candidates = [ObjectId(m) for m in matches]
        raise err

    # -- lookup ----------------------------------------------------------------
    def _find_in_midx(self, oid: bytes) -> tuple[PackFile, int] | None:
        for dir_path, entry in self.midx.items():
            if entry is None:
                continue
            hit = entry[0].find(oid)
            if hit is not None:
                pack = entry[1][hit[0]]
                if pack is None:
                    self._index_unavailable(dir_path, hit[0])
                if pack is not None and not (
                    self._bad_entries and (pack.key_base, hit[1]) in self._bad_entries
                ):
                    return pack, hit[1]
        return None

    def _index_unavailable(self, dir_path: str, pack_int_id: int) -> None:
        """Git's error for a MIDX hit in a pack whose ``.idx`` cannot be read (once per pack)."""
        pack_path = self._midx_unindexed.get(dir_path, {}).get(pack_int_id)
        if pack_path is not None and pack_path not in self._said_unindexed:
            self._said_unindexed.add(pack_path)
            report("error", f"packfile {pack_path} index unavailable")

    def _find_packed(self, oid: bytes) -> tuple[PackFile, int] | None:
        covered = self._midx_covered
        if covered or self._midx_unindexed_any:
            hit = self._find_in_midx(oid)
            if hit is not None:
                return hit
            if self._bad_entries:
                covered = set()  # a damaged copy: look for another one in every pack
        packs = self.packs
        bad = self._bad_entries
        for i, pack in enumerate(packs):
            if covered and pack.path in covered:
                continue
            off = pack.find(oid)
            if off >= 0:
                if bad and (pack.key_base, off) in bad:
                    continue  # failed to read before: look for another copy
                if i:
                    # Most recently hit pack first: consecutive lookups tend to hit it.
                    packs.insert(0, packs.pop(i))
                return pack, off
        return None

    def _find_loose(self, oid: bytes) -> LooseObjectStore | None:
        for d in self.dirs:
            if d.loose.contains(oid):
                return d.loose
        return None

    def locate(self, oid: bytes) -> tuple[PackFile, int] | LooseObjectStore | None:
        """Where ``oid`` is stored: ``(pack, offset)``, a loose store, or None."""
        hit = self._find_packed(oid)
        if hit is not None:
            return hit
        loose = self._find_loose(oid)
        if loose is not None:
            return loose
        if self.rescan_packs():
            return self._find_packed(oid)
        return None

    def contains(self, oid: ObjectIdLike) -> bool:
        """True if the object ``oid`` exists (the file or index entry; not inflated).

        An abbreviation that names no object is False; one that names several
        raises ``AmbiguousObjectNameError``.
        """
        if type(oid) is not bytes or len(oid) != self._rawsz:  # not a plain binary id
            try:
                oid = self.object_id(oid)
            except ObjectNotFoundError:
                return False
        return self.locate(oid) is not None or oid == self.fmt.empty_tree

    def in_kept_pack(self, oid: bytes) -> bool:
        """True if a pack with a ``.keep`` file holds ``oid`` (Git's
        ``has_object_kept_pack`` with ``KEPT_PACK_ON_DISK``).

        Any kept pack counts, also one a multi-pack-index does not pick the
        object from (as Git: the kept-pack cache asks every pack's own index)."""
        kept = self._kept_packs
        if kept is None:
            # as Git's kept-pack cache: which packs are kept is looked at once
            kept = [p for p in self.packs if os.path.exists(p.path[:-5] + ".keep")]
            self._kept_packs = kept
        return any(p.find(oid) >= 0 for p in kept)

    def mark_present(
        self,
        oids: bytes,
        marks: bytearray,
        positions: array[int] | None = None,
        packs: list[PackFile] | None = None,
    ) -> int:
        """Mark every id of ``oids`` (binary ids, ``rawsz`` bytes each, any order) that
        the database holds, as :meth:`contains` would say; return how many were newly
        marked.

        The bulk form of ``contains`` for many ids at once (index-pack's collision
        check): each pack's index is bisected for every id in one native call, each
        object directory's loose fan-out directories are listed once, and Git's
        cached empty tree counts as present.  ``marks[i]`` becomes ``k + 1`` for an
        id found in ``packs[k]`` at index position ``positions[i]`` (when both lists
        are given, ``packs`` is filled here; at most 254 packs are named so), and
        255 for one found elsewhere.
        """
        rawsz = self._rawsz
        if len(oids) != len(marks) * rawsz:
            raise ValueError("mark_present: one mark per id")
        self.rescan_packs()
        marked = 0
        named = packs is not None and positions is not None
        for pack in list(self.packs):  # a MIDX's packs too: their .idx hold the same ids
            if named and packs is not None and len(packs) < _NAMED_PACKS:
                packs.append(pack)
                marked += pack.idx.mark_present(oids, marks, len(packs), positions)
            else:
                marked += pack.idx.mark_present(oids, marks, _ELSEWHERE)
        for d in self.dirs:
            marked += d.loose.mark_present(oids, marks, _ELSEWHERE)
        empty = self.fmt.empty_tree
        at = oids.find(empty)
        while at >= 0:
            if at % rawsz == 0 and not marks[at // rawsz]:
                marks[at // rawsz] = _ELSEWHERE
                marked += 1
            at = oids.find(empty, at + 1)
        return marked

    def _missing(self, oid: bytes) -> ObjectNotFoundError:
        return ObjectNotFoundError(f"object {oid.hex()} not found")

    def read(self, oid: ObjectIdLike) -> tuple[str, bytes]:
        """Return ``(type_name, data)`` of ``oid``; raise ``ObjectNotFoundError``."""
        if type(oid) is not bytes or len(oid) != self._rawsz:  # not a plain binary id
            oid = self.object_id(oid)
        where = self.locate(oid)
        if where is None:
            if oid == self.fmt.empty_tree:  # Git's one "cached object"
                return "tree", b""
            raise self._missing(oid)
        if isinstance(where, tuple):
            try:
                t, data = where[0].read_at(where[1])
            except PackError as e:
                return self._recover(oid, where[0], where[1], e)
            return TYPE_NAMES[t], data
        got = where.read(oid)
        if got is None:  # removed under our feet (e.g. by prune-packed); try packs again
            return self._read_after_race(oid)
        return got

    def _recover(
        self, oid: bytes, pack: PackFile, offset: int, error: PackError
    ) -> tuple[str, bytes]:
        """Git's recovery from a damaged pack entry (t5303).

        The entry is marked bad and another copy of ``oid`` is read (loose, another
        pack).  Failing that, if the entry is a delta whose own data is sound, its
        base is read by id from wherever a good copy is and the delta applied to it.
        Only when neither works does the original error stand.
        """
        key = (pack.key_base, offset)
        if key in self._bad_entries:
            raise error
        # Bad only while recovering: a later read tries the entry again (and fails the
        # same way), so no lookup ever calls a damaged object missing.
        self._bad_entries.add(key)
        got: tuple[str, bytes] | None = None
        try:
            got = self.read(oid)
        except (ObjectNotFoundError, PackError):
            try:
                base_oid = pack.delta_base_at(offset)
                if base_oid is not None and base_oid != oid:
                    base_type, base = self.read(base_oid)
                    t, data = pack.apply_own_delta(offset, TYPE_NUMBERS[base_type], base)
                    got = TYPE_NAMES[t], data
            except (PackError, ObjectNotFoundError):
                pass
        finally:
            self._bad_entries.discard(key)
        if got is None:
            raise error  # nothing better: the damage stands (one fatal line)
        report("error", str(error))  # recovered, but the pack is damaged: say so
        return got

    def _read_after_race(self, oid: bytes) -> tuple[str, bytes]:
        self.rescan_packs()
        hit = self._find_packed(oid)
        if hit is None:
            raise self._missing(oid)
        t, data = hit[0].read_at(hit[1])
        return TYPE_NAMES[t], data

    def read_header(self, oid: ObjectIdLike) -> tuple[str, int]:
        """Return ``(type_name, size)``; inflates only the header bytes where possible."""
        if type(oid) is not bytes or len(oid) != self._rawsz:  # not a plain binary id
            oid = self.object_id(oid)
        where = self.locate(oid)
        if where is None:
            if oid == self.fmt.empty_tree:
                return "tree", 0
            raise self._missing(oid)
        if isinstance(where, tuple):
            t, size = where[0].header_at(where[1])
            return TYPE_NAMES[t], size
        got = where.read_header(oid)
        if got is None:
            t_name, data = self._read_after_race(oid)
            return t_name, len(data)
        return got

    def read_header_table(
        self, oids: list[bytes] | bytes, want_size: bool = True
    ) -> tuple[bytearray, bytearray] | None:
        """The packed headers of ``oids`` as two tables, or None without the native core.

        ``oids``: a list of ids, or the ids back to back in one byte string (a
        ``RefTable``'s).  ``(types, sizes)``: one type number per id (1-4; 0 where
        ``read_header`` must decide: a loose, missing or unusual object) and one native
        uint64 size per id (0 for a delta's without ``want_size``: its data is then not
        read), looked up in one native call per pack, O(log n) each, with no per-pack
        set-up.  With a multi-pack-index or a damaged entry seen, every type is 0.
        """
        if _pack_headers is None:
            return None
        n = len(oids) if isinstance(oids, list) else len(oids) // self._rawsz
        types, sizes = bytearray(n), bytearray(8 * n)
        if self._midx_covered or self._midx_unindexed_any or self._bad_entries:
            return types, sizes
        left = n
        for pack in self.packs:
            if not left:
                break
            idx = pack.idx
            left -= _pack_headers(
                idx.mapping,
                idx.native_layout(),
                pack.buf,
                pack.data_end,
                oids,
                types,
                sizes,
                want_size,
            )
        # 255: the pack holds it, Python reads it (and reports what is wrong with it)
        return types.replace(b"\xff", b"\x00"), sizes

    def read_headers(self, oids: Iterable[bytes]) -> dict[bytes, tuple[str, int]]:
        """``read_header`` of many binary ids at once, for those a pack holds.

        Each pack's index is searched in one loop, without ``locate``'s layers per id:
        for-each-ref's default format asks the type of every ref.  An id left out of
        the result is for ``read_header`` (a loose object, a missing or damaged one:
        it raises or recovers as ever, in its turn); with a multi-pack-index or a
        damaged entry seen, every id is.
        """
        out: dict[bytes, tuple[str, int]] = {}
        if self._midx_covered or self._midx_unindexed_any or self._bad_entries:
            return out
        rawsz = self._rawsz
        todo = [o for o in oids if type(o) is bytes and len(o) == rawsz]
        table = self.read_header_table(todo)
        if table is not None:
            types, sizes = table
            for i, size in enumerate(memoryview(sizes).cast("Q")):
                t = types[i]
                if t:
                    out[todo[i]] = (TYPE_NAMES[t], size)
            return out
        for pack in self.packs:
            if not todo:
                break
            find, offset_at, header_at = pack.idx.find, pack.idx.offset_at, pack.header_at
            rest = []
            for oid in todo:
                i = find(oid)
                if i < 0:
                    rest.append(oid)
                    continue
                try:
                    t, size = header_at(offset_at(i))
                except GitodbError:
                    continue
                out[oid] = (TYPE_NAMES[t], size)
            todo = rest
        return out

    def info(self, oid: ObjectIdLike) -> ObjectInfo:
        """Type, size, size on disk, delta base and location of ``oid``."""
        oid = self.object_id(oid)
        if oid == self.fmt.empty_tree:
            # Git's one "cached object" is answered before any store is asked: no
            # bytes on disk and no delta base, even where a pack or a loose file has it
            return ObjectInfo(oid, "tree", 0, 0, None, "")
        where = self.locate(oid)
        if where is None:
            raise self._missing(oid)
        if isinstance(where, tuple):
            pack, off = where
            t, size = pack.header_at(off)
            base = pack.delta_base_at(off)
            return ObjectInfo(
                oid,
                TYPE_NAMES[t],
                size,
                pack.disk_size_at(off),
                None if base is None else ObjectId(base),
                pack.path,
                pack.path,
                off,
            )
        header = where.read_header(oid)
        disk = where.disk_size(oid)
        if header is None or disk is None:
            raise self._missing(oid)
        return ObjectInfo(oid, header[0], header[1], disk, None, where.path_of(oid))

    def open_stream(self, oid: ObjectIdLike) -> ObjectStream:
        """A file-like reader (``type_name``, ``size``, ``read(n)``, ``close()``) of ``oid``.

        Loose objects and undeltified pack entries are inflated as they are read, so
        a large blob never needs to fit in memory; deltified entries are resolved
        first (their result has to be built in memory anyway).
        """
        if type(oid) is not bytes or len(oid) != self._rawsz:  # not a plain binary id
            oid = self.object_id(oid)
        where = self.locate(oid)
        if where is None:
            if oid == self.fmt.empty_tree:
                return _BytesStream("tree", b"")
            raise self._missing(oid)
        if isinstance(where, tuple):
            stream = where[0].open_stream(where[1])
            if stream is not None:
                return stream
            t, data = where[0].read_at(where[1])
            return _BytesStream(TYPE_NAMES[t], data)
        loose_stream = where.open_stream(oid)
        if loose_stream is None:
            return _BytesStream(*self._read_after_race(oid))
        return loose_stream

    # -- the object model -------------------------------------------------------
    def get(self, oid: ObjectIdLike) -> GitObject:
        """The typed object (``Commit``, ``Tree``, ``Tag`` or ``Blob``) ``oid`` names.

        ``oid`` is any ``ObjectIdLike`` (see ``object_id``); a missing object raises
        ``ObjectNotFoundError``.
        """
        from gitodb.objects.blob import parse_object  # the object model, on first use

        raw = self.object_id(oid)
        type_name, data = self.read(raw)
        return parse_object(type_name, data, self.fmt, raw)

    def _typed(self, oid: ObjectIdLike, want: str) -> GitObject:
        obj = self.get(oid)
        if obj.type_name != want:
            raise ObjectTypeError(f"object {obj.id.hex()} is a {obj.type_name}, not a {want}")
        return obj

    def commit(self, oid: ObjectIdLike) -> Commit:
        """The commit ``oid``; ``ObjectTypeError`` if it is another type."""
        return self._typed(oid, "commit")  # type: ignore[return-value]

    def tree(self, oid: ObjectIdLike) -> Tree:
        """The tree ``oid``; ``ObjectTypeError`` if it is another type."""
        return self._typed(oid, "tree")  # type: ignore[return-value]

    def tag(self, oid: ObjectIdLike) -> Tag:
        """The tag ``oid``; ``ObjectTypeError`` if it is another type."""
        return self._typed(oid, "tag")  # type: ignore[return-value]

    def blob(self, oid: ObjectIdLike) -> Blob:
        """The blob ``oid``; ``ObjectTypeError`` if it is another type."""
        return self._typed(oid, "blob")  # type: ignore[return-value]

    # -- delta bases outside their pack (REF_DELTA) -------------------------------
    def _read_external_base(self, oid: bytes) -> tuple[int, bytes]:
        if oid in self._resolving:
            raise DeltaError(f"REF_DELTA chain through {oid.hex()} forms a cycle")
        self._resolving.add(oid)
        try:
            # A missing base raises ObjectNotFoundError: the pack names its entry.
            t_name, data = self.read(oid)
            return TYPE_NUMBERS[t_name], data
        finally:
            self._resolving.discard(oid)

    def _external_base_type(self, oid: bytes) -> int:
        if oid in self._resolving:
            raise DeltaError(f"REF_DELTA chain through {oid.hex()} forms a cycle")
        self._resolving.add(oid)
        try:
            where = self.locate(oid)
            if where is None:
                raise self._missing(oid)
            if isinstance(where, tuple):
                return where[0].type_at(where[1])
            header = where.read_header(oid)
            if header is None:
                raise self._missing(oid)
            return TYPE_NUMBERS[header[0]]
        finally:
            self._resolving.discard(oid)

    # -- enumeration -----------------------------------------------------------
    def iter_located(
        self, order: str = "sorted"
    ) -> Iterator[tuple[bytes, PackFile | None, int | LooseObjectStore]]:
        """Every object once as ``(oid, pack, offset)`` or ``(oid, None, loose_store)``.

        ``order="sorted"``: by id (an object in several places is reported from the
        first pack, else loose).  ``order="pack"``: loose objects of each directory,
        then each pack's entries in pack-offset order (bases before their deltas,
        which keeps the delta-base cache hot), skipping ids already reported.
        """
        self.rescan_packs()
        if order == "sorted":
            yield from self._iter_sorted()
        elif order == "pack":
            yield from self._iter_pack_order()
        else:
            raise ValueError(f"unknown order {order!r}")

    def _iter_sorted(self) -> Iterator[tuple[bytes, PackFile | None, int | LooseObjectStore]]:
        items: list[tuple[bytes, int, PackFile | None, int | LooseObjectStore]] = []
        covered = self._midx_covered
        for entry in self.midx.values():  # MIDX objects first, as Git enumerates them
            if entry is not None:
                items.extend(self._midx_items(*entry))
        for rank, pack in enumerate(self.packs):
            if pack.path in covered:
                continue
            oids = pack.idx.oid_list()
            holder: list[PackFile | None] = [pack]
            items.extend(
                zip(oids, [rank] * len(oids), holder * len(oids), pack.offsets, strict=True)
            )
        nranks = len(self.packs)
        for d in self.dirs:
            items.extend((oid, nranks, None, d.loose) for oid in d.loose.iter_oids())
        for u in self.unusable:  # listed, then reported missing (as Git)
            items.extend((oid, nranks + 1, None, u) for oid in u.iter_oids())  # type: ignore[misc]
        # The rank orders duplicates: the first pack wins, then loose (as Git's lookup).
        items.sort(key=_sort_key)
        last = None
        for oid, _rank, chosen, where in items:
            if oid != last:
                last = oid
                yield oid, chosen, where

    @staticmethod
    def _midx_items(
        midx: MidxSet, slots: list[PackFile | None]
    ) -> Iterator[tuple[bytes, int, PackFile | None, int | LooseObjectStore]]:
        for layer in midx.layers:
            pids, offs = layer.columns()
            packs = [slots[p] for p in pids]
            rows = zip(layer.oid_list(), [-1] * len(packs), packs, offs, strict=True)
            if None in slots:  # a pack that is gone: its objects are not listed from here
                rows = (r for r in rows if r[2] is not None)  # type: ignore[assignment]
            yield from rows

    def _iter_pack_order(self) -> Iterator[tuple[bytes, PackFile | None, int | LooseObjectStore]]:
        seen: set[bytes] = set()
        for d in self.dirs:
            for oid in d.loose.iter_oids():
                if oid not in seen:
                    seen.add(oid)
                    yield oid, None, d.loose
        single = len(self.packs) == 1 and not seen and not self.unusable
        for pack in self.packs:
            for oid, off in pack.iter_pack_order():
                if single:
                    yield oid, pack, off
                elif oid not in seen:
                    seen.add(oid)
                    yield oid, pack, off
        for u in self.unusable:
            for oid in u.iter_oids():
                if oid not in seen:
                    seen.add(oid)
                    yield oid, None, u  # type: ignore[misc]

    def iter_objects(
        self, order: str = "pack", *, types: Iterable[str] | None = None
    ) -> Iterator[tuple[bytes, str, bytes]]:
        """Every object once as ``(oid, type_name, data)``.

        ``order="pack"`` (the default) walks each pack in offset order, so a delta's
        base was usually just built and sits in the delta-base cache: the fastest
        way to read everything.  ``order="sorted"`` yields by id (random access).

        ``types`` (say ``{"commit", "tree"}``) keeps only objects of those types, and
        the others are not inflated: a pack entry's type comes from the entry
        headers (a delta's from its chain's), a loose object's from its header.
        """
        names = TYPE_NAMES
        if types is not None:
            yield from self._iter_objects_of_types(order, _type_numbers(types))
            return
        if order == "pack":
            yield from self._iter_objects_pack_order()
            return
        for oid, pack, where in self.iter_located(order):
            if pack is not None:
                t, data = pack.read_at(where)  # type: ignore[arg-type]
                yield oid, names[t], data
            else:
                got = where.read(oid)  # type: ignore[union-attr]
                if got is None:
                    got = self._read_after_race(oid)
                yield oid, got[0], got[1]

    def _iter_objects_pack_order(self) -> Iterator[tuple[bytes, str, bytes]]:
        names = TYPE_NAMES
        self.rescan_packs()
        seen: set[bytes] = set()
        for d in self.dirs:
            for oid in d.loose.iter_oids():
                if oid not in seen:
                    got = d.loose.read(oid) or self._read_after_race(oid)
                    seen.add(oid)
                    yield oid, got[0], got[1]
        check = bool(seen) or len(self.packs) > 1
        for pack in self.packs:
            if not check:
                for oid, _off, t, data in pack.iter_objects():
                    yield oid, names[t], data
                continue
            for oid, _off, t, data in pack.iter_objects():
                if oid not in seen:
                    seen.add(oid)
                    yield oid, names[t], data

    def _iter_objects_of_types(
        self, order: str, wanted: frozenset[int]
    ) -> Iterator[tuple[bytes, str, bytes]]:
        names = TYPE_NAMES
        wanted_names = frozenset(names[t] for t in wanted)
        for oid, pack, where in self.iter_located(order):
            if pack is not None:
                off: int = where  # type: ignore[assignment]
                if pack.type_at(off) in wanted:  # headers only: nothing inflated
                    t, data = pack.read_at(off)
                    yield oid, names[t], data
                continue
            store: LooseObjectStore = where  # type: ignore[assignment]
            header = store.read_header(oid)  # inflates the header's bytes only
            if header is None or header[0] not in wanted_names:
                continue
            got = store.read(oid) or self._read_after_race(oid)
            yield oid, got[0], got[1]

    def iter_oids(self, order: str = "sorted") -> Iterator[bytes]:
        """Every object id once; ``order`` is ``"sorted"`` or ``"pack"`` (see ``iter_located``)."""
        for oid, _pack, _where in self.iter_located(order):
            yield oid

    def abbrev_tables(self) -> list[tuple[Any, int, int, int, int]]:
        """Every object id as sorted tables for ``_native.abbrev_lengths``: each
        multi-pack-index layer and each pack index it does not cover, in their
        mappings, and the loose ids of every object directory (one sorted table,
        without a fan-out).  The same objects as ``find_prefix`` searches; packs that
        appeared since the last look are opened first."""
        self.rescan_packs()
        tables: list[tuple[Any, int, int, int, int]] = []
        for entry in self.midx.values():
            if entry is not None:
                tables.extend(layer.abbrev_table() for layer in entry[0].layers)
        covered = self._midx_covered
        tables.extend(p.idx.abbrev_table() for p in self.packs if p.path not in covered)
        loose = sorted({oid for d in self.dirs for oid in d.loose.iter_oids()})
        if loose:
            tables.append((b"".join(loose), -1, 0, self._rawsz, len(loose)))
        return tables

    def find_prefix(self, hex_prefix: str, *, cached: bool = False) -> list[bytes]:
        """Every distinct id starting with ``hex_prefix`` (lower-case hex, >= 1 digit).

        ``cached=True`` is for many lookups in a row, as Git's abbreviation makes
        them: only the packs already open, and each loose fan-out directory listed
        once (Git's loose-object cache)."""
        found: set[bytes] = set()
        nibbles = len(hex_prefix)
        padded = hex_prefix + ("0" if nibbles % 2 else "")
        prefix = bytes.fromhex(padded)
        if not cached:
            self.rescan_packs()
        covered = self._midx_covered
        for entry in self.midx.values():
            if entry is not None:
                found.update(entry[0].find_prefix(prefix, nibbles))
        for pack in self.packs:
            if pack.path in covered:
                continue
            for pos in pack.idx.find_prefix(prefix, nibbles):
                found.add(pack.idx.oid_at(pos))
        if nibbles >= 2:
            for d in self.dirs:
                found.update(d.loose.find_prefix(hex_prefix, cached=cached))
        else:
            for d in self.dirs:
                found.update(o for o in d.loose.iter_oids() if o.hex().startswith(hex_prefix))
        return sorted(found)


def _type_numbers(types: Iterable[str]) -> frozenset[int]:
    """The type numbers of ``types`` (names); an unknown name is a ``ValueError``."""
    if isinstance(types, str):
        types = (types,)
    wanted = []
    for name in types:
        if name not in ("commit", "tree", "blob", "tag"):
            raise ValueError(f"unknown object type {name!r}")
        wanted.append(TYPE_NUMBERS[name])
    return frozenset(wanted)


def _sort_key(item: tuple[bytes, int, object, object]) -> tuple[bytes, int]:
    return item[0], item[1]


def _reopen(
    objects_dir: str, fmt_name: str, alternates: list[str], delta_base_cache_limit: int
) -> ObjectDatabase:
    """Unpickle an ``ObjectDatabase``: open the same directories again."""
    return ObjectDatabase(
        objects_dir,
        format_by_name(fmt_name),
        alternates=alternates,
        delta_base_cache_limit=delta_base_cache_limit,
    )
