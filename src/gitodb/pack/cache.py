"""The one delta-base cache: reconstructed objects, bounded by the bytes it holds.

Every path that resolves deltas (``PackFile.read_at``, ``PackFile.iter_objects``,
the indexer's scan and resolve passes, and through them ``cat-file`` in every
mode, ``verify-pack`` and ``index-pack``) keeps the objects it may need again
here and nowhere else, so there is one place where memory is accounted.

Accounting is by ``len(data)`` of what is stored, on the way in and on the way
out: an entry's header size (for a delta, the size of the delta rather than of
the object it builds) is not what the cache holds.  The limit is Git's
``core.deltaBaseCacheLimit`` (96 MiB by default); an object larger than the
limit is never kept.  Least recently used entries are evicted first.

With the native core built, ``DeltaBaseCache`` and ``pending_bases`` give the C
implementation (``_native/cache.c``), which the native pack walk uses without a
Python call per object; the classes below are its reference and the fallback
(``PyDeltaBaseCache``, ``PendingBases``), and the differential tests compare the two.
"""

from __future__ import annotations

from gitodb.types import Protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections import OrderedDict

try:
    from gitodb._native import DeltaCache as _NativeCache
    from gitodb._native import PendingBases as _NativePending
except ImportError:  # built without a C compiler
    _NativeCache = _NativePending = None  # type: ignore[assignment,misc]

#: Git's default ``core.deltaBaseCacheLimit``
DEFAULT_DELTA_BASE_CACHE_LIMIT = 96 * 1024 * 1024

# Key space per pack in a shared cache: offsets below 2**44 (16 TiB) never collide.
KEY_STRIDE = 1 << 44


class PyDeltaBaseCache:
    """Objects keyed by an int (a pack's key + an offset, or an entry number), LRU out.

    ``limit`` bounds ``size``, the total ``len(data)`` of the cached values.  An
    ``OrderedDict`` keeps eviction O(1): a plain dict's "first key" is found by
    scanning past the holes that deleted entries leave, which turns eviction
    quadratic.  Not thread-safe: one cache per thread of reading.
    """

    __slots__ = ("limit", "size", "entries", "_next_key")

    def __init__(self, limit: int = DEFAULT_DELTA_BASE_CACHE_LIMIT) -> None:
        # imported here: with the native core this class is only the reference, and
        # ``collections`` is ~1.5 ms of every short command's start-up
        from collections import OrderedDict

        self.limit = max(0, limit)
        self.size = 0
        self.entries: OrderedDict[int, tuple[int, bytes]] = OrderedDict()
        self._next_key = 0

    def new_pack_key(self) -> int:
        """Reserve a key range for one more pack."""
        self._next_key += KEY_STRIDE
        return self._next_key

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, key: int) -> bool:
        return key in self.entries

    def get(self, key: int) -> tuple[int, bytes] | None:
        """Return the cached ``(type_number, data)`` and mark it most recently used."""
        hit = self.entries.get(key)
        if hit is not None:
            self.entries.move_to_end(key)
        return hit

    def put(self, key: int, type_num: int, data: bytes) -> None:
        """Cache ``data`` (unless larger than the limit); evict the oldest beyond it."""
        n = len(data)
        entries = self.entries
        if n > self.limit or key in entries:
            return
        entries[key] = (type_num, data)
        self.size += n
        if self.size > self.limit:
            popitem = entries.popitem
            while self.size > self.limit:
                self.size -= len(popitem(last=False)[1][1])

    def pop(self, key: int) -> tuple[int, bytes] | None:
        """Remove and return the entry for ``key`` (None if absent): for one-time use."""
        hit = self.entries.pop(key, None)
        if hit is not None:
            self.size -= len(hit[1])
        return hit

    def discard_if(self, drop: Callable[[int], bool]) -> None:
        """Remove every entry for whose key ``drop(key)`` is true."""
        for key in [k for k in self.entries if drop(k)]:
            self.pop(key)

    def clear(self) -> None:
        """Drop everything."""
        self.entries.clear()
        self.size = 0


TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    DeltaBaseCache = PyDeltaBaseCache
else:
    # The one cache: the native type when built (same interface, same accounting).
    DeltaBaseCache = _NativeCache if _NativeCache is not None else PyDeltaBaseCache


class BaseGetPut(Protocol):
    """What a walk over a pack needs of the cache: ``get`` and ``put``."""

    def get(self, key: int, /) -> tuple[int, bytes] | None: ...

    def put(self, key: int, type_num: int, data: bytes, /) -> None: ...


def pending_bases(cache: DeltaBaseCache, pending: dict[int, int]) -> BaseGetPut:
    """``PendingBases(cache, pending)``: the native one for the native cache."""
    if _NativePending is not None and type(cache) is _NativeCache:  # type: ignore[comparison-overlap]
        return _NativePending(cache, pending)
    return PendingBases(cache, pending)


class PendingBases:
    """The one cache as a walk over a whole pack in offset order uses it.

    ``pending`` maps the key of every entry that later OFS_DELTA entries are deltas
    against to how many are (``PackFile.ofs_base_counts``).  Only those entries are
    stored, and each is dropped when its last delta has fetched it, so the cache
    holds the bases still needed rather than every recent object: objects nothing
    is built from no longer push out the bases that are (which made later deltas
    rebuild their chains from scratch), and memory stays at the bases in flight,
    still bounded by the cache's limit.
    """

    __slots__ = ("cache", "pending")

    def __init__(self, cache: DeltaBaseCache, pending: dict[int, int]) -> None:
        self.cache = cache
        self.pending = pending

    def get(self, key: int) -> tuple[int, bytes] | None:
        """The cached base for one more of its deltas; dropped after its last one."""
        hit = self.cache.get(key)
        left = self.pending.get(key, 0) - 1
        if left > 0:
            self.pending[key] = left
        else:
            self.pending.pop(key, None)
            if hit is not None:
                self.cache.pop(key)
        return hit

    def put(self, key: int, type_num: int, data: bytes) -> None:
        """Cache ``data`` if a later entry is a delta against it."""
        if key in self.pending:
            self.cache.put(key, type_num, data)


__all__ = [
    "DEFAULT_DELTA_BASE_CACHE_LIMIT",
    "KEY_STRIDE",
    "BaseGetPut",
    "DeltaBaseCache",
    "PendingBases",
    "PyDeltaBaseCache",
    "pending_bases",
]
