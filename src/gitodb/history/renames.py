"""Rename detection over a tree diff (``diff-tree -M``), as Git's diffcore-rename.

Deleted paths are sources, added paths destinations.  In Git's order:

1. exact renames: a destination whose blob id equals a source's (an unused
   source first, then one with the same basename);
2. basename matches: a source and a destination whose basename is unique on
   each side pair up if they are at least halfway between the minimum score
   and 100% similar;
3. the rest: every remaining destination against every remaining source, the
   best four candidates of each kept, all sorted by score (then basename
   match), taken greedily while the score reaches the minimum.

Similarity is Git's estimate: each file is cut into spans ending at a newline
or after 64 bytes, each span hashed; the bytes of source spans that also occur
in the destination, over the larger size, scaled to 60000 (``MAX_SCORE``).  A
rename replaces the addition at the destination's place in the output and the
deletion goes away.
"""

from __future__ import annotations

import stat
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

MAX_SCORE = 60000
DEFAULT_MIN_SCORE = 30000  # 50%
_HASHBASE = 107927
_CANDIDATES = 4
_EXACT_TRIES = 100  # identical sources looked at per destination
_M32 = 0xFFFFFFFF
_FIRST_FEW = 8000  # Git's binary test looks at this many bytes for a NUL


class RenameChange(NamedTuple):
    """A rename: ``old_path`` became ``path`` with similarity ``score``/60000."""

    status: str  # "R"
    path: bytes
    old_mode: int | None
    new_mode: int | None
    old_id: bytes | None
    new_id: bytes | None
    old_path: bytes
    score: int

    @property
    def similarity(self) -> int:
        """The percentage Git prints after ``R``."""
        return self.score * 100 // MAX_SCORE


def parse_rename_score(text: str) -> int:
    """Git's ``parse_rename_score``: ``5`` and ``50%`` are 50%, ``.9`` 90%, … as a score."""
    num, scale, dot = 0, 1, False
    for ch in text:
        if not dot and ch == ".":
            scale, dot = 1, True
        elif ch == "%":
            scale = scale * 100 if dot else 100
            break
        elif ch.isdigit():
            if scale < 100000:
                scale *= 10
                num = num * 10 + int(ch)
        else:
            break
    return MAX_SCORE if num >= scale else MAX_SCORE * num // scale


def _span_hash(piece: bytes) -> int:
    """Git's hash of one span (the bytes between two cuts)."""
    a1 = a2 = 0
    for c in piece:
        old1 = a1
        a1 = ((a1 << 7) ^ (a2 >> 25)) & _M32
        a2 = ((a2 << 7) ^ (old1 >> 25)) & _M32
        a1 = (a1 + c) & _M32
    return ((a1 + a2 * 0x61) & _M32) % _HASHBASE


# Spans repeat across the files of a history (source lines do), so their hashes
# are kept; the table is dropped when it grows large.
_SPAN_HASHES: dict[bytes, int] = {}
_SPAN_CACHE_MAX = 1 << 20


def span_counts(data: bytes) -> Counter[int]:
    """Git's ``hash_chars``: bytes per span hash (CR before LF skipped in text).

    A span ends after a newline or after 64 bytes; each span is hashed on its
    own, so the file is cut at those places and each distinct span hashed once.
    """
    if b"\0" not in data[:_FIRST_FEW]:
        data = data.replace(b"\r\n", b"\n")  # what skipping each CR before LF leaves
    if len(_SPAN_HASHES) > _SPAN_CACHE_MAX:
        _SPAN_HASHES.clear()
    cache = _SPAN_HASHES
    counts: Counter[int] = Counter()
    lines = data.split(b"\n")
    last = lines.pop()
    pieces = [line + b"\n" for line in lines]
    # A last line without a newline counts as a span of its own (Git 2.55; Git
    # 2.39 left it out).
    if last:
        pieces.append(last)
    for line in pieces:
        size = len(line)
        for k in range(0, size, 64) if size > 64 else (0,):
            piece = line[k : k + 64] if size > 64 else line
            h = cache.get(piece)
            if h is None:
                h = cache[piece] = _span_hash(piece)
            counts[h] += len(piece)
    return counts


def similarity(
    src: bytes,
    dst: bytes,
    minimum: int,
    counts: Callable[[bytes], Counter[int]] = span_counts,
) -> int:
    """Git's ``estimate_similarity`` of two regular files' contents (0 when the sizes
    alone rule out ``minimum``).  ``counts`` may be a memoised ``span_counts``."""
    max_size = max(len(src), len(dst))
    delta = max_size - min(len(src), len(dst))
    if max_size * (MAX_SCORE - minimum) < delta * MAX_SCORE:
        return 0
    if not dst:
        return 0
    s, d = counts(src), counts(dst)
    if len(d) < len(s):
        copied = sum(min(cnt, s[h]) for h, cnt in d.items() if h in s)
    else:
        copied = sum(min(cnt, d[h]) for h, cnt in s.items() if h in d)
    return copied * MAX_SCORE // max_size


def _worse(a: tuple[int, int, int, int] | None, b: tuple[int, int, int, int] | None) -> bool:
    """Git's ``score_compare(a, b) > 0``: ``a`` sorts after ``b``."""
    if a is None:
        return b is not None
    if b is None:
        return False
    return (a[0], a[1]) < (b[0], b[1])


def _basename(path: bytes) -> bytes:
    return path.rsplit(b"/", 1)[-1]


def detect_renames(
    changes: list[Any],  # TreeChange items, in output order
    read_blob: Callable[[bytes], bytes],
    *,
    minimum: int = DEFAULT_MIN_SCORE,
    limit: int = 1000,
) -> list[Any]:
    """``changes`` with additions paired to deletions as renames (see the module
    docstring); ``read_blob(oid)`` gives a blob's bytes."""
    srcs = [i for i, c in enumerate(changes) if c.status == "D"]
    dsts = [i for i, c in enumerate(changes) if c.status == "A"]
    if not srcs or not dsts:
        return changes
    used: set[int] = set()  # source change indexes
    found: dict[int, tuple[int, int]] = {}  # dst index -> (src index, score)

    # 1. exact
    by_id: dict[bytes | None, list[int]] = {}
    for s in srcs:
        by_id.setdefault(changes[s].old_id, []).append(s)
    for d in dsts:
        best, best_score = -1, -1
        dst = changes[d]
        # Git fills its hash table with the sources in reverse and reads a bucket
        # newest first: the sources come in their own order.  At most 100
        # candidates are looked at.
        tries = _EXACT_TRIES
        for s in by_id.get(dst.new_id, []):
            src = changes[s]
            if s in used:
                continue
            # Anything but two regular files must have the same mode.
            if not (stat.S_ISREG(src.old_mode or 0) and stat.S_ISREG(dst.new_mode or 0)) and (
                src.old_mode != dst.new_mode
            ):
                continue
            score = 1 + (_basename(src.path) == _basename(dst.path))
            if score > best_score:
                best, best_score = s, score
                if score == 2:
                    break
            tries -= 1
            if not tries:
                break
        if best >= 0:
            found[d] = (best, MAX_SCORE)
            used.add(best)
    left_src = [s for s in srcs if s not in used]
    left_dst = [d for d in dsts if d not in found]
    blobs: dict[bytes, bytes] = {}
    spans: dict[int, Counter[int]] = {}  # by id() of a cached blob: each is hashed once

    def counts(data: bytes) -> Counter[int]:
        got = spans.get(id(data))
        if got is None:
            got = spans[id(data)] = span_counts(data)
        return got

    def content(oid: bytes | None) -> bytes:
        assert oid is not None
        if oid not in blobs:
            blobs[oid] = read_blob(oid)
        return blobs[oid]

    def score_of(s: int, d: int, floor: int) -> int:
        a, b = changes[s], changes[d]
        if not (stat.S_ISREG(a.old_mode or 0) and stat.S_ISREG(b.new_mode or 0)):
            return 0
        return similarity(content(a.old_id), content(b.new_id), floor, counts)

    # 2. unique basenames
    if left_src and left_dst:
        floor = minimum + (MAX_SCORE - minimum) // 2
        src_names = Counter(_basename(changes[s].path) for s in left_src)
        dst_names = Counter(_basename(changes[d].path) for d in left_dst)
        by_name = {_basename(changes[s].path): s for s in left_src}
        for d in left_dst:
            name = _basename(changes[d].path)
            if src_names[name] != 1 or dst_names[name] != 1:
                continue
            s = by_name[name]
            score = score_of(s, d, floor)
            if score < floor:
                continue
            found[d] = (s, score)
            used.add(s)
        left_src = [s for s in left_src if s not in used]
        left_dst = [d for d in left_dst if d not in found]

    # 3. everything else, unless there are too many pairs to try
    if left_src and left_dst and len(left_src) * len(left_dst) <= limit * limit:
        # Git's score_compare as a sort key: higher score first, then a basename
        # match; empty slots last.  Its matrix keeps four slots per destination
        # (record_if_better) and is sorted stably.
        matrix: list[tuple[int, int, int, int] | None] = []
        for d in left_dst:
            slots: list[tuple[int, int, int, int] | None] = [None] * _CANDIDATES
            for s in left_src:
                same = int(_basename(changes[s].path) == _basename(changes[d].path))
                cand = (score_of(s, d, minimum), same, d, s)
                worst = 0
                for k in range(1, _CANDIDATES):
                    if _worse(slots[k], slots[worst]):
                        worst = k
                if _worse(slots[worst], cand):
                    slots[worst] = cand
            matrix.extend(slots)
        matrix.sort(key=lambda c: (1, 0, 0) if c is None else (0, -c[0], -c[1]))
        for slot in matrix:
            if slot is None or slot[0] < minimum:
                break
            score, _same, d, s = slot
            if d in found or s in used:
                continue
            found[d] = (s, score)
            used.add(s)

    out = []
    for i, c in enumerate(changes):
        if i in found:
            s, score = found[i]
            src = changes[s]
            if src.path == c.path and src.old_mode == c.new_mode and src.old_id == c.new_id:
                # A path paired with itself, unchanged (a tree that names it twice):
                # no change at all, which Git does not print either.
                continue
            out.append(
                RenameChange(
                    "R", c.path, src.old_mode, c.new_mode, src.old_id, c.new_id, src.path, score
                )
            )
        elif i not in used:
            out.append(c)
    return out
