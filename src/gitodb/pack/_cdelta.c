/*
 * Optional accelerator for gitodb.pack.delta: Git's delta format applied in C.
 *
 * Same checks as the pure-Python version (which stays the reference and the
 * fallback): the base size must match, every copy must stay inside the base,
 * every insert inside the delta, opcode 0 is reserved, and the result must have
 * exactly the declared size.  A first pass validates the opcodes and adds up
 * what they produce, so a delta that declares a huge result cannot make us
 * allocate it; the second pass copies.  Both run without the GIL.
 *
 * Errors are raised as ValueError; delta.py turns them into DeltaError with
 * the pack path and offset.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

static int
read_size(const unsigned char **pp, const unsigned char *end, unsigned long long *out)
{
    const unsigned char *p = *pp;
    unsigned long long value = 0;
    int shift = 0;
    unsigned char c;
    do {
        if (p >= end || shift > 63)
            return -1;
        c = *p++;
        value |= (unsigned long long)(c & 0x7f) << shift;
        shift += 7;
    } while (c & 0x80);
    *pp = p;
    *out = value;
    return 0;
}

/* Walk the opcodes; copy into out when it is not NULL.  Returns NULL or an error text. */
static const char *
run_opcodes(const unsigned char *p, const unsigned char *end, const unsigned char *base,
            unsigned long long base_len, unsigned long long dst_size, unsigned char *out,
            unsigned long long *produced_out)
{
    unsigned long long produced = 0;
    while (p < end) {
        unsigned char op = *p++;
        if (op & 0x80) {
            unsigned long long off = 0, size = 0;
            int i;
            for (i = 0; i < 4; i++) {
                if (op & (1 << i)) {
                    if (p >= end)
                        return "delta copy opcode truncated";
                    off |= (unsigned long long)(*p++) << (8 * i);
                }
            }
            for (i = 0; i < 3; i++) {
                if (op & (0x10 << i)) {
                    if (p >= end)
                        return "delta copy opcode truncated";
                    size |= (unsigned long long)(*p++) << (8 * i);
                }
            }
            if (size == 0)
                size = 0x10000;
            if (off + size > base_len || produced + size > dst_size)
                return "delta copy out of bounds";
            if (out)
                memcpy(out + produced, base + off, size);
            produced += size;
        } else if (op) {
            if ((unsigned long long)(end - p) < op || produced + op > dst_size)
                return "delta insert out of bounds";
            if (out)
                memcpy(out + produced, p, op);
            p += op;
            produced += op;
        } else {
            return "delta uses reserved opcode 0";
        }
    }
    *produced_out = produced;
    return NULL;
}

static PyObject *
apply_delta(PyObject *self, PyObject *args)
{
    Py_buffer base, delta;
    PyObject *result = NULL;
    const char *err = NULL;
    unsigned long long src_size, dst_size, produced = 0;
    char msg[160];

    if (!PyArg_ParseTuple(args, "y*y*:apply_delta", &base, &delta))
        return NULL;
    const unsigned char *p = delta.buf;
    const unsigned char *end = p + delta.len;
    if (read_size(&p, end, &src_size) || read_size(&p, end, &dst_size)) {
        err = "delta header truncated or too long";
    } else if (src_size != (unsigned long long)base.len) {
        snprintf(msg, sizeof(msg), "delta base size mismatch: delta says %llu, base has %zd",
                 src_size, base.len);
        err = msg;
    } else {
        Py_BEGIN_ALLOW_THREADS
        err = run_opcodes(p, end, base.buf, base.len, dst_size, NULL, &produced);
        Py_END_ALLOW_THREADS
        if (!err && produced != dst_size) {
            snprintf(msg, sizeof(msg), "delta result has %llu bytes, expected %llu",
                     produced, dst_size);
            err = msg;
        }
    }
    if (!err) {
        result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)dst_size);
        if (result) {
            unsigned char *out = (unsigned char *)PyBytes_AS_STRING(result);
            Py_BEGIN_ALLOW_THREADS
            run_opcodes(p, end, base.buf, base.len, dst_size, out, &produced);
            Py_END_ALLOW_THREADS
        }
    } else {
        PyErr_SetString(PyExc_ValueError, err);
    }
    PyBuffer_Release(&base);
    PyBuffer_Release(&delta);
    return result;
}

static PyMethodDef methods[] = {
    {"apply_delta", apply_delta, METH_VARARGS,
     "apply_delta(base, delta) -> bytes: apply a Git delta; ValueError on bad input."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "gitodb.pack._cdelta",
    "Git delta application in C (optional accelerator).", -1, methods,
};

PyMODINIT_FUNC
PyInit__cdelta(void)
{
    return PyModule_Create(&module);
}
