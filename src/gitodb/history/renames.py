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

Copy detection (``-C``, ``--find-copies-harder``) adds sources that stay: the
modified files, and with ``--find-copies-harder`` the unchanged ones.  There is no
basename step; the exact step and the matrix look at every source, the matrix is
taken once for renames (sources not used yet) and once more for copies (any
source), and a source paired more than once is a copy (``C``) at each place but
its last, which is a rename if the source was deleted.
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
#: with -C, the changes whose old side is a source besides deletions ("=": unchanged)
_COPY_SOURCES = ("M", "T", "=")


class RenameChange(NamedTuple):
    """A rename (``R``) or copy (``C``): ``old_path`` became (or was copied to)
    ``path`` with similarity ``score``/60000."""

    status: str  # "R" or "C"
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
    """Git's ``parse_rename_score``: ``5`` and ``50%`` are 50%, ``.9`` 90%, … as a score
    (it reads as far as it can: see ``rename_score_length``)."""
    return _parse_score(text)[0]


def rename_score_length(text: str) -> int:
    """How many characters of ``text`` Git's ``parse_rename_score`` reads: an option
    value with more after them (``-M50x``) is an error."""
    return _parse_score(text)[1]


def _parse_score(text: str) -> tuple[int, int]:
    num, scale, dot = 0, 1, False
    used = 0
    for ch in text:
        if not dot and ch == ".":
            scale, dot = 1, True
        elif ch == "%":
            scale = scale * 100 if dot else 100
            used += 1  # the % ends the number
            break
        elif "0" <= ch <= "9":
            if scale < 100000:
                scale *= 10
                num = num * 10 + int(ch)
        else:
            break
        used += 1
    return (MAX_SCORE if num >= scale else MAX_SCORE * num // scale), used


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


class RenameLimit:
    """What the rename limit cost, for Git's warning at the end of a run:
    ``needed``, the limit the last comparison that reached the matrix step would
    have needed (0: it was under the limit), and ``degraded``, set once
    ``--find-copies-harder`` fell back to the modified files as copy sources."""

    def __init__(self) -> None:
        self.needed = 0
        self.degraded = False

    def warnings(self) -> list[str]:
        """Git's ``diff_warn_rename_limit`` lines (without ``warning: ``)."""
        if self.degraded:
            lines = ["only found copies from modified paths due to too many files."]
        elif self.needed:
            lines = ["exhaustive rename detection was skipped due to too many files."]
        else:
            return []
        if self.needed > 0:
            lines.append(
                "you may want to set your diff.renameLimit variable to at least "
                f"{self.needed} and retry the command."
            )
        return lines


class _Sources:
    """The rename (and copy) sources in Git's queue order: each one's change index,
    path, mode and id, and how often it is used.

    ``used`` is Git's ``rename_used``: a deletion starts at 0, a copy source that
    stays in the tree (modified or unchanged) at 1, and each pairing adds one.  A
    source used more than once is copied to all but the last of its destinations
    in output order, and renamed to that one only if it was deleted."""

    def __init__(self, changes: list[Any], copies: bool) -> None:
        self.change: list[int] = []
        self.path: list[bytes] = []
        self.mode: list[int | None] = []
        self.oid: list[bytes | None] = []
        self.used: list[int] = []
        self.of_change: dict[int, int] = {}  # change index -> source number
        for i, c in enumerate(changes):
            if c.status == "D" or (copies and c.status in _COPY_SOURCES):
                self.of_change[i] = len(self.path)
                self.change.append(i)
                self.path.append(c.path)
                self.mode.append(c.old_mode)
                self.oid.append(c.old_id)
                self.used.append(int(c.status != "D"))

    def __len__(self) -> int:
        return len(self.path)


def detect_renames(
    changes: list[Any],  # TreeChange items, in output order
    read_blob: Callable[[bytes], bytes],
    *,
    minimum: int = DEFAULT_MIN_SCORE,
    limit: int = 1000,
    copies: bool = False,
    report: RenameLimit | None = None,
    then: Callable[[list[Any]], list[Any]] | None = None,
) -> list[Any]:
    """``changes`` with additions paired to deletions as renames (see the module
    docstring); ``read_blob(oid)`` gives a blob's bytes.

    ``copies`` (``-C``): modified files are sources too, and a source may be paired
    with more than one addition: each is a copy (``C``), except that a deleted
    source's last pairing in output order is its rename.  Entries that did not
    change (status ``=``, ``diff_trees(unchanged=True)`` for
    ``--find-copies-harder``) are copy sources too, and are left out of the result.
    Copy detection has no basename step, as in Git.  ``report`` hears what the
    ``limit`` (pairs tried: at most ``limit`` squared) left out.  ``then`` (the
    pickaxe, for one) filters the changes between the pairing and the choice of
    ``R`` or ``C``, as Git's diffcore does: a copy is told from a rename among the
    pairings that are left.
    """
    src = _Sources(changes, copies)
    dsts = [i for i, c in enumerate(changes) if c.status == "A"]
    if not len(src) or not dsts:
        left = [c for c in changes if c.status != "="]
        return then(left) if then is not None else left
    found: dict[int, tuple[int, int]] = {}  # dst index -> (source number, score)
    used = src.used

    # 1. exact
    by_id: dict[bytes | None, list[int]] = {}
    for s in range(len(src)):
        by_id.setdefault(src.oid[s], []).append(s)
    for d in dsts:
        best, best_score = -1, -1
        dst = changes[d]
        # Git fills its hash table with the sources in reverse and reads a bucket
        # newest first: the sources come in their own order.  At most 100
        # candidates are looked at.
        tries = _EXACT_TRIES
        for s in by_id.get(dst.new_id, []):
            if used[s] and not copies:
                continue
            # Anything but two regular files must have the same mode.
            mode = src.mode[s]
            if not (stat.S_ISREG(mode or 0) and stat.S_ISREG(dst.new_mode or 0)) and (
                mode != dst.new_mode
            ):
                continue
            # an unused source first, then one with the same basename
            score = int(not used[s]) + (_basename(src.path[s]) == _basename(dst.path))
            if score > best_score:
                best, best_score = s, score
                if score == 2:
                    break
            tries -= 1
            if not tries:
                break
        if best >= 0:
            found[d] = (best, MAX_SCORE)
            used[best] += 1
    # Renames look only at sources still unused; copies at every one.
    left_src = list(range(len(src))) if copies else [s for s in range(len(src)) if not used[s]]
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
        b = changes[d]
        if not (stat.S_ISREG(src.mode[s] or 0) and stat.S_ISREG(b.new_mode or 0)):
            return 0
        return similarity(content(src.oid[s]), content(b.new_id), floor, counts)

    # 2. unique basenames (renames only)
    if not copies and left_src and left_dst:
        floor = minimum + (MAX_SCORE - minimum) // 2
        src_names = Counter(_basename(src.path[s]) for s in left_src)
        dst_names = Counter(_basename(changes[d].path) for d in left_dst)
        by_name = {_basename(src.path[s]): s for s in left_src}
        for d in left_dst:
            name = _basename(changes[d].path)
            if src_names[name] != 1 or dst_names[name] != 1:
                continue
            s = by_name[name]
            score = score_of(s, d, floor)
            if score < floor:
                continue
            found[d] = (s, score)
            used[s] += 1
        left_src = [s for s in left_src if not used[s]]
        left_dst = [d for d in left_dst if d not in found]

    # 3. everything else, unless there are too many pairs to try
    if left_src and left_dst:
        if report is not None:
            report.needed = 0
        if len(left_src) * len(left_dst) > limit * limit:
            if report is not None:
                report.needed = max(len(left_src), len(left_dst))
            # With --find-copies-harder, Git tries again without the unchanged files.
            changed = [s for s in left_src if changes[src.change[s]].status != "="]
            if len(changed) < len(left_src) and len(changed) * len(left_dst) <= limit * limit:
                left_src = changed
                if report is not None:
                    report.degraded = True
            else:
                left_src = []
    if left_src and left_dst:
        # Git's score_compare as a sort key: higher score first, then a basename
        # match; empty slots last.  Its matrix keeps four slots per destination
        # (record_if_better) and is sorted stably.
        matrix: list[tuple[int, int, int, int] | None] = []
        for d in left_dst:
            slots: list[tuple[int, int, int, int] | None] = [None] * _CANDIDATES
            for s in left_src:
                same = int(_basename(src.path[s]) == _basename(changes[d].path))
                cand = (score_of(s, d, minimum), same, d, s)
                worst = 0
                for k in range(1, _CANDIDATES):
                    if _worse(slots[k], slots[worst]):
                        worst = k
                if _worse(slots[worst], cand):
                    slots[worst] = cand
            matrix.extend(slots)
        matrix.sort(key=lambda c: (1, 0, 0) if c is None else (0, -c[0], -c[1]))
        # Renames first (sources not used yet), then with -C copies (any source).
        for copy_pass in (False, True) if copies else (False,):
            for slot in matrix:
                if slot is None or slot[0] < minimum:
                    break
                score, _same, d, s = slot
                if d in found or (used[s] and not copy_pass):
                    continue
                found[d] = (s, score)
                used[s] += 1
    return _paired(changes, src, found, then)


def _paired(
    changes: list[Any],
    src: _Sources,
    found: dict[int, tuple[int, int]],
    then: Callable[[list[Any]], list[Any]] | None,
) -> list[Any]:
    """The output: each paired addition replaced by its rename or copy, a deletion
    that was paired left out, everything else as it was (Git's order); ``then``
    filters that list before the statuses are decided (see ``detect_renames``)."""
    used = src.used
    kept: list[Any] = []
    source: dict[int, int] = {}  # id() of each pairing -> its source number
    for i, c in enumerate(changes):
        if i in found:
            s, score = found[i]
            if src.path[s] == c.path and src.mode[s] == c.new_mode and src.oid[s] == c.new_id:
                # A path paired with itself, unchanged (a tree that names it twice):
                # no change at all, which Git does not print either.
                continue
            pair = RenameChange(
                "R", c.path, src.mode[s], c.new_mode, src.oid[s], c.new_id, src.path[s], score
            )
            source[id(pair)] = s
            kept.append(pair)
        elif c.status == "D" and used[src.of_change[i]]:
            continue  # renamed away
        elif c.status != "=":  # an unchanged file was only a copy source
            kept.append(c)
    if then is not None:
        kept = then(kept)
    out = []
    for item in kept:
        s = source.get(id(item), -1)
        if s >= 0:
            # Git's diff_resolve_rename_copy: each pairing still there, in output
            # order, takes one use back; a source used after that is copied here.
            used[s] -= 1
            if used[s] > 0:
                item = item._replace(status="C")
        out.append(item)
    return out
