/*
 * Shortest unique abbreviations of many object ids at once (Git's
 * find_unique_abbrev), over sorted id tables: each pack index and multi-pack-index
 * layer straight in its mapping, and the loose ids that Python lists.
 *
 * An id's abbreviation is at least the minimum length, and one hex digit longer than
 * the longest prefix it shares with any other object.  In a sorted table that other
 * object is a neighbour of the id's place: the entry there (or after it, when the
 * table holds the id itself) and the one before.  As Git, a common prefix of
 * GDC_ABBREV_MAX_COMMON digits or more does not lengthen it (Git compares hex
 * positions with GIT_MAX_RAWSZ there: an object never differs from itself, and the
 * rule keeps it from counting as its own neighbour in the loose objects).
 *
 * gitodb.repo.abbrev.Abbreviator is the pure-Python reference (its prefix search
 * over the same objects); tests/test_abbrev_native.py compares the two.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "pack.h"

/* Git's GIT_MAX_RAWSZ, against which it compares the common prefix's hex length. */
#define GDC_ABBREV_MAX_COMMON 32

static unsigned int
ab_be32(const unsigned char *p)
{
    return ((unsigned int)p[0] << 24) | ((unsigned int)p[1] << 16) | ((unsigned int)p[2] << 8)
           | p[3];
}

/* The hex digits a and b have in common (at most 2 * rawsz). */
static int
common_hex(const unsigned char *a, const unsigned char *b, int rawsz)
{
    int i = 0;
    while (i < rawsz && a[i] == b[i])
        i++;
    if (i == rawsz)
        return 2 * rawsz;
    return 2 * i + ((a[i] >> 4) == (b[i] >> 4));
}

/* Lengthen *len past the prefix oid shares with other (Git's extend_abbrev_len). */
static void
extend(int *len, const unsigned char *oid, const unsigned char *other, int rawsz)
{
    int i = common_hex(oid, other, rawsz);
    if (i < GDC_ABBREV_MAX_COMMON && i >= *len)
        *len = i + 1;
}

int
gdc_abbrev_len(const gdc_abbrev *a, const unsigned char *oid)
{
    int len = a->min_len, rawsz = a->rawsz;
    if (len >= 2 * rawsz)
        return 2 * rawsz;
    for (Py_ssize_t t = 0; t < a->ntables; t++) {
        const gdc_abbrev_table *tb = &a->tables[t];
        Py_ssize_t lo = 0, hi = tb->count;
        if (tb->fan) {
            /* neighbours outside the id's first-byte bucket share < 2 digits with it,
               fewer than the minimum length: the bucket is enough */
            lo = oid[0] ? (Py_ssize_t)ab_be32(tb->fan + 4 * (oid[0] - 1u)) : 0;
            hi = (Py_ssize_t)ab_be32(tb->fan + 4 * oid[0]);
            if (hi > tb->count)
                hi = tb->count;
            if (lo > hi)
                lo = hi;
        }
        Py_ssize_t first = lo, end = hi;
        while (first < end) { /* the first entry not below oid */
            Py_ssize_t mid = first + ((end - first) >> 1);
            if (memcmp(tb->ids + mid * tb->stride, oid, (size_t)rawsz) < 0)
                first = mid + 1;
            else
                end = mid;
        }
        int match = first < hi && !memcmp(tb->ids + first * tb->stride, oid, (size_t)rawsz);
        Py_ssize_t after = match ? first + 1 : first;
        if (after < hi)
            extend(&len, oid, tb->ids + after * tb->stride, rawsz);
        if (first > lo)
            extend(&len, oid, tb->ids + (first - 1) * tb->stride, rawsz);
    }
    return len;
}

static const char ab_hex[] = "0123456789abcdef";

int
gdc_abbrev_put(const gdc_abbrev *a, const unsigned char *oid, char *dst)
{
    int n = gdc_abbrev_len(a, oid);
    for (int i = 0; i < n; i++)
        dst[i] = ab_hex[(oid[i >> 1] >> ((i & 1) ? 0 : 4)) & 15];
    return n;
}

void
gdc_abbrev_close(gdc_abbrev *a)
{
    for (Py_ssize_t t = 0; t < a->ntables; t++)
        PyBuffer_Release(&a->tables[t].view);
    PyMem_Free(a->tables);
    a->tables = NULL;
    a->ntables = 0;
}

int
gdc_abbrev_open(gdc_abbrev *a, PyObject *spec, int rawsz)
{
    PyObject *tables;
    a->tables = NULL;
    a->ntables = 0;
    a->rawsz = rawsz;
    if (!PyArg_ParseTuple(spec, "O!i:abbrev", &PyList_Type, &tables, &a->min_len))
        return -1;
    if (rawsz <= 0 || rawsz > 32 || a->min_len < 0) {
        PyErr_SetString(PyExc_ValueError, "abbrev: bad id length or minimum length");
        return -1;
    }
    if (a->min_len == 0 || a->min_len > 2 * rawsz)
        a->min_len = 2 * rawsz; /* no abbreviation: the full ids */
    Py_ssize_t n = PyList_GET_SIZE(tables);
    a->tables = PyMem_Calloc(n ? (size_t)n : 1, sizeof(gdc_abbrev_table));
    if (!a->tables) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t t = 0; t < n; t++) {
        gdc_abbrev_table *tb = &a->tables[t];
        PyObject *buf;
        Py_ssize_t fan_at, oid_at;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(tables, t), "Onnnn:abbrev table", &buf, &fan_at,
                              &oid_at, &tb->stride, &tb->count))
            goto fail;
        if (PyObject_GetBuffer(buf, &tb->view, PyBUF_SIMPLE) < 0)
            goto fail;
        a->ntables = t + 1;
        const unsigned char *p = tb->view.buf;
        Py_ssize_t len = tb->view.len;
        /* every read of the search must lie inside the buffer */
        if (tb->count < 0 || tb->stride < rawsz || oid_at < 0
            || (tb->count && oid_at + (tb->count - 1) * tb->stride + rawsz > len)
            || (fan_at >= 0 && fan_at + 1024 > len)
            || (fan_at >= 0 && ab_be32(p + fan_at + 1020) != (unsigned int)tb->count)) {
            PyErr_SetString(PyExc_ValueError, "abbrev: id table outside its buffer");
            goto fail;
        }
        tb->ids = p + oid_at;
        tb->fan = fan_at >= 0 ? p + fan_at : NULL;
    }
    return 0;
fail:
    gdc_abbrev_close(a);
    return -1;
}

/*
 * abbrev_lengths(spec, rawsz, ids) -> bytes: the abbreviation length of each id.
 *
 * spec: (tables, min_len), tables a list of (buffer, fan_at, oid_at, stride, count):
 * count sorted ids of rawsz bytes at buffer[oid_at + i * stride], with a fan-out of
 * 256 big-endian counts at fan_at (-1: none).  min_len: the shortest abbreviation (0:
 * none).  ids: a list of bytes, or the ids back to back in one bytes-like object.
 */
static PyObject *
abbrev_lengths(PyObject *self, PyObject *args)
{
    PyObject *spec, *ids;
    int rawsz;
    if (!PyArg_ParseTuple(args, "O!iO:abbrev_lengths", &PyTuple_Type, &spec, &rawsz, &ids))
        return NULL;
    gdc_abbrev a;
    if (gdc_abbrev_open(&a, spec, rawsz))
        return NULL;
    PyObject *out = NULL;
    Py_buffer blob = {0};
    Py_ssize_t n;
    int is_list = PyList_Check(ids);
    if (is_list) {
        n = PyList_GET_SIZE(ids);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *o = PyList_GET_ITEM(ids, i);
            if (!PyBytes_Check(o) || PyBytes_GET_SIZE(o) != rawsz) {
                PyErr_SetString(PyExc_ValueError, "abbrev_lengths: ids must be bytes of rawsz");
                goto done;
            }
        }
    } else {
        if (PyObject_GetBuffer(ids, &blob, PyBUF_SIMPLE) < 0)
            goto done;
        if (blob.len % rawsz) {
            PyErr_SetString(PyExc_ValueError, "abbrev_lengths: ids not a whole number of ids");
            goto done;
        }
        n = blob.len / rawsz;
    }
    out = PyBytes_FromStringAndSize(NULL, n);
    if (!out)
        goto done;
    unsigned char *w = (unsigned char *)PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        const unsigned char *id =
            is_list ? (const unsigned char *)PyBytes_AS_STRING(PyList_GET_ITEM(ids, i))
                    : (const unsigned char *)blob.buf + i * rawsz;
        w[i] = (unsigned char)gdc_abbrev_len(&a, id);
    }
done:
    if (blob.obj)
        PyBuffer_Release(&blob);
    gdc_abbrev_close(&a);
    return out;
}

PyMethodDef gdc_abbrev_methods[] = {
    {"abbrev_lengths", abbrev_lengths, METH_VARARGS,
     "abbrev_lengths((tables, min_len), rawsz, ids) -> bytes: each id's shortest unique "
     "abbreviation length (Git's find_unique_abbrev) over the sorted id tables."},
    {NULL, NULL, 0, NULL},
};
