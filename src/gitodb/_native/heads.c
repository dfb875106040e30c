/*
 * The delta-result sizes of a whole pack (gitodb._native.delta_result_sizes), for
 * cat-file --batch-check --batch-all-objects: each delta's result size is in the
 * first bytes of its zlib data, so every delta costs one small inflate.  Through a
 * Python binding that is a new stream object per delta (~1.7 us each, more than
 * Git's whole per-object cost); here one z_stream is reset between deltas and the
 * loop runs without the GIL.
 *
 * It uses zlib through its published header and library, found at build time
 * (setup.py defines GITODB_HAVE_ZLIB when both are there; without them this
 * function is absent and Python reads the heads through the chosen backend).
 * Only well-formed heads are decided here: a stream zlib rejects, or a head too
 * short for its two sizes, is left to the Python path (PackFile.headers_by_position
 * and its reference), which reads it on the chosen backend and raises the typed
 * error naming the file and offset, so every message has one source.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>

#include "pack.h"

#ifdef GITODB_HAVE_ZLIB
#include <zlib.h>

/* A delta header: two size varints of at most 10 bytes each. */
#define DELTA_HEAD_MAX 20

/* Inflate the first bytes of [p, p + len) into out; bytes produced, or -1. */
static int
head_of(z_stream *zs, const unsigned char *p, unsigned long long len, unsigned char *out)
{
    if (inflateReset(zs) != Z_OK)
        return -1;
    zs->next_in = (Bytef *)p;
    zs->avail_in = len > 0xffffffffULL ? 0xffffffffU : (uInt)len;
    zs->next_out = out;
    zs->avail_out = DELTA_HEAD_MAX;
    int r = inflate(zs, Z_SYNC_FLUSH);
    if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR)
        return -1;
    return (int)(DELTA_HEAD_MAX - zs->avail_out);
}


/*
 * The first bytes of a zlib stream without zlib: what head_of returns, found by a
 * small decoder that builds no lookup tables (zlib's table building is most of the
 * cost of a 20-byte inflate).  It answers only when it is sure zlib's answer is the
 * same (the bytes zlib would give, with no error on the way, including the symbol
 * zlib decodes after the output is full and the Adler-32 of a stream that ends);
 * for anything unusual (an incomplete or over-subscribed code, a preset
 * dictionary, a stored block ending just as the output fills, any damage) it
 * answers -1 and head_of decides.  Tests compare the two on many streams.
 */
#define FH_SHORT (-2) /* the input ended: zlib returns what was produced */
#define FH_UNSURE (-1)

typedef struct {
    const unsigned char *p, *end;
    unsigned long long hold;
    unsigned bits;
} fh_bits;

static inline int
fh_need(fh_bits *b, unsigned n)
{
    while (b->bits < n) {
        if (b->p == b->end)
            return FH_SHORT;
        b->hold |= (unsigned long long)*b->p++ << b->bits;
        b->bits += 8;
    }
    return 0;
}

static inline unsigned
fh_take(fh_bits *b, unsigned n)
{
    unsigned v = (unsigned)(b->hold & ((1ULL << n) - 1));
    b->hold >>= n;
    b->bits -= n;
    return v;
}

/* A canonical Huffman code: count of each length, first code and symbols. */
typedef struct {
    unsigned short limit[16], first[16], offs[16];
    unsigned short symbol[288];
    int minlen, maxlen; /* maxlen 0: no symbols */
} fh_code;

static unsigned char fh_rev8[256];
static fh_code fh_fixed_lit, fh_fixed_dist;
static int fh_ready;

/* 0, or FH_UNSURE for an over-subscribed or incomplete set (zlib decides). */
static int
fh_build(fh_code *h, const unsigned char *lens, int n)
{
    unsigned short count[16] = {0};
    for (int s = 0; s < n; s++)
        count[lens[s]]++;
    h->minlen = 16;
    h->maxlen = 0;
    int left = 1;
    for (int len = 1; len < 16; len++) {
        left <<= 1;
        left -= count[len];
        if (left < 0)
            return FH_UNSURE;
        if (count[len]) {
            if (h->minlen == 16)
                h->minlen = len;
            h->maxlen = len;
        }
    }
    if (h->maxlen == 0)
        return 0; /* no symbols: decoding one is an error */
    if (left > 0)
        return FH_UNSURE;
    unsigned short next[16];
    unsigned code = 0, off = 0;
    for (int len = 1; len < 16; len++) {
        h->first[len] = (unsigned short)code;
        h->limit[len] = (unsigned short)(code + count[len]);
        h->offs[len] = (unsigned short)off;
        next[len] = (unsigned short)off;
        off += count[len];
        code = (code + count[len]) << 1;
    }
    for (int s = 0; s < n; s++)
        if (lens[s])
            h->symbol[next[lens[s]]++] = (unsigned short)s;
    return 0;
}

/* The next symbol: 0 and *sym, FH_SHORT, or FH_UNSURE (no symbols). */
static inline int
fh_decode(fh_bits *b, const fh_code *h, unsigned *sym)
{
    if (h->maxlen == 0)
        return FH_UNSURE;
    while (b->bits < 15 && b->p < b->end) {
        b->hold |= (unsigned long long)*b->p++ << b->bits;
        b->bits += 8;
    }
    unsigned x = (unsigned)(b->hold & 0x7fff);
    /* the next 15 bits, first one highest (Huffman codes are packed from the top) */
    unsigned r = ((unsigned)fh_rev8[x & 0xff] << 7) | ((unsigned)fh_rev8[x >> 8] >> 1);
    for (int len = h->minlen; len <= h->maxlen; len++) {
        unsigned c = r >> (15 - len);
        if (c < h->limit[len]) {
            if ((unsigned)len > b->bits)
                return FH_SHORT;
            *sym = h->symbol[h->offs[len] + c - h->first[len]];
            b->hold >>= len;
            b->bits -= (unsigned)len;
            return 0;
        }
    }
    return FH_UNSURE;
}

static void
fh_init(void)
{
    if (fh_ready)
        return;
    for (int i = 0; i < 256; i++) {
        unsigned v = 0;
        for (int k = 0; k < 8; k++)
            v |= ((i >> k) & 1u) << (7 - k);
        fh_rev8[i] = (unsigned char)v;
    }
    unsigned char lens[288];
    for (int s = 0; s < 288; s++)
        lens[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
    fh_build(&fh_fixed_lit, lens, 288);
    for (int s = 0; s < 32; s++)
        lens[s] = 5;
    fh_build(&fh_fixed_dist, lens, 32);
    fh_ready = 1;
}

static const unsigned short fh_lbase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,
                                            15, 17, 19, 23, 27, 31, 35, 43, 51,  59,
                                            67, 83, 99, 115, 131, 163, 195, 227, 258};
static const unsigned char fh_lext[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                          2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const unsigned short fh_dbase[30] = {
    1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
    193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const unsigned char fh_dext[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                          6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

/* A length/distance pair after length symbol sym: 0, FH_SHORT or FH_UNSURE. */
static int
fh_match(fh_bits *b, const fh_code *dist, unsigned sym, unsigned *len, unsigned *d)
{
    if (sym > 285)
        return FH_UNSURE;
    sym -= 257;
    int r = fh_need(b, fh_lext[sym]);
    if (r)
        return r;
    *len = fh_lbase[sym] + fh_take(b, fh_lext[sym]);
    unsigned ds;
    if ((r = fh_decode(b, dist, &ds)))
        return r;
    if (ds > 29)
        return FH_UNSURE;
    if ((r = fh_need(b, fh_dext[ds])))
        return r;
    *d = fh_dbase[ds] + fh_take(b, fh_dext[ds]);
    return 0;
}

/* The end of the last block: what zlib's check of the trailer gives (n, or unsure). */
static int
fh_trailer(fh_bits *b, const unsigned char *out, int n)
{
    fh_take(b, b->bits & 7);
    if (fh_need(b, 32))
        return n; /* zlib waits for the trailer: it returns what it produced */
    unsigned long long t = fh_take(b, 32);
    unsigned stored = (unsigned)(((t & 0xff) << 24) | ((t & 0xff00) << 8) | ((t >> 8) & 0xff00)
                                 | ((t >> 24) & 0xff));
    unsigned a = 1, c = 0;
    for (int i = 0; i < n; i++) {
        a = (a + out[i]) % 65521;
        c = (c + a) % 65521;
    }
    return stored == ((c << 16) | a) ? n : FH_UNSURE;
}

static int
fast_head(const unsigned char *p, unsigned long long len, unsigned char *out)
{
    if (len < 2)
        return FH_UNSURE;
    unsigned cmf = p[0], flg = p[1];
    if ((cmf & 15) != 8 || (cmf >> 4) > 7 || ((cmf << 8) | flg) % 31 || (flg & 0x20))
        return FH_UNSURE;
    fh_bits b = {p + 2, p + (len > (1ULL << 30) ? (1ULL << 30) : len), 0, 0};
    int n = 0;
    fh_code lit, dist;
    for (;;) {
        if (fh_need(&b, 3))
            return n;
        unsigned last = fh_take(&b, 1), type = fh_take(&b, 2);
        const fh_code *L = &fh_fixed_lit, *D = &fh_fixed_dist;
        if (type == 0) { /* stored */
            fh_take(&b, b.bits & 7);
            if (fh_need(&b, 32))
                return n;
            unsigned size = fh_take(&b, 16), nsize = fh_take(&b, 16);
            if (size != (~nsize & 0xffff))
                return FH_UNSURE;
            b.p -= b.bits >> 3; /* whole bytes read ahead go back to the input */
            b.hold = 0;
            b.bits = 0;
            while (size) {
                if (n == DELTA_HEAD_MAX)
                    return n;
                if (b.p == b.end)
                    return n;
                out[n++] = *b.p++;
                size--;
            }
            if (n == DELTA_HEAD_MAX)
                return FH_UNSURE; /* zlib reads on into the next block */
            if (last)
                return fh_trailer(&b, out, n);
            continue;
        }
        if (type == 3)
            return FH_UNSURE;
        if (type == 2) { /* dynamic: the code lengths, then the two codes */
            static const unsigned char order[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                                    11, 4,  12, 3, 13, 2, 14, 1, 15};
            if (fh_need(&b, 14))
                return n;
            int nlen = (int)fh_take(&b, 5) + 257, ndist = (int)fh_take(&b, 5) + 1;
            int ncode = (int)fh_take(&b, 4) + 4;
            if (nlen > 286 || ndist > 30)
                return FH_UNSURE;
            unsigned char lens[320] = {0};
            for (int i = 0; i < ncode; i++) {
                if (fh_need(&b, 3))
                    return n;
                lens[order[i]] = (unsigned char)fh_take(&b, 3);
            }
            fh_code cl;
            if (fh_build(&cl, lens, 19) || cl.maxlen == 0)
                return FH_UNSURE;
            memset(lens, 0, 19);
            int i = 0, r;
            while (i < nlen + ndist) {
                unsigned sym;
                if ((r = fh_decode(&b, &cl, &sym)))
                    return r == FH_SHORT ? n : r;
                if (sym < 16) {
                    lens[i++] = (unsigned char)sym;
                    continue;
                }
                unsigned rep, val = 0;
                if (sym == 16) {
                    if (i == 0)
                        return FH_UNSURE;
                    val = lens[i - 1];
                    if (fh_need(&b, 2))
                        return n;
                    rep = 3 + fh_take(&b, 2);
                } else if (sym == 17) {
                    if (fh_need(&b, 3))
                        return n;
                    rep = 3 + fh_take(&b, 3);
                } else {
                    if (fh_need(&b, 7))
                        return n;
                    rep = 11 + fh_take(&b, 7);
                }
                if (i + (int)rep > nlen + ndist)
                    return FH_UNSURE;
                while (rep--)
                    lens[i++] = (unsigned char)val;
            }
            if (lens[256] == 0 || fh_build(&lit, lens, nlen) || lit.maxlen == 0
                || fh_build(&dist, lens + nlen, ndist))
                return FH_UNSURE;
            L = &lit;
            D = &dist;
        }
        for (;;) { /* the block's symbols */
            unsigned sym, mlen, d;
            int r = fh_decode(&b, L, &sym);
            if (r)
                return r == FH_SHORT ? n : r;
            if (n == DELTA_HEAD_MAX) {
                /* Output full: zlib has decoded this symbol too, and stops before it
                   needs room for output. */
                if (sym < 256)
                    return n;
                if (sym == 256)
                    return last ? fh_trailer(&b, out, n) : FH_UNSURE;
                r = fh_match(&b, D, sym, &mlen, &d);
                if (r)
                    return r == FH_SHORT ? n : r;
                return d > (unsigned)n ? FH_UNSURE : n;
            }
            if (sym < 256) {
                out[n++] = (unsigned char)sym;
                continue;
            }
            if (sym == 256)
                break;
            r = fh_match(&b, D, sym, &mlen, &d);
            if (r)
                return r == FH_SHORT ? n : r;
            if (d > (unsigned)n)
                return FH_UNSURE;
            while (mlen && n < DELTA_HEAD_MAX) {
                out[n] = out[n - (int)d];
                n++;
                mlen--;
            }
            if (mlen)
                return n; /* zlib stops inside the match */
        }
        if (last)
            return fh_trailer(&b, out, n);
    }
}

/*
 * delta_result_sizes(buf, kinds, starts, ends, sizes[, rev]) -> list of positions left
 *
 * kinds, starts, ends as scan_headers returns them (indexed by position: the entry
 * type, where its zlib data starts, where the entry ends); sizes a writable native
 * uint64 buffer of the same length.  For every delta position (kind 6 or 7) whose
 * head zlib decodes cleanly, sizes[p] becomes the delta's result size; the
 * positions it could not decide are returned, in ascending order.  rev (native
 * uint32, the index position of each entry in pack order) makes the reads go
 * through the pack front to back instead of at random.
 */
static int
cmp_uint(const void *a, const void *b)
{
    unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;
    return x < y ? -1 : x > y;
}

static PyObject *
delta_result_sizes(PyObject *self, PyObject *args)
{
    Py_buffer pack, kinds, starts, ends, sizes, rev = {0};
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*|y*:delta_result_sizes", &pack, &kinds, &starts,
                          &ends, &sizes, &rev))
        return NULL;
    PyObject *left = NULL;
    Py_ssize_t n = kinds.len;
    unsigned int *undecided = NULL;
    Py_ssize_t n_undecided = 0;
    if (starts.len != n * 8 || ends.len != n * 8 || sizes.len != n * 8) {
        PyErr_SetString(PyExc_ValueError, "delta_result_sizes: arrays differ in length");
        goto done;
    }
    const unsigned int *order = rev.obj ? rev.buf : NULL;
    if (order) {
        if (rev.len != n * 4) {
            PyErr_SetString(PyExc_ValueError, "delta_result_sizes: arrays differ in length");
            goto done;
        }
        for (Py_ssize_t k = 0; k < n; k++) {
            if (order[k] >= (unsigned int)n) {
                PyErr_SetString(PyExc_ValueError, "delta_result_sizes: position out of range");
                goto done;
            }
        }
    }
    fh_init();
    undecided = PyMem_RawMalloc(n ? (size_t)n * sizeof(unsigned int) : 1);
    if (!undecided) {
        PyErr_NoMemory();
        goto done;
    }
    {
        z_stream zs;
        memset(&zs, 0, sizeof(zs));
        if (inflateInit(&zs) != Z_OK) {
            PyErr_SetString(PyExc_MemoryError, "delta_result_sizes: inflateInit failed");
            goto done;
        }
        const unsigned char *buf = pack.buf;
        unsigned long long len = (unsigned long long)pack.len;
        const unsigned char *kind = kinds.buf;
        const unsigned long long *start = starts.buf, *end = ends.buf;
        unsigned long long *size = sizes.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t k = 0; k < n; k++) {
            Py_ssize_t p = order ? (Py_ssize_t)order[k] : k;
            if (kind[p] < 6)
                continue;
            unsigned long long s = start[p], e = end[p];
            unsigned char head[DELTA_HEAD_MAX];
            int got = -1;
            if (s < e && e <= len) {
                got = fast_head(buf + s, e - s, head);
                if (got < 0)
                    got = head_of(&zs, buf + s, e - s, head);
            }
            const unsigned char *q = head;
            unsigned long long base_size, result_size;
            if (got < 0 || gdc_read_size(&q, head + got, &base_size)
                || gdc_read_size(&q, head + got, &result_size)) {
                undecided[n_undecided++] = (unsigned int)p;
                continue;
            }
            size[p] = result_size;
        }
        Py_END_ALLOW_THREADS
        inflateEnd(&zs);
    }
    if (order && n_undecided > 1)
        qsort(undecided, (size_t)n_undecided, sizeof(unsigned int), cmp_uint);
    left = PyList_New(n_undecided);
    if (!left)
        goto done;
    for (Py_ssize_t i = 0; i < n_undecided; i++) {
        PyObject *v = PyLong_FromUnsignedLong(undecided[i]);
        if (!v) {
            Py_CLEAR(left);
            goto done;
        }
        PyList_SET_ITEM(left, i, v);
    }
done:
    PyMem_RawFree(undecided);
    PyBuffer_Release(&pack);
    PyBuffer_Release(&kinds);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&ends);
    PyBuffer_Release(&sizes);
    if (rev.obj)
        PyBuffer_Release(&rev);
    return left;
}

/* fast_delta_head(data) -> bytes or None: fast_head's answer (None: zlib decides). */
static PyObject *
fast_delta_head(PyObject *self, PyObject *arg)
{
    Py_buffer data;
    if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE))
        return NULL;
    unsigned char head[DELTA_HEAD_MAX];
    fh_init();
    int got = data.len ? fast_head(data.buf, (unsigned long long)data.len, head) : -1;
    PyBuffer_Release(&data);
    if (got < 0)
        Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)head, got);
}

int
gdc_delta_result_size(gdc_zinflater *z, const unsigned char *p, unsigned long long len,
                      unsigned long long *size)
{
    unsigned char head[DELTA_HEAD_MAX];
    fh_init();
    int got = len ? fast_head(p, len, head) : -1;
    if (got < 0) {
        if (!z->ready) {
            memset(&z->zs, 0, sizeof(z->zs));
            if (inflateInit(&z->zs) != Z_OK)
                return -1;
            z->ready = 1;
        }
        got = head_of(&z->zs, p, len, head);
    }
    const unsigned char *q = head;
    unsigned long long base_size;
    if (got < 0 || gdc_read_size(&q, head + got, &base_size)
        || gdc_read_size(&q, head + got, size))
        return -1;
    return 0;
}

PyMethodDef gdc_heads_methods[] = {
    {"delta_result_sizes", delta_result_sizes, METH_VARARGS,
     "delta_result_sizes(buf, kinds, starts, ends, sizes) -> positions left undecided"},
    {"fast_delta_head", fast_delta_head, METH_O,
     "fast_delta_head(data) -> the first 20 bytes zlib inflates from data (fewer if it "
     "ends), decoded without zlib, or None where zlib must decide"},
    {NULL, NULL, 0, NULL},
};

const char *gdc_zlib_version = ZLIB_VERSION;

const char *
gdc_zlib_runtime_version(void)
{
    return zlibVersion();
}

#else /* no zlib at build time: Python reads every head */

int
gdc_delta_result_size(gdc_zinflater *z, const unsigned char *p, unsigned long long len,
                      unsigned long long *size)
{
    return -1;
}

PyMethodDef gdc_heads_methods[] = {
    {NULL, NULL, 0, NULL},
};

const char *gdc_zlib_version = NULL;

const char *
gdc_zlib_runtime_version(void)
{
    return NULL;
}

#endif
