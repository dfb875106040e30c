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
            int got = s < e && e <= len ? head_of(&zs, buf + s, e - s, head) : -1;
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

PyMethodDef gdc_heads_methods[] = {
    {"delta_result_sizes", delta_result_sizes, METH_VARARGS,
     "delta_result_sizes(buf, kinds, starts, ends, sizes) -> positions left undecided"},
    {NULL, NULL, 0, NULL},
};

const char *gdc_zlib_version = ZLIB_VERSION;

const char *
gdc_zlib_runtime_version(void)
{
    return zlibVersion();
}

#else /* no zlib at build time: Python reads every head */

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
