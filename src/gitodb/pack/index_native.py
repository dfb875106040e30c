"""Index a pack with the native core (``gitodb._native.IndexPack``), when it can.

The scan (pass 1) and the resolve pass (pass 2) of ``index_scan`` and
``index_resolve`` run in C: no Python per entry, the GIL released around inflate,
SHA-1DC and delta application, so ``threads`` Python threads resolving shares of
the delta trees use that many cores.  Inflate and CRC-32 are the compression
layer's choice (its callables, or zlib's C API when ``compress.native_inflate()``
says zlib is the chosen backend; libdeflate's C API for the resolve pass when it
says libdeflate).

Only the common case is native: a SHA-1 pack, no per-object check (``--strict``),
nothing unusual in the pack.  The collision check against a repository is not a
per-object check here: the caller runs it after indexing (``PackIndexer.deferred_check``,
``index_write.check_indexed``).  The core returns None for anything else (a damaged
entry, a detected collision, a delta whose base is missing, a thin pack), and
:func:`index_native` returns None: the caller indexes with the Python reference,
which raises the typed error naming the file and offset (one source for every
message) or completes the thin pack.

Memory: the core holds fixed-size columns per entry (proportional to the index)
and, in each resolving thread, at most ``cache_budget / threads`` bytes of delta
bases plus the delta and the object being built (``core.deltaBaseCacheLimit`` in
all).  The inflated entries are not kept from the scan, as Git does not keep them.
"""

from __future__ import annotations

import threading
from array import array
from typing import TYPE_CHECKING, Any

from gitodb import compress
from gitodb.errors import ObjectCollisionError
from gitodb.fileio import PAGE_DROP_STEP

if TYPE_CHECKING:
    from gitodb.pack.indexer import PackIndexer, PackIndexResult

try:
    from gitodb import _native
except ImportError:  # the native core is not built
    _native = None  # type: ignore[assignment]
_IndexPack: Any = getattr(_native, "IndexPack", None)

# The most roots handed to one resolve call (between progress reports).
ROOTS_PER_CALL = 256


def _chunk(at: int) -> int:
    """How many roots a thread takes when the first ``at`` are handed out.

    The core orders the roots heaviest tree first, so a chunk of ``at // 8`` roots
    weighs at most an eighth of what the threads already took: no thread is left
    alone with a large chunk at the end, and the many small trees of the tail go
    in few calls.
    """
    return max(1, min(ROOTS_PER_CALL, at // 8))


def native_available() -> bool:
    """True if the native core has the index-pack loops."""
    return _IndexPack is not None


def _detect(ix: PackIndexer) -> bool | None:
    """Whether the core hashes with collision detection: True for the core's SHA-1DC,
    False for plain SHA-1 (``GITODB_SHA1=plain``), None for any other hasher in use."""
    import hashlib

    factory = ix.fmt.hasher_factory()
    if factory is getattr(_native, "sha1dc", None):
        return True
    if factory is hashlib.sha1:
        return False
    return None


def usable(ix: PackIndexer) -> bool:
    """True if :func:`index_native` may index for ``ix`` (see the module)."""
    return (
        _IndexPack is not None
        and ix.fmt.rawsz == 20
        and ix.object_check is None
        and _detect(ix) is not None
    )


def _array(code: str, data: bytes) -> array[int]:
    a = array(code)
    a.frombytes(data)
    return a


def index_native(ix: PackIndexer) -> PackIndexResult | None:
    """Index ``ix``'s pack natively; None when the reference must do it (see the module)."""
    from gitodb.pack.indexer import PackIndexResult

    if not usable(ix):
        return None
    count = ix._read_header()  # the reference's checks and messages
    detect = bool(_detect(ix))
    api = compress.native_inflate()
    zlib_api = api == "zlib"
    inflate = None if zlib_api else compress.inflate
    inflate_prefix = None if zlib_api else compress.inflate_prefix
    # libdeflate's C API for the resolve pass (its inflates have exact sizes and ends):
    # no GIL and no copy per delta; the scan still calls the binding's inflate_prefix.
    library = compress.native_inflate_library() if api == "libdeflate" else None
    core = _IndexPack(ix.buf, count, ix.fmt.rawsz, detect)
    try:
        return _run(ix, core, count, inflate, inflate_prefix, library, PackIndexResult)
    finally:
        core.close()


def _run(
    ix: PackIndexer,
    core: Any,
    count: int,
    inflate: Any,
    inflate_prefix: Any,
    library: str | None,
    result_cls: type[PackIndexResult],
) -> PackIndexResult | None:
    buf, fmt, pages, progress = ix.buf, ix.fmt, ix.pages, ix.progress
    end_of_entries = len(buf) - fmt.rawsz
    new_hash = fmt.hasher_factory()
    # The trailer check is one long hash; beside the scan when threads are allowed.
    trailer: list[bytes | ObjectCollisionError] = []

    def hash_trailer() -> None:
        try:
            trailer.append(pages.hash_through(new_hash(), buf, end_of_entries).digest())
        except ObjectCollisionError as e:
            trailer.append(e)

    hasher = threading.Thread(target=hash_trailer) if ix.threads > 1 else None
    if hasher is not None:
        hasher.start()
    try:
        scanned = 0
        while scanned < count:
            got = core.scan(inflate_prefix, compress.crc32, PAGE_DROP_STEP)
            if got is None:
                return None
            scanned = got
            pages.scanned_to(core.pos)
            if progress is not None:
                progress(ix.progress_title, scanned, count, False)
    finally:
        if hasher is not None:
            hasher.join()
    if hasher is None:
        hash_trailer()
    outcome = trailer[0]
    if isinstance(outcome, ObjectCollisionError) or outcome != bytes(buf[end_of_entries:]):
        return None  # the reference raises the located error
    if progress is not None:
        progress(ix.progress_title, count, count, True)
    nroots, ndeltas = core.prepare()
    if not _resolve(ix, core, nroots, inflate, library, ndeltas):
        return None
    (
        offsets,
        ends,
        crcs,
        oids,
        types,
        rtypes,
        sizes,
        osizes,
        depths,
        bases,
        order,
        left,
        ambiguous,
    ) = core.finish()
    if left or ambiguous:
        # unresolved deltas (a thin pack or a bad one), or a REF_DELTA whose base
        # Git picks by its walk's order (see IndexPack.finish): the reference
        return None
    if progress is not None and ndeltas:
        progress("Resolving deltas", ndeltas, ndeltas, True)
    rawsz = fmt.rawsz
    return result_cls(
        fmt=fmt,
        pack_checksum=bytes(buf[end_of_entries:]),
        offsets=_array("Q", offsets),
        ends=_array("Q", ends),
        crcs=_array("I", crcs),
        oids=[oids[i : i + rawsz] for i in range(0, len(oids), rawsz)],
        types=_array("B", types),
        real_types=_array("B", rtypes),
        sizes=_array("Q", sizes),
        object_sizes=_array("Q", osizes),
        depths=_array("I", depths),
        bases=_array("q", bases),
        order=_array("I", order),
    )


def _resolve(ix, core, nroots: int, inflate, library, ndeltas: int) -> bool:  # type: ignore[no-untyped-def]
    """Resolve every tree, in ``ix.threads`` threads; False if the core gave up.

    The threads take the next roots (heaviest tree first, in chunks that grow as the
    trees get lighter: :func:`_chunk`) as they finish the last, as Git's threads
    take the next base: one thread stuck in a big tree does not leave the other idle
    with a fixed share still to do.
    """
    threads = max(1, min(ix.threads, nroots))
    budget = max(1, ix.cache_budget // threads)
    pages, progress = ix.pages, ix.progress
    lock = threading.Lock()
    state = {"done": 0, "next": 0, "failed": False}

    def work() -> None:
        while True:
            with lock:
                at = state["next"]
                if at >= nroots or state["failed"]:
                    return
                stop = min(nroots, at + _chunk(at))
                state["next"] = stop
            got = core.resolve(at, stop, 1, inflate, budget, library)
            with lock:
                if got is None:
                    state["failed"] = True
                    return
                state["done"] += got[0]
                pages.note_read(got[1])
                if progress is not None and ndeltas:
                    progress("Resolving deltas", state["done"], ndeltas, False)

    if threads == 1:
        work()
    else:
        workers = [threading.Thread(target=work) for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    return not state["failed"]
