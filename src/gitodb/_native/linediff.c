/*
 * Git's default line diff (gitodb._native.diff_lines): the native form of
 * gitodb.history.linediff.diff_lines, which is the reference (its docstring names
 * the stages; each function here says which Python function it mirrors, and the
 * hypothesis tests in tests/test_linediff_native.py compare the two).
 *
 * The lines come in as two sequences of bytes.  They are copied into a tuple (so
 * no other thread can drop a line while the GIL is released) and from then on
 * only pointers and lengths are used: every line is hashed and put in a class
 * (equal bytes, equal class, as xdiff's classifier does), and all the stages work
 * on class numbers.  Every allocation is a small multiple of the number of lines,
 * which the caller already holds in memory, so nothing is sized by a number read
 * from the input.  Big diffs run without the GIL.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pack.h"

#define MAX_EQLIMIT 1024
#define SIMSCAN_WINDOW 100
#define KPDIS_RUN 4
#define SNAKE_CNT 20
#define HEUR_MIN_COST 256
#define MAX_COST_MIN 256
#define K_HEUR 4

#define MAX_INDENT 200
#define MAX_BLANKS 20
#define START_OF_FILE_PENALTY 1
#define END_OF_FILE_PENALTY 21
#define TOTAL_BLANK_WEIGHT (-30)
#define POST_BLANK_WEIGHT 6
#define RELATIVE_INDENT_PENALTY (-4)
#define RELATIVE_INDENT_WITH_BLANK_PENALTY 10
#define RELATIVE_OUTDENT_PENALTY 24
#define RELATIVE_OUTDENT_WITH_BLANK_PENALTY 17
#define RELATIVE_DEDENT_PENALTY 23
#define RELATIVE_DEDENT_WITH_BLANK_PENALTY 17
#define INDENT_WEIGHT 60
#define INDENT_HEURISTIC_MAX_SLIDING 100

/* Lines in both files from which the work runs without the GIL. */
#define NOGIL_MIN_LINES 2000

typedef int64_t idx_t;

typedef struct {
    const unsigned char **ptr;
    idx_t *len;
    idx_t n;
    idx_t *cls;      /* class of each line */
    char *rchg_buf;  /* n + 2 bytes: rchg[-1] and rchg[n] are 0 sentinels */
    char *rchg;
    int *indent;     /* -2 until computed */
} side_t;

typedef struct {
    uint64_t hash;
    const unsigned char *ptr;
    idx_t len;
    idx_t cnt[2];
} class_t;

typedef struct {
    class_t *cls;
    idx_t ncls;
} classes_t;

static uint64_t
line_hash(const unsigned char *p, idx_t len)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)len;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
        p += 8;
        len -= 8;
    }
    if (len) {
        uint64_t w = 0;
        memcpy(&w, p, (size_t)len);
        h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    return h;
}

/* Give every line of both sides its class; counts per side kept in the class. */
static int
classify(side_t *s1, side_t *s2, classes_t *out)
{
    idx_t total = s1->n + s2->n;
    size_t cap = 16;
    while (cap < (size_t)total * 2)
        cap <<= 1;
    idx_t *table = malloc(cap * sizeof(idx_t));
    out->cls = malloc(((size_t)total + 1) * sizeof(class_t));
    out->ncls = 0;
    if (!table || !out->cls) {
        free(table);
        return -1;
    }
    memset(table, 0xff, cap * sizeof(idx_t)); /* -1: empty */
    side_t *sides[2] = {s1, s2};
    for (int k = 0; k < 2; k++) {
        side_t *s = sides[k];
        for (idx_t i = 0; i < s->n; i++) {
            const unsigned char *p = s->ptr[i];
            idx_t len = s->len[i];
            uint64_t h = line_hash(p, len);
            size_t slot = (size_t)h & (cap - 1);
            idx_t c;
            for (;;) {
                c = table[slot];
                if (c < 0) {
                    c = out->ncls++;
                    table[slot] = c;
                    out->cls[c].hash = h;
                    out->cls[c].ptr = p;
                    out->cls[c].len = len;
                    out->cls[c].cnt[0] = out->cls[c].cnt[1] = 0;
                    break;
                }
                class_t *e = &out->cls[c];
                if (e->hash == h && e->len == len && memcmp(e->ptr, p, (size_t)len) == 0)
                    break;
                slot = (slot + 1) & (cap - 1);
            }
            out->cls[c].cnt[k]++;
            s->cls[i] = c;
        }
    }
    free(table);
    return 0;
}

static idx_t
bogosqrt(idx_t n)
{
    idx_t i = 1;
    while (n > 0) {
        i <<= 1;
        n >>= 2;
    }
    return i;
}

/* linediff._clean_mmatch */
static int
clean_mmatch(const char *dis, idx_t i, idx_t s, idx_t e)
{
    idx_t rdis0 = 0, rpdis0 = 1, rdis1 = 0, rpdis1 = 1, r;
    if (i - s > SIMSCAN_WINDOW)
        s = i - SIMSCAN_WINDOW;
    if (e - i > SIMSCAN_WINDOW)
        e = i + SIMSCAN_WINDOW;
    for (r = 1; i - r >= s; r++) {
        char d = dis[i - r];
        if (d == 0)
            rdis0++;
        else if (d == 2)
            rpdis0++;
        else
            break;
    }
    if (rdis0 == 0)
        return 0;
    for (r = 1; i + r <= e; r++) {
        char d = dis[i + r];
        if (d == 0)
            rdis1++;
        else if (d == 2)
            rpdis1++;
        else
            break;
    }
    if (rdis1 == 0)
        return 0;
    rdis1 += rdis0;
    rpdis1 += rpdis0;
    return rpdis1 * KPDIS_RUN < rpdis1 + rdis1;
}

/* linediff._effective: fills ha/index (count in *nout) and marks the rest changed. */
static int
effective(side_t *s, const classes_t *cl, int other, idx_t start, idx_t end, int minimal,
          idx_t *ha, idx_t *index, idx_t *nout)
{
    idx_t mlim = bogosqrt(s->n);
    if (mlim > MAX_EQLIMIT)
        mlim = MAX_EQLIMIT;
    idx_t cnt = end + 1 - start;
    idx_t k = 0;
    *nout = 0;
    if (cnt <= 0)
        return 0;
    char *dis = malloc((size_t)cnt);
    if (!dis)
        return -1;
    /* dis[i - start] is line i's mark; clean_mmatch only looks at differences */
    for (idx_t i = start; i <= end; i++) {
        idx_t nm = cl->cls[s->cls[i]].cnt[other];
        if (minimal)
            dis[i - start] = nm ? 1 : 0;
        else
            dis[i - start] = nm == 0 ? 0 : (nm >= mlim ? 2 : 1);
    }
    for (idx_t i = start; i <= end; i++) {
        char d = dis[i - start];
        if (d == 1 || (d == 2 && !clean_mmatch(dis, i - start, 0, end - start))) {
            s->rchg[i] = 0;
            index[k] = i;
            ha[k] = s->cls[i];
            k++;
        } else {
            s->rchg[i] = 1;
        }
    }
    free(dis);
    *nout = k;
    return 0;
}

typedef struct {
    idx_t i1, i2;
    int min_lo, min_hi;
} split_t;

/* linediff._split */
static split_t
split(const idx_t *ha1, idx_t off1, idx_t lim1, const idx_t *ha2, idx_t off2, idx_t lim2,
      idx_t *kvdf, idx_t *kvdb, int need_min, idx_t mxcost)
{
    idx_t dmin = off1 - lim2, dmax = lim1 - off2;
    idx_t fmid = off1 - off2, bmid = lim1 - lim2;
    int odd = (int)((fmid - bmid) & 1);
    idx_t fmin = fmid, fmax = fmid, bmin = bmid, bmax = bmid;
    const idx_t big = (idx_t)1 << 62;
    idx_t ec, d, i1, i2, prev1;
    split_t spl;
    kvdf[fmid] = off1;
    kvdb[bmid] = lim1;
    for (ec = 1;; ec++) {
        int got_snake = 0;
        if (fmin > dmin)
            kvdf[--fmin - 1] = -1;
        else
            ++fmin;
        if (fmax < dmax)
            kvdf[++fmax + 1] = -1;
        else
            --fmax;
        for (d = fmax; d >= fmin; d -= 2) {
            idx_t lo = kvdf[d - 1], hi = kvdf[d + 1];
            i1 = lo >= hi ? lo + 1 : hi;
            prev1 = i1;
            i2 = i1 - d;
            while (i1 < lim1 && i2 < lim2 && ha1[i1] == ha2[i2]) {
                i1++;
                i2++;
            }
            if (i1 - prev1 > SNAKE_CNT)
                got_snake = 1;
            kvdf[d] = i1;
            if (odd && bmin <= d && d <= bmax && kvdb[d] <= i1) {
                spl.i1 = i1;
                spl.i2 = i2;
                spl.min_lo = spl.min_hi = 1;
                return spl;
            }
        }
        if (bmin > dmin)
            kvdb[--bmin - 1] = big;
        else
            ++bmin;
        if (bmax < dmax)
            kvdb[++bmax + 1] = big;
        else
            --bmax;
        for (d = bmax; d >= bmin; d -= 2) {
            idx_t lo = kvdb[d - 1], hi = kvdb[d + 1];
            i1 = lo < hi ? lo : hi - 1;
            prev1 = i1;
            i2 = i1 - d;
            while (i1 > off1 && i2 > off2 && ha1[i1 - 1] == ha2[i2 - 1]) {
                i1--;
                i2--;
            }
            if (prev1 - i1 > SNAKE_CNT)
                got_snake = 1;
            kvdb[d] = i1;
            if (!odd && fmin <= d && d <= fmax && i1 <= kvdf[d]) {
                spl.i1 = i1;
                spl.i2 = i2;
                spl.min_lo = spl.min_hi = 1;
                return spl;
            }
        }
        if (need_min)
            continue;
        if (got_snake && ec > HEUR_MIN_COST) {
            idx_t best = 0;
            int found = 0;
            for (d = fmax; d >= fmin; d -= 2) {
                idx_t dd = d > fmid ? d - fmid : fmid - d;
                i1 = kvdf[d];
                i2 = i1 - d;
                idx_t v = (i1 - off1) + (i2 - off2) - dd;
                if (v > K_HEUR * ec && v > best && off1 + SNAKE_CNT <= i1 && i1 < lim1
                    && off2 + SNAKE_CNT <= i2 && i2 < lim2) {
                    for (idx_t k = 1; ha1[i1 - k] == ha2[i2 - k]; k++) {
                        if (k == SNAKE_CNT) {
                            best = v;
                            spl.i1 = i1;
                            spl.i2 = i2;
                            found = 1;
                            break;
                        }
                    }
                }
            }
            if (found) {
                spl.min_lo = 1;
                spl.min_hi = 0;
                return spl;
            }
            best = 0;
            for (d = bmax; d >= bmin; d -= 2) {
                idx_t dd = d > bmid ? d - bmid : bmid - d;
                i1 = kvdb[d];
                i2 = i1 - d;
                idx_t v = (lim1 - i1) + (lim2 - i2) - dd;
                if (v > K_HEUR * ec && v > best && off1 < i1 && i1 <= lim1 - SNAKE_CNT
                    && off2 < i2 && i2 <= lim2 - SNAKE_CNT) {
                    for (idx_t k = 0; ha1[i1 + k] == ha2[i2 + k]; k++) {
                        if (k == SNAKE_CNT - 1) {
                            best = v;
                            spl.i1 = i1;
                            spl.i2 = i2;
                            found = 1;
                            break;
                        }
                    }
                }
            }
            if (found) {
                spl.min_lo = 0;
                spl.min_hi = 1;
                return spl;
            }
        }
        if (ec >= mxcost) {
            idx_t fbest = -1, fbest1 = -1, bbest = big, bbest1 = big;
            for (d = fmax; d >= fmin; d -= 2) {
                i1 = kvdf[d] < lim1 ? kvdf[d] : lim1;
                i2 = i1 - d;
                if (lim2 < i2) {
                    i1 = lim2 + d;
                    i2 = lim2;
                }
                if (fbest < i1 + i2) {
                    fbest = i1 + i2;
                    fbest1 = i1;
                }
            }
            for (d = bmax; d >= bmin; d -= 2) {
                i1 = kvdb[d] > off1 ? kvdb[d] : off1;
                i2 = i1 - d;
                if (i2 < off2) {
                    i1 = off2 + d;
                    i2 = off2;
                }
                if (i1 + i2 < bbest) {
                    bbest = i1 + i2;
                    bbest1 = i1;
                }
            }
            if ((lim1 + lim2) - bbest < fbest - (off1 + off2)) {
                spl.i1 = fbest1;
                spl.i2 = fbest - fbest1;
                spl.min_lo = 1;
                spl.min_hi = 0;
            } else {
                spl.i1 = bbest1;
                spl.i2 = bbest - bbest1;
                spl.min_lo = 0;
                spl.min_hi = 1;
            }
            return spl;
        }
    }
}

typedef struct {
    idx_t off1, lim1, off2, lim2;
    int need_min;
} box_t;

/* linediff._myers */
static int
myers(const idx_t *ha1, const idx_t *index1, idx_t n1, char *rchg1, const idx_t *ha2,
      const idx_t *index2, idx_t n2, char *rchg2, int minimal)
{
    idx_t ndiags = n1 + n2 + 3;
    idx_t *kv = malloc(2 * ((size_t)ndiags + 1) * sizeof(idx_t));
    size_t cap = 64, top = 0;
    box_t *todo = malloc(cap * sizeof(box_t));
    if (!kv || !todo) {
        free(kv);
        free(todo);
        return -1;
    }
    memset(kv, 0, 2 * ((size_t)ndiags + 1) * sizeof(idx_t));
    idx_t *kvdf = kv + n2 + 1, *kvdb = kv + (ndiags + 1) + n2 + 1;
    idx_t mxcost = bogosqrt(ndiags);
    if (mxcost < MAX_COST_MIN)
        mxcost = MAX_COST_MIN;
    todo[top++] = (box_t){0, n1, 0, n2, minimal};
    while (top) {
        box_t b = todo[--top];
        idx_t off1 = b.off1, lim1 = b.lim1, off2 = b.off2, lim2 = b.lim2;
        while (off1 < lim1 && off2 < lim2 && ha1[off1] == ha2[off2]) {
            off1++;
            off2++;
        }
        while (off1 < lim1 && off2 < lim2 && ha1[lim1 - 1] == ha2[lim2 - 1]) {
            lim1--;
            lim2--;
        }
        if (off1 == lim1) {
            for (idx_t k = off2; k < lim2; k++)
                rchg2[index2[k]] = 1;
        } else if (off2 == lim2) {
            for (idx_t k = off1; k < lim1; k++)
                rchg1[index1[k]] = 1;
        } else {
            split_t s = split(ha1, off1, lim1, ha2, off2, lim2, kvdf, kvdb, b.need_min, mxcost);
            if (top + 2 > cap) {
                box_t *t = realloc(todo, 2 * cap * sizeof(box_t));
                if (!t) {
                    free(kv);
                    free(todo);
                    return -1;
                }
                todo = t;
                cap *= 2;
            }
            todo[top++] = (box_t){s.i1, lim1, s.i2, lim2, s.min_hi};
            todo[top++] = (box_t){off1, s.i1, off2, s.i2, s.min_lo};
        }
    }
    free(kv);
    free(todo);
    return 0;
}

/* linediff._indent */
static int
get_indent(side_t *s, idx_t i)
{
    int got = s->indent[i];
    if (got != -2)
        return got;
    const unsigned char *p = s->ptr[i];
    idx_t len = s->len[i];
    int ret = 0;
    got = -1;
    for (idx_t k = 0; k < len; k++) {
        unsigned char c = p[k];
        if (c == ' ')
            ret += 1;
        else if (c == '\t')
            ret += 8 - ret % 8;
        else if (c != '\n' && c != '\r') {
            got = ret;
            break;
        }
        if (ret >= MAX_INDENT) {
            got = MAX_INDENT;
            break;
        }
    }
    s->indent[i] = got;
    return got;
}

/* linediff._split_score: the effective indent and the penalty of a cut before line split. */
static void
split_score(side_t *s, idx_t split_at, int *indent_out, int *penalty_out)
{
    idx_t n = s->n;
    int end_of_file, indent, pre_blank = 0, pre_indent = -1, post_blank = 0, post_indent = -1;
    int penalty = 0, total_blank, any_blanks;
    if (split_at >= n) {
        end_of_file = 1;
        indent = -1;
    } else {
        end_of_file = 0;
        indent = get_indent(s, split_at);
    }
    for (idx_t i = split_at - 1; i >= 0; i--) {
        pre_indent = get_indent(s, i);
        if (pre_indent != -1)
            break;
        pre_blank++;
        if (pre_blank == MAX_BLANKS) {
            pre_indent = 0;
            break;
        }
    }
    for (idx_t i = split_at + 1; i < n; i++) {
        post_indent = get_indent(s, i);
        if (post_indent != -1)
            break;
        post_blank++;
        if (post_blank == MAX_BLANKS) {
            post_indent = 0;
            break;
        }
    }
    if (pre_indent == -1 && pre_blank == 0)
        penalty += START_OF_FILE_PENALTY;
    if (end_of_file)
        penalty += END_OF_FILE_PENALTY;
    post_blank = indent == -1 ? 1 + post_blank : 0;
    total_blank = pre_blank + post_blank;
    penalty += TOTAL_BLANK_WEIGHT * total_blank;
    penalty += POST_BLANK_WEIGHT * post_blank;
    if (indent == -1)
        indent = post_indent;
    any_blanks = total_blank != 0;
    if (indent == -1 || pre_indent == -1) {
        /* nothing */
    } else if (indent > pre_indent) {
        penalty += any_blanks ? RELATIVE_INDENT_WITH_BLANK_PENALTY : RELATIVE_INDENT_PENALTY;
    } else if (indent == pre_indent) {
        /* nothing */
    } else if (post_indent != -1 && post_indent > indent) {
        penalty += any_blanks ? RELATIVE_OUTDENT_WITH_BLANK_PENALTY : RELATIVE_OUTDENT_PENALTY;
    } else {
        penalty += any_blanks ? RELATIVE_DEDENT_WITH_BLANK_PENALTY : RELATIVE_DEDENT_PENALTY;
    }
    *indent_out = indent;
    *penalty_out = penalty;
}

/* The position of the m-th 0 at or after pos in r[0..n] (r[n] is 0); n + 1 if none. */
static idx_t
nth_zero(const char *r, idx_t n, idx_t pos, idx_t m)
{
    for (; pos <= n; pos++) {
        if (!r[pos] && --m == 0)
            return pos;
    }
    return n + 1;
}

static idx_t
find_byte(const char *r, idx_t n, idx_t pos, char v)
{
    /* r[n] is 0: a search for 0 always ends there; for 1, -1 when none */
    for (; pos < n; pos++)
        if (r[pos] == v)
            return pos;
    return v ? -1 : n;
}

typedef struct {
    idx_t gs, ge, os, oe;
} groups_t;

/* group_slide_up then group_previous on the other side (linediff._compact's up) */
static int
slide_up(const idx_t *cls, char *rchg, const char *rchg_o, groups_t *g, int *err)
{
    if (g->gs > 0 && cls[g->gs - 1] == cls[g->ge - 1]) {
        rchg[--g->gs] = 1;
        rchg[--g->ge] = 0;
        while (rchg[g->gs - 1])
            g->gs--;
        if (g->os == 0) {
            *err = 1;
            return 0;
        }
        g->oe = g->os - 1;
        g->os = g->oe;
        while (rchg_o[g->os - 1])
            g->os--;
        return 1;
    }
    return 0;
}

/* linediff._compact: 0, or -1 if the two sides' groups fell out of step. */
static int
compact(side_t *s, side_t *o, int heuristic)
{
    const idx_t *cls = s->cls;
    char *rchg = s->rchg;
    const char *rchg_o = o->rchg;
    idx_t n = s->n, n_o = o->n;
    int err = 0;
    groups_t g;
    g.gs = 0;
    g.ge = find_byte(rchg, n, 0, 0);
    g.os = 0;
    g.oe = find_byte(rchg_o, n_o, 0, 0);
    for (;;) {
        if (g.ge != g.gs
            && ((g.gs > 0 && cls[g.gs - 1] == cls[g.ge - 1])
                || (g.ge < n && cls[g.gs] == cls[g.ge]))) {
            idx_t groupsize, end_matching_other, earliest_end;
            for (;;) {
                groupsize = g.ge - g.gs;
                end_matching_other = -1;
                while (slide_up(cls, rchg, rchg_o, &g, &err))
                    ;
                if (err)
                    return -1;
                earliest_end = g.ge;
                if (g.oe > g.os)
                    end_matching_other = g.ge;
                while (g.ge < n && cls[g.gs] == cls[g.ge]) {
                    rchg[g.gs++] = 0;
                    rchg[g.ge++] = 1;
                    while (rchg[g.ge])
                        g.ge++;
                    if (g.oe == n_o)
                        return -1;
                    g.os = g.oe + 1;
                    g.oe = find_byte(rchg_o, n_o, g.os, 0);
                    if (g.oe > g.os)
                        end_matching_other = g.ge;
                }
                if (groupsize == g.ge - g.gs)
                    break;
            }
            if (g.ge == earliest_end) {
                /* it cannot move */
            } else if (end_matching_other != -1) {
                while (g.oe == g.os) {
                    if (!slide_up(cls, rchg, rchg_o, &g, &err))
                        return -1;
                }
            } else if (heuristic) {
                idx_t shift = earliest_end, best_shift = -1;
                int best_eff = 0, best_pen = 0;
                if (g.ge - groupsize - 1 > shift)
                    shift = g.ge - groupsize - 1;
                if (g.ge - INDENT_HEURISTIC_MAX_SLIDING > shift)
                    shift = g.ge - INDENT_HEURISTIC_MAX_SLIDING;
                for (; shift <= g.ge; shift++) {
                    int i1, p1, i2, p2, better;
                    split_score(s, shift, &i1, &p1);
                    split_score(s, shift - groupsize, &i2, &p2);
                    int eff = i1 + i2, pen = p1 + p2;
                    if (best_shift == -1) {
                        better = 1;
                    } else {
                        int cmp = (eff > best_eff) - (eff < best_eff);
                        better = INDENT_WEIGHT * cmp + (pen - best_pen) <= 0;
                    }
                    if (better) {
                        best_eff = eff;
                        best_pen = pen;
                        best_shift = shift;
                    }
                }
                while (g.ge > best_shift) {
                    if (!slide_up(cls, rchg, rchg_o, &g, &err))
                        return -1;
                }
            }
        }
        if (g.ge == n)
            break;
        idx_t nxt = find_byte(rchg, n, g.ge + 1, 1);
        if (nxt < 0)
            break;
        idx_t m = nxt - g.ge;
        g.gs = nxt;
        g.ge = find_byte(rchg, n, nxt, 0);
        idx_t other = nth_zero(rchg_o, n_o, g.oe, m);
        if (other >= n_o)
            return -1;
        g.os = other + 1;
        g.oe = find_byte(rchg_o, n_o, g.os, 0);
    }
    return 0;
}

typedef struct {
    idx_t *v; /* 4 per edit */
    idx_t count, cap;
} edits_t;

static int
edits_add(edits_t *e, idx_t i1, idx_t i2, idx_t n1, idx_t n2)
{
    if (e->count == e->cap) {
        idx_t cap = e->cap ? e->cap * 2 : 16;
        idx_t *v = realloc(e->v, (size_t)cap * 4 * sizeof(idx_t));
        if (!v)
            return -1;
        e->v = v;
        e->cap = cap;
    }
    idx_t *p = e->v + 4 * e->count++;
    p[0] = i1;
    p[1] = i2;
    p[2] = n1;
    p[3] = n2;
    return 0;
}

/* linediff._script */
static int
script(side_t *s1, side_t *s2, edits_t *out)
{
    idx_t n1 = s1->n, n2 = s2->n, i1 = 0, i2 = 0;
    for (;;) {
        idx_t c1 = find_byte(s1->rchg, n1, i1, 1), c2 = find_byte(s2->rchg, n2, i2, 1);
        if (c1 < 0 && c2 < 0)
            return 0;
        idx_t a = c1 >= 0 ? c1 - i1 : n1 - i1, b = c2 >= 0 ? c2 - i2 : n2 - i2;
        idx_t step = a < b ? a : b;
        i1 += step;
        i2 += step;
        idx_t e1 = find_byte(s1->rchg, n1, i1, 0), e2 = find_byte(s2->rchg, n2, i2, 0);
        if (edits_add(out, i1, i2, e1 - i1, e2 - i2) < 0)
            return -1;
        i1 = e1;
        i2 = e2;
    }
}

/* The whole of linediff.diff_lines after the lines are read: 0, -1 (memory), -2 (sync). */
static int
run_diff(side_t *s1, side_t *s2, int heuristic, int minimal, edits_t *out)
{
    idx_t n1 = s1->n, n2 = s2->n, start = 0, tail = 0, lim, end1, end2;
    classes_t cl = {NULL, 0};
    idx_t *work = NULL;
    int rc = -1;
    s1->cls = malloc(((size_t)n1 + 1) * sizeof(idx_t));
    s2->cls = malloc(((size_t)n2 + 1) * sizeof(idx_t));
    s1->rchg_buf = calloc((size_t)n1 + 2, 1);
    s2->rchg_buf = calloc((size_t)n2 + 2, 1);
    if (!s1->cls || !s2->cls || !s1->rchg_buf || !s2->rchg_buf)
        goto done;
    s1->rchg = s1->rchg_buf + 1;
    s2->rchg = s2->rchg_buf + 1;
    if (classify(s1, s2, &cl) < 0)
        goto done;
    while (start < n1 && start < n2 && s1->cls[start] == s2->cls[start])
        start++;
    lim = (n1 < n2 ? n1 : n2) - start;
    while (tail < lim && s1->cls[n1 - 1 - tail] == s2->cls[n2 - 1 - tail])
        tail++;
    end1 = n1 - tail - 1;
    end2 = n2 - tail - 1;
    if (start > end1 && start > end2) {
        rc = 0;
        goto done;
    }
    if (!n1 || !n2) {
        rc = edits_add(out, 0, 0, n1, n2);
        goto done;
    }
    work = malloc(2 * ((size_t)n1 + (size_t)n2 + 2) * sizeof(idx_t));
    if (!work)
        goto done;
    idx_t *ha1 = work, *index1 = ha1 + n1 + 1, *ha2 = index1 + n1 + 1, *index2 = ha2 + n2 + 1;
    idx_t k1, k2;
    if (effective(s1, &cl, 1, start, end1, minimal, ha1, index1, &k1) < 0
        || effective(s2, &cl, 0, start, end2, minimal, ha2, index2, &k2) < 0)
        goto done;
    if (k1 && k2) {
        if (myers(ha1, index1, k1, s1->rchg, ha2, index2, k2, s2->rchg, minimal) < 0)
            goto done;
    } else {
        for (idx_t k = 0; k < k1; k++)
            s1->rchg[index1[k]] = 1;
        for (idx_t k = 0; k < k2; k++)
            s2->rchg[index2[k]] = 1;
    }
    if (heuristic) {
        s1->indent = malloc(((size_t)n1 + 1) * sizeof(int));
        s2->indent = malloc(((size_t)n2 + 1) * sizeof(int));
        if (!s1->indent || !s2->indent)
            goto done;
        for (idx_t i = 0; i < n1; i++)
            s1->indent[i] = -2;
        for (idx_t i = 0; i < n2; i++)
            s2->indent[i] = -2;
    }
    if (compact(s1, s2, heuristic) < 0 || compact(s2, s1, heuristic) < 0) {
        rc = -2;
        goto done;
    }
    rc = script(s1, s2, out);
done:
    free(work);
    free(cl.cls);
    return rc;
}

static int
load_side(PyObject *tup, side_t *s)
{
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    memset(s, 0, sizeof(*s));
    s->n = n;
    s->ptr = malloc(((size_t)n + 1) * sizeof(*s->ptr));
    s->len = malloc(((size_t)n + 1) * sizeof(*s->len));
    if (!s->ptr || !s->len) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(tup, i);
        if (!PyBytes_Check(x)) {
            PyErr_Format(PyExc_TypeError, "diff_lines: line %zd is %.100s, not bytes", i,
                         Py_TYPE(x)->tp_name);
            return -1;
        }
        s->ptr[i] = (const unsigned char *)PyBytes_AS_STRING(x);
        s->len[i] = PyBytes_GET_SIZE(x);
    }
    return 0;
}

static void
free_side(side_t *s)
{
    free(s->ptr);
    free(s->len);
    free(s->cls);
    free(s->rchg_buf);
    free(s->indent);
}

static PyObject *edits_list(const edits_t *out);

/*
 * diff_lines(a, b, indent_heuristic, minimal) -> list of (i1, i2, n1, n2)
 */
static PyObject *
py_diff_lines(PyObject *self, PyObject *args)
{
    PyObject *a, *b, *ta = NULL, *tb = NULL, *result = NULL;
    int heuristic, minimal, rc;
    side_t s1, s2;
    edits_t out = {NULL, 0, 0};
    memset(&s1, 0, sizeof(s1));
    memset(&s2, 0, sizeof(s2));
    if (!PyArg_ParseTuple(args, "OOpp:diff_lines", &a, &b, &heuristic, &minimal))
        return NULL;
    ta = PySequence_Tuple(a);
    if (!ta)
        goto done;
    tb = PySequence_Tuple(b);
    if (!tb)
        goto done;
    if (load_side(ta, &s1) < 0 || load_side(tb, &s2) < 0)
        goto done;
    if (s1.n + s2.n >= NOGIL_MIN_LINES) {
        Py_BEGIN_ALLOW_THREADS
        rc = run_diff(&s1, &s2, heuristic, minimal, &out);
        Py_END_ALLOW_THREADS
    } else {
        rc = run_diff(&s1, &s2, heuristic, minimal, &out);
    }
    if (rc == -1) {
        PyErr_NoMemory();
        goto done;
    }
    if (rc == -2) {
        PyErr_SetString(PyExc_AssertionError, "diff_lines: group sync broken in compaction");
        goto done;
    }
    result = edits_list(&out);
done:
    free(out.v);
    free_side(&s1);
    free_side(&s2);
    Py_XDECREF(ta);
    Py_XDECREF(tb);
    return result;
}

/* Cut a buffer after each '\n' (the last line may lack one), as linediff.split_lines. */
static int
split_buffer(const unsigned char *p, idx_t size, side_t *s)
{
    idx_t n = 0, k = 0;
    const unsigned char *q = p, *end = p + size;
    memset(s, 0, sizeof(*s));
    while (q < end && (q = memchr(q, '\n', (size_t)(end - q))) != NULL) {
        n++;
        q++;
    }
    if (size && p[size - 1] != '\n')
        n++;
    s->n = n;
    s->ptr = malloc(((size_t)n + 1) * sizeof(*s->ptr));
    s->len = malloc(((size_t)n + 1) * sizeof(*s->len));
    if (!s->ptr || !s->len)
        return -1;
    q = p;
    while (q < end) {
        const unsigned char *nl = memchr(q, '\n', (size_t)(end - q));
        const unsigned char *stop = nl ? nl + 1 : end;
        s->ptr[k] = q;
        s->len[k] = stop - q;
        k++;
        q = stop;
    }
    return 0;
}

typedef struct {
    char *buf;
    size_t len, cap;
} out_t;

static int
out_put(out_t *o, const void *p, size_t n)
{
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->len + n)
            cap *= 2;
        char *b = realloc(o->buf, cap);
        if (!b)
            return -1;
        o->buf = b;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
    return 0;
}

static const char NO_NEWLINE[] = "\n\\ No newline at end of file\n";

/* patch._lines: lines [start, end) of s, each after sign. */
static int
emit_lines(out_t *o, char sign, const side_t *s, idx_t start, idx_t end)
{
    for (idx_t i = start; i < end; i++) {
        if (out_put(o, &sign, 1) < 0 || out_put(o, s->ptr[i], (size_t)s->len[i]) < 0)
            return -1;
        if (i == s->n - 1 && (s->len[i] == 0 || s->ptr[i][s->len[i] - 1] != '\n')
            && out_put(o, NO_NEWLINE, sizeof(NO_NEWLINE) - 1) < 0)
            return -1;
    }
    return 0;
}

#define FUNC_LINE_MAX 80

/* patch.utf8_prefix: the length of the longest valid UTF-8 prefix (Git's rules). */
static idx_t
utf8_prefix(const unsigned char *p, idx_t n)
{
    idx_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        idx_t size;
        int ok;
        if (c < 0x80) {
            i++;
            continue;
        }
        if ((c & 0xe0) == 0xc0) {
            size = 2;
            ok = (c & 0xfe) != 0xc0;
        } else if ((c & 0xf0) == 0xe0) {
            size = 3;
            ok = 1;
        } else if ((c & 0xf8) == 0xf0) {
            size = 4;
            ok = c <= 0xf4;
        } else {
            return i;
        }
        if (i + size > n || !ok)
            return i;
        for (idx_t k = 1; k < size; k++)
            if ((p[i + k] & 0xc0) != 0x80)
                return i;
        unsigned char c1 = p[i + 1];
        if (size == 3
            && ((c == 0xe0 && (c1 & 0xe0) == 0x80) || (c == 0xed && (c1 & 0xe0) == 0xa0)
                || (c == 0xef && c1 == 0xbf && (p[i + 2] & 0xfe) == 0xbe)))
            return i;
        if (size == 4 && ((c == 0xf0 && (c1 & 0xf0) == 0x80) || (c == 0xf4 && c1 > 0x8f)))
            return i;
        i += size;
    }
    return n;
}

/* patch._func_name: the length of line i's function-name text, or -1 if it is none. */
static idx_t
func_name(const side_t *s, idx_t i)
{
    const unsigned char *p = s->ptr[i];
    idx_t len = s->len[i];
    if (!len)
        return -1;
    unsigned char c = p[0];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '$'))
        return -1;
    if (len > FUNC_LINE_MAX)
        len = FUNC_LINE_MAX;
    while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\n'
                   || p[len - 1] == '\r'))
        len--;
    return utf8_prefix(p, len);
}

static int
put_range(out_t *o, idx_t start, idx_t count)
{
    char tmp[64];
    int n;
    if (count == 1)
        n = snprintf(tmp, sizeof(tmp), "%lld", (long long)start);
    else
        n = snprintf(tmp, sizeof(tmp), "%lld,%lld", (long long)(count ? start : start - 1),
                     (long long)count);
    return out_put(o, tmp, (size_t)n);
}

#define EDIT(k, f) (ed->v[4 * (k) + (f)])

/* patch.hunks: every hunk of the edits, header and lines, into o. */
static int
emit_hunks(out_t *o, const side_t *a, const side_t *b, const edits_t *ed, idx_t context,
           idx_t inter_hunk)
{
    idx_t n1 = a->n, n2 = b->n, max_common = 2 * context + inter_hunk;
    idx_t func_prev = -1, k = 0, count = ed->count;
    const unsigned char *func = NULL;
    idx_t func_len = 0;
    while (k < count) {
        idx_t j = k + 1;
        while (j < count && EDIT(j, 0) - (EDIT(j - 1, 0) + EDIT(j - 1, 2)) <= max_common)
            j++;
        idx_t last = j - 1;
        idx_t s1 = EDIT(k, 0) - context, s2 = EDIT(k, 1) - context;
        if (s1 < 0)
            s1 = 0;
        if (s2 < 0)
            s2 = 0;
        idx_t lctx = context, r1 = n1 - (EDIT(last, 0) + EDIT(last, 2)),
              r2 = n2 - (EDIT(last, 1) + EDIT(last, 3));
        if (r1 < lctx)
            lctx = r1;
        if (r2 < lctx)
            lctx = r2;
        idx_t e1 = EDIT(last, 0) + EDIT(last, 2) + lctx, e2 = EDIT(last, 1) + EDIT(last, 3) + lctx;
        for (idx_t line = s1 - 1; line > func_prev && line >= 0; line--) {
            idx_t got = func_name(a, line);
            if (got >= 0) {
                func = a->ptr[line];
                func_len = got;
                break;
            }
        }
        func_prev = s1 - 1;
        if (out_put(o, "@@ -", 4) < 0 || put_range(o, s1 + 1, e1 - s1) < 0
            || out_put(o, " +", 2) < 0 || put_range(o, s2 + 1, e2 - s2) < 0
            || out_put(o, " @@", 3) < 0)
            return -1;
        if (func_len && (out_put(o, " ", 1) < 0 || out_put(o, func, (size_t)func_len) < 0))
            return -1;
        if (out_put(o, "\n", 1) < 0 || emit_lines(o, ' ', b, s2, EDIT(k, 1)) < 0)
            return -1;
        s1 = EDIT(k, 0);
        s2 = EDIT(k, 1);
        for (idx_t e = k; e < j; e++) {
            idx_t gap = EDIT(e, 0) - s1 < EDIT(e, 1) - s2 ? EDIT(e, 0) - s1 : EDIT(e, 1) - s2;
            if (gap > 0 && emit_lines(o, ' ', b, s2, s2 + gap) < 0)
                return -1;
            if (emit_lines(o, '-', a, EDIT(e, 0), EDIT(e, 0) + EDIT(e, 2)) < 0
                || emit_lines(o, '+', b, EDIT(e, 1), EDIT(e, 1) + EDIT(e, 3)) < 0)
                return -1;
            s1 = EDIT(e, 0) + EDIT(e, 2);
            s2 = EDIT(e, 1) + EDIT(e, 3);
        }
        if (emit_lines(o, ' ', b, EDIT(last, 1) + EDIT(last, 3), e2) < 0)
            return -1;
        k = j;
    }
    return 0;
}

static int
get_bytes(PyObject *x, const char *what)
{
    if (!PyBytes_Check(x)) {
        PyErr_Format(PyExc_TypeError, "%s must be bytes, not %.100s", what, Py_TYPE(x)->tp_name);
        return -1;
    }
    return 0;
}

static PyObject *
edits_list(const edits_t *out)
{
    PyObject *result = PyList_New((Py_ssize_t)out->count);
    if (!result)
        return NULL;
    for (idx_t k = 0; k < out->count; k++) {
        idx_t *p = out->v + 4 * k;
        PyObject *t = Py_BuildValue("(nnnn)", (Py_ssize_t)p[0], (Py_ssize_t)p[1],
                                    (Py_ssize_t)p[2], (Py_ssize_t)p[3]);
        if (!t) {
            Py_DECREF(result);
            return NULL;
        }
        PyList_SET_ITEM(result, (Py_ssize_t)k, t);
    }
    return result;
}

/*
 * diff_buffers(old, new, indent_heuristic, minimal[, context, inter_hunk])
 *
 * Without context: the edits of the two files' lines, as diff_lines gives them.
 * With context (>= 0): the unified hunks (patch.hunks) as bytes, b"" for no change.
 */
static PyObject *
py_diff_buffers(PyObject *self, PyObject *args)
{
    PyObject *a, *b, *result = NULL;
    int heuristic, minimal, rc;
    Py_ssize_t context = -1, inter_hunk = 0;
    side_t s1, s2;
    edits_t ed = {NULL, 0, 0};
    out_t o = {NULL, 0, 0};
    memset(&s1, 0, sizeof(s1));
    memset(&s2, 0, sizeof(s2));
    if (!PyArg_ParseTuple(args, "OOpp|nn:diff_buffers", &a, &b, &heuristic, &minimal, &context,
                          &inter_hunk))
        return NULL;
    if (get_bytes(a, "old") < 0 || get_bytes(b, "new") < 0)
        return NULL;
    if (inter_hunk < 0) {
        PyErr_SetString(PyExc_ValueError, "inter_hunk must be >= 0");
        return NULL;
    }
    const unsigned char *pa = (const unsigned char *)PyBytes_AS_STRING(a);
    const unsigned char *pb = (const unsigned char *)PyBytes_AS_STRING(b);
    idx_t la = PyBytes_GET_SIZE(a), lb = PyBytes_GET_SIZE(b);
    int nogil = la + lb >= 64 * 1024;
    PyThreadState *ts = nogil ? PyEval_SaveThread() : NULL;
    rc = -1;
    if (split_buffer(pa, la, &s1) == 0 && split_buffer(pb, lb, &s2) == 0) {
        rc = run_diff(&s1, &s2, heuristic, minimal, &ed);
        if (rc == 0 && context >= 0)
            rc = emit_hunks(&o, &s1, &s2, &ed, context, inter_hunk);
    }
    if (ts)
        PyEval_RestoreThread(ts);
    if (rc == -1)
        PyErr_NoMemory();
    else if (rc == -2)
        PyErr_SetString(PyExc_AssertionError, "diff_buffers: group sync broken in compaction");
    else if (context >= 0)
        result = PyBytes_FromStringAndSize(o.buf ? o.buf : "", (Py_ssize_t)o.len);
    else
        result = edits_list(&ed);
    free(o.buf);
    free(ed.v);
    free_side(&s1);
    free_side(&s2);
    return result;
}

PyMethodDef gdc_linediff_methods[] = {
    {"diff_lines", py_diff_lines, METH_VARARGS,
     "diff_lines(a, b, indent_heuristic, minimal) -> [(i1, i2, n1, n2), ...]\n\n"
     "Git's default line diff of two sequences of lines (bytes), as\n"
     "gitodb.history.linediff.diff_lines computes it."},
    {"diff_buffers", py_diff_buffers, METH_VARARGS,
     "diff_buffers(old, new, indent_heuristic, minimal[, context, inter_hunk])\n\n"
     "The line diff of two files' bytes: the edits, or with context >= 0 the\n"
     "unified hunks (gitodb.history.patch.hunks) as bytes."},
    {NULL, NULL, 0, NULL},
};
