/*
 * The walk of a pack in pack order (gitodb._native.walk_pack): what
 * PackFile.iter_objects does per entry, in C.  gitodb.pack.reader's Python loop is
 * its reference (PackFile._iter_objects_python); tests compare the two.
 *
 * It receives everything it calls: the inflate the compression layer chose
 * (compress.inflate, a binding's public callable, which releases the GIL for its
 * own work) and the one delta-base cache's own get/put methods, so the cache is
 * accounted in one place only (gitodb.pack.cache).  Delta application runs
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

/* Entry header at off: type, size, header length; 0, or -1 if damaged. */
static int
entry_header(const unsigned char *buf, unsigned long long len, unsigned long long off,
             unsigned int *type, unsigned long long *size, unsigned long long *hlen)
{
    unsigned long long pos = off;
    if (off >= len)
        return -1;
    unsigned char c = buf[pos++];
    int shift = 4;
    *type = (c >> 4) & 7;
    *size = c & 15;
    while (c & 0x80) {
        if (pos - off >= 10 || pos >= len)
            return -1;
        c = buf[pos++];
        if (shift == 60 && (c & 0x70))
            return -1;
        *size |= (unsigned long long)(c & 0x7f) << shift;
        shift += 7;
    }
    *hlen = pos - off;
    return 0;
}

/* OFS_DELTA distance at pos; 0, or -1 if damaged. */
static int
ofs_distance(const unsigned char *buf, unsigned long long len, unsigned long long pos,
             unsigned long long *dist, unsigned long long *nlen)
{
    unsigned long long start = pos;
    if (pos >= len)
        return -1;
    unsigned char c = buf[pos++];
    *dist = c & 0x7f;
    while (c & 0x80) {
        if ((*dist + 1) >> 57 || pos >= len)
            return -1;
        c = buf[pos++];
        *dist = ((*dist + 1) << 7) | (c & 0x7f);
    }
    *nlen = pos - start;
    return 0;
}

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

/* Append (k, type, data) to items; data NULL: a fallback (type 0, None). */
static int
emit(PyObject *items, Py_ssize_t k, unsigned int type, PyObject *data)
{
    PyObject *t = Py_BuildValue("(nIO)", k, data ? type : 0u, data ? data : Py_None);
    if (!t)
        return -1;
    int r = PyList_Append(items, t);
    Py_DECREF(t);
    return r;
}

/*
 * walk_pack(buf, sorted_offsets, k, data_end, inflate, cache_get, cache_put, key_base,
 *           max_items, max_bytes) -> (next_k, [(k, type, data), ...])
 *
 * Entries k, k+1, ... (positions in pack order; sorted_offsets is native uint64)
 * until max_items entries or max_bytes of results are out.  type 0 / data None:
 * read entry k with read_at.  Results are cached as PackFile.iter_objects caches
 * them: every delta result, and full trees and blobs (the bases of later deltas).
 */
static PyObject *
walk_pack(PyObject *self, PyObject *args)
{
    Py_buffer pack, sorted;
    Py_ssize_t k, max_items, max_bytes;
    unsigned long long data_end, key_base;
    PyObject *inflate, *cache_get, *cache_put;
    if (!PyArg_ParseTuple(args, "y*y*nKOOOKnn:walk_pack", &pack, &sorted, &k, &data_end,
                          &inflate, &cache_get, &cache_put, &key_base, &max_items, &max_bytes))
        return NULL;
    const unsigned char *buf = pack.buf;
    unsigned long long len = (unsigned long long)pack.len;
    const unsigned long long *so = sorted.buf;
    Py_ssize_t n = sorted.len / 8;
    PyObject *items = PyList_New(0);
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
            || entry_header(buf, end, off, &type, &size, &hlen)) {
            if (emit(items, k, 0, NULL))
                goto fail;
            continue;
        }
        pos = off + hlen;
        if (type == 6) {
            unsigned long long dist, nlen;
            if (ofs_distance(buf, end, pos, &dist, &nlen) || dist == 0
                || dist > off - PACK_HEADER_LEN) {
                if (emit(items, k, 0, NULL))
                    goto fail;
                continue;
            }
            unsigned long long start = pos + nlen;
            PyObject *key = PyLong_FromUnsignedLongLong(key_base + off - dist);
            if (!key)
                goto fail;
            PyObject *hit = PyObject_CallOneArg(cache_get, key);
            Py_DECREF(key);
            if (!hit)
                goto fail;
            if (hit == Py_None || !PyTuple_Check(hit) || PyTuple_GET_SIZE(hit) != 2
                || !PyBytes_Check(PyTuple_GET_ITEM(hit, 1))
                || size > (end - start) * MAX_INFLATE_RATIO) {
                Py_DECREF(hit);
                if (emit(items, k, 0, NULL))
                    goto fail;
                continue;
            }
            PyObject *delta = call_inflate(inflate, buf, start, end, size);
            if (delta) {
                data = build(PyTuple_GET_ITEM(hit, 1), delta);
                Py_DECREF(delta);
                type = (unsigned int)PyLong_AsUnsignedLong(PyTuple_GET_ITEM(hit, 0));
            }
            Py_DECREF(hit);
            if (!data) {
                PyErr_Clear();
                if (emit(items, k, 0, NULL))
                    goto fail;
                continue;
            }
        } else if (type >= 1 && type <= 4 && size <= (end - pos) * MAX_INFLATE_RATIO) {
            data = call_inflate(inflate, buf, pos, end, size);
            if (!data) {
                PyErr_Clear();
                if (emit(items, k, 0, NULL))
                    goto fail;
                continue;
            }
            if (type != 2 && type != 3) {  /* commits and tags are rarely delta bases */
                out_bytes += PyBytes_GET_SIZE(data);
                int r = emit(items, k, type, data);
                Py_DECREF(data);
                if (r)
                    goto fail;
                continue;
            }
        } else {
            if (emit(items, k, 0, NULL))
                goto fail;
            continue;
        }
        {
            PyObject *key = PyLong_FromUnsignedLongLong(key_base + off);
            PyObject *tnum = PyLong_FromUnsignedLong(type);
            PyObject *r = NULL;
            if (key && tnum) {
                PyObject *cargs[3] = {key, tnum, data};
                r = PyObject_Vectorcall(cache_put, cargs, 3, NULL);
            }
            Py_XDECREF(key);
            Py_XDECREF(tnum);
            if (!r) {
                Py_DECREF(data);
                goto fail;
            }
            Py_DECREF(r);
        }
        out_bytes += PyBytes_GET_SIZE(data);
        int r = emit(items, k, type, data);
        Py_DECREF(data);
        if (r)
            goto fail;
    }
    PyBuffer_Release(&pack);
    PyBuffer_Release(&sorted);
    {
        PyObject *res = Py_BuildValue("(nN)", k, items);
        return res;
    }
fail:
    Py_XDECREF(items);
    PyBuffer_Release(&pack);
    PyBuffer_Release(&sorted);
    return NULL;
}

#include "histwalk.inc"

PyMethodDef gdc_walk_methods[] = {
    {"walk_pack", walk_pack, METH_VARARGS,
     "walk_pack(buf, sorted_offsets, k, data_end, inflate, cache_get, cache_put, key_base, "
     "max_items, max_bytes) -> (next_k, [(k, type, data)]): iter_objects' loop"},
    {"odb_reader", odb_reader_new, METH_VARARGS,
     "odb_reader(packs, rawsz, inflate, cache_get, cache_put, fallback, bad_tree) -> "
     "OdbReader: object reads, tree and commit walks in C (gitodb.history.native)"},
    {"commit_walk", commit_walk_new, METH_VARARGS,
     "commit_walk(reader, starts, first_parent, keep_raw, commit_fallback, graph) -> "
     "CommitWalk: the default-order walk"},
    {"parse_headers", parse_headers_native, METH_O,
     "parse_headers(data) -> (headers, message, terminated): objects.headers.parse_headers"},
    {NULL, NULL, 0, NULL},
};
