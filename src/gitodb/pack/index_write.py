"""index-pack's files: index a pack on disk or from a stream and write its outputs.

``index_pack_file`` and ``index_pack_stream`` write ``.pack``/``.idx``/``.rev``/
``.keep`` through temporary files in the destination directory and renames,
leaving nothing behind on failure; each file is synced before its rename per
``core.fsync`` (``pack`` for a pack read from a stream, ``pack-metadata`` for
``.idx``/``.rev``).  ``CollisionCheck`` compares objects with those the
repository already has (per object on the reference path; after the native path,
in bulk: ``check_indexed``); ``--strict`` runs ``objects.check.PackObjectChecker``.
"""

from __future__ import annotations

import mmap
import os
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from gitodb import trace2
from gitodb.durable import DEFAULT_POLICY, Component, FsyncPolicy
from gitodb.errors import GitodbError, ObjectIdCollisionError, ObjectWriteError, PackError
from gitodb.fileio import PAGE_DROP_STEP
from gitodb.loose.write import Existing, Staging
from gitodb.objects import OBJ_OFS_DELTA, TYPE_NAMES, ObjectFormat
from gitodb.objects.check import PackObjectChecker
from gitodb.pack.cache import DEFAULT_DELTA_BASE_CACHE_LIMIT, DeltaBaseCache
from gitodb.pack.idx import OFFSET32_LIMIT
from gitodb.pack.index_scan import Progress
from gitodb.pack.indexer import PackIndexer, PackIndexResult, both_checks
from gitodb.pack.reader import PackFile

# -- objects the repository already has ---------------------------------------


class ObjectLookup(Protocol):
    """What the collision check needs from the repository (an ``ObjectDatabase`` fits)."""

    def contains(self, oid: bytes) -> bool: ...
    def read(self, oid: bytes) -> tuple[str, bytes]: ...


class CollisionCheck:
    """Git's check against objects the repository already has (index-pack in a repo).

    An object of the pack whose id the repository already stores must have the
    same type and content there; otherwise two different objects share one id
    and Git dies with ``SHA1 COLLISION FOUND WITH <id> !``.  Called like
    ``object_check`` for every object; it keeps no state, so forked delta
    resolvers may run it (``fork_safe``).
    """

    fork_safe = True

    def __init__(self, existing: ObjectLookup, path: str | None) -> None:
        self.existing = existing
        self.path = path

    @property
    def deferrable(self) -> bool:
        """True if the repository can say in bulk which ids it has (``mark_present``):
        then the check can run after the native core indexed the pack
        (:func:`check_indexed`) instead of on every object as it is built."""
        return callable(getattr(self.existing, "mark_present", None))

    def __call__(self, type_num: int, data: bytes, oid: bytes, offset: int) -> None:
        if self.existing.contains(oid):
            self.compare(type_num, data, oid, offset)

    def compare(self, type_num: int, data: bytes, oid: bytes, offset: int) -> None:
        """Compare the object with the repository's copy of ``oid``, which exists."""
        try:
            has_type, has_data = self.existing.read(oid)
        except GitodbError:
            raise PackError(
                f"cannot read existing object {oid.hex()}", path=self.path, offset=offset
            ) from None
        if has_type != TYPE_NAMES[type_num] or has_data != data:
            raise ObjectIdCollisionError(oid.hex(), path=self.path, offset=offset)


# Below this share of the pack's entries left to compare, the new pack's copies are
# read one by one (read_at); above it the pack is walked in order.
_WALK_SHARE = 8


def check_indexed(
    check: CollisionCheck,
    result: PackIndexResult,
    pack_file: str,
    index_file: str,
    cache_limit: int,
) -> None:
    """Git's collision check after the native path indexed the pack (``result.native``).

    Which received ids the repository already has is asked in bulk
    (``existing.mark_present``: one native bisect per id and pack index, one
    listing per loose fan-out directory).  Each of those objects must be the same
    in both: first by its stored bytes (:func:`_same_entries`, what a fetch of
    objects the repository already has in the same packed form costs), then, for
    the rest, by reading it from the new pack (``pack_file`` with its index just
    written, ``index_file``; within ``cache_limit`` of delta bases) and from the
    repository (:meth:`CollisionCheck.compare`).  As Git reports a non-delta object
    before any delta (it checks those during its scan), the first differing
    non-delta in pack order is raised, else the first differing delta.
    """
    oids, ends = result.oids, result.ends
    n = len(oids)
    marks = bytearray(n)
    positions = array("q", bytes(8 * n))
    packs: list[PackFile] = []
    present = check.existing.mark_present(  # type: ignore[attr-defined]
        b"".join(oids), marks, positions, packs
    )
    trace2.data("index-pack", "collision-candidates", present)
    if not present:
        return
    types, offsets = result.types, result.offsets
    pack = PackFile(
        pack_file,
        result.fmt,
        idx_path=index_file,
        cache=DeltaBaseCache(cache_limit),
        verify_index_checksum=False,
    )
    pages = _PageKeeper([pack, *packs])
    try:
        same = _same_entries(result, pack.buf, marks, positions, packs, pages)
        left = [i for i in range(n) if marks[i] and not same[i]]
        trace2.data("index-pack", "collision-reads", len(left))
        if not left:
            return
        if len(left) * _WALK_SHARE < n:
            left.sort(key=lambda i: (types[i] >= OBJ_OFS_DELTA, offsets[i]))
            for i in left:
                type_num, data = pack.read_at(offsets[i])
                check.compare(type_num, data, oids[i], offsets[i])
                pages.read(2 * (ends[i] - offsets[i]))
            return
        wanted = {oids[i] for i in left}
        delta_offsets = {offsets[i] for i in left if types[i] >= OBJ_OFS_DELTA}
        first_delta: PackError | None = None
        for oid, offset, type_num, data in pack.iter_objects():
            if oid not in wanted:
                continue
            pages.read(2 * len(data))
            try:
                check.compare(type_num, data, oid, offset)
            except PackError as e:
                if offset not in delta_offsets:
                    raise
                if first_delta is None or (first_delta.offset or 0) > offset:
                    first_delta = e
        if first_delta is not None:
            raise first_delta
    finally:
        pack.close()


class _PageKeeper:
    """Gives the mapped pages of the packs a check reads back every ``PAGE_DROP_STEP``
    bytes read, as the indexing passes do (:class:`MappedPages`): the check reads
    both the received pack and the repository's copies once, at random, and left
    mapped, all their pages would count in the process's memory until the end."""

    __slots__ = ("packs", "since")

    def __init__(self, packs: list[PackFile]) -> None:
        self.packs = packs
        self.since = 0

    def read(self, n: int) -> None:
        """``n`` more bytes of the packs were read."""
        self.since += n
        if self.since >= PAGE_DROP_STEP:
            self.since = 0
            for p in self.packs:
                p.release_pages()


def _same_entries(
    result: PackIndexResult,
    buf: memoryview,
    marks: bytearray,
    positions: array[int],
    packs: list[PackFile],
    pages: _PageKeeper,
) -> bytearray:
    """Which received objects are stored in one of ``packs`` as the very same entry.

    ``marks[i]`` (``k + 1``) and ``positions[i]`` say where ``packs[k]``'s index
    has entry i's id.  Identical entry bytes (header and zlib stream, which ends
    where the received entry ends) hold an identical object when the entry is not a
    delta; a delta's result is identical when its base is too: a REF_DELTA names
    the same base id in those bytes, an OFS_DELTA's base at the same distance must
    be the entry of the same id in that pack, and the base itself must have passed
    (so entries are taken in order of chain depth).  Objects that are not found so
    are compared by content.
    """
    n = len(result.oids)
    same = bytearray(n)
    if not packs:
        return same
    oids, offsets, ends = result.oids, result.offsets, result.ends
    types, bases, depths = result.types, result.bases, result.depths
    npacks = len(packs)
    todo = [i for i in range(n) if 0 < marks[i] <= npacks]
    todo.sort(key=depths.__getitem__)
    pack_offsets = [p.offsets for p in packs]
    for i in todo:
        k = marks[i] - 1
        there = packs[k]
        roff = pack_offsets[k][positions[i]]
        noff = offsets[i]
        size = ends[i] - noff
        pages.read(2 * size)
        if there.buf[roff : roff + size] != buf[noff : noff + size]:
            continue
        t = types[i]
        if t >= OBJ_OFS_DELTA:
            b = bases[i]
            if b < 0 or not same[b]:
                continue
            if t == OBJ_OFS_DELTA and there.find(oids[b]) != roff - (noff - offsets[b]):
                continue
        same[i] = 1
    return same


@dataclass
class IndexPackOptions:
    """Options of ``git index-pack`` that shape what is checked and written."""

    index_version: int = 2
    offset32_limit: int = OFFSET32_LIMIT
    rev_index: bool = False
    keep_msg: str | None = None  # None: no .keep; "" an empty one
    promisor_msg: str | None = None  # None: no .promisor; "" an empty one
    threads: int = 0  # 0: Git's default
    fix_thin: bool = False
    strict: bool = False
    strict_links: bool = True  # with strict: linked objects must exist (not --fsck-objects)
    #: the checker to run with strict (its fsck severities, whether it runs fsck);
    #: None: a default one.  The caller reads its outcome (``foreign``) afterwards.
    checker: PackObjectChecker | None = None
    progress: Progress | None = None
    progress_title: str | None = None
    compression_level: int = 1  # for bases appended by fix_thin
    #: core.deltaBaseCacheLimit: bounds the inflated entries kept between the passes
    delta_base_cache_limit: int = DEFAULT_DELTA_BASE_CACHE_LIMIT


@dataclass
class IndexPackOutcome:
    """What :func:`index_pack_file`/:func:`index_pack_stream` did."""

    result: PackIndexResult
    pack_path: str
    index_path: str
    rev_path: str | None
    keep_created: bool

    @property
    def pack_hash(self) -> str:
        """The pack's checksum in hex (its name), as Git prints it."""
        return self.result.pack_checksum.hex()


def derive_name(path: str, old_ext: str, new_ext: str, what: str = "packfile") -> str:
    """``x.<old_ext>`` -> ``x.<new_ext>``; a name without ``old_ext`` is an error like Git's."""
    if not path.endswith("." + old_ext):
        raise PackError(f"{what} name '{path}' does not end with '.{old_ext}'")
    return path[: -len(old_ext)] + new_ext


def index_buffer(
    buf: bytes | mmap.mmap,
    fmt: ObjectFormat,
    opts: IndexPackOptions,
    path: str,
    title: str,
    lookup: Callable[[bytes], tuple[str, bytes] | None] | None,
    contains: Callable[[bytes], bool] | None,
    existing: ObjectLookup | None = None,
) -> PackIndexResult:
    """Index the pack in ``buf`` with ``opts`` (and --strict's checks); return the result.

    With ``existing`` (the repository's objects) every object the repository
    already has is compared with it (:class:`CollisionCheck`): by the reference as
    each object is built, or, when the native core indexed the pack
    (``result.native``) and the repository answers in bulk, by the caller
    afterwards (:func:`check_indexed`, run from the writers below).
    """
    checker = None
    if opts.strict:
        checker = opts.checker or PackObjectChecker(fmt, path)
        if checker.path is None:
            checker.path = path
    collision = CollisionCheck(existing, path) if existing is not None else None
    deferred = collision is not None and collision.deferrable
    indexer = PackIndexer(
        buf,
        fmt,
        path=path,
        threads=opts.threads,
        progress=opts.progress,
        progress_title=opts.progress_title or title,
        fix_thin=opts.fix_thin,
        base_lookup=lookup,
        compression_level=opts.compression_level,
        object_check=both_checks(checker, None if deferred else collision),
        cache_budget=opts.delta_base_cache_limit,
    )
    if deferred:
        indexer.deferred_check = collision
    result = indexer.run()
    if checker is not None and opts.strict_links:
        checker.finish(result.oids, contains)
    return result


def map_file(path: str) -> tuple[mmap.mmap | bytes, int]:
    """Map the pack at ``path`` read-only; return the mapping (``b""`` if empty) and size."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                return b"", 0
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), size
    except OSError as e:
        raise PackError(f"cannot open packfile '{path}': {e.strerror}", path=path) from None


def close_map(m: mmap.mmap | bytes) -> None:
    """Close a mapping from :func:`map_file` unless views of it are still alive."""
    if isinstance(m, mmap.mmap):
        try:
            m.close()
        except BufferError:  # a view is still alive somewhere; the GC will close it
            pass


def _sync_file(fsync: FsyncPolicy, component: Component, path: str) -> None:
    """Sync the finished file at ``path`` per ``component`` (before it is renamed)."""
    if not fsync.wants(component):
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        raise ObjectWriteError(f"unable to open '{path}': {e.strerror}", path=path) from e
    try:
        fsync.sync(component, fd, path)
    finally:
        os.close(fd)


def _create_keep(keep_path: str, msg: str) -> bool:
    """Create ``keep_path`` unless it exists (Git's O_EXCL); True if this call created it."""
    try:
        fd = os.open(keep_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as f:
        if msg:
            f.write(msg + "\n")
    return True


def _write_index_temp(
    staging: Staging, result: PackIndexResult, opts: IndexPackOptions, index_path: str
) -> str:
    """The ``.idx`` for ``result`` in a temporary file beside ``index_path``."""
    return staging.write(
        os.path.dirname(index_path),
        "tmp_idx_",
        result.index_bytes(opts.index_version, opts.offset32_limit),
    )


def _deferred_collisions(
    staging: Staging,
    result: PackIndexResult,
    opts: IndexPackOptions,
    existing: ObjectLookup | None,
    path: str,
    pack_file: str,
    index_path: str,
) -> str | None:
    """Run the collision check the native path left to the caller (``result.native``,
    a repository that answers in bulk); return the temporary ``.idx`` it wrote for
    reading the new pack (the outputs reuse it), or None if none was needed."""
    if existing is None or not result.native:
        return None
    check = CollisionCheck(existing, path)
    if not check.deferrable:
        return None  # the reference ran it (index_buffer kept it per object)
    idx_tmp = _write_index_temp(staging, result, opts, index_path)
    check_indexed(check, result, pack_file, idx_tmp, opts.delta_base_cache_limit)
    return idx_tmp


def _write_outputs(
    staging: Staging,
    result: PackIndexResult,
    opts: IndexPackOptions,
    index_path: str,
    keep_path: str | None,
    idx_tmp: str | None = None,
) -> tuple[str | None, bool]:
    """Write .idx (and .rev, .keep) for ``result``: temp files first, then renames
    (``idx_tmp``: the ``.idx`` already written to a temporary file)."""
    idx_dir = os.path.dirname(index_path)
    if idx_tmp is None:
        idx_tmp = _write_index_temp(staging, result, opts, index_path)
    rev_path = rev_tmp = None
    if opts.rev_index:
        rev_path = derive_name(index_path, "idx", "rev")
        rev_tmp = staging.write(idx_dir, "tmp_rev_", result.rev_bytes())
    keep_created = False
    if keep_path is not None and opts.keep_msg is not None:
        keep_created = _create_keep(keep_path, opts.keep_msg)
    if opts.promisor_msg is not None:  # written like .keep (Git's write_special_file)
        _create_keep(derive_name(index_path, "idx", "promisor"), opts.promisor_msg)
    if rev_tmp is not None and rev_path is not None:
        staging.place(rev_tmp, rev_path)
    staging.place(idx_tmp, index_path)
    return rev_path, keep_created


def index_pack_file(
    pack_path: str,
    fmt: ObjectFormat,
    opts: IndexPackOptions | None = None,
    *,
    index_path: str | None = None,
    existing: ObjectLookup | None = None,
    fsync: FsyncPolicy = DEFAULT_POLICY,
) -> IndexPackOutcome:
    """Index the pack at ``pack_path`` and write its ``.idx`` (and ``.rev``/``.keep``).

    The index goes to ``index_path`` (default: the pack's name with ``.idx``).
    ``existing`` (the repository's objects, when run in one) turns on Git's
    collision check.  Nothing is left behind when the pack is bad.  ``fsync`` is
    the ``core.fsync`` policy.
    """
    opts = opts or IndexPackOptions()
    if opts.fix_thin:
        raise PackError("--fix-thin cannot be used without --stdin")
    if index_path is None:
        index_path = derive_name(pack_path, "pack", "idx")
    elif opts.rev_index:
        derive_name(index_path, "idx", "rev")
    keep_path = derive_name(pack_path, "pack", "keep") if opts.keep_msg is not None else None
    m, _size = map_file(pack_path)
    # Git unlinks an index it was told to write (or derived from <pack>) and writes a
    # new one: an existing .idx/.rev is replaced.
    staging = Staging(fsync, Existing.REPLACE)
    try:
        # --strict's links may point at objects the repository has (Git looks there)
        result = index_buffer(
            m,
            fmt,
            opts,
            pack_path,
            "Indexing objects",
            None,
            getattr(existing, "contains", None),
            existing,
        )
        idx_tmp = _deferred_collisions(
            staging, result, opts, existing, pack_path, pack_path, index_path
        )
        rev_path, keep_created = _write_outputs(
            staging, result, opts, index_path, keep_path, idx_tmp
        )
    except BaseException:
        staging.abort()
        raise
    finally:
        close_map(m)
    return IndexPackOutcome(result, pack_path, index_path, rev_path, keep_created)


def index_pack_stream(
    stream: object,
    fmt: ObjectFormat,
    opts: IndexPackOptions | None = None,
    *,
    pack_dir: str | None = None,
    pack_path: str | None = None,
    index_path: str | None = None,
    base_lookup: Callable[[bytes], tuple[str, bytes] | None] | None = None,
    contains: Callable[[bytes], bool] | None = None,
    existing: ObjectLookup | None = None,
    fsync: FsyncPolicy = DEFAULT_POLICY,
) -> IndexPackOutcome:
    """Read a pack from ``stream`` (a binary file object), store and index it.

    The pack goes to ``pack_path``, or to ``pack_dir/pack-<hash>.pack``.  With
    ``opts.fix_thin`` missing REF_DELTA bases come from ``base_lookup`` and are
    appended.  ``contains`` answers --strict's link check for objects outside
    the pack; ``existing`` turns on the collision check against the repository.
    Temporary files live beside the destination and are removed on error;
    ``fsync`` is the ``core.fsync`` policy.
    """
    opts = opts or IndexPackOptions()
    if pack_path is None and pack_dir is None:
        raise PackError("--stdin requires a git repository")
    directory = os.path.dirname(pack_path) if pack_path is not None else str(pack_dir)
    if pack_path is not None:
        derive_name(pack_path, "pack", "idx")
        if os.path.lexists(pack_path):  # Git creates a named pack with O_EXCL, first
            raise ObjectWriteError(f"unable to create '{pack_path}': File exists")
    # Into the object store Git finalizes with its collision check: a file already
    # there stays if it holds the same bytes, else the command fails.  An index it
    # was given (or derived from a named pack) it unlinks and writes anew.
    into_store = pack_path is None and index_path is None
    staging = Staging(fsync, Existing.CHECK if into_store else Existing.REPLACE)
    m: mmap.mmap | bytes = b""
    synced = False
    try:
        fd, pack_tmp = staging.temp(directory, "tmp_pack_")
        read = stream.read  # type: ignore[attr-defined]
        try:
            with os.fdopen(fd, "wb") as f:
                while True:
                    chunk = read(1 << 20)
                    if not chunk:
                        break
                    f.write(chunk)
        except OSError as e:
            raise ObjectWriteError(f"write error: {e.strerror}", path=pack_tmp) from e
        m, _size = map_file(pack_tmp)
        result = index_buffer(
            m,
            fmt,
            opts,
            pack_path or "<stdin>",
            "Receiving objects",
            base_lookup,
            contains,
            existing,
        )
        if result.pack_bytes is not None:
            close_map(m)
            m = b""
            # a new temporary file: the first is read-only (mode 0444, as Git's)
            staging.forget(pack_tmp)
            pack_tmp = staging.write(directory, "tmp_pack_", result.pack_bytes, Component.PACK)
            result.pack_bytes = None
            synced = True
        final_pack = pack_path or os.path.join(directory, f"pack-{result.pack_checksum.hex()}.pack")
        final_index = index_path or derive_name(final_pack, "pack", "idx")
        keep_path = derive_name(final_pack, "pack", "keep")
        idx_tmp = _deferred_collisions(
            staging, result, opts, existing, pack_path or "<stdin>", pack_tmp, final_index
        )
        if opts.keep_msg is not None:
            keep_created = _create_keep(keep_path, opts.keep_msg)
            keep_opts = IndexPackOptions(**{**opts.__dict__, "keep_msg": None})
        else:
            keep_created, keep_opts = False, opts
        if not synced:
            _sync_file(fsync, Component.PACK, pack_tmp)
        staging.place(
            pack_tmp, final_pack, Existing.REFUSE if pack_path is not None else Existing.CHECK
        )
        rev_path, _ = _write_outputs(staging, result, keep_opts, final_index, None, idx_tmp)
    except BaseException:
        staging.abort()
        raise
    finally:
        close_map(m)
    return IndexPackOutcome(result, final_pack, final_index, rev_path, keep_created)
