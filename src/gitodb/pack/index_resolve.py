"""Pass 2 of index-pack: resolve every delta, from the roots of its delta tree.

Each non-delta object that other entries are deltas against is the root of a
tree of deltas (children found by base offset for OFS_DELTA and by base id for
REF_DELTA).  Trees are independent, so with ``threads`` > 1 they are shared out:
to forked processes when there are many (the walk per entry is Python and holds
the GIL; only zlib, SHA-1DC and the native delta application release it), else to
threads.  A walk keeps one base per level of the tree it is in, and drops a base
once its last child is being built.
"""

from __future__ import annotations

import gc
import os
import struct
import threading
from array import array
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gitodb import compress
from gitodb.errors import (
    CompressionError,
    DeltaError,
    GitodbError,
    ObjectCollisionError,
    ObjectIdCollisionError,
    PackError,
)
from gitodb.objects import ObjectFormat
from gitodb.pack.delta import apply_delta
from gitodb.pack.index_scan import TYPE_PREFIX, Progress, ScanState, hasher_for

# With --threads > 1, fork resolver processes when there are at least this many
# delta trees (fewer are not worth a fork); otherwise use threads.
FORK_MIN_ROOTS = 64


class DeltaResolver:
    """Pass 2: walk delta trees from their roots, in one or more threads."""

    def __init__(
        self,
        st: ScanState,
        fmt: ObjectFormat,
        path: str | None,
        progress: Progress | None,
        object_check: Callable[[int, bytes, bytes, int], None] | None = None,
    ) -> None:
        self.st = st
        self.object_check = object_check
        self.fmt = fmt
        self.path = path
        self.progress = progress
        n = len(st.offsets)
        self.real_types = list(st.types)
        self.result_sizes = list(st.sizes)
        self.depths = [0] * n
        self.bases = [-1] * n
        self.resolved = 0
        self.total = 0
        self._lock = threading.Lock()
        self._failed = threading.Event()

    def add_entry(self, type_num: int, size: int) -> None:
        """Register an entry appended after the scan (a thin pack's base)."""
        self.real_types.append(type_num)
        self.result_sizes.append(size)
        self.depths.append(0)
        self.bases.append(-1)

    def _data(self, i: int) -> bytes:
        """The inflated data of entry ``i``: from the scan's cache, else inflated again."""
        st = self.st
        hit = st.cache.pop(i)
        if hit is not None:
            return hit[1]
        start = st.data_starts[i]
        end = st.ends[i]
        st.pages.note_read(end - start)
        try:
            return compress.inflate(st.buf[start:end], st.sizes[i])
        except CompressionError as e:
            raise PackError(
                f"pack has bad object at offset {st.offsets[i]}: {e.message}",
                path=self.path,
                offset=st.offsets[i],
            ) from None

    def resolve_roots(self, roots: Sequence[int], threads: int) -> None:
        """Resolve the delta trees under ``roots``, spreading roots over ``threads``."""
        if threads <= 1 or len(roots) < 2:
            self._walk_many(roots)
            return
        if (
            len(roots) >= FORK_MIN_ROOTS
            and (self.object_check is None or getattr(self.object_check, "fork_safe", False))
            and hasattr(os, "fork")
            and threading.active_count() == 1
        ):
            self._resolve_forked(roots, threads)
            return
        # Interleave roots so every thread gets a similar mix of big and small trees.
        chunks = [roots[k::threads] for k in range(threads)]
        with ThreadPoolExecutor(max_workers=threads) as pool:
            futures = [pool.submit(self._walk_many, c) for c in chunks if c]
            errors = []
            for f in futures:
                try:
                    f.result()
                except GitodbError as e:
                    errors.append(e)
        if errors:
            raise errors[0]

    def _resolve_forked(self, roots: Sequence[int], workers: int) -> None:
        """Resolve delta trees in this process plus ``workers - 1`` forked children.

        The per-entry walk is Python code that holds the GIL, so threads cannot
        run it in parallel; forked children can, sharing the mapped pack and the
        scan's state copy-on-write.  Every delta belongs to exactly one tree (its
        chain ends at one root), so no two processes resolve the same entry.  A
        child sends back, per resolved entry, its index, id, type, size, depth
        and base; the parent merges them after walking its own share.
        """
        shares = [roots[k::workers] for k in range(workers)]
        children: list[tuple[int, int]] = []
        # Move everything to the permanent generation first: a collection in a
        # child would otherwise touch every object and copy the whole heap.
        gc.freeze()
        for share in shares[1:]:
            rfd, wfd = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the child, reports through the pipe
                gc.disable()
                os.close(rfd)
                code = 0
                try:
                    payload = self._walk_share_packed(share)
                except ObjectCollisionError as e:
                    # Sent as such, so the parent raises the same typed error.
                    payload, code = b"C%s %d" % (e.hexdigest.encode(), e.offset or 0), 1
                except ObjectIdCollisionError as e:
                    payload, code = b"I%s %d" % (e.oid_hex.encode(), e.offset or 0), 1
                except BaseException as e:  # noqa: BLE001 - everything must reach the parent
                    payload, code = b"E" + str(e).encode("utf-8", "replace"), 1
                with os.fdopen(wfd, "wb") as f:
                    f.write(payload)
                os._exit(code)
            os.close(wfd)
            children.append((pid, rfd))
        gc.unfreeze()
        error: GitodbError | None = None
        try:
            self._walk_many(shares[0])
        except GitodbError as e:
            error = e
        finally:
            for pid, rfd in children:
                with os.fdopen(rfd, "rb") as f:
                    payload = f.read()
                os.waitpid(pid, 0)
                if payload[:1] == b"R":
                    self._merge(payload)
                elif payload[:1] in (b"C", b"I") and error is None:
                    hexdigest, _, where = payload[1:].decode("ascii").partition(" ")
                    kind = ObjectCollisionError if payload[:1] == b"C" else ObjectIdCollisionError
                    error = kind(hexdigest, path=self.path, offset=int(where))
                elif error is None:
                    # The child's message already names the file and offset.
                    error = PackError(
                        payload[1:].decode("utf-8", "replace") or "delta resolver process failed"
                    )
        if error is not None:
            raise error

    def _walk_share_packed(self, roots: Sequence[int]) -> bytes:
        """In a forked child: resolve ``roots`` and pack what was resolved for the parent."""
        self.progress = None
        oids = self.st.oids
        before = [i for i, o in enumerate(oids) if o is None]
        self._walk_many(roots)
        done = [i for i in before if oids[i] is not None]
        return b"".join(
            [
                b"R",
                struct.pack("<Q", len(done)),
                array("q", done).tobytes(),
                b"".join(oids[i] for i in done),  # type: ignore[misc]
                array("b", [self.real_types[i] for i in done]).tobytes(),
                array("q", [self.result_sizes[i] for i in done]).tobytes(),
                array("i", [self.depths[i] for i in done]).tobytes(),
                array("q", [self.bases[i] for i in done]).tobytes(),
            ]
        )

    def _merge(self, payload: bytes) -> None:
        """Take over the entries a child resolved (see :meth:`_walk_share_packed`)."""
        (n,) = struct.unpack_from("<Q", payload, 1)
        rawsz = self.fmt.rawsz
        pos = 9

        def take(code: str, width: int) -> array[int]:
            nonlocal pos
            arr = array(code, payload[pos : pos + n * width])
            pos += n * width
            return arr

        idx = take("q", 8)
        oid_blob = payload[pos : pos + n * rawsz]
        pos += n * rawsz
        types, sizes, depths, bases = take("b", 1), take("q", 8), take("i", 4), take("q", 8)
        oids = self.st.oids
        for k, i in enumerate(idx):
            oids[i] = oid_blob[k * rawsz : (k + 1) * rawsz]
            self.real_types[i] = types[k]
            self.result_sizes[i] = sizes[k]
            self.depths[i] = depths[k]
            self.bases[i] = bases[k]
        self._add_done(n)

    def _walk_many(self, roots: Sequence[int]) -> None:
        try:
            for r in roots:
                if self._failed.is_set():
                    return
                self._walk(r)
        except BaseException:
            self._failed.set()
            raise

    def _walk(self, root: int) -> None:
        """Depth-first over the deltas based on ``root``, keeping only the current chain."""
        st = self.st
        offsets, oids = st.offsets, st.oids
        ofs_children, ref_children = st.ofs_children, st.ref_children
        real_types, result_sizes, depths, bases = (
            self.real_types,
            self.result_sizes,
            self.depths,
            self.bases,
        )
        new_hash = hasher_for(self.fmt)
        path = self.path
        data_of = self._data
        progress = self.progress
        check = self.object_check
        done = 0

        ofs_pop, ref_pop = ofs_children.pop, ref_children.pop
        prefixes = TYPE_PREFIX

        root_kids = ofs_pop(offsets[root], None) or []
        by_ref = ref_pop(oids[root], None)  # type: ignore[arg-type]
        if by_ref:
            root_kids = root_kids + by_ref
        # Stack of [base data, base index, its children, index of the next child].
        # A node's children are handled in one loop; the loop breaks to descend
        # into a child that has children itself.  A node whose last child is being
        # descended into leaves the stack first, so a chain (the common shape: each
        # version a delta on the one before) holds one base, not the whole chain.
        stack: list[list[Any]] = [[data_of(root), root, root_kids, 0]]
        while stack:
            top = stack[-1]
            base_data, base_i, kids = top[0], top[1], top[2]
            type_num = real_types[base_i]
            prefix = prefixes[type_num]
            depth = depths[base_i] + 1
            nkids = len(kids)
            k = top[3]
            while k < nkids:
                child = kids[k]
                k += 1
                delta = data_of(child)
                result = apply_delta(base_data, delta, path=path, offset=offsets[child])
                del delta
                size = len(result)
                h = new_hash(prefix + b"%d\0" % size)
                h.update(result)
                try:
                    oid = h.digest()
                except ObjectCollisionError as e:
                    raise e.located(path, offsets[child]) from None
                oids[child] = oid
                if check is not None:
                    check(type_num, result, oid, offsets[child])
                real_types[child] = type_num
                result_sizes[child] = size
                depths[child] = depth
                bases[child] = base_i
                done += 1
                if progress is not None and done >= 64:
                    self._add_done(done)
                    done = 0
                grandkids = ofs_pop(offsets[child], None)
                by_ref = ref_pop(oid, None)
                if by_ref:
                    grandkids = grandkids + by_ref if grandkids else by_ref
                if grandkids:
                    if k >= nkids:
                        stack.pop()  # nothing left to build on this base
                    else:
                        top[3] = k
                    base_data = top = None  # type: ignore[assignment]
                    stack.append([result, child, grandkids, 0])
                    break
            else:
                stack.pop()
        self._add_done(done)

    def _add_done(self, n: int) -> None:
        with self._lock:
            self.resolved += n
            if self.progress is not None and self.total:
                self.progress("Resolving deltas", self.resolved, self.total, False)

    def unresolved_error(self, ndeltas: int) -> DeltaError:
        """The error for deltas left unresolved, naming the first one and its base.

        A REF_DELTA stays unresolved when its base is neither in the pack nor
        (with ``fix_thin``) in the repository, or when deltas name each other
        in a cycle; an OFS_DELTA when its base offset is not an entry start.
        """
        st = self.st
        left = [i for i, o in enumerate(st.oids) if o is None]
        n = len(left)
        first = left[0]
        off = st.offsets[first]
        base = st.ref_base.get(first)
        if base is not None:
            why = (
                f"base {base.hex()} of the REF_DELTA at offset {off} is missing "
                "(not in the pack, or the deltas form a cycle)"
            )
        else:
            base_off = next((b for b, kids in st.ofs_children.items() if first in kids), -1)
            why = (
                f"base offset {base_off} of the OFS_DELTA at offset {off} is not "
                "the start of an object in the pack"
            )
        return DeltaError(
            f"pack has {n} unresolved delta{'s' if n != 1 else ''}: {why}",
            path=self.path,
            offset=off,
        )
