/*
 * index-pack's per-entry loops in C (gitodb._native.IndexPack): the scan of a pack
 * without an index (entry headers, inflate, CRC-32, the id of every non-delta object)
 * and the resolution of every delta tree from its root.  gitodb.pack.index_scan and
 * gitodb.pack.index_resolve are the reference; gitodb.pack.index_native drives this
 * type and falls back to the reference for anything unusual, so that every error
 * message has one source: any damaged entry, inflate or delta error, detected
 * collision or unresolved delta makes a call return None, and Python indexes the
 * pack again with the reference, which raises the typed error naming file and offset.
 *
 * Inflate is the compression layer's choice: its binding's public callable
 * (inflate_prefix for the scan, inflate for the resolve pass), or, when
 * compress.native_inflate() says the chosen backend is the zlib this module was
 * linked with (GITODB_HAVE_ZLIB), zlib's published C API.  CRC-32 is the layer's
 * crc32 callable.  Object ids are SHA-1DC (sha1dc.c; detect=0: plain SHA-1).
 *
 * resolve() runs without the GIL (it takes it back only to call a Python inflate),
 * so Python threads each resolving a share of the roots use every core.  Each
 * delta tree is walked depth first keeping the chain of bases above the delta being
 * built; the bases kept add up to at most the call's budget (a share of
 * core.deltaBaseCacheLimit): past it, the oldest bases of the chain are let go and
 * rebuilt from their own base when a later sibling needs them, as Git does.  So a
 * resolve call holds its budget + one delta + one result, and the object holds
 * fixed-size columns per entry (memory proportional to the index).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

#include "pack.h"
#include "sha1dc.h"

#ifdef GITODB_HAVE_ZLIB
#include <zlib.h>
#endif

#define PACK_HEADER_LEN 12ULL
#define MAX_INFLATE_RATIO 1040ULL /* compress.MAX_INFLATE_RATIO */
#define NOGIL_MIN 4096

/* A REF_DELTA is claimed by the first base with its id whose frame is made (as the
   reference pops ref_children then); owner -1: not claimed yet. */
static int
claim(long long *owner, long long who)
{
#if defined(__GNUC__) || defined(__clang__)
    long long expected = -1;
    return __atomic_compare_exchange_n(owner, &expected, who, 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
#else
    if (*owner != -1)
        return 0;
    *owner = who;
    return 1;
#endif
}

typedef unsigned long long u64;

typedef struct {
    PyObject_HEAD
    Py_buffer pack;
    int have_pack;
    Py_ssize_t count, rawsz;
    int detect;
    u64 end_of_entries;
    /* scan position */
    Py_ssize_t scanned;
    u64 pos;
    /* columns, one per entry */
    u64 *offsets, *starts, *ends, *sizes, *osizes;
    unsigned int *crcs, *depths;
    long long *bases;     /* direct base entry, -1 for non-deltas */
    long long *ofs_base;  /* OFS_DELTA: base entry; -1 otherwise */
    unsigned char *types, *rtypes, *done, *oids;
    /* children: OFS by base entry (CSR), REF by base id (sorted) */
    Py_ssize_t *ofs_first, *ofs_kids;
    Py_ssize_t nref;
    unsigned char *ref_oid;  /* nref * rawsz, sorted */
    Py_ssize_t *ref_kid;
    long long *ref_owner;
    Py_ssize_t *ref_tmp;  /* REF_DELTA entries in pack order (scan) */
    unsigned char *ref_tmp_oid;
    Py_ssize_t *roots;
    Py_ssize_t nroots;
    int prepared;
} IndexPack;

/* ---- inflate through the chosen backend ----------------------------------- */

typedef struct {
    PyObject *fn;          /* Python callable, or Py_None: zlib's C API */
    PyThreadState *saved;  /* non-NULL while the GIL is released */
    gdc_zinflater zi;      /* zlib's C API (fn is Py_None) */
    void *ld;              /* libdeflate's C API (resolve, when the backend is libdeflate) */
} inflater;

static void
inflater_end(inflater *z)
{
    gdc_zinflater_end(&z->zi);
    if (z->ld)
        gdc_ld_end(z->ld);
    z->ld = NULL;
}

/* Inflate [src, src+avail) to exactly size bytes into a new malloc'd buffer;
   *used is the input the stream took.  NULL on any failure (no Python error set). */
static unsigned char *
do_inflate(inflater *z, int prefix, const unsigned char *src, u64 avail, u64 size, u64 *used)
{
    if (size > (u64)PY_SSIZE_T_MAX - 1)
        return NULL;
#ifdef GITODB_HAVE_ZLIB
    if (z->fn == Py_None) {
        unsigned char *out = malloc(size ? size : 1);
        if (!out)
            return NULL;
        if (gdc_zinflate(&z->zi, src, avail, out, size, used, !z->saved)) {
            free(out);
            return NULL;
        }
        return out;
    }
#endif
    if (z->ld && !prefix && size) {
        /* libdeflate's C API: no GIL, no copy out of a Python object */
        unsigned char *out = malloc(size);
        if (!out)
            return NULL;
        if (gdc_ld_inflate(z->ld, src, avail, out, size)) {
            free(out);
            return NULL;
        }
        *used = avail;
        return out;
    }
    unsigned char *out = NULL;
    if (z->saved)
        PyEval_RestoreThread(z->saved);
    PyObject *view = PyMemoryView_FromMemory((char *)src, (Py_ssize_t)avail, PyBUF_READ);
    PyObject *n = view ? PyLong_FromUnsignedLongLong(size) : NULL;
    PyObject *r = NULL;
    if (n) {
        PyObject *args[2] = {view, n};
        r = PyObject_Vectorcall(z->fn, args, 2, NULL);
    }
    Py_XDECREF(n);
    if (view) {
        /* Nothing may keep a pointer into the pack past this call. */
        PyObject *rel = PyObject_CallMethod(view, "release", NULL);
        Py_XDECREF(rel);
        Py_DECREF(view);
    }
    PyObject *data = NULL;
    u64 took = avail;
    if (r && prefix) {
        if (PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2) {
            data = PyTuple_GET_ITEM(r, 0);
            took = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(r, 1));
        }
    } else {
        data = r;
    }
    if (data && PyBytes_Check(data) && (u64)PyBytes_GET_SIZE(data) == size && !PyErr_Occurred()
        && took <= avail) {
        out = malloc(size ? size : 1);
        if (out) {
            memcpy(out, PyBytes_AS_STRING(data), size);
            *used = took;
        }
    }
    Py_XDECREF(r);
    PyErr_Clear();  /* the reference path raises the typed error */
    if (z->saved)
        z->saved = PyEval_SaveThread();
    return out;
}

/* ---- hashing and deltas ------------------------------------------------------ */

static const char *const type_names[] = {NULL, "commit", "tree", "blob", "tag"};

/* The id of an object of type and data into out; 1 if a collision was detected. */
static int
object_id(int detect, unsigned int type, const unsigned char *data, u64 len, unsigned char *out,
          int release_gil)
{
    char hdr[32];
    int hl = snprintf(hdr, sizeof(hdr), "%s %llu", type_names[type], len) + 1;
    gdc_sha1_ctx ctx;
    int hit;
    gdc_sha1_init(&ctx, 0, detect, 0);
    gdc_sha1_update(&ctx, (const unsigned char *)hdr, (size_t)hl);
    if (release_gil && len >= NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        gdc_sha1_update(&ctx, data, (size_t)len);
        hit = gdc_sha1_final(&ctx, out);
        Py_END_ALLOW_THREADS
    } else {
        gdc_sha1_update(&ctx, data, (size_t)len);
        hit = gdc_sha1_final(&ctx, out);
    }
    return hit;
}

/* delta applied to base into a new malloc'd buffer (*outlen), or NULL. */
static unsigned char *
apply(const unsigned char *base, u64 blen, const unsigned char *delta, u64 dlen, u64 *outlen)
{
    const unsigned char *p = delta, *end = delta + dlen;
    u64 src, dst, produced = 0;
    char msg[160];
    if (gdc_read_size(&p, end, &src) || gdc_read_size(&p, end, &dst) || src != blen)
        return NULL;
    /* Validate (and size) first: a delta that lies about its result allocates nothing. */
    if (gdc_run_opcodes(p, end, base, blen, dst, NULL, &produced, msg, sizeof(msg))
        || produced != dst || dst > (u64)PY_SSIZE_T_MAX - 1)
        return NULL;
    unsigned char *out = malloc(dst ? dst : 1);
    if (!out)
        return NULL;
    gdc_run_opcodes(p, end, base, blen, dst, out, &produced, msg, sizeof(msg));
    *outlen = dst;
    return out;
}

/* ---- the type ------------------------------------------------------------------ */

static void
free_columns(IndexPack *s)
{
    void *cols[] = {s->offsets, s->starts, s->ends, s->sizes, s->osizes, s->crcs, s->depths,
                    s->bases, s->ofs_base, s->types, s->rtypes, s->done, s->oids, s->ofs_first,
                    s->ofs_kids, s->ref_oid, s->ref_kid, s->ref_owner, s->ref_tmp,
                    s->ref_tmp_oid, s->roots};
    for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
        PyMem_RawFree(cols[i]);
    s->offsets = s->starts = s->ends = s->sizes = s->osizes = NULL;
    s->crcs = s->depths = NULL;
    s->bases = s->ofs_base = NULL;
    s->types = s->rtypes = s->done = s->oids = s->ref_oid = NULL;
    s->ref_owner = NULL;
    s->ref_tmp_oid = NULL;
    s->ofs_first = s->ofs_kids = s->ref_kid = s->ref_tmp = s->roots = NULL;
}

static void
release_pack(IndexPack *s)
{
    if (s->have_pack) {
        PyBuffer_Release(&s->pack);
        s->have_pack = 0;
    }
}

static void
IndexPack_dealloc(IndexPack *s)
{
    release_pack(s);
    free_columns(s);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

/* IndexPack(buf, count, rawsz, detect): the pack (header and trailer included). */
static PyObject *
IndexPack_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *buf;
    Py_ssize_t count, rawsz;
    int detect;
    if (!PyArg_ParseTuple(args, "Onnp:IndexPack", &buf, &count, &rawsz, &detect))
        return NULL;
    if (rawsz != 20) {
        PyErr_SetString(PyExc_ValueError, "IndexPack: only SHA-1 packs are indexed natively");
        return NULL;
    }
    IndexPack *s = (IndexPack *)type->tp_alloc(type, 0);
    if (!s)
        return NULL;
    if (PyObject_GetBuffer(buf, &s->pack, PyBUF_SIMPLE) < 0) {
        Py_DECREF(s);
        return NULL;
    }
    s->have_pack = 1;
    /* The caller checked the count against the pack's size (2 bytes per entry at least). */
    if (count < 0 || (u64)s->pack.len < PACK_HEADER_LEN + (u64)rawsz
        || (u64)count > ((u64)s->pack.len - PACK_HEADER_LEN) / 2) {
        PyErr_SetString(PyExc_ValueError, "IndexPack: implausible object count");
        Py_DECREF(s);
        return NULL;
    }
    s->count = count;
    s->rawsz = rawsz;
    s->detect = detect;
    s->end_of_entries = (u64)s->pack.len - (u64)rawsz;
    s->pos = PACK_HEADER_LEN;
    size_t n = (size_t)count + 1;
#define ALLOC(field, kind, num)                                          \
    if (!(s->field = PyMem_RawCalloc((num), sizeof(kind)))) {            \
        Py_DECREF(s);                                                    \
        return PyErr_NoMemory();                                         \
    }
    ALLOC(offsets, u64, n);
    ALLOC(starts, u64, n);
    ALLOC(ends, u64, n);
    ALLOC(sizes, u64, n);
    ALLOC(osizes, u64, n);
    ALLOC(crcs, unsigned int, n);
    ALLOC(depths, unsigned int, n);
    ALLOC(bases, long long, n);
    ALLOC(ofs_base, long long, n);
    ALLOC(types, unsigned char, n);
    ALLOC(rtypes, unsigned char, n);
    ALLOC(done, unsigned char, n);
    ALLOC(oids, unsigned char, n * (size_t)rawsz);
#undef ALLOC
    return (PyObject *)s;
}

/* The entry that starts at off among entries [0, n), or -1. */
static long long
entry_at(const IndexPack *s, Py_ssize_t n, u64 off)
{
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (s->offsets[mid] < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && s->offsets[lo] == off ? lo : -1;
}

/*
 * scan(inflate_prefix, crc32, max_bytes) -> entries scanned so far, or None
 *
 * Scans entries from where the last call stopped until max_bytes of the pack are
 * behind it or every entry is scanned (the caller gives pages back and reports
 * progress in between).  None: something is unusual, use the reference.
 */
static PyObject *
IndexPack_scan(IndexPack *s, PyObject *args)
{
    PyObject *inflate_fn, *crc_fn;
    Py_ssize_t max_bytes;
    if (!PyArg_ParseTuple(args, "OOn:scan", &inflate_fn, &crc_fn, &max_bytes))
        return NULL;
    if (!s->have_pack || !s->offsets || s->prepared) {
        PyErr_SetString(PyExc_ValueError, "IndexPack is closed or scanned");
        return NULL;
    }
#ifndef GITODB_HAVE_ZLIB
    if (inflate_fn == Py_None) {
        PyErr_SetString(PyExc_TypeError, "scan: built without zlib, inflate_prefix is required");
        return NULL;
    }
#endif
    if (!s->ref_tmp) {
        s->ref_tmp = PyMem_RawMalloc(sizeof(Py_ssize_t) * ((size_t)s->count + 1));
        s->ref_tmp_oid = PyMem_RawMalloc((size_t)s->rawsz * ((size_t)s->count + 1));
        if (!s->ref_tmp || !s->ref_tmp_oid)
            return PyErr_NoMemory();
    }
    const unsigned char *buf = s->pack.buf;
    const u64 eoe = s->end_of_entries, rawsz = (u64)s->rawsz;
    const u64 stop = s->pos + (u64)max_bytes;
    inflater z = {0};
    z.fn = inflate_fn;
    PyObject *result = Py_None;
    for (Py_ssize_t i = s->scanned; i < s->count && s->pos < stop; i++) {
        u64 off = s->pos, size, hlen;
        unsigned int type;
        if (off >= eoe || gdc_entry_header(buf, eoe, off, &type, &size, &hlen))
            goto fallback;
        u64 pos = off + hlen;
        s->ofs_base[i] = -1;
        if (type == 6) {
            u64 dist = 0, nlen = 0;
            if (gdc_ofs_distance(buf, eoe, pos, &dist, &nlen))
                goto fallback;
            pos += nlen;
            if (dist == 0 || dist > off)
                goto fallback;
            long long b = entry_at(s, i, off - dist);
            if (b < 0)
                goto fallback;  /* the reference reports the unresolved delta */
            s->ofs_base[i] = b;
        } else if (type == 7) {
            if (pos + rawsz > eoe)
                goto fallback;
            s->ref_tmp[s->nref] = i;
            memcpy(s->ref_tmp_oid + (size_t)s->nref * rawsz, buf + pos, rawsz);
            s->nref++;
            pos += rawsz;
        } else if (type < 1 || type > 4) {
            goto fallback;
        }
        if (pos > eoe || size > (eoe - pos) * MAX_INFLATE_RATIO + 64)
            goto fallback;
        /* Python inflaters get a window that holds any sensible stream (as the
           reference does); zlib's API stops at the stream's end by itself. */
        u64 avail = eoe - pos;
        if (inflate_fn != Py_None) {
            u64 window = size + (size >> 10) + 64;
            if (window < avail)
                avail = window;
        }
        u64 used = 0;
        unsigned char *data = do_inflate(&z, 1, buf + pos, avail, size, &used);
        if (!data)
            goto fallback;
        u64 end = pos + used;
        PyObject *view = PyMemoryView_FromMemory((char *)buf + off, (Py_ssize_t)(end - off),
                                                 PyBUF_READ);
        PyObject *crc = view ? PyObject_CallOneArg(crc_fn, view) : NULL;
        if (view) {
            PyObject *rel = PyObject_CallMethod(view, "release", NULL);
            Py_XDECREF(rel);
            Py_DECREF(view);
        }
        if (!crc) {
            free(data);
            inflater_end(&z);
            return NULL;
        }
        s->crcs[i] = (unsigned int)PyLong_AsUnsignedLongMask(crc);
        Py_DECREF(crc);
        s->offsets[i] = off;
        s->starts[i] = pos;
        s->ends[i] = end;
        s->types[i] = s->rtypes[i] = (unsigned char)type;
        s->sizes[i] = s->osizes[i] = size;
        s->bases[i] = -1;
        if (type <= 4) {
            int hit = object_id(s->detect, type, data, size, s->oids + (size_t)i * rawsz, 1);
            free(data);
            if (hit)
                goto fallback;  /* the reference raises the located collision error */
            s->done[i] = 1;
        } else {
            free(data);
        }
        s->pos = end;
        s->scanned = i + 1;
    }
    if (s->scanned == s->count && s->pos != eoe)
        goto fallback;  /* junk at the end */
    inflater_end(&z);
    return PyLong_FromSsize_t(s->scanned);
fallback:
    inflater_end(&z);
    Py_INCREF(result);
    return result;
}

/* Sorting the REF_DELTA table by (base id, entry) without qsort_r (not portable):
   a merge sort on entry numbers keyed by the id table. */
static void
sort_refs(Py_ssize_t *idx, Py_ssize_t *tmp, Py_ssize_t n, const unsigned char *oids,
          size_t rawsz)
{
    if (n < 2)
        return;
    Py_ssize_t h = n / 2;
    sort_refs(idx, tmp, h, oids, rawsz);
    sort_refs(idx + h, tmp, n - h, oids, rawsz);
    Py_ssize_t i = 0, j = h, k = 0;
    while (i < h && j < n) {
        int c = memcmp(oids + (size_t)idx[i] * rawsz, oids + (size_t)idx[j] * rawsz, rawsz);
        tmp[k++] = (c <= 0) ? idx[i++] : idx[j++];
    }
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, sizeof(Py_ssize_t) * (size_t)n);
}

/* [lo, hi) of the REF_DELTA entries whose base is oid. */
static void
ref_range(const IndexPack *s, const unsigned char *oid, Py_ssize_t *lo_out, Py_ssize_t *hi_out)
{
    Py_ssize_t lo = 0, hi = s->nref;
    size_t rawsz = (size_t)s->rawsz;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (memcmp(s->ref_oid + (size_t)mid * rawsz, oid, rawsz) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    Py_ssize_t end = lo;
    while (end < s->nref && !memcmp(s->ref_oid + (size_t)end * rawsz, oid, rawsz))
        end++;
    *lo_out = lo;
    *hi_out = end;
}

/* A root and the work its delta tree is expected to cost. */
typedef struct {
    u64 weight;
    Py_ssize_t root;
} weighed_root;

static int
heavier_first(const void *a, const void *b)
{
    const weighed_root *x = a, *y = b;
    if (x->weight != y->weight)
        return x->weight < y->weight ? 1 : -1;
    return x->root < y->root ? -1 : x->root > y->root;
}

/* Sorts s->roots heaviest tree first, so that the threads that take the next roots
   in turn start the longest trees early and none is left alone with one at the end.
   A tree's weight is its root's size times the entries below it (OFS children, and
   the REF children the root claimed), as each delta builds an object of about its
   base's size; a REF_DELTA on a delta result is not known yet and not counted.
   0, or -1 out of memory. */
static int
order_roots_by_weight(IndexPack *s)
{
    Py_ssize_t n = s->count, nroots = s->nroots;
    weighed_root *w = PyMem_RawMalloc(sizeof(weighed_root) * ((size_t)nroots + 1));
    Py_ssize_t *stack = PyMem_RawMalloc(sizeof(Py_ssize_t) * ((size_t)n + 1));
    if (!w || !stack) {
        PyMem_RawFree(w);
        PyMem_RawFree(stack);
        return -1;
    }
    for (Py_ssize_t r = 0; r < nroots; r++) {
        Py_ssize_t root = s->roots[r], depth = 0;
        u64 below = 0;
        stack[depth++] = root;
        if (s->nref) {
            Py_ssize_t lo, hi;
            ref_range(s, s->oids + (size_t)root * s->rawsz, &lo, &hi);
            for (Py_ssize_t k = lo; k < hi; k++)
                if (s->ref_owner[k] == root)
                    stack[depth++] = s->ref_kid[k];
        }
        below = (u64)(depth - 1);
        while (depth) {
            Py_ssize_t e = stack[--depth];
            for (Py_ssize_t c = s->ofs_first[e]; c < s->ofs_first[e + 1]; c++) {
                stack[depth++] = s->ofs_kids[c];
                below++;
            }
        }
        w[r].weight = (s->sizes[root] + 1) * (below + 1);
        w[r].root = root;
    }
    qsort(w, (size_t)nroots, sizeof(weighed_root), heavier_first);
    for (Py_ssize_t r = 0; r < nroots; r++)
        s->roots[r] = w[r].root;
    PyMem_RawFree(w);
    PyMem_RawFree(stack);
    return 0;
}

/* prepare() -> (delta-tree roots, deltas): builds the child tables after the scan. */
static PyObject *
IndexPack_prepare(IndexPack *s, PyObject *unused)
{
    if (s->scanned != s->count || s->prepared) {
        PyErr_SetString(PyExc_ValueError, "prepare: scan first, once");
        return NULL;
    }
    Py_ssize_t n = s->count;
    s->ofs_first = PyMem_RawCalloc((size_t)n + 2, sizeof(Py_ssize_t));
    s->ofs_kids = PyMem_RawMalloc(sizeof(Py_ssize_t) * ((size_t)n + 1));
    s->ref_oid = PyMem_RawMalloc((size_t)s->rawsz * ((size_t)s->nref + 1));
    s->ref_kid = PyMem_RawMalloc(sizeof(Py_ssize_t) * ((size_t)s->nref + 1));
    s->ref_owner = PyMem_RawMalloc(sizeof(long long) * ((size_t)s->nref + 1));
    s->roots = PyMem_RawMalloc(sizeof(Py_ssize_t) * ((size_t)n + 1));
    Py_ssize_t *order = PyMem_RawMalloc(sizeof(Py_ssize_t) * ((size_t)s->nref + 1));
    Py_ssize_t *tmp = PyMem_RawMalloc(sizeof(Py_ssize_t) * ((size_t)s->nref + 1));
    if (!s->ofs_first || !s->ofs_kids || !s->ref_oid || !s->ref_kid || !s->ref_owner
        || !s->roots || !order || !tmp) {
        PyMem_RawFree(order);
        PyMem_RawFree(tmp);
        return PyErr_NoMemory();
    }
    /* OFS children of each base, in pack order (counting sort). */
    for (Py_ssize_t i = 0; i < n; i++)
        if (s->ofs_base[i] >= 0)
            s->ofs_first[s->ofs_base[i] + 1]++;
    for (Py_ssize_t i = 0; i < n; i++)
        s->ofs_first[i + 1] += s->ofs_first[i];
    Py_ssize_t *fill = PyMem_RawMalloc(sizeof(Py_ssize_t) * ((size_t)n + 1));
    if (!fill) {
        PyMem_RawFree(order);
        PyMem_RawFree(tmp);
        return PyErr_NoMemory();
    }
    memcpy(fill, s->ofs_first, sizeof(Py_ssize_t) * ((size_t)n + 1));
    for (Py_ssize_t i = 0; i < n; i++)
        if (s->ofs_base[i] >= 0)
            s->ofs_kids[fill[s->ofs_base[i]]++] = i;
    PyMem_RawFree(fill);
    /* REF children, sorted by base id (then pack order: the sort is stable). */
    for (Py_ssize_t k = 0; k < s->nref; k++) {
        order[k] = k;
        s->ref_owner[k] = -1;
    }
    sort_refs(order, tmp, s->nref, s->ref_tmp_oid, (size_t)s->rawsz);
    for (Py_ssize_t k = 0; k < s->nref; k++) {
        memcpy(s->ref_oid + (size_t)k * s->rawsz, s->ref_tmp_oid + (size_t)order[k] * s->rawsz,
               (size_t)s->rawsz);
        s->ref_kid[k] = s->ref_tmp[order[k]];
    }
    PyMem_RawFree(order);
    PyMem_RawFree(tmp);
    PyMem_RawFree(s->ref_tmp);
    PyMem_RawFree(s->ref_tmp_oid);
    s->ref_tmp = NULL;
    s->ref_tmp_oid = NULL;
    /* Roots: non-delta entries that some delta is based on. */
    s->nroots = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (s->types[i] > 4)
            continue;
        int has = s->ofs_first[i + 1] > s->ofs_first[i];
        if (s->nref) {
            /* The first non-delta entry with the id takes its REF_DELTA children, as
               in the reference, whichever thread gets to it first. */
            Py_ssize_t lo, hi;
            ref_range(s, s->oids + (size_t)i * s->rawsz, &lo, &hi);
            for (Py_ssize_t k = lo; k < hi; k++)
                if (s->ref_owner[k] == -1) {
                    s->ref_owner[k] = i;
                    has = 1;
                }
        }
        if (has)
            s->roots[s->nroots++] = i;
    }
    if (order_roots_by_weight(s) < 0)
        return PyErr_NoMemory();
    s->prepared = 1;
    Py_ssize_t ndeltas = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        ndeltas += s->types[i] > 4;
    /* The scan's bookkeeping that resolve does not read. */
    PyMem_RawFree(s->ofs_base);
    s->ofs_base = NULL;
    return Py_BuildValue("(nn)", s->nroots, ndeltas);
}

/* ---- resolve ------------------------------------------------------------------ */

typedef struct {
    Py_ssize_t entry;
    unsigned char *data;  /* NULL: let go (rebuilt when needed) */
    u64 len;
    Py_ssize_t ofs_at, ofs_end, ref_at, ref_end;
} frame;

typedef struct {
    IndexPack *s;
    inflater z;
    frame *frames;
    Py_ssize_t nframes, cap;
    u64 held, budget, read;
    Py_ssize_t resolved;
} walker;

/* The inflated data of entry i (a delta's delta, or an object), malloc'd; NULL. */
static unsigned char *
entry_data(walker *w, Py_ssize_t i)
{
    IndexPack *s = w->s;
    u64 used;
    u64 start = s->starts[i], end = s->ends[i];
    w->read += end - start;
    return do_inflate(&w->z, 0, (const unsigned char *)s->pack.buf + start, end - start,
                      s->sizes[i], &used);
}

/* The object entry i (resolved) holds, rebuilt from the nearest base whose data is
   held on the stack (or from its non-delta root).  Malloc'd; NULL on failure. */
static unsigned char *
rebuild(walker *w, Py_ssize_t e, u64 *len)
{
    IndexPack *s = w->s;
    Py_ssize_t chain_cap = 16, nchain = 0;
    Py_ssize_t *chain = malloc(sizeof(Py_ssize_t) * (size_t)chain_cap);
    if (!chain)
        return NULL;
    const unsigned char *from = NULL;
    u64 from_len = 0;
    Py_ssize_t x = e;
    for (;;) {
        for (Py_ssize_t f = w->nframes - 1; f >= 0 && !from; f--)
            if (w->frames[f].entry == x && w->frames[f].data && x != e) {
                from = w->frames[f].data;
                from_len = w->frames[f].len;
            }
        if (from)
            break;
        if (nchain == chain_cap) {
            chain_cap *= 2;
            Py_ssize_t *c2 = realloc(chain, sizeof(Py_ssize_t) * (size_t)chain_cap);
            if (!c2) {
                free(chain);
                return NULL;
            }
            chain = c2;
        }
        chain[nchain++] = x;
        if (s->bases[x] < 0)
            break;
        x = (Py_ssize_t)s->bases[x];
    }
    unsigned char *cur = NULL;
    u64 cur_len = 0;
    Py_ssize_t k = nchain - 1;
    if (!from) {  /* chain[k] is the non-delta root */
        cur = entry_data(w, chain[k]);
        cur_len = s->sizes[chain[k]];
        k--;
        if (!cur) {
            free(chain);
            return NULL;
        }
    }
    for (; k >= 0; k--) {
        unsigned char *delta = entry_data(w, chain[k]);
        if (!delta) {
            free(cur);
            free(chain);
            return NULL;
        }
        u64 nl;
        unsigned char *next = apply(cur ? cur : from, cur ? cur_len : from_len, delta,
                                    s->sizes[chain[k]], &nl);
        free(delta);
        free(cur);
        if (!next) {
            free(chain);
            return NULL;
        }
        cur = next;
        cur_len = nl;
    }
    free(chain);
    *len = cur_len;
    return cur;
}

static int
push(walker *w, Py_ssize_t entry, unsigned char *data, u64 len)
{
    IndexPack *s = w->s;
    if (w->nframes == w->cap) {
        Py_ssize_t cap = w->cap ? w->cap * 2 : 16;
        frame *f2 = realloc(w->frames, sizeof(frame) * (size_t)cap);
        if (!f2)
            return -1;
        w->frames = f2;
        w->cap = cap;
    }
    frame *f = &w->frames[w->nframes++];
    f->entry = entry;
    f->data = data;
    f->len = len;
    f->ofs_at = s->ofs_first[entry];
    f->ofs_end = s->ofs_first[entry + 1];
    f->ref_at = f->ref_end = 0;
    if (s->nref) {
        ref_range(s, s->oids + (size_t)entry * s->rawsz, &f->ref_at, &f->ref_end);
        for (Py_ssize_t k = f->ref_at; k < f->ref_end; k++)
            claim(&s->ref_owner[k], entry);
    }
    w->held += len;
    /* Past the budget, let go of the oldest bases below the top. */
    for (Py_ssize_t k = 0; w->held > w->budget && k < w->nframes - 1; k++) {
        if (w->frames[k].data) {
            free(w->frames[k].data);
            w->frames[k].data = NULL;
            w->held -= w->frames[k].len;
        }
    }
    return 0;
}

static void
pop(walker *w)
{
    frame *f = &w->frames[--w->nframes];
    if (f->data) {
        free(f->data);
        w->held -= f->len;
    }
}

/* The next child of the top frame still to build, or -1. */
static Py_ssize_t
next_child(walker *w, frame *f)
{
    IndexPack *s = w->s;
    if (f->ofs_at < f->ofs_end)
        return s->ofs_kids[f->ofs_at++];
    while (f->ref_at < f->ref_end) {
        Py_ssize_t k = f->ref_at++;
        if (s->ref_owner[k] == f->entry)
            return s->ref_kid[k];
    }
    return -1;
}

static int
has_more(frame *f, IndexPack *s)
{
    if (f->ofs_at < f->ofs_end)
        return 1;
    for (Py_ssize_t k = f->ref_at; k < f->ref_end; k++)
        if (s->ref_owner[k] == f->entry)
            return 1;
    return 0;
}

/* Resolve the tree under root: 0, or -1 (anything unusual). */
static int
walk_tree(walker *w, Py_ssize_t root)
{
    IndexPack *s = w->s;
    size_t rawsz = (size_t)s->rawsz;
    unsigned char *data = entry_data(w, root);
    if (!data)
        return -1;
    if (push(w, root, data, s->sizes[root]))
        return -1;
    while (w->nframes) {
        frame *top = &w->frames[w->nframes - 1];
        Py_ssize_t child = next_child(w, top);
        if (child < 0) {
            pop(w);
            continue;
        }
        if (!top->data) {
            u64 len;
            top->data = rebuild(w, top->entry, &len);
            if (!top->data)
                return -1;
            w->held += top->len;
        }
        unsigned char *delta = entry_data(w, child);
        if (!delta)
            return -1;
        u64 rlen;
        unsigned char *result = apply(top->data, top->len, delta, s->sizes[child], &rlen);
        free(delta);
        if (!result)
            return -1;
        unsigned int type = s->rtypes[top->entry];
        if (object_id(s->detect, type, result, rlen, s->oids + (size_t)child * rawsz, 0)) {
            free(result);
            return -1;
        }
        s->rtypes[child] = (unsigned char)type;
        s->osizes[child] = rlen;
        s->depths[child] = s->depths[top->entry] + 1;
        s->bases[child] = top->entry;
        s->done[child] = 1;
        w->resolved++;
        int kids = s->ofs_first[child + 1] > s->ofs_first[child];
        if (!kids && s->nref) {
            Py_ssize_t lo, hi;
            ref_range(s, s->oids + (size_t)child * rawsz, &lo, &hi);
            kids = hi > lo;
        }
        if (!kids) {
            free(result);
            continue;
        }
        if (!has_more(top, s))
            pop(w);  /* nothing left to build on this base: a chain holds one base */
        if (push(w, child, result, rlen)) {
            free(result);
            return -1;
        }
    }
    return 0;
}

/*
 * resolve(first, stop, step, inflate, budget) -> (resolved, bytes_read) or None
 *
 * Resolves the trees of roots first, first+step, ... below stop, without the GIL,
 * holding at most budget bytes of bases.  inflate is the layer's inflate, or None
 * for zlib's C API.  None: something is unusual, use the reference.
 */
static PyObject *
IndexPack_resolve(IndexPack *s, PyObject *args)
{
    Py_ssize_t first, stop, step;
    PyObject *inflate_fn;
    unsigned long long budget;
    const char *library = NULL;
    if (!PyArg_ParseTuple(args, "nnnOK|z:resolve", &first, &stop, &step, &inflate_fn, &budget,
                          &library))
        return NULL;
    if (!s->prepared || !s->have_pack || !s->ofs_first || step <= 0) {
        PyErr_SetString(PyExc_ValueError, "resolve: prepare first, with a positive step");
        return NULL;
    }
#ifndef GITODB_HAVE_ZLIB
    if (inflate_fn == Py_None) {
        PyErr_SetString(PyExc_TypeError, "resolve: built without zlib, inflate is required");
        return NULL;
    }
#endif
    if (stop > s->nroots)
        stop = s->nroots;
    walker w;
    memset(&w, 0, sizeof(w));
    w.s = s;
    w.z.fn = inflate_fn;
    if (library && inflate_fn != Py_None)
        w.z.ld = gdc_ld_new(library); /* NULL: not there, the callable is called */
    w.budget = budget;
    int failed = 0;
    Py_INCREF(s);
    w.z.saved = PyEval_SaveThread();
    for (Py_ssize_t k = first; k < stop && !failed; k += step)
        if (walk_tree(&w, s->roots[k]))
            failed = 1;
    while (w.nframes)
        pop(&w);
    PyEval_RestoreThread(w.z.saved);
    w.z.saved = NULL;
    free(w.frames);
    inflater_end(&w.z);
    Py_DECREF(s);
    if (failed)
        Py_RETURN_NONE;
    return Py_BuildValue("(nK)", w.resolved, w.read);
}

static PyObject *
col(const void *p, size_t n)
{
    return PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)n);
}

/* finish() -> (offsets, ends, crcs, oids, types, real_types, sizes, object_sizes,
   depths, bases, order, unresolved, ambiguous): native-endian u64/u32/u8/i64 columns
   as bytes; order is the entries sorted by (id, offset), u32; ambiguous: a REF_DELTA
   whose base id more than one entry holds, one of them a delta result (the
   reference must index the pack).  Frees every column. */
static PyObject *
IndexPack_finish(IndexPack *s, PyObject *unused)
{
    size_t n = (size_t)s->count;
    if (!s->prepared || !s->offsets) {
        PyErr_SetString(PyExc_ValueError, "finish: prepare first, once");
        return NULL;
    }
    Py_ssize_t left = 0;
    for (size_t i = 0; i < n; i++)
        left += !s->done[i];
    /* Free what is not handed out before the copies are made. */
    PyMem_RawFree(s->starts);
    PyMem_RawFree(s->ofs_first);
    PyMem_RawFree(s->ofs_kids);
    PyMem_RawFree(s->roots);
    PyMem_RawFree(s->done);
    s->starts = NULL;
    s->ofs_first = s->ofs_kids = s->roots = NULL;
    s->done = NULL;
    Py_ssize_t *order = PyMem_RawMalloc(sizeof(Py_ssize_t) * (n + 1));
    Py_ssize_t *tmp = PyMem_RawMalloc(sizeof(Py_ssize_t) * (n + 1));
    unsigned int *ord32 = PyMem_RawMalloc(sizeof(unsigned int) * (n + 1));
    if (!order || !tmp || !ord32 || n > 0xffffffffULL) {
        PyMem_RawFree(order);
        PyMem_RawFree(tmp);
        PyMem_RawFree(ord32);
        return PyErr_NoMemory();
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (Py_ssize_t)i;
    /* Stable: equal ids stay in pack order, which is offset order. */
    sort_refs(order, tmp, (Py_ssize_t)n, s->oids, (size_t)s->rawsz);
    /* An id held by a delta result and by another entry, that a REF_DELTA names:
       Git gives the REF_DELTA to whichever of them its walk in pack order reaches
       first, which the heaviest-first walk here cannot promise; the reference
       walks in pack order (duplicate objects are rare: Git never writes them). */
    int ambiguous = 0;
    for (size_t i = 0; i + 1 < n && s->nref && !ambiguous; i++) {
        Py_ssize_t a = order[i], b = order[i + 1];
        const unsigned char *id = s->oids + (size_t)a * s->rawsz;
        if ((s->types[a] > 4 || s->types[b] > 4)
            && memcmp(id, s->oids + (size_t)b * s->rawsz, (size_t)s->rawsz) == 0) {
            Py_ssize_t lo, hi;
            ref_range(s, id, &lo, &hi);
            ambiguous = lo < hi;
        }
    }
    for (size_t i = 0; i < n; i++)
        ord32[i] = (unsigned int)order[i];
    PyMem_RawFree(order);
    PyMem_RawFree(tmp);
    PyObject *r = Py_BuildValue(
        "(NNNNNNNNNNNni)", col(s->offsets, n * 8), col(s->ends, n * 8), col(s->crcs, n * 4),
        col(s->oids, n * (size_t)s->rawsz), col(s->types, n), col(s->rtypes, n),
        col(s->sizes, n * 8), col(s->osizes, n * 8), col(s->depths, n * 4), col(s->bases, n * 8),
        col(ord32, n * 4), left, ambiguous);
    PyMem_RawFree(ord32);
    free_columns(s);
    return r;
}

/* close(): let go of the pack's buffer (the columns stay). */
static PyObject *
IndexPack_close(IndexPack *s, PyObject *unused)
{
    release_pack(s);
    Py_RETURN_NONE;
}

static PyMethodDef IndexPack_methods[] = {
    {"scan", (PyCFunction)IndexPack_scan, METH_VARARGS,
     "scan(inflate_prefix, crc32, max_bytes) -> entries scanned, or None (use the reference)"},
    {"prepare", (PyCFunction)IndexPack_prepare, METH_NOARGS,
     "prepare() -> (number of delta-tree roots, number of deltas)"},
    {"resolve", (PyCFunction)IndexPack_resolve, METH_VARARGS,
     "resolve(first, stop, step, inflate, budget) -> (resolved, bytes_read), or None"},
    {"finish", (PyCFunction)IndexPack_finish, METH_NOARGS,
     "finish() -> the per-entry columns as bytes, the id order, and the number left "
     "unresolved (frees the columns)"},
    {"close", (PyCFunction)IndexPack_close, METH_NOARGS, "close(): release the pack buffer"},
    {NULL, NULL, 0, NULL},
};

static PyObject *
IndexPack_get_pos(IndexPack *s, void *closure)
{
    return PyLong_FromUnsignedLongLong(s->pos);
}

static PyGetSetDef IndexPack_getset[] = {
    {"pos", (getter)IndexPack_get_pos, NULL, "how far the scan has read", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject gdc_IndexPackType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gitodb._native.IndexPack",
    .tp_basicsize = sizeof(IndexPack),
    .tp_dealloc = (destructor)IndexPack_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "IndexPack(buf, count, rawsz, detect): index-pack's scan and resolve passes",
    .tp_methods = IndexPack_methods,
    .tp_getset = IndexPack_getset,
    .tp_new = IndexPack_new,
};
