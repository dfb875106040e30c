/*
 * Every object of a pack in id order, for cat-file --batch --batch-all-objects
 * (gitodb._native.delta_bases and IdOrderWalk, driven by
 * PackFile.iter_objects_id_order).
 *
 * Reading in id order jumps between delta chains at random.  Git rebuilds each
 * object through its LRU delta-base cache and rebuilds most chains many times.  Here
 * the whole future is known before the first object is built: the order of the
 * requests (index positions 0, 1, ...) and the delta forest (each entry's base, from
 * one header pass).  So for every entry the walk knows the times at which a request
 * will pass through it (itself or a delta built on it), and the cache keeps what will
 * be needed soon and is dear to rebuild: when over its limit it evicts the entry with
 * the largest (time to its next use) x (bytes) / (cost to rebuild it), and an entry
 * with no use to come is dropped at once.  Same bound as the LRU cache
 * (core.deltaBaseCacheLimit, counted as len(data)); a different eviction rule,
 * because here, unlike on every other path, the future is known.
 *
 * The inflate and the delta application are walk.c's (gdc_walk_inflate, gdc_build):
 * the compression layer's choice, large ones without the GIL.  Anything unusual about
 * an entry (a damaged header, a base outside the pack, an inflate or delta error) is
 * not handled here: the object is returned as a fallback (type 0, data None) and
 * Python reads it with PackFile.read_at, which raises the typed error.
 *
 * Memory: the cache's limit, the object being built and its base, and per entry a
 * few words (the plan: bases, depths, next-use lists).  The next-use lists hold one
 * entry per (request, entry on its chain); their total is capped at USES_PER_OBJECT
 * per object: deeper chains record only their nearest entries.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "pack.h"

#define PACK_HEADER_LEN 12ULL
#define MAX_INFLATE_RATIO 1040ULL
/* Next-use entries per object at most (the plan's memory: 4 bytes each). */
#define USES_PER_OBJECT 32
/* bases[] values other than a pack position */
#define BASE_NONE (-1)     /* a whole object */
#define BASE_BY_ID (-2)    /* a REF_DELTA: Python fills in the position of its base */
#define BASE_UNKNOWN (-3)  /* damaged, outside the pack, or in a cycle: read_at */
#define IN_PROGRESS 0xffffffffU
/* Rebuild cost model, in ns: inflate per output byte, delta copy per byte, per call
   (measured on libgit2's pack: the ratios matter, not the values). */
#define COST_INFLATE 3.8
#define COST_COPY 0.16
#define COST_CALL 2000.0

/*
 * delta_bases(buf, sorted_offsets, data_end) -> bytes (native int32 per pack position)
 *
 * For each entry in pack order: -1 for a whole object, the pack position of an
 * OFS_DELTA's base, -2 for a REF_DELTA (its base is found by id, in Python), -3 for
 * an entry whose header or base cannot be read (read_at reports it).
 */
static PyObject *
delta_bases(PyObject *self, PyObject *args)
{
    Py_buffer pack, sorted;
    unsigned long long data_end;
    if (!PyArg_ParseTuple(args, "y*y*K:delta_bases", &pack, &sorted, &data_end))
        return NULL;
    Py_ssize_t n = sorted.len / 8;
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * 4);
    if (out) {
        const unsigned char *buf = pack.buf;
        const unsigned long long *so = sorted.buf;
        int32_t *bases = (int32_t *)PyBytes_AS_STRING(out);
        if (data_end > (unsigned long long)pack.len)
            data_end = (unsigned long long)pack.len;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t k = 0; k < n; k++) {
            unsigned long long off = so[k];
            unsigned long long end = k + 1 < n ? so[k + 1] : data_end;
            unsigned int type;
            unsigned long long size, hlen, dist, nlen;
            bases[k] = BASE_UNKNOWN;
            if (off < PACK_HEADER_LEN || end > data_end || off >= end
                || gdc_entry_header(buf, end, off, &type, &size, &hlen))
                continue;
            if (type >= 1 && type <= 4) {
                bases[k] = BASE_NONE;
            } else if (type == 7) {
                bases[k] = BASE_BY_ID;
            } else if (type == 6 && !gdc_ofs_distance(buf, end, off + hlen, &dist, &nlen)
                       && dist && dist <= off - PACK_HEADER_LEN) {
                Py_ssize_t at = gdc_offset_index(so, k, off - dist);
                if (at >= 0)
                    bases[k] = (int32_t)at;
            }
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&pack);
    PyBuffer_Release(&sorted);
    return out;
}

typedef struct {
    double prio;
    uint32_t k;
} heap_item;

typedef struct {
    PyObject_HEAD
    PyObject *pack_obj, *inflate, *table_obj;
    Py_buffer pack, sorted, table;
    int have_pack, have_sorted, have_table;
    unsigned long long data_end;
    Py_ssize_t n, t;               /* entries; the next request (index position) */
    Py_ssize_t id_start, id_stride, rawsz;
    int32_t *base;                 /* per pack position, as delta_bases */
    uint32_t *order;               /* pack position of each index position */
    uint32_t *use_at, *use_end;    /* entry k's next-use list: uses[use_at[k]..use_end[k]) */
    uint32_t *uses;                /* request times, ascending per entry */
    PyObject **cached;             /* the data kept for an entry, or NULL */
    unsigned char *type;           /* the object type of entry k, once built */
    double *prio;                  /* its priority in the heap while cached */
    float *cost;                   /* its rebuild cost (ns) while cached */
    heap_item *heap;
    size_t heap_len, heap_cap, ncached;
    Py_ssize_t limit, size;        /* cache bound and bytes held (len of the data) */
    uint32_t *chain;               /* scratch: the entries to build for one request */
    gdc_zinflater z;
} IdOrderWalk;

static int
heap_push(IdOrderWalk *w, double prio, uint32_t k)
{
    if (w->heap_len == w->heap_cap) {
        size_t cap = w->heap_cap ? w->heap_cap * 2 : 1024;
        heap_item *h = PyMem_RawRealloc(w->heap, cap * sizeof(*h));
        if (!h) {
            PyErr_NoMemory();
            return -1;
        }
        w->heap = h;
        w->heap_cap = cap;
    }
    size_t i = w->heap_len++;
    while (i) {
        size_t parent = (i - 1) / 2;
        if (w->heap[parent].prio >= prio)
            break;
        w->heap[i] = w->heap[parent];
        i = parent;
    }
    w->heap[i].prio = prio;
    w->heap[i].k = k;
    return 0;
}

static heap_item
heap_pop(IdOrderWalk *w)
{
    heap_item top = w->heap[0];
    heap_item last = w->heap[--w->heap_len];
    size_t i = 0, len = w->heap_len;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= len)
            break;
        if (c + 1 < len && w->heap[c + 1].prio > w->heap[c].prio)
            c++;
        if (w->heap[c].prio <= last.prio)
            break;
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (len)
        w->heap[i] = last;
    return top;
}

/* An item is current while its entry is cached with that very priority. */
static int
heap_live(IdOrderWalk *w, heap_item it)
{
    return w->cached[it.k] && w->prio[it.k] == it.prio;
}

/* Drop stale items once they outnumber the live ones (the heap stays O(cached)). */
static void
heap_compact(IdOrderWalk *w)
{
    if (w->heap_len < 4 * w->ncached + 4096)
        return;
    size_t j = 0;
    for (size_t i = 0; i < w->heap_len; i++)
        if (heap_live(w, w->heap[i]))
            w->heap[j++] = w->heap[i];
    w->heap_len = j;
    /* heapify */
    for (size_t s = j / 2; s-- > 0;) {
        heap_item v = w->heap[s];
        size_t i = s;
        for (;;) {
            size_t c = 2 * i + 1;
            if (c >= j)
                break;
            if (c + 1 < j && w->heap[c + 1].prio > w->heap[c].prio)
                c++;
            if (w->heap[c].prio <= v.prio)
                break;
            w->heap[i] = w->heap[c];
            i = c;
        }
        w->heap[i] = v;
    }
}

static void
uncache(IdOrderWalk *w, uint32_t k)
{
    PyObject *d = w->cached[k];
    if (!d)
        return;
    w->cached[k] = NULL;
    w->size -= PyBytes_GET_SIZE(d);
    w->ncached--;
    Py_DECREF(d);
}

/*
 * Entry k was just used (built, or hit in the cache) by request t: keep data for its
 * next use, or drop it when none is to come.  0, or -1 with an error set.
 */
static int
touch(IdOrderWalk *w, uint32_t k, PyObject *data, double cost)
{
    uint32_t at = w->use_at[k], end = w->use_end[k];
    while (at < end && w->uses[at] <= (uint32_t)w->t)
        at++;
    w->use_at[k] = at;
    Py_ssize_t len = PyBytes_GET_SIZE(data);
    if (at == end || len > w->limit) {
        uncache(w, k);
        return 0;
    }
    if (!w->cached[k]) {
        w->cached[k] = Py_NewRef(data);
        w->size += len;
        w->ncached++;
        w->cost[k] = (float)cost;
    }
    double prio = (double)(w->uses[at] - (uint32_t)w->t) * (double)(len + 1) / w->cost[k];
    w->prio[k] = prio;
    if (heap_push(w, prio, k))
        return -1;
    while (w->size > w->limit && w->heap_len) {
        heap_item it = heap_pop(w);
        if (heap_live(w, it))
            uncache(w, it.k);
    }
    heap_compact(w);
    return 0;
}

/* The object at pack position x: a new reference to its data (type in *type_out), or
   NULL for a fallback (no error set), or NULL with an error set. */
static PyObject *
resolve(IdOrderWalk *w, uint32_t x, unsigned int *type_out)
{
    const unsigned char *buf = w->pack.buf;
    const unsigned long long *so = w->sorted.buf;
    Py_ssize_t depth = 0;
    int32_t have = -1;
    uint32_t j = x;
    for (;;) {
        if (w->cached[j]) {
            have = (int32_t)j;
            break;
        }
        if (depth >= w->n)
            return NULL; /* a cycle */
        w->chain[depth++] = j;
        int32_t b = w->base[j];
        if (b == BASE_NONE)
            break;
        if (b < 0)
            return NULL;
        j = (uint32_t)b;
    }
    PyObject *cur = NULL;
    unsigned int cur_type = 0;
    if (have >= 0) {
        cur = Py_NewRef(w->cached[have]);
        cur_type = w->type[have];
        if (touch(w, (uint32_t)have, cur, w->cost[have]) < 0)
            goto error;
    }
    while (depth > 0) {
        uint32_t k = w->chain[--depth];
        unsigned long long off = so[k];
        unsigned long long end = (Py_ssize_t)k + 1 < w->n ? so[k + 1] : w->data_end;
        unsigned int t;
        unsigned long long size, hlen, dist, nlen;
        if (gdc_entry_header(buf, end, off, &t, &size, &hlen))
            goto fallback;
        unsigned long long pos = off + hlen;
        PyObject *data;
        double cost;
        if (t >= 1 && t <= 4) {
            if (size > (end - pos) * MAX_INFLATE_RATIO)
                goto fallback;
            data = gdc_walk_inflate(w->inflate, &w->z, buf, pos, end, size);
            cost = COST_CALL + COST_INFLATE * (double)size;
        } else {
            if (!cur)
                goto fallback;
            if (t == 6) {
                if (gdc_ofs_distance(buf, end, pos, &dist, &nlen))
                    goto fallback;
                pos += nlen;
            } else {
                pos += (unsigned long long)w->rawsz;
            }
            if (pos >= end || size > (end - pos) * MAX_INFLATE_RATIO)
                goto fallback;
            PyObject *delta = gdc_walk_inflate(w->inflate, &w->z, buf, pos, end, size);
            if (!delta)
                goto fallback;
            data = gdc_build(cur, delta);
            Py_DECREF(delta);
            t = cur_type;
            if (data)
                cost = COST_CALL + COST_INFLATE * (double)size
                       + COST_COPY * (double)PyBytes_GET_SIZE(data);
        }
        if (!data)
            goto fallback;
        Py_XDECREF(cur);
        cur = data;
        cur_type = t;
        w->type[k] = (unsigned char)t;
        if (touch(w, k, cur, cost) < 0)
            goto error;
    }
    *type_out = cur_type;
    return cur;
fallback:
    PyErr_Clear();
    Py_XDECREF(cur);
    return NULL;
error:
    Py_XDECREF(cur);
    return NULL;
}

static void IdOrderWalk_dealloc(IdOrderWalk *w);

/*
 * IdOrderWalk(buf, sorted_offsets, data_end, inflate, bases, id_table, rev, limit)
 *
 * sorted_offsets: native uint64 entry offsets ascending; bases: delta_bases' output
 * with the REF_DELTAs filled in; id_table: PackIndex.id_table(); rev: the index
 * position of each pack position (native uint32); inflate: the compression layer's
 * inflate, or None for zlib's C API (as walk_pack); limit: the cache's bound.
 */
static PyObject *
IdOrderWalk_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *pack_obj, *sorted_obj, *inflate, *table_obj;
    Py_buffer bases, rev;
    unsigned long long data_end;
    Py_ssize_t limit, count;
    if (!PyArg_ParseTuple(args, "OOKOy*Oy*n:IdOrderWalk", &pack_obj, &sorted_obj, &data_end,
                          &inflate, &bases, &table_obj, &rev, &limit))
        return NULL;
    IdOrderWalk *w = (IdOrderWalk *)type->tp_alloc(type, 0);
    uint32_t *depth = NULL;
    if (!w)
        goto fail;
#ifndef GITODB_HAVE_ZLIB
    if (inflate == Py_None) {
        PyErr_SetString(PyExc_TypeError, "IdOrderWalk: built without zlib, inflate is required");
        goto fail;
    }
#endif
    w->inflate = Py_NewRef(inflate);
    w->limit = limit < 0 ? 0 : limit;
    if (PyObject_GetBuffer(pack_obj, &w->pack, PyBUF_SIMPLE) < 0)
        goto fail;
    w->have_pack = 1;
    if (PyObject_GetBuffer(sorted_obj, &w->sorted, PyBUF_SIMPLE) < 0)
        goto fail;
    w->have_sorted = 1;
    PyObject *tbuf;
    if (!PyArg_ParseTuple(table_obj, "Onnnn:IdOrderWalk id_table", &tbuf, &w->id_start,
                          &w->id_stride, &w->rawsz, &count))
        goto fail;
    if (PyObject_GetBuffer(tbuf, &w->table, PyBUF_SIMPLE) < 0)
        goto fail;
    w->have_table = 1;
    Py_ssize_t n = w->sorted.len / 8;
    w->n = n;
    w->data_end = data_end > (unsigned long long)w->pack.len ? (unsigned long long)w->pack.len
                                                              : data_end;
    if (bases.len != n * 4 || rev.len != n * 4 || count != n || n > 0x7fffffff
        || w->rawsz <= 0 || w->id_stride < w->rawsz || w->id_start < 0
        || w->id_start + n * w->id_stride > w->table.len) {
        PyErr_SetString(PyExc_ValueError, "IdOrderWalk: bases, rev, ids and offsets differ");
        goto fail;
    }
    size_t cnt = n ? (size_t)n : 1;
    w->base = PyMem_RawMalloc(cnt * sizeof(int32_t));
    w->order = PyMem_RawMalloc(cnt * sizeof(uint32_t));
    w->use_at = PyMem_RawCalloc(cnt, sizeof(uint32_t));
    w->use_end = PyMem_RawCalloc(cnt, sizeof(uint32_t));
    w->cached = PyMem_RawCalloc(cnt, sizeof(PyObject *));
    w->type = PyMem_RawCalloc(cnt, 1);
    w->prio = PyMem_RawCalloc(cnt, sizeof(double));
    w->cost = PyMem_RawCalloc(cnt, sizeof(float));
    w->chain = PyMem_RawMalloc(cnt * sizeof(uint32_t));
    depth = PyMem_RawCalloc(cnt, sizeof(uint32_t));
    if (!w->base || !w->order || !w->use_at || !w->use_end || !w->cached || !w->type
        || !w->prio || !w->cost || !w->chain || !depth) {
        PyErr_NoMemory();
        goto fail;
    }
    memcpy(w->base, bases.buf, (size_t)n * 4);
    const uint32_t *rv = rev.buf;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (rv[k] >= (uint32_t)n || (w->base[k] >= 0 && w->base[k] >= n)) {
            PyErr_SetString(PyExc_ValueError, "IdOrderWalk: position out of range");
            goto fail;
        }
        w->order[rv[k]] = (uint32_t)k;
    }
    /* Depth of every entry: the entries a walk from it towards its base visits, itself
       included, up to a whole object or an entry that is not resolved here.  A cycle
       of REF_DELTAs is cut (its entry is then read by read_at, which reports it). */
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t len = 0;
        uint32_t j = (uint32_t)k, d = 0;
        for (;;) {
            if (depth[j] == IN_PROGRESS) {
                w->base[w->chain[len - 1]] = BASE_UNKNOWN;
                break;
            }
            if (depth[j]) {
                d = depth[j];
                break;
            }
            depth[j] = IN_PROGRESS;
            w->chain[len++] = j;
            if (w->base[j] < 0)
                break;
            j = (uint32_t)w->base[j];
        }
        while (len > 0)
            depth[w->chain[--len]] = ++d;
    }
    /* The next-use lists: for each request, the entries on its chain, nearest first,
       as many as the cap allows (deeper chains record only their nearest). */
    unsigned long long cap = (unsigned long long)USES_PER_OBJECT * (unsigned long long)n;
    if (cap > 0xffffffffULL)
        cap = 0xffffffffULL;
    unsigned long long total = 0, deepest = 1;
    for (Py_ssize_t k = 0; k < n; k++) {
        total += depth[k];
        if (depth[k] > deepest)
            deepest = depth[k];
    }
    unsigned long long keep = deepest;
    while (total > cap && keep > 1) { /* the largest per-request depth that fits */
        keep = keep / 2;
        total = 0;
        for (Py_ssize_t k = 0; k < n; k++)
            total += depth[k] < keep ? depth[k] : keep;
    }
    w->uses = PyMem_RawMalloc((size_t)(total ? total : 1) * sizeof(uint32_t));
    if (!w->uses) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t t = 0; t < n; t++) { /* count */
        uint32_t j = w->order[t];
        for (unsigned long long s = 0; s < keep; s++) {
            w->use_end[j]++;
            if (w->base[j] < 0)
                break;
            j = (uint32_t)w->base[j];
        }
    }
    uint32_t acc = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        w->use_at[k] = acc;
        acc += w->use_end[k];
        w->use_end[k] = w->use_at[k];
    }
    for (Py_ssize_t t = 0; t < n; t++) { /* fill, ascending per entry */
        uint32_t j = w->order[t];
        for (unsigned long long s = 0; s < keep; s++) {
            w->uses[w->use_end[j]++] = (uint32_t)t;
            if (w->base[j] < 0)
                break;
            j = (uint32_t)w->base[j];
        }
    }
    PyMem_RawFree(depth);
    PyBuffer_Release(&bases);
    PyBuffer_Release(&rev);
    return (PyObject *)w;
fail:
    PyMem_RawFree(depth);
    PyBuffer_Release(&bases);
    PyBuffer_Release(&rev);
    if (w)
        IdOrderWalk_dealloc(w);
    return NULL;
}

static void
IdOrderWalk_dealloc(IdOrderWalk *w)
{
    if (w->cached)
        for (Py_ssize_t k = 0; k < w->n; k++)
            Py_XDECREF(w->cached[k]);
    gdc_zinflater_end(&w->z);
    PyMem_RawFree(w->base);
    PyMem_RawFree(w->order);
    PyMem_RawFree(w->use_at);
    PyMem_RawFree(w->use_end);
    PyMem_RawFree(w->uses);
    PyMem_RawFree(w->cached);
    PyMem_RawFree(w->type);
    PyMem_RawFree(w->prio);
    PyMem_RawFree(w->cost);
    PyMem_RawFree(w->heap);
    PyMem_RawFree(w->chain);
    if (w->have_pack)
        PyBuffer_Release(&w->pack);
    if (w->have_sorted)
        PyBuffer_Release(&w->sorted);
    if (w->have_table)
        PyBuffer_Release(&w->table);
    Py_XDECREF(w->inflate);
    Py_TYPE(w)->tp_free((PyObject *)w);
}

/* next(max_items, max_bytes) -> [(oid, offset, type, data)], the next objects in id
   order ([] at the end); type 0 and data None: read that one with read_at. */
static PyObject *
IdOrderWalk_next(IdOrderWalk *w, PyObject *args)
{
    Py_ssize_t max_items, max_bytes, out_bytes = 0;
    if (!PyArg_ParseTuple(args, "nn:next", &max_items, &max_bytes))
        return NULL;
    PyObject *items = PyList_New(0);
    if (!items)
        return NULL;
    const unsigned long long *so = w->sorted.buf;
    const unsigned char *ids = w->table.buf;
    while (w->t < w->n && PyList_GET_SIZE(items) < max_items && out_bytes < max_bytes) {
        uint32_t x = w->order[w->t];
        unsigned int type = 0;
        PyObject *data = resolve(w, x, &type);
        if (!data && PyErr_Occurred())
            goto fail;
        PyObject *oid = PyBytes_FromStringAndSize(
            (const char *)ids + w->id_start + w->t * w->id_stride, w->rawsz);
        PyObject *t = oid ? Py_BuildValue("(NKIN)", oid, so[x], data ? type : 0u,
                                          data ? data : Py_NewRef(Py_None))
                          : NULL;
        if (!oid)
            Py_XDECREF(data);
        if (!t)
            goto fail;
        int r = PyList_Append(items, t);
        Py_DECREF(t);
        if (r)
            goto fail;
        if (data)
            out_bytes += PyBytes_GET_SIZE(data);
        w->t++;
    }
    return items;
fail:
    Py_DECREF(items);
    return NULL;
}

/*
 * records(max_items, max_bytes) -> (parts, fallback)
 *
 * cat-file's default --batch records of the next objects in id order, ready for
 * writev: parts is [line, data, b"\n", line, data, b"\n", ...] (line: "<hex id>
 * <type> <size>\n", formatted as check_lines does).  It stops before an object it
 * cannot build: fallback is then that object's (oid, offset), which the caller
 * prints itself (read_at raises the typed error of a damaged entry); the walk goes on
 * after it.  ([], None): the end.
 */
static PyObject *
IdOrderWalk_records(IdOrderWalk *w, PyObject *args)
{
    Py_ssize_t max_items, max_bytes, out_bytes = 0, count = 0;
    if (!PyArg_ParseTuple(args, "nn:records", &max_items, &max_bytes))
        return NULL;
    PyObject *parts = PyList_New(0);
    PyObject *newline = PyBytes_FromStringAndSize("\n", 1);
    PyObject *fallback = NULL;
    if (!parts || !newline)
        goto fail;
    const unsigned long long *so = w->sorted.buf;
    const unsigned char *ids = w->table.buf;
    while (w->t < w->n && count < max_items && out_bytes < max_bytes) {
        uint32_t x = w->order[w->t];
        const unsigned char *id = ids + w->id_start + w->t * w->id_stride;
        unsigned int type = 0;
        PyObject *data = resolve(w, x, &type);
        if (!data) {
            if (PyErr_Occurred())
                goto fail;
            fallback = Py_BuildValue("(y#K)", (const char *)id, w->rawsz, so[x]);
            if (!fallback)
                goto fail;
            w->t++;
            break;
        }
        char line[GDC_CHECK_LINE_MAX];
        char *end = gdc_check_line(line, id, w->rawsz, type,
                                   (unsigned long long)PyBytes_GET_SIZE(data));
        PyObject *head = PyBytes_FromStringAndSize(line, end - line);
        int r = !head || PyList_Append(parts, head) || PyList_Append(parts, data)
                || PyList_Append(parts, newline);
        Py_XDECREF(head);
        out_bytes += PyBytes_GET_SIZE(data);
        Py_DECREF(data);
        if (r)
            goto fail;
        count++;
        w->t++;
    }
    Py_DECREF(newline);
    return Py_BuildValue("(NN)", parts, fallback ? fallback : Py_NewRef(Py_None));
fail:
    Py_XDECREF(parts);
    Py_XDECREF(newline);
    Py_XDECREF(fallback);
    return NULL;
}

static PyObject *
IdOrderWalk_get_size(IdOrderWalk *w, void *closure)
{
    return PyLong_FromSsize_t(w->size);
}

static PyObject *
IdOrderWalk_get_limit(IdOrderWalk *w, void *closure)
{
    return PyLong_FromSsize_t(w->limit);
}

static PyMethodDef IdOrderWalk_methods[] = {
    {"next", (PyCFunction)IdOrderWalk_next, METH_VARARGS,
     "next(max_items, max_bytes) -> [(oid, offset, type, data)]: the next objects in id "
     "order ([] at the end; type 0, data None: read it with read_at)"},
    {"records", (PyCFunction)IdOrderWalk_records, METH_VARARGS,
     "records(max_items, max_bytes) -> (parts, fallback): cat-file's default --batch "
     "records of the next objects, for writev; fallback: (oid, offset) of an object "
     "to print by the caller (read_at), or None"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef IdOrderWalk_getset[] = {
    {"size", (getter)IdOrderWalk_get_size, NULL, "bytes the cache holds now", NULL},
    {"limit", (getter)IdOrderWalk_get_limit, NULL, "the cache's bound", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject gdc_IdOrderWalkType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gitodb._native.IdOrderWalk",
    .tp_basicsize = sizeof(IdOrderWalk),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "IdOrderWalk(buf, sorted_offsets, data_end, inflate, bases, id_table, rev, "
              "limit): every object of a pack in id order, its cache planned ahead",
    .tp_new = IdOrderWalk_new,
    .tp_dealloc = (destructor)IdOrderWalk_dealloc,
    .tp_methods = IdOrderWalk_methods,
    .tp_getset = IdOrderWalk_getset,
};

PyMethodDef gdc_idorder_methods[] = {
    {"delta_bases", delta_bases, METH_VARARGS,
     "delta_bases(buf, sorted_offsets, data_end) -> bytes: each entry's base (int32: "
     "pack position, -1 whole, -2 REF_DELTA, -3 unreadable)"},
    {NULL, NULL, 0, NULL},
};
