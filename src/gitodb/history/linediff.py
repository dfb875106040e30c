"""Line diff as Git's xdiff computes it by default (the "myers" algorithm).

``diff_lines(a, b)`` takes two sequences of lines (each keeping its ``\\n``; the
last may lack one) and returns the edit script as ``Edit(i1, i2, n1, n2)``
records: ``n1`` lines of ``a`` from index ``i1`` were replaced by ``n2`` lines of
``b`` from ``i2``, in order.  Git's result is reproduced exactly, which means
reproducing each of its stages, because each changes which of the many minimal
(or near-minimal) scripts comes out:

1. Lines are compared as whole byte strings, newline included (``"x"`` at the
   end of a file without a newline differs from ``"x\\n"``).
2. The common prefix and suffix are set aside.
3. Lines of one side that never occur on the other are changed outright; lines
   that occur very often on the other side (at least the integer "square root"
   of the side's length, at most 1024 times) are changed too when they sit in a
   run dominated by such lines.  The rest go to the search.
4. Myers' search for the middle snake, dividing the problem in two at it, with
   xdiff's two shortcuts when a search grows expensive: after 256 edit steps a
   long diagonal (20 equal lines) that has come far is taken as the split, and
   once the cost passes ``max(256, sqrt(n))`` the furthest-reaching diagonal is.
5. Compaction: each group of changed lines is slid up and down over equal lines,
   merged with the groups it meets, aligned with a change on the other side when
   it can be, and otherwise placed where the indent heuristic (on by default
   since Git 2.14) scores the split best.

Lines are identified by interning (equal bytes, equal number), which is what
xdiff's classifier achieves with its hash table.  With a whitespace option
(``-w``, ``-b``, ``--ignore-space-at-eol``, ``--ignore-cr-at-eol``: the ``WS_*``
flags) lines are compared by ``whitespace_key``, the form in which two lines are
equal exactly when xdiff's ``xdl_recmatch`` says they match; the indent heuristic
still measures the lines as they are, as xdiff does.  Those diffs run in Python.

This module is the reference.  ``diff_lines`` runs the native core's copy of it
(``_native/linediff.c``) when that is built, unless ``GITODB_PURE_DIFF=1`` is set
in the environment (read at import); ``diff_lines_py`` is always this Python code.
The differential tests compare the two.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from gitodb.lazyre import lazy

_native_diff_lines: Callable[..., list[tuple[int, int, int, int]]] | None
_native_diff_buffers: Callable[..., Any] | None
try:
    from gitodb._native import diff_buffers as _native_diff_buffers
    from gitodb._native import diff_lines as _native_diff_lines
except ImportError:  # built without the native core
    _native_diff_lines = _native_diff_buffers = None
if os.environ.get("GITODB_PURE_DIFF", "").lower() in ("1", "true", "yes", "on"):
    _native_diff_lines = _native_diff_buffers = None

#: whitespace options (xdiff's XDF_IGNORE_* flags), strongest first
WS_ALL = 1  # -w, --ignore-all-space
WS_CHANGE = 2  # -b, --ignore-space-change
WS_AT_EOL = 4  # --ignore-space-at-eol
WS_CR_AT_EOL = 8  # --ignore-cr-at-eol
_SPACE = b" \t\n\v\f\r"  # C's isspace, as XDL_ISSPACE
_SPACE_RUN = lazy(rb"[ \t\n\v\f\r]+")

_MAX_EQLIMIT = 1024  # a line occurring more often than this on the other side is "common"
_SIMSCAN_WINDOW = 100  # how far the run around a common line is examined
_KPDIS_RUN = 4
_SNAKE_CNT = 20  # a diagonal this long counts as a good snake for the heuristic
_HEUR_MIN_COST = 256
_MAX_COST_MIN = 256
_K_HEUR = 4

# The indent heuristic's weights, tuned by Git on a corpus of real diffs.
_MAX_INDENT = 200
_MAX_BLANKS = 20
_START_OF_FILE_PENALTY = 1
_END_OF_FILE_PENALTY = 21
_TOTAL_BLANK_WEIGHT = -30
_POST_BLANK_WEIGHT = 6
_RELATIVE_INDENT_PENALTY = -4
_RELATIVE_INDENT_WITH_BLANK_PENALTY = 10
_RELATIVE_OUTDENT_PENALTY = 24
_RELATIVE_OUTDENT_WITH_BLANK_PENALTY = 17
_RELATIVE_DEDENT_PENALTY = 23
_RELATIVE_DEDENT_WITH_BLANK_PENALTY = 17
_INDENT_WEIGHT = 60
_INDENT_HEURISTIC_MAX_SLIDING = 100


class Edit(NamedTuple):
    """``n1`` lines of the old side from ``i1`` became ``n2`` lines of the new from ``i2``."""

    i1: int
    i2: int
    n1: int
    n2: int


def split_lines(data: bytes) -> list[bytes]:
    """``data`` cut after each ``\\n`` (only ``\\n`` ends a line, as in xdiff)."""
    if b"\r" not in data:  # then bytes.splitlines cuts exactly at each \n, in C
        return data.splitlines(True)
    parts = data.split(b"\n")
    last = parts.pop()
    lines = [p + b"\n" for p in parts]
    if last:
        lines.append(last)
    return lines


def _bogosqrt(n: int) -> int:
    """xdiff's cheap square root: a power of two near ``sqrt(n)``."""
    i = 1
    while n > 0:
        i <<= 1
        n >>= 2
    return i


def _clean_mmatch(dis: bytearray, i: int, s: int, e: int) -> bool:
    """Whether a line common on the other side (``dis[i] == 2``) should be changed
    outright: it sits between runs of unmatched lines with few matched ones."""
    if i - s > _SIMSCAN_WINDOW:
        s = i - _SIMSCAN_WINDOW
    if e - i > _SIMSCAN_WINDOW:
        e = i + _SIMSCAN_WINDOW
    rdis0 = 0
    rpdis0 = 1
    r = 1
    while i - r >= s:
        d = dis[i - r]
        if d == 0:
            rdis0 += 1
        elif d == 2:
            rpdis0 += 1
        else:
            break
        r += 1
    if rdis0 == 0:
        return False
    rdis1 = 0
    rpdis1 = 1
    r = 1
    while i + r <= e:
        d = dis[i + r]
        if d == 0:
            rdis1 += 1
        elif d == 2:
            rpdis1 += 1
        else:
            break
        r += 1
    if rdis1 == 0:
        return False
    rdis1 += rdis0
    rpdis1 += rpdis0
    return rpdis1 * _KPDIS_RUN < rpdis1 + rdis1


def _effective(
    ids: Sequence[bytes],
    other_counts: Counter[bytes],
    start: int,
    end: int,
    rchg: bytearray,
    minimal: bool,
) -> tuple[list[bytes], list[int]]:
    """Stage 3 for one side: the lines left to the search (and their indexes);
    the others are marked changed in ``rchg``."""
    mlim = min(_bogosqrt(len(ids)), _MAX_EQLIMIT)
    get = other_counts.get
    if minimal:
        marks = [1 if get(x) else 0 for x in ids[start : end + 1]]
    else:
        marks = [
            0 if not (nm := get(x)) else (2 if nm >= mlim else 1) for x in ids[start : end + 1]
        ]
    # dis[i] is line i's mark (positions before ``start`` are never looked at)
    dis = bytearray(start) + bytearray(marks)
    index = [
        i
        for i in range(start, end + 1)
        if dis[i] == 1 or (dis[i] == 2 and not _clean_mmatch(dis, i, start, end))
    ]
    rchg[start : end + 1] = b"\1" * (end + 1 - start)
    for i in index:
        rchg[i] = 0
    ha = [ids[i] for i in index]
    return ha, index


class _Split(NamedTuple):
    i1: int
    i2: int
    min_lo: bool
    min_hi: bool


def _split(
    ha1: list[int],
    off1: int,
    lim1: int,
    ha2: list[int],
    off2: int,
    lim2: int,
    kvdf: list[int],
    kvdb: list[int],
    base: int,
    need_min: bool,
    mxcost: int,
) -> _Split:
    """The middle snake of the box ``[off1, lim1) x [off2, lim2)`` (xdiff's
    ``xdl_split``): forward and backward furthest-reaching paths by diagonal,
    ``kvdf[base + d]``, until they overlap or a shortcut applies."""
    dmin = off1 - lim2
    dmax = lim1 - off2
    fmid = off1 - off2
    bmid = lim1 - lim2
    odd = (fmid - bmid) & 1
    fmin = fmax = fmid
    bmin = bmax = bmid
    kvdf[base + fmid] = off1
    kvdb[base + bmid] = lim1
    big = 1 << 62
    ec = 0
    while True:
        ec += 1
        got_snake = False
        # forward
        if fmin > dmin:
            fmin -= 1
            kvdf[base + fmin - 1] = -1
        else:
            fmin += 1
        if fmax < dmax:
            fmax += 1
            kvdf[base + fmax + 1] = -1
        else:
            fmax -= 1
        for d in range(fmax, fmin - 1, -2):
            lo = kvdf[base + d - 1]
            hi = kvdf[base + d + 1]
            i1 = lo + 1 if lo >= hi else hi
            prev1 = i1
            i2 = i1 - d
            while i1 < lim1 and i2 < lim2 and ha1[i1] == ha2[i2]:
                i1 += 1
                i2 += 1
            if i1 - prev1 > _SNAKE_CNT:
                got_snake = True
            kvdf[base + d] = i1
            if odd and bmin <= d <= bmax and kvdb[base + d] <= i1:
                return _Split(i1, i2, True, True)
        # backward
        if bmin > dmin:
            bmin -= 1
            kvdb[base + bmin - 1] = big
        else:
            bmin += 1
        if bmax < dmax:
            bmax += 1
            kvdb[base + bmax + 1] = big
        else:
            bmax -= 1
        for d in range(bmax, bmin - 1, -2):
            lo = kvdb[base + d - 1]
            hi = kvdb[base + d + 1]
            i1 = lo if lo < hi else hi - 1
            prev1 = i1
            i2 = i1 - d
            while i1 > off1 and i2 > off2 and ha1[i1 - 1] == ha2[i2 - 1]:
                i1 -= 1
                i2 -= 1
            if prev1 - i1 > _SNAKE_CNT:
                got_snake = True
            kvdb[base + d] = i1
            if not odd and fmin <= d <= fmax and i1 <= kvdf[base + d]:
                return _Split(i1, i2, True, True)
        if need_min:
            continue
        # A long snake that has come far is good enough once the search is costly.
        if got_snake and ec > _HEUR_MIN_COST:
            best = 0
            spl: _Split | None = None
            for d in range(fmax, fmin - 1, -2):
                dd = d - fmid if d > fmid else fmid - d
                i1 = kvdf[base + d]
                i2 = i1 - d
                v = (i1 - off1) + (i2 - off2) - dd
                if (
                    v > _K_HEUR * ec
                    and v > best
                    and off1 + _SNAKE_CNT <= i1 < lim1
                    and off2 + _SNAKE_CNT <= i2 < lim2
                ):
                    k = 1
                    while ha1[i1 - k] == ha2[i2 - k]:
                        if k == _SNAKE_CNT:
                            best = v
                            spl = _Split(i1, i2, True, False)
                            break
                        k += 1
            if spl is not None:
                return spl
            best = 0
            for d in range(bmax, bmin - 1, -2):
                dd = d - bmid if d > bmid else bmid - d
                i1 = kvdb[base + d]
                i2 = i1 - d
                v = (lim1 - i1) + (lim2 - i2) - dd
                if (
                    v > _K_HEUR * ec
                    and v > best
                    and off1 < i1 <= lim1 - _SNAKE_CNT
                    and off2 < i2 <= lim2 - _SNAKE_CNT
                ):
                    k = 0
                    while ha1[i1 + k] == ha2[i2 + k]:
                        if k == _SNAKE_CNT - 1:
                            best = v
                            spl = _Split(i1, i2, False, True)
                            break
                        k += 1
            if spl is not None:
                return spl
        # Too costly: split at the furthest-reaching path of either direction.
        if ec >= mxcost:
            fbest = fbest1 = -1
            for d in range(fmax, fmin - 1, -2):
                i1 = min(kvdf[base + d], lim1)
                i2 = i1 - d
                if lim2 < i2:
                    i1 = lim2 + d
                    i2 = lim2
                if fbest < i1 + i2:
                    fbest = i1 + i2
                    fbest1 = i1
            bbest = bbest1 = big
            for d in range(bmax, bmin - 1, -2):
                i1 = max(off1, kvdb[base + d])
                i2 = i1 - d
                if i2 < off2:
                    i1 = off2 + d
                    i2 = off2
                if i1 + i2 < bbest:
                    bbest = i1 + i2
                    bbest1 = i1
            if (lim1 + lim2) - bbest < fbest - (off1 + off2):
                return _Split(fbest1, fbest - fbest1, True, False)
            return _Split(bbest1, bbest - bbest1, False, True)


def _myers(
    ha1: list[int],
    index1: list[int],
    rchg1: bytearray,
    ha2: list[int],
    index2: list[int],
    rchg2: bytearray,
    minimal: bool,
) -> None:
    """Stage 4: mark in ``rchg1``/``rchg2`` the lines the search leaves unmatched."""
    n1 = len(ha1)
    n2 = len(ha2)
    ndiags = n1 + n2 + 3
    kvdf = [0] * (ndiags + 1)
    kvdb = [0] * (ndiags + 1)
    base = n2 + 1
    mxcost = max(_bogosqrt(ndiags), _MAX_COST_MIN)
    # xdiff recurses into the two halves; the boxes are independent, so a stack
    # of them does the same work without the interpreter's recursion limit.
    todo = [(0, n1, 0, n2, minimal)]
    while todo:
        off1, lim1, off2, lim2, need_min = todo.pop()
        while off1 < lim1 and off2 < lim2 and ha1[off1] == ha2[off2]:
            off1 += 1
            off2 += 1
        while off1 < lim1 and off2 < lim2 and ha1[lim1 - 1] == ha2[lim2 - 1]:
            lim1 -= 1
            lim2 -= 1
        if off1 == lim1:
            for k in range(off2, lim2):
                rchg2[index2[k]] = 1
        elif off2 == lim2:
            for k in range(off1, lim1):
                rchg1[index1[k]] = 1
        else:
            s = _split(ha1, off1, lim1, ha2, off2, lim2, kvdf, kvdb, base, need_min, mxcost)
            todo.append((s.i1, lim1, s.i2, lim2, s.min_hi))
            todo.append((off1, s.i1, off2, s.i2, s.min_lo))


def _indent(line: bytes) -> int:
    """Git's ``get_indent``: columns of leading blanks (tabs to multiples of 8),
    capped at 200; -1 for a line of whitespace only."""
    ret = 0
    for c in line:
        if c == 32:
            ret += 1
        elif c == 9:
            ret += 8 - ret % 8
        elif c != 10 and c != 13:  # other whitespace counts for nothing
            return ret
        if ret >= _MAX_INDENT:
            return _MAX_INDENT
    return -1


class _Indents:
    """Indents of one side's lines, computed when first asked for."""

    def __init__(self, lines: Sequence[bytes]) -> None:
        self.lines = lines
        self.cache: dict[int, int] = {}

    def __getitem__(self, i: int) -> int:
        got = self.cache.get(i)
        if got is None:
            got = self.cache[i] = _indent(self.lines[i])
        return got


def _split_score(ind: _Indents, n: int, split: int) -> tuple[int, int]:
    """Git's ``measure_split`` + ``score_add_split``: (effective indent, penalty)
    of cutting the file before line ``split``."""
    if split >= n:
        end_of_file = True
        indent = -1
    else:
        end_of_file = False
        indent = ind[split]
    pre_blank = 0
    pre_indent = -1
    for i in range(split - 1, -1, -1):
        pre_indent = ind[i]
        if pre_indent != -1:
            break
        pre_blank += 1
        if pre_blank == _MAX_BLANKS:
            pre_indent = 0
            break
    post_blank = 0
    post_indent = -1
    for i in range(split + 1, n):
        post_indent = ind[i]
        if post_indent != -1:
            break
        post_blank += 1
        if post_blank == _MAX_BLANKS:
            post_indent = 0
            break

    penalty = 0
    if pre_indent == -1 and pre_blank == 0:
        penalty += _START_OF_FILE_PENALTY
    if end_of_file:
        penalty += _END_OF_FILE_PENALTY
    post_blank = 1 + post_blank if indent == -1 else 0
    total_blank = pre_blank + post_blank
    penalty += _TOTAL_BLANK_WEIGHT * total_blank
    penalty += _POST_BLANK_WEIGHT * post_blank
    if indent == -1:
        indent = post_indent
    any_blanks = total_blank != 0
    if indent == -1 or pre_indent == -1:
        pass
    elif indent > pre_indent:
        penalty += _RELATIVE_INDENT_WITH_BLANK_PENALTY if any_blanks else _RELATIVE_INDENT_PENALTY
    elif indent == pre_indent:
        pass
    elif post_indent != -1 and post_indent > indent:
        penalty += _RELATIVE_OUTDENT_WITH_BLANK_PENALTY if any_blanks else _RELATIVE_OUTDENT_PENALTY
    else:
        penalty += _RELATIVE_DEDENT_WITH_BLANK_PENALTY if any_blanks else _RELATIVE_DEDENT_PENALTY
    return indent, penalty


def _nth_zero(r: bytearray, pos: int, m: int) -> int:
    """The position of the ``m``-th unchanged line (0 byte) at or after ``pos``."""
    while True:
        pos = r.find(0, pos)
        z = r.count(0, pos, pos + m)
        if z == m:
            return pos + m - 1
        pos += m
        m -= z


def _compact(
    lines: Sequence[bytes],
    rchg: bytearray,
    rchg_o: bytearray,
    heuristic: bool,
    raw: Sequence[bytes],
) -> None:
    """Stage 5 for one side (xdiff's ``xdl_change_compact``), keeping the other
    side's groups in step.

    ``rchg`` has one byte past the last line, always 0: it is the sentinel both
    after the end and, through Python's index -1, before the start.  A group is
    the run of changed lines after an unchanged one (often empty); group ``k`` of
    one side goes with group ``k`` of the other.  Groups that cannot slide are
    skipped over in C (``find``/``count``), the other side's position jumped by as
    many groups.  ``lines`` are compared, ``raw`` (the same lines as they are)
    measured by the indent heuristic.
    """
    n = len(rchg) - 1
    n_o = len(rchg_o) - 1
    ind: _Indents | None = None
    gs = 0
    ge = rchg.find(0)
    os = 0
    oe = rchg_o.find(0)

    def up() -> bool:
        # group_slide_up, then group_previous on the other side
        nonlocal gs, ge, os, oe
        if gs > 0 and lines[gs - 1] == lines[ge - 1]:
            gs -= 1
            rchg[gs] = 1
            ge -= 1
            rchg[ge] = 0
            while rchg[gs - 1]:
                gs -= 1
            if os == 0:
                raise AssertionError("group sync broken sliding up")
            oe = os - 1
            os = oe
            while rchg_o[os - 1]:
                os -= 1
            return True
        return False

    while True:
        if ge != gs and (
            (gs > 0 and lines[gs - 1] == lines[ge - 1]) or (ge < n and lines[gs] == lines[ge])
        ):
            while True:
                groupsize = ge - gs
                end_matching_other = -1
                while up():
                    pass
                earliest_end = ge
                if oe > os:
                    end_matching_other = ge
                # slide down as far as possible
                while ge < n and lines[gs] == lines[ge]:
                    rchg[gs] = 0
                    gs += 1
                    rchg[ge] = 1
                    ge += 1
                    while rchg[ge]:
                        ge += 1
                    if oe == n_o:
                        raise AssertionError("group sync broken sliding down")
                    os = oe + 1
                    oe = rchg_o.find(0, os)
                    if oe > os:
                        end_matching_other = ge
                if groupsize == ge - gs:
                    break
            if ge == earliest_end:
                pass  # it cannot move
            elif end_matching_other != -1:
                # line up with the last change on the other side it can meet
                while oe == os:
                    if not up():
                        raise AssertionError("match disappeared")
            elif heuristic:
                if ind is None:
                    ind = _Indents(raw)
                shift = max(earliest_end, ge - groupsize - 1, ge - _INDENT_HEURISTIC_MAX_SLIDING)
                best_shift = -1
                best = (0, 0)
                while shift <= ge:
                    i1, p1 = _split_score(ind, n, shift)
                    i2, p2 = _split_score(ind, n, shift - groupsize)
                    score = (i1 + i2, p1 + p2)
                    if best_shift == -1:
                        better = True
                    else:
                        cmp = (score[0] > best[0]) - (score[0] < best[0])
                        better = _INDENT_WEIGHT * cmp + (score[1] - best[1]) <= 0
                    if better:
                        best = score
                        best_shift = shift
                    shift += 1
                while ge > best_shift:
                    if not up():
                        raise AssertionError("best shift unreached")
        # on to the next group that has lines
        if ge == n:
            break
        nxt = rchg.find(1, ge + 1)
        if nxt < 0:
            break
        m = nxt - ge  # unchanged lines passed: as many groups on the other side
        gs = nxt
        ge = rchg.find(0, nxt)
        other = _nth_zero(rchg_o, oe, m)
        if other >= n_o:
            raise AssertionError("group sync broken moving to next group")
        os = other + 1
        oe = rchg_o.find(0, os)


def whitespace_key(flags: int) -> Callable[[bytes], bytes] | None:
    """The comparison form of a line under the whitespace ``flags`` (None for
    none): the strongest flag decides, as in ``xdl_recmatch``.

    ``-w`` drops every whitespace byte; ``-b`` makes each run of whitespace one
    space and drops it at the end of the line; ``--ignore-space-at-eol`` drops the
    whitespace at the end; ``--ignore-cr-at-eol`` drops the newline and a CR before
    it (a line without its newline then matches the same line with one).
    """
    if flags & WS_ALL:
        return lambda line: line.translate(None, _SPACE)
    if flags & WS_CHANGE:
        return lambda line: _SPACE_RUN.sub(b" ", line).rstrip(b" ")
    if flags & WS_AT_EOL:
        return lambda line: line.rstrip(_SPACE)
    if flags & WS_CR_AT_EOL:
        return _without_cr_at_eol
    return None


def same_lines(old: bytes, new: bytes, flags: int) -> bool:
    """Whether the two files' lines are equal under the whitespace ``flags``: their
    diff would be empty (it has an edit exactly where the compared forms differ)."""
    key = whitespace_key(flags)
    if key is None:
        return old == new
    return list(map(key, split_lines(old))) == list(map(key, split_lines(new)))


def _without_cr_at_eol(line: bytes) -> bytes:
    if line.endswith(b"\r\n"):
        return line[:-2]
    return line[:-1] if line.endswith(b"\n") else line


def native_enabled() -> bool:
    """True when ``diff_lines`` runs in the native core."""
    return _native_diff_lines is not None


def diff_lines(
    a: Sequence[bytes],
    b: Sequence[bytes],
    *,
    indent_heuristic: bool = True,
    minimal: bool = False,
    whitespace: int = 0,
) -> list[Edit]:
    """The edit script from lines ``a`` to lines ``b``, as Git's default diff finds
    it (``indent_heuristic``: ``diff.indentHeuristic``, on by default;
    ``minimal``: ``--minimal``, no shortcuts; ``whitespace``: ``WS_*`` flags)."""
    if whitespace:
        return diff_lines_py(
            a, b, indent_heuristic=indent_heuristic, minimal=minimal, whitespace=whitespace
        )
    if _native_diff_lines is not None:
        return list(map(Edit._make, _native_diff_lines(a, b, indent_heuristic, minimal)))
    return diff_lines_py(a, b, indent_heuristic=indent_heuristic, minimal=minimal)


def diff_data(
    old: bytes,
    new: bytes,
    *,
    indent_heuristic: bool = True,
    minimal: bool = False,
    whitespace: int = 0,
) -> list[Edit]:
    """``diff_lines`` of two files' lines (``split_lines``); the native core cuts
    the lines itself and makes no line objects."""
    if _native_diff_buffers is not None and not whitespace:
        return list(
            map(Edit._make, _native_diff_buffers(bytes(old), bytes(new), indent_heuristic, minimal))
        )
    return diff_lines_py(
        split_lines(old),
        split_lines(new),
        indent_heuristic=indent_heuristic,
        minimal=minimal,
        whitespace=whitespace,
    )


def native_hunks(
    old: bytes,
    new: bytes,
    context: int,
    inter_hunk: int,
    *,
    indent_heuristic: bool = True,
    minimal: bool = False,
) -> bytes | None:
    """The unified hunks of two files as ``patch.hunks`` writes them (``b""``: no
    change), computed wholly in the native core; None when it is not in use."""
    if _native_diff_buffers is None:
        return None
    return _native_diff_buffers(  # type: ignore[no-any-return]
        bytes(old), bytes(new), indent_heuristic, minimal, context, inter_hunk
    )


def diff_lines_py(
    a: Sequence[bytes],
    b: Sequence[bytes],
    *,
    indent_heuristic: bool = True,
    minimal: bool = False,
    whitespace: int = 0,
) -> list[Edit]:
    """``diff_lines`` in pure Python (the reference for the native core)."""
    raw_a, raw_b = a, b  # what the indent heuristic measures
    key = whitespace_key(whitespace)
    if key is not None:
        a, b = list(map(key, a)), list(map(key, b))
    n1 = len(a)
    n2 = len(b)
    # Stage 2: the common ends.
    start = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        start += 1
    lim = min(n1, n2) - start
    tail = 0
    if lim:
        for x, y in zip(reversed(a), reversed(b), strict=False):
            if tail == lim or x != y:
                break
            tail += 1
    end1 = n1 - tail - 1
    end2 = n2 - tail - 1
    if start > end1 and start > end2:
        return []
    if not n1 or not n2:
        # One side is empty: nothing to search or slide.
        return [Edit(0, 0, n1, n2)]
    rchg1 = bytearray(n1 + 1)
    rchg2 = bytearray(n2 + 1)
    # Stage 3 (counts over the whole files, as xdiff's classifier keeps them),
    # then 4 on the lines left, numbered by class.
    ha1, index1 = _effective(a, Counter(b), start, end1, rchg1, minimal)
    ha2, index2 = _effective(b, Counter(a), start, end2, rchg2, minimal)
    if ha1 and ha2:
        classes: dict[bytes, int] = {}
        ids1 = [classes.setdefault(x, len(classes)) for x in ha1]
        ids2 = [classes.setdefault(x, len(classes)) for x in ha2]
        _myers(ids1, index1, rchg1, ids2, index2, rchg2, minimal)
    else:
        for k in index1:
            rchg1[k] = 1
        for k in index2:
            rchg2[k] = 1
    # Stage 5, each side against the other.
    _compact(a, rchg1, rchg2, indent_heuristic, raw_a)
    _compact(b, rchg2, rchg1, indent_heuristic, raw_b)
    return _script(rchg1, rchg2)


def _script(rchg1: bytearray, rchg2: bytearray) -> list[Edit]:
    """The changed runs of both sides, paired up in order (``xdl_build_script``):
    unchanged lines pair one to one, so both sides advance together between runs."""
    out: list[Edit] = []
    n1 = len(rchg1) - 1
    n2 = len(rchg2) - 1
    i1 = i2 = 0
    while True:
        c1 = rchg1.find(1, i1)
        c2 = rchg2.find(1, i2)
        if c1 < 0 and c2 < 0:
            return out
        step = min(c1 - i1 if c1 >= 0 else n1 - i1, c2 - i2 if c2 >= 0 else n2 - i2)
        i1 += step
        i2 += step
        e1 = rchg1.find(0, i1)
        e2 = rchg2.find(0, i2)
        out.append(Edit(i1, i2, e1 - i1, e2 - i2))
        i1 = e1
        i2 = e2
