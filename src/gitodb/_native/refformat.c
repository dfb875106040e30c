/*
 * for-each-ref's per-ref loops (gitodb._native.pack_headers and format_refs).
 *
 * pack_headers looks up the type and size of many objects in one pack: a binary
 * search of the index's ids in its mapping (gdc_find_oid), the entry header
 * (gdc_entry_header), a header-only walk down a delta chain for the type, and the
 * first bytes of a delta's zlib data for its size (gdc_delta_result_size).  Each
 * lookup costs O(log n) and nothing is set up per pack.  Anything unusual (an
 * offset out of range, a damaged header, a REF_DELTA base in another pack, a head
 * that does not decode) is left undecided: the Python path (PackFile.header_at)
 * reads it and raises the typed error naming the file and offset, so every message
 * has one source.
 *
 * format_refs expands a compiled format (literal pieces and atom codes) for every
 * ref in one call and returns the output bytes.  The Python formatter
 * (gitodb.repo.refformat.render.Formatter.format) is the reference: it decides
 * which formats this applies to and computes what only it knows (peeled tags).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "pack.h"

/* Type codes in pack_headers' output besides the object types 1..4. */
#define HDR_ABSENT 0    /* not in this pack (a later pack may hold it) */
#define HDR_UNDECIDED 255 /* in this pack, but Python must read it */

/* The first bytes of a delta's zlib data hold its two size varints. */
#define HEAD_WINDOW 512
#define PACK_HEADER_LEN 12

typedef struct {
    const unsigned char *idx;
    Py_ssize_t idx_len, fan_at, oid_at, stride, off32_at, off64_at, n64, rawsz, count;
    int version;
    const unsigned char *pack;
    unsigned long long data_end;
} pack_view;

static unsigned int
be32(const unsigned char *p)
{
    return ((unsigned int)p[0] << 24) | ((unsigned int)p[1] << 16) | ((unsigned int)p[2] << 8)
           | p[3];
}

/* The position of oid in the index, or -1. */
static Py_ssize_t
view_find(const pack_view *v, const unsigned char *oid)
{
    unsigned int first = oid[0];
    Py_ssize_t lo = first ? be32(v->idx + v->fan_at + 4 * (first - 1)) : 0;
    Py_ssize_t hi = be32(v->idx + v->fan_at + 4 * first);
    if (hi > v->count || lo > hi)
        return -1;
    return gdc_find_oid(v->idx + v->oid_at, v->stride, v->rawsz, lo, hi, oid);
}

/* The pack offset of index position i: 0 and *off, or -1 (a bad large-offset link). */
static int
view_offset(const pack_view *v, Py_ssize_t i, unsigned long long *off)
{
    if (v->version == 1) {
        *off = be32(v->idx + v->off32_at + i * v->stride);
        return 0;
    }
    unsigned int small = be32(v->idx + v->off32_at + 4 * i);
    if (!(small & 0x80000000U)) {
        *off = small;
        return 0;
    }
    Py_ssize_t j = small & 0x7fffffffU;
    if (j >= v->n64)
        return -1;
    const unsigned char *p = v->idx + v->off64_at + 8 * j;
    *off = ((unsigned long long)be32(p) << 32) | be32(p + 4);
    return 0;
}

/* Type and size of the entry at offset: 0, or -1 when Python must decide. */
static int
entry_type_size(const pack_view *v, gdc_zinflater *z, unsigned long long offset,
                unsigned int *type, unsigned long long *size)
{
    const unsigned char *buf = v->pack;
    unsigned long long end = v->data_end, off = offset, hlen, dist, nlen, data_at = 0;
    unsigned int t;
    unsigned long long sz;
    for (Py_ssize_t hops = 0;; hops++) {
        if (off < PACK_HEADER_LEN || off >= end || hops > v->count)
            return -1;
        if (gdc_entry_header(buf, end, off, &t, &sz, &hlen))
            return -1;
        if (t >= 1 && t <= 4)
            break;
        unsigned long long pos = off + hlen;
        if (t == 6) {
            if (gdc_ofs_distance(buf, end, pos, &dist, &nlen) || dist == 0
                || dist > off - PACK_HEADER_LEN)
                return -1;
            if (hops == 0)
                data_at = pos + nlen;
            off -= dist;
        } else if (t == 7) {
            if (pos + (unsigned long long)v->rawsz > end)
                return -1;
            if (hops == 0)
                data_at = pos + (unsigned long long)v->rawsz;
            Py_ssize_t i = view_find(v, buf + pos);
            if (i < 0 || view_offset(v, i, &off))
                return -1;
        } else {
            return -1;
        }
    }
    *type = t;
    if (data_at == 0) { /* not a delta: the header says the size */
        *size = sz;
        return 0;
    }
    unsigned long long stop = data_at + HEAD_WINDOW < end ? data_at + HEAD_WINDOW : end;
    if (data_at >= stop || gdc_delta_result_size(z, buf + data_at, stop - data_at, size))
        return -1;
    return 0;
}

/*
 * pack_headers(idx, layout, pack, data_end, oids, types, sizes) -> decided
 *
 * layout: (version, fan_at, oid_at, stride, off32_at, off64_at, n64, rawsz, count), as
 * PackIndex.native_layout() gives it.  types (writable, one byte per id) and sizes
 * (writable native uint64 per id) are filled for the ids whose types[i] is 0 on
 * entry: the object type 1..4 and its size, 255 where this pack holds the id but
 * Python must read it, 0 where this pack does not hold it.
 */
static PyObject *
pack_headers(PyObject *self, PyObject *args)
{
    Py_buffer idx, pack, types, sizes;
    PyObject *layout, *oids;
    unsigned long long data_end;
    pack_view v;
    if (!PyArg_ParseTuple(args, "y*O!y*KO!w*w*:pack_headers", &idx, &PyTuple_Type, &layout,
                          &pack, &data_end, &PyList_Type, &oids, &types, &sizes))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = PyList_GET_SIZE(oids), decided = 0;
    if (!PyArg_ParseTuple(layout, "innnnnnnn:pack_headers", &v.version, &v.fan_at, &v.oid_at,
                          &v.stride, &v.off32_at, &v.off64_at, &v.n64, &v.rawsz, &v.count))
        goto done;
    v.idx = idx.buf;
    v.idx_len = idx.len;
    v.pack = pack.buf;
    v.data_end = data_end < (unsigned long long)pack.len ? data_end : (unsigned long long)pack.len;
    /* The tables must lie inside the mapping: every read below is then in bounds. */
    if (v.rawsz <= 0 || v.rawsz > 32 || v.count < 0 || v.stride < v.rawsz || v.fan_at < 0
        || v.fan_at + 1024 > idx.len || v.oid_at < 0
        || (v.count && v.oid_at + (v.count - 1) * v.stride + v.rawsz > idx.len)
        || v.off32_at < 0
        || (v.version == 1 ? (v.count && v.off32_at + (v.count - 1) * v.stride + 4 > idx.len)
                           : v.off32_at + 4 * v.count > idx.len)
        || (v.version == 2 && (v.n64 < 0 || v.off64_at < 0 || v.off64_at + 8 * v.n64 > idx.len))
        || be32(v.idx + v.fan_at + 1020) != (unsigned int)v.count) {
        PyErr_SetString(PyExc_ValueError, "pack_headers: index layout outside the mapping");
        goto done;
    }
    if (types.len != n || sizes.len != n * 8) {
        PyErr_SetString(PyExc_ValueError, "pack_headers: types/sizes differ in length from oids");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *oid = PyList_GET_ITEM(oids, i);
        if (!PyBytes_Check(oid)) {
            PyErr_SetString(PyExc_TypeError, "pack_headers: ids must be bytes");
            goto done;
        }
    }
    {
        unsigned char *t = types.buf;
        unsigned long long *sz = sizes.buf;
        gdc_zinflater z = {0};
        for (Py_ssize_t i = 0; i < n; i++) {
            if (t[i] != HDR_ABSENT)
                continue;
            PyObject *oid = PyList_GET_ITEM(oids, i);
            if (PyBytes_GET_SIZE(oid) != v.rawsz)
                continue;
            Py_ssize_t pos = view_find(&v, (const unsigned char *)PyBytes_AS_STRING(oid));
            if (pos < 0)
                continue;
            unsigned long long off, size = 0;
            unsigned int type = 0;
            if (view_offset(&v, pos, &off) || entry_type_size(&v, &z, off, &type, &size)) {
                t[i] = HDR_UNDECIDED;
                continue;
            }
            t[i] = (unsigned char)type;
            sz[i] = size;
            decided++;
        }
        gdc_zinflater_end(&z);
    }
    result = PyLong_FromSsize_t(decided);
done:
    PyBuffer_Release(&idx);
    PyBuffer_Release(&pack);
    PyBuffer_Release(&types);
    PyBuffer_Release(&sizes);
    return result;
}

/* Atom codes of a compiled format (gitodb.repo.refformat.native keeps the same list). */
enum {
    A_LITERAL,
    A_REFNAME,
    A_OBJECTNAME,
    A_OBJECTTYPE,
    A_OBJECTSIZE,
    A_DEREF_OBJECTNAME,
    A_DEREF_OBJECTTYPE,
    A_DEREF_OBJECTSIZE,
    A_COUNT
};

static const char *const type_names[] = {"", "commit", "tree", "blob", "tag"};

typedef struct {
    char *buf;
    size_t len, cap;
} outbuf;

static int
out_reserve(outbuf *o, size_t more)
{
    if (o->len + more <= o->cap)
        return 0;
    size_t cap = o->cap ? o->cap : 65536;
    while (cap < o->len + more)
        cap *= 2;
    char *nb = PyMem_Realloc(o->buf, cap);
    if (!nb) {
        PyErr_NoMemory();
        return -1;
    }
    o->buf = nb;
    o->cap = cap;
    return 0;
}

static int
out_put(outbuf *o, const void *p, size_t n)
{
    if (out_reserve(o, n))
        return -1;
    memcpy(o->buf + o->len, p, n);
    o->len += n;
    return 0;
}

static int
out_hex(outbuf *o, const unsigned char *id, Py_ssize_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (out_reserve(o, (size_t)n * 2))
        return -1;
    char *w = o->buf + o->len;
    for (Py_ssize_t k = 0; k < n; k++) {
        *w++ = hex[id[k] >> 4];
        *w++ = hex[id[k] & 15];
    }
    o->len += (size_t)n * 2;
    return 0;
}

static int
out_type(outbuf *o, unsigned long type)
{
    if (type < 1 || type > 4) {
        PyErr_SetString(PyExc_ValueError, "format_refs: object type not known");
        return -1;
    }
    return out_put(o, type_names[type], strlen(type_names[type]));
}

static int
out_number(outbuf *o, unsigned long long v)
{
    char digits[24];
    int d = 0;
    do {
        digits[d++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (out_reserve(o, (size_t)d))
        return -1;
    while (d)
        o->buf[o->len++] = digits[--d];
    return 0;
}

/*
 * format_refs(plan, names, oids, types, sizes, peeled, omit_empty) -> bytes
 *
 * plan: tuple of (code, literal bytes); names, oids: lists of bytes, one per ref;
 * types: one object type byte (1..4) per ref; sizes: native uint64 per ref; peeled:
 * None, or a list with None (not a tag: the deref atoms are empty) or (id, type,
 * size) of the object a tag ref peels to.  Each ref's line ends with a newline;
 * with omit_empty an empty line is left out, as Git's --omit-empty.
 */
static PyObject *
format_refs(PyObject *self, PyObject *args)
{
    PyObject *plan, *names, *oids, *peeled;
    Py_buffer types, sizes;
    int omit_empty;
    if (!PyArg_ParseTuple(args, "O!O!O!y*y*Op:format_refs", &PyTuple_Type, &plan,
                          &PyList_Type, &names, &PyList_Type, &oids, &types, &sizes, &peeled,
                          &omit_empty))
        return NULL;
    PyObject *result = NULL;
    outbuf o = {NULL, 0, 0};
    Py_ssize_t n = PyList_GET_SIZE(names), np = PyTuple_GET_SIZE(plan);
    int *codes = NULL;
    const char **lits = NULL;
    Py_ssize_t *litlens = NULL;
    if (PyList_GET_SIZE(oids) != n || types.len != n || sizes.len != n * 8
        || (peeled != Py_None && (!PyList_Check(peeled) || PyList_GET_SIZE(peeled) != n))) {
        PyErr_SetString(PyExc_ValueError, "format_refs: per-ref lists differ in length");
        goto done;
    }
    codes = PyMem_Malloc(sizeof(int) * (size_t)(np ? np : 1));
    lits = PyMem_Malloc(sizeof(char *) * (size_t)(np ? np : 1));
    litlens = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(np ? np : 1));
    if (!codes || !lits || !litlens) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < np; k++) {
        PyObject *step = PyTuple_GET_ITEM(plan, k);
        PyObject *lit;
        if (!PyArg_ParseTuple(step, "iS:format_refs", &codes[k], &lit))
            goto done;
        if (codes[k] < 0 || codes[k] >= A_COUNT) {
            PyErr_SetString(PyExc_ValueError, "format_refs: unknown atom code");
            goto done;
        }
        if (codes[k] >= A_DEREF_OBJECTNAME && peeled == Py_None) {
            PyErr_SetString(PyExc_ValueError, "format_refs: a deref atom needs peeled values");
            goto done;
        }
        lits[k] = PyBytes_AS_STRING(lit);
        litlens[k] = PyBytes_GET_SIZE(lit);
    }
    const unsigned char *t = types.buf;
    const unsigned long long *sz = sizes.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyList_GET_ITEM(names, i), *oid = PyList_GET_ITEM(oids, i);
        PyObject *peel = peeled == Py_None ? Py_None : PyList_GET_ITEM(peeled, i);
        if (!PyBytes_Check(name) || !PyBytes_Check(oid) || PyBytes_GET_SIZE(oid) > 32) {
            PyErr_SetString(PyExc_TypeError, "format_refs: names and ids must be bytes");
            goto done;
        }
        PyObject *p_oid = NULL;
        unsigned long p_type = 0;
        unsigned long long p_size = 0;
        if (peel != Py_None) {
            if (!PyArg_ParseTuple(peel, "SkK:format_refs", &p_oid, &p_type, &p_size))
                goto done;
            if (PyBytes_GET_SIZE(p_oid) > 32) {
                PyErr_SetString(PyExc_TypeError, "format_refs: peeled id too long");
                goto done;
            }
        }
        size_t line_start = o.len;
        for (Py_ssize_t k = 0; k < np; k++) {
            int r = 0;
            switch (codes[k]) {
            case A_LITERAL:
                r = out_put(&o, lits[k], (size_t)litlens[k]);
                break;
            case A_REFNAME:
                r = out_put(&o, PyBytes_AS_STRING(name), (size_t)PyBytes_GET_SIZE(name));
                break;
            case A_OBJECTNAME:
                r = out_hex(&o, (const unsigned char *)PyBytes_AS_STRING(oid),
                            PyBytes_GET_SIZE(oid));
                break;
            case A_OBJECTTYPE:
                r = out_type(&o, t[i]);
                break;
            case A_OBJECTSIZE:
                r = out_number(&o, sz[i]);
                break;
            case A_DEREF_OBJECTNAME:
                if (p_oid)
                    r = out_hex(&o, (const unsigned char *)PyBytes_AS_STRING(p_oid),
                                PyBytes_GET_SIZE(p_oid));
                break;
            case A_DEREF_OBJECTTYPE:
                if (p_oid)
                    r = out_type(&o, p_type);
                break;
            case A_DEREF_OBJECTSIZE:
                if (p_oid)
                    r = out_number(&o, p_size);
                break;
            }
            if (r)
                goto done;
        }
        if (omit_empty && o.len == line_start)
            continue;
        if (out_put(&o, "\n", 1))
            goto done;
    }
    result = PyBytes_FromStringAndSize(o.buf ? o.buf : "", (Py_ssize_t)o.len);
done:
    PyMem_Free(o.buf);
    PyMem_Free(codes);
    PyMem_Free(lits);
    PyMem_Free(litlens);
    PyBuffer_Release(&types);
    PyBuffer_Release(&sizes);
    return result;
}

PyMethodDef gdc_refformat_methods[] = {
    {"pack_headers", pack_headers, METH_VARARGS,
     "pack_headers(idx, layout, pack, data_end, oids, types, sizes) -> ids decided: the "
     "type and size of each id this pack holds (255: Python must read it)"},
    {"format_refs", format_refs, METH_VARARGS,
     "format_refs(plan, names, oids, types, sizes, peeled, omit_empty) -> the output of a "
     "compiled for-each-ref format for every ref"},
    {NULL, NULL, 0, NULL},
};
