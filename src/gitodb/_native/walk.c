/*
 * The walk of a pack in pack order (gitodb._native.walk_pack): what
 * PackFile.iter_objects does per entry, in C.  gitodb.pack.reader's Python loop is
 * its reference (PackFile._iter_objects_python); tests compare the two.
 *
 * The delta-base cache is the one cache (cache.c, gitodb.pack.cache): a native
 * PendingBases is used through its C functions, so no Python call is made per
 * object; any other object with get/put is called through its methods.  Inflate
 * is the compression layer's choice: its binding's public callable, or, when
 * compress.native_inflate() says the chosen backend is the zlib this module was
 * linked with at build time (GITODB_HAVE_ZLIB), zlib's published C API on one
 * z_stream reset between entries.  Large inflates and delta application run
 * without the GIL.
 *
 * Anything unusual about an entry (a damaged header, a base not in the cache, a
 * REF_DELTA, a declared size its zlib data cannot hold, an inflate or delta error)
 * is not handled here: the entry is returned as a "fallback" (type 0) and Python
 * reads it with PackFile.read_at, which raises the typed error naming the file
 * and offset.  So every error message has one source.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "pack.h"

/* Deflate cannot expand data more than ~1032:1 (compress.MAX_INFLATE_RATIO). */
#define MAX_INFLATE_RATIO 1040ULL
#define PACK_HEADER_LEN 12ULL
/* Results at least this large are built with the GIL released. */
#define NOGIL_MIN 4096

/* inflate(view of [start, end), size) -> bytes of exactly size, or NULL (error cleared). */
static PyObject *
call_inflate(PyObject *inflate, const unsigned char *buf, unsigned long long start,
             unsigned long long end, unsigned long long size)
{
    PyObject *view = PyMemoryView_FromMemory((char *)buf + start, (Py_ssize_t)(end - start),
                                             PyBUF_READ);
    if (!view)
        return NULL;
    PyObject *n = PyLong_FromUnsignedLongLong(size);
    if (!n) {
        Py_DECREF(view);
        return NULL;
    }
    PyObject *args[2] = {view, n};
    PyObject *out = PyObject_Vectorcall(inflate, args, 2, NULL);
    Py_DECREF(n);
    if (!out)
        PyErr_Clear();  /* the caller falls back to read_at, which raises the typed error */
    /* The view must not outlive the call: nothing may keep a pointer into the pack. */
    PyObject *r = PyObject_CallMethod(view, "release", NULL);
    if (r)
        Py_DECREF(r);
    else
        PyErr_Clear();
    Py_DECREF(view);
    if (out && (!PyBytes_Check(out) || (unsigned long long)PyBytes_GET_SIZE(out) != size)) {
        Py_CLEAR(out);
    }
    return out;
}

/* The delta applied to base, or NULL (no exception set: the caller falls back). */
static PyObject *
build(PyObject *base, PyObject *delta)
{
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(delta);
    const unsigned char *end = p + PyBytes_GET_SIZE(delta);
    const unsigned char *b = (const unsigned char *)PyBytes_AS_STRING(base);
    unsigned long long blen = (unsigned long long)PyBytes_GET_SIZE(base);
    unsigned long long src, dst, produced = 0;
    char msg[160];
    const char *err;
    if (gdc_read_size(&p, end, &src) || gdc_read_size(&p, end, &dst) || src != blen)
        return NULL;
    /* Validate (and size) first: a delta that lies about its result allocates nothing. */
    if (dst >= NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        err = gdc_run_opcodes(p, end, b, blen, dst, NULL, &produced, msg, sizeof(msg));
        Py_END_ALLOW_THREADS
    } else {
        err = gdc_run_opcodes(p, end, b, blen, dst, NULL, &produced, msg, sizeof(msg));
    }
    if (err || produced != dst || dst > (unsigned long long)PY_SSIZE_T_MAX)
        return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)dst);
    if (!out) {
        PyErr_Clear();
        return NULL;
    }
    unsigned char *o = (unsigned char *)PyBytes_AS_STRING(out);
    /* `out` is not visible to any other code until it is returned. */
    if (dst >= NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        gdc_run_opcodes(p, end, b, blen, dst, o, &produced, msg, sizeof(msg));
        Py_END_ALLOW_THREADS
    } else {
        gdc_run_opcodes(p, end, b, blen, dst, o, &produced, msg, sizeof(msg));
    }
    return out;
}

#ifdef GITODB_HAVE_ZLIB
int
gdc_zinflate(gdc_zinflater *z, const unsigned char *src, unsigned long long avail,
             unsigned char *out, unsigned long long size, unsigned long long *used,
             int release_gil)
{
    if (avail > 0xffffffffULL)
        avail = 0xffffffffULL;  /* a stream that long ends with a size check below */
    if (size > 0xffffffffULL)
        return -1;
    if (!z->ready) {
        memset(&z->zs, 0, sizeof(z->zs));
        if (inflateInit(&z->zs) != Z_OK)
            return -1;
        z->ready = 1;
    } else if (inflateReset(&z->zs) != Z_OK) {
        return -1;
    }
    z->zs.next_in = (Bytef *)src;
    z->zs.avail_in = (uInt)avail;
    z->zs.next_out = out;
    z->zs.avail_out = (uInt)size;
    int r;
    if (release_gil && size >= NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        r = inflate(&z->zs, Z_FINISH);
        Py_END_ALLOW_THREADS
    } else {
        r = inflate(&z->zs, Z_FINISH);
    }
    if (r != Z_STREAM_END || z->zs.total_out != size)
        return -1;
    *used = z->zs.total_in;
    return 0;
}

/* [start, end) inflated to exactly size bytes, as compress.inflate accepts it;
   NULL with no error set for anything else (the caller falls back to read_at). */
static PyObject *
zlib_inflate(gdc_zinflater *z, const unsigned char *buf, unsigned long long start,
             unsigned long long end, unsigned long long size)
{
    if (end - start > 0xffffffffULL || size > 0xffffffffULL)
        return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (!out) {
        PyErr_Clear();
        return NULL;
    }
    /* `out` is not visible to any other code until it is returned. */
    unsigned long long used;
    if (gdc_zinflate(z, buf + start, end - start, (unsigned char *)PyBytes_AS_STRING(out), size,
                     &used, 1)) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}
#endif

void
gdc_zinflater_end(gdc_zinflater *z)
{
#ifdef GITODB_HAVE_ZLIB
    if (z->ready)
        inflateEnd(&z->zs);
#endif
    z->ready = 0;
}

/*
 * libdeflate's published C API, in the shared object of the binding the compression
 * layer chose (compress.native_inflate_library()): the `deflate` package links
 * libdeflate in and exports these symbols.  They are looked up in the object that
 * is already loaded (RTLD_NOLOAD), so this is the very library the backend runs on;
 * when it is not there, the callers keep calling the binding.
 */
#include <dlfcn.h>

typedef void *(*ld_alloc_fn)(void);
typedef int (*ld_zlib_fn)(void *, const void *, size_t, void *, size_t, size_t *);
typedef void (*ld_free_fn)(void *);
static ld_alloc_fn ld_alloc_decompressor;
static ld_zlib_fn ld_zlib_decompress;
static ld_free_fn ld_free_decompressor;

/* A libdeflate decompressor from the library at path, or NULL (no error set). */
static void *
ld_new(const char *path)
{
    if (!ld_zlib_decompress) {
        void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
        if (!h)
            return NULL;
        ld_alloc_fn a = (ld_alloc_fn)dlsym(h, "libdeflate_alloc_decompressor");
        ld_zlib_fn z = (ld_zlib_fn)dlsym(h, "libdeflate_zlib_decompress");
        ld_free_fn f = (ld_free_fn)dlsym(h, "libdeflate_free_decompressor");
        /* the binding keeps the object loaded; this handle's reference stays too */
        if (!a || !z || !f)
            return NULL;
        ld_alloc_decompressor = a;
        ld_free_decompressor = f;
        ld_zlib_decompress = z;
    }
    return ld_alloc_decompressor();
}

static void
ld_end(void *d)
{
    if (d)
        ld_free_decompressor(d);
}

/* [start, end) inflated to exactly size bytes with libdeflate (trailing input is
   allowed: decompression stops at the stream's end); NULL with no error set for
   anything else.  The decompressor is the caller's: the GIL stays held. */
static PyObject *
ld_inflate(void *d, const unsigned char *buf, unsigned long long start, unsigned long long end,
           unsigned long long size)
{
    if (size == 0 || size > (unsigned long long)PY_SSIZE_T_MAX)
        return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (!out) {
        PyErr_Clear();
        return NULL;
    }
    size_t got = 0;
    /* `out` is not visible to any other code until it is returned. */
    int rc = ld_zlib_decompress(d, buf + start, (size_t)(end - start), PyBytes_AS_STRING(out),
                                (size_t)size, &got);
    if (rc != 0 || got != size) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* libdeflate's C API for the core's other loops (indexpack.c's resolve pass). */
void *
gdc_ld_new(const char *path)
{
    return ld_new(path);
}

void
gdc_ld_end(void *d)
{
    ld_end(d);
}

int
gdc_ld_inflate(void *d, const unsigned char *src, unsigned long long avail, unsigned char *out,
               unsigned long long size)
{
    size_t got = 0;
    if (size == 0 || avail > (unsigned long long)SIZE_MAX || size > (unsigned long long)SIZE_MAX)
        return -1;
    if (ld_zlib_decompress(d, src, (size_t)avail, out, (size_t)size, &got) != 0 || got != size)
        return -1;
    return 0;
}

/* The chosen inflate: the Python callable, or (inflate None) zlib's C API. */
static PyObject *
walk_inflate(PyObject *inflate, gdc_zinflater *z, const unsigned char *buf,
             unsigned long long start, unsigned long long end, unsigned long long size)
{
#ifdef GITODB_HAVE_ZLIB
    if (inflate == Py_None)
        return zlib_inflate(z, buf, start, end, size);
#endif
    (void)z;
    return call_inflate(inflate, buf, start, end, size);
}

/* The cache's base for key: a new reference to (type, data), or NULL.  -1: error. */
static int
walk_cache_get(PyObject *cache, unsigned long long key, PyObject **hit)
{
    if (Py_IS_TYPE(cache, &gdc_PendingType)) {
        *hit = gdc_pending_get((gdc_pending *)cache, key);
        return 0;
    }
    PyObject *k = PyLong_FromUnsignedLongLong(key);
    if (!k)
        return -1;
    PyObject *r = PyObject_CallMethod(cache, "get", "O", k);
    Py_DECREF(k);
    if (!r)
        return -1;
    if (r == Py_None) {
        Py_DECREF(r);
        r = NULL;
    }
    *hit = r;
    return 0;
}

static int
walk_cache_put(PyObject *cache, unsigned long long key, unsigned int type, PyObject *data)
{
    if (Py_IS_TYPE(cache, &gdc_PendingType)) {
        gdc_pending *p = (gdc_pending *)cache;
        if (!gdc_pending_wants(p, key))
            return 0;
        return gdc_cache_put(gdc_pending_cache(p), key, type, data) < 0 ? -1 : 0;
    }
    PyObject *r = PyObject_CallMethod(cache, "put", "KIO", key, type, data);
    if (!r)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* The id of the entry at pack position k, from the mapped index's id table. */
typedef struct {
    const unsigned char *table;
    Py_ssize_t start, stride, rawsz, count;
    const unsigned int *rev;
    Py_ssize_t nrev;
} id_lookup;

/* Append (oid, offset, type, data) to items; data NULL: a fallback (type 0, None). */
static int
emit(PyObject *items, const id_lookup *ids, Py_ssize_t k, unsigned long long off,
     unsigned int type, PyObject *data, Py_ssize_t *fallbacks)
{
    unsigned int p = ids->rev[k];
    if ((Py_ssize_t)p >= ids->count) {
        PyErr_SetString(PyExc_ValueError, "walk_pack: index position out of range");
        return -1;
    }
    PyObject *oid = PyBytes_FromStringAndSize(
        (const char *)ids->table + ids->start + (Py_ssize_t)p * ids->stride, ids->rawsz);
    if (!oid)
        return -1;
    PyObject *offset = PyLong_FromUnsignedLongLong(off);
    if (!offset) {
        Py_DECREF(oid);
        return -1;
    }
    if (!data)
        (*fallbacks)++;
    PyObject *t = Py_BuildValue("(NNIO)", oid, offset, data ? type : 0u, data ? data : Py_None);
    if (!t)
        return -1;
    int r = PyList_Append(items, t);
    Py_DECREF(t);
    return r;
}

/*
 * walk_pack(buf, sorted_offsets, k, data_end, inflate, cache, key_base, max_items,
 *           max_bytes, id_table, rev) -> (next_k, fallbacks, [(oid, offset, type, data)])
 *
 * Entries k, k+1, ... (positions in pack order; sorted_offsets is native uint64,
 * rev the index position of each, uint32) until max_items entries or max_bytes of
 * results are out.  id_table is PackIndex.id_table().  type 0 / data None (counted
 * in fallbacks): read that entry with read_at.  inflate is the compression layer's
 * inflate, or None for zlib's C API when compress.native_inflate() says zlib is the
 * chosen backend.  cache is a PendingBases (the native one is used without a
 * Python call).  Results are cached as PackFile.iter_objects caches them.
 */
static PyObject *
walk_pack(PyObject *self, PyObject *args)
{
    Py_buffer pack, sorted, table, revbuf;
    Py_ssize_t k, max_items, max_bytes;
    unsigned long long data_end, key_base;
    PyObject *inflate, *cache, *table_obj;
    id_lookup ids;
    gdc_zinflater z = {0};
    if (!PyArg_ParseTuple(args, "y*y*nKOOKnnOy*:walk_pack", &pack, &sorted, &k, &data_end,
                          &inflate, &cache, &key_base, &max_items, &max_bytes, &table_obj,
                          &revbuf))
        return NULL;
    table.obj = NULL;
    PyObject *items = NULL;
    Py_ssize_t fallbacks = 0;
    if (!PyArg_ParseTuple(table_obj, "y*nnnn:walk_pack id_table", &table, &ids.start,
                          &ids.stride, &ids.rawsz, &ids.count)) {
        table.obj = NULL;
        goto fail;
    }
#ifndef GITODB_HAVE_ZLIB
    if (inflate == Py_None) {
        PyErr_SetString(PyExc_TypeError, "walk_pack: built without zlib, inflate is required");
        goto fail;
    }
#endif
    ids.table = table.buf;
    ids.rev = revbuf.buf;
    ids.nrev = revbuf.len / 4;
    const unsigned char *buf = pack.buf;
    unsigned long long len = (unsigned long long)pack.len;
    const unsigned long long *so = sorted.buf;
    Py_ssize_t n = sorted.len / 8;
    if (ids.nrev != n || ids.rawsz <= 0 || ids.stride < ids.rawsz || ids.count != n
        || ids.start < 0 || ids.start + n * ids.stride > table.len) {
        PyErr_SetString(PyExc_ValueError, "walk_pack: id table and offsets differ");
        goto fail;
    }
    items = PyList_New(0);
    Py_ssize_t out_bytes = 0;
    if (!items)
        goto fail;
    if (data_end > len)
        data_end = len;
    for (; k < n && PyList_GET_SIZE(items) < max_items && out_bytes < max_bytes; k++) {
        unsigned long long off = so[k];
        unsigned long long end = k + 1 < n ? so[k + 1] : data_end;
        unsigned int type;
        unsigned long long size, hlen, pos;
        PyObject *data = NULL;
        if (off < PACK_HEADER_LEN || end > data_end || off >= end
            || gdc_entry_header(buf, end, off, &type, &size, &hlen)) {
            if (emit(items, &ids, k, off, 0, NULL, &fallbacks))
                goto fail;
            continue;
        }
        pos = off + hlen;
        if (type == 6) {
            unsigned long long dist, nlen;
            if (gdc_ofs_distance(buf, end, pos, &dist, &nlen) || dist == 0
                || dist > off - PACK_HEADER_LEN) {
                if (emit(items, &ids, k, off, 0, NULL, &fallbacks))
                    goto fail;
                continue;
            }
            unsigned long long start = pos + nlen;
            PyObject *hit;
            if (walk_cache_get(cache, key_base + off - dist, &hit))
                goto fail;
            if (!hit || !PyTuple_Check(hit) || PyTuple_GET_SIZE(hit) != 2
                || !PyBytes_Check(PyTuple_GET_ITEM(hit, 1))
                || size > (end - start) * MAX_INFLATE_RATIO) {
                Py_XDECREF(hit);
                if (emit(items, &ids, k, off, 0, NULL, &fallbacks))
                    goto fail;
                continue;
            }
            type = (unsigned int)PyLong_AsUnsignedLong(PyTuple_GET_ITEM(hit, 0));
            PyObject *delta = NULL;
            if (!PyErr_Occurred() && type >= 1 && type <= 4)
                delta = walk_inflate(inflate, &z, buf, start, end, size);
            if (delta) {
                data = build(PyTuple_GET_ITEM(hit, 1), delta);
                Py_DECREF(delta);
            }
            Py_DECREF(hit);
            if (!data) {
                PyErr_Clear();
                if (emit(items, &ids, k, off, 0, NULL, &fallbacks))
                    goto fail;
                continue;
            }
        } else if (type >= 1 && type <= 4 && size <= (end - pos) * MAX_INFLATE_RATIO) {
            data = walk_inflate(inflate, &z, buf, pos, end, size);
            if (!data) {
                PyErr_Clear();
                if (emit(items, &ids, k, off, 0, NULL, &fallbacks))
                    goto fail;
                continue;
            }
            if (type != 2 && type != 3) {  /* commits and tags are rarely delta bases */
                out_bytes += PyBytes_GET_SIZE(data);
                int r = emit(items, &ids, k, off, type, data, &fallbacks);
                Py_DECREF(data);
                if (r)
                    goto fail;
                continue;
            }
        } else {
            if (emit(items, &ids, k, off, 0, NULL, &fallbacks))
                goto fail;
            continue;
        }
        if (walk_cache_put(cache, key_base + off, type, data)) {
            Py_DECREF(data);
            goto fail;
        }
        out_bytes += PyBytes_GET_SIZE(data);
        int r = emit(items, &ids, k, off, type, data, &fallbacks);
        Py_DECREF(data);
        if (r)
            goto fail;
    }
    gdc_zinflater_end(&z);
    PyBuffer_Release(&pack);
    PyBuffer_Release(&sorted);
    PyBuffer_Release(&table);
    PyBuffer_Release(&revbuf);
    return Py_BuildValue("(nnN)", k, fallbacks, items);
fail:
    gdc_zinflater_end(&z);
    Py_XDECREF(items);
    PyBuffer_Release(&pack);
    PyBuffer_Release(&sorted);
    if (table.obj)
        PyBuffer_Release(&table);
    PyBuffer_Release(&revbuf);
    return NULL;
}

/* The delta application and the chosen inflate, for idorder.c (one copy of each). */
PyObject *
gdc_build(PyObject *base, PyObject *delta)
{
    return build(base, delta);
}

PyObject *
gdc_walk_inflate(PyObject *inflate, gdc_zinflater *z, const unsigned char *buf,
                 unsigned long long start, unsigned long long end, unsigned long long size)
{
    return walk_inflate(inflate, z, buf, start, end, size);
}

#include "histwalk.inc"

PyMethodDef gdc_walk_methods[] = {
    {"walk_pack", walk_pack, METH_VARARGS,
     "walk_pack(buf, sorted_offsets, k, data_end, inflate, cache, key_base, max_items, "
     "max_bytes, id_table, rev) -> (next_k, fallbacks, [(oid, offset, type, data)]): "
     "iter_objects' loop"},
    {"odb_reader", odb_reader_new, METH_VARARGS,
     "odb_reader(packs, rawsz, inflate, native, cache, fallback, bad_tree[, budget]) -> "
     "OdbReader: object reads, tree and commit walks in C (gitodb.history.native)"},
    {"commit_walk", commit_walk_new, METH_VARARGS,
     "commit_walk(reader, starts, first_parent, keep_raw, commit_fallback, graph) -> "
     "CommitWalk: the default-order walk"},
    {"graph_contains", graph_contains, METH_VARARGS,
     "graph_contains(layout, rawsz, ids) -> bytes: 1 for each id the commit-graph holds"},
    {"graph_count", graph_count, METH_VARARGS,
     "graph_count(layout, rawsz, starts, first_parent) -> int or None: the commits the "
     "starts reach, over the commit-graph alone"},
    {"tree_pairs", tree_pairs, METH_VARARGS,
     "tree_pairs(old, new, rawsz[, same]) -> [(mode_a, name, id_a, mode_b, id_b)] or None: "
     "one level of diff-tree, the entries that differ (all of them with same) in Git's order"},
    {"parse_headers", parse_headers_native, METH_O,
     "parse_headers(data) -> (headers, message, terminated): objects.headers.parse_headers"},
    {NULL, NULL, 0, NULL},
};
