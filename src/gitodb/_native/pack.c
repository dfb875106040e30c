/*
 * The pack part of the native core (gitodb._native): Git's delta format applied,
 * the per-entry varints, the header walk in pack order, index lookups, and the
 * cat-file record formatting.  gitodb.pack.delta, gitodb.pack.entry,
 * gitodb.pack.idx and gitodb.pack.reader hold the pure-Python reference.
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
 *
 * It also parses the per-entry varints that every pack walk reads once per
 * object (entry header, OFS_DELTA distance, delta header sizes).  Those raise
 * gitodb.errors.PackError / DeltaError themselves, with the same messages,
 * paths and offsets as the Python versions in entry.py and delta.py, because a
 * Python wrapper would cost as much as the parsing it replaces.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "pack.h"

int
gdc_read_size(const unsigned char **pp, const unsigned char *end, unsigned long long *out)
{
    const unsigned char *p = *pp;
    unsigned long long value = 0;
    int shift = 0;
    unsigned char c;
    do {
        if (p >= end || shift > 63) {
            *pp = p;
            return -1;
        }
        c = *p++;
        if (shift == 63 && (c & 0x7e)) {   /* more than 64 bits */
            *pp = p;
            return -1;
        }
        value |= (unsigned long long)(c & 0x7f) << shift;
        shift += 7;
    } while (c & 0x80);
    *pp = p;
    *out = value;
    return 0;
}

/* Walk the opcodes; copy into out when it is not NULL.  Returns NULL or an error text
   (in msg when it has numbers: the same words as the Python reference). */
const char *
gdc_run_opcodes(const unsigned char *p, const unsigned char *end, const unsigned char *base,
            unsigned long long base_len, unsigned long long dst_size, unsigned char *out,
            unsigned long long *produced_out, char *msg, size_t msglen)
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
            if (off + size > base_len || produced + size > dst_size) {
                snprintf(msg, msglen, "delta copy out of bounds (offset %llu, size %llu, "
                         "base %llu, result %llu)", off, size, base_len, dst_size);
                return msg;
            }
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
    if (gdc_read_size(&p, end, &src_size) || gdc_read_size(&p, end, &dst_size)) {
        err = "delta header truncated or too long";
    } else if (src_size != (unsigned long long)base.len) {
        snprintf(msg, sizeof(msg), "delta base size mismatch: delta says %llu, base has %zd",
                 src_size, base.len);
        err = msg;
    } else {
        Py_BEGIN_ALLOW_THREADS
        err = gdc_run_opcodes(p, end, base.buf, base.len, dst_size, NULL, &produced, msg,
                          sizeof(msg));
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
            gdc_run_opcodes(p, end, base.buf, base.len, dst_size, out, &produced, msg, sizeof(msg));
            Py_END_ALLOW_THREADS
        }
    } else {
        PyErr_SetString(PyExc_ValueError, err);
    }
    PyBuffer_Release(&base);
    PyBuffer_Release(&delta);
    return result;
}

/* Raise gitodb.errors.<name>(message, path=path, offset=offset). */
static PyObject *
raise_gitodb(const char *name, const char *message, PyObject *path, Py_ssize_t offset)
{
    PyObject *errors = PyImport_ImportModule("gitodb.errors");
    if (!errors)
        return NULL;
    PyObject *cls = PyObject_GetAttrString(errors, name);
    Py_DECREF(errors);
    if (!cls)
        return NULL;
    PyObject *args = Py_BuildValue("(s)", message);
    PyObject *kwargs = Py_BuildValue("{s:O,s:n}", "path", path ? path : Py_None,
                                     "offset", offset);
    if (args && kwargs) {
        PyObject *exc = PyObject_Call(cls, args, kwargs);
        if (exc) {
            PyErr_SetObject(cls, exc);
            Py_DECREF(exc);
        }
    }
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    Py_DECREF(cls);
    return NULL;
}

static int
get_buffer_args(PyObject *const *args, Py_ssize_t nargs, const char *fname, Py_buffer *view,
                Py_ssize_t *offset, PyObject **path)
{
    if (nargs < 2 || nargs > 3) {
        PyErr_Format(PyExc_TypeError, "%s() takes 2 or 3 positional arguments", fname);
        return -1;
    }
    *offset = PyLong_AsSsize_t(args[1]);
    if (*offset == -1 && PyErr_Occurred())
        return -1;
    *path = nargs == 3 ? args[2] : Py_None;
    return PyObject_GetBuffer(args[0], view, PyBUF_SIMPLE);
}

/* The entry header at off: its type, size and length.  0; GDC_TRUNCATED when the
   buffer ends inside it; GDC_TOO_LONG for a size of more than 64 bits. */
int
gdc_entry_header(const unsigned char *buf, unsigned long long len, unsigned long long off,
                 unsigned int *type, unsigned long long *size, unsigned long long *hlen)
{
    unsigned long long pos = off;
    if (off >= len)
        return GDC_TRUNCATED;
    unsigned char c = buf[pos++];
    int shift = 4;
    *type = (c >> 4) & 7;
    *size = c & 15;
    while (c & 0x80) {
        if (pos - off >= 10)
            return GDC_TOO_LONG;
        if (pos >= len)
            return GDC_TRUNCATED;
        c = buf[pos++];
        if (shift == 60 && (c & 0x70))   /* more than 64 bits */
            return GDC_TOO_LONG;
        *size |= (unsigned long long)(c & 0x7f) << shift;
        shift += 7;
    }
    *hlen = pos - off;
    return 0;
}

/* The OFS_DELTA base distance at pos and its length: 0, GDC_TRUNCATED or GDC_TOO_LONG. */
int
gdc_ofs_distance(const unsigned char *buf, unsigned long long len, unsigned long long pos,
                 unsigned long long *dist, unsigned long long *nlen)
{
    unsigned long long start = pos;
    if (pos >= len)
        return GDC_TRUNCATED;
    unsigned char c = buf[pos++];
    *dist = c & 0x7f;
    while (c & 0x80) {
        if ((*dist + 1) >> 57)   /* the next shift would drop bits */
            return GDC_TOO_LONG;
        if (pos >= len)
            return GDC_TRUNCATED;
        c = buf[pos++];
        *dist = ((*dist + 1) << 7) | (c & 0x7f);
    }
    *nlen = pos - start;
    return 0;
}

/* parse_entry_header(buf, offset, path=None) -> (type, size, header_length) */
static PyObject *
parse_entry_header(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t offset;
    PyObject *path;
    if (get_buffer_args(args, nargs, "parse_entry_header", &view, &offset, &path))
        return NULL;
    unsigned long long size = 0, hlen = 0;
    unsigned int type = 0;
    int rc = offset < 0 ? GDC_TRUNCATED
                        : gdc_entry_header(view.buf, (unsigned long long)view.len,
                                           (unsigned long long)offset, &type, &size, &hlen);
    PyBuffer_Release(&view);
    if (rc)
        return raise_gitodb("PackError",
                            rc == GDC_TOO_LONG ? "bad pack entry header: size varint too long"
                                               : "truncated pack entry header",
                            path, offset);
    return Py_BuildValue("(IKn)", type, size, (Py_ssize_t)hlen);
}

/* parse_ofs_distance(buf, offset, path=None) -> (distance, length) */
static PyObject *
parse_ofs_distance(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t offset;
    PyObject *path;
    if (get_buffer_args(args, nargs, "parse_ofs_distance", &view, &offset, &path))
        return NULL;
    unsigned long long dist = 0, nlen = 0;
    int rc = offset < 0 ? GDC_TRUNCATED
                        : gdc_ofs_distance(view.buf, (unsigned long long)view.len,
                                           (unsigned long long)offset, &dist, &nlen);
    PyBuffer_Release(&view);
    if (rc)
        return raise_gitodb("PackError",
                            rc == GDC_TOO_LONG ? "bad OFS_DELTA base offset: varint too long"
                                               : "truncated OFS_DELTA base offset",
                            path, offset);
    return Py_BuildValue("(Kn)", dist, (Py_ssize_t)nlen);
}

/* delta_sizes(delta) -> (base_size, result_size, header_length) */
static PyObject *
delta_sizes(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE))
        return NULL;
    const unsigned char *p = view.buf;
    const unsigned char *end = p + view.len;
    unsigned long long src, dst;
    int bad = gdc_read_size(&p, end, &src) || gdc_read_size(&p, end, &dst);
    Py_ssize_t used = p - (const unsigned char *)view.buf;
    PyBuffer_Release(&view);
    if (bad)
        return raise_gitodb("DeltaError", "delta header truncated or too long", NULL, used);
    return Py_BuildValue("(KKn)", src, dst, used);
}

/* Order of index positions by pack offset: qsort of (offset, position) pairs. */
typedef struct { unsigned long long off; unsigned int pos; } off_pos;

static int
cmp_off_pos(const void *a, const void *b)
{
    unsigned long long x = ((const off_pos *)a)->off, y = ((const off_pos *)b)->off;
    return x < y ? -1 : x > y;
}

/* rev_order(offsets: buffer of native uint64, id order) -> bytes of native uint32 */
static PyObject *
rev_order(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE))
        return NULL;
    Py_ssize_t n = view.len / 8;
    const unsigned long long *offs = view.buf;
    off_pos *pairs = PyMem_RawMalloc(n ? n * sizeof(off_pos) : 1);
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * 4);
    if (!pairs || !out) {
        PyMem_RawFree(pairs);
        Py_XDECREF(out);
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    unsigned int *order = (unsigned int *)PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        pairs[i].off = offs[i];
        pairs[i].pos = (unsigned int)i;
    }
    qsort(pairs, n, sizeof(off_pos), cmp_off_pos);
    for (Py_ssize_t i = 0; i < n; i++)
        order[i] = pairs[i].pos;
    Py_END_ALLOW_THREADS
    PyMem_RawFree(pairs);
    PyBuffer_Release(&view);
    return out;
}

/* gather_u64(values: native uint64 buffer, order: native uint32 buffer) -> bytes
 * values[order[0]], values[order[1]], ... (the pack offsets in pack order). */
static PyObject *
gather_u64(PyObject *self, PyObject *args)
{
    Py_buffer values, order;
    if (!PyArg_ParseTuple(args, "y*y*:gather_u64", &values, &order))
        return NULL;
    Py_ssize_t n = order.len / 4, nv = values.len / 8;
    const unsigned long long *v = values.buf;
    const unsigned int *o = order.buf;
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * 8);
    if (out) {
        unsigned long long *dst = (unsigned long long *)PyBytes_AS_STRING(out);
        for (Py_ssize_t i = 0; i < n; i++) {
            if (o[i] >= (unsigned long long)nv) {
                Py_CLEAR(out);
                PyErr_SetString(PyExc_IndexError, "gather_u64: position out of range");
                break;
            }
            dst[i] = v[o[i]];
        }
    }
    PyBuffer_Release(&values);
    PyBuffer_Release(&order);
    return out;
}

/* first_unordered_u64(values: native uint64 buffer) -> the first i with
 * values[i] >= values[i + 1], or -1 when the values strictly increase. */
static PyObject *
first_unordered_u64(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned long long *v = view.buf;
    Py_ssize_t n = view.len / 8, i;
    for (i = 0; i + 1 < n; i++)
        if (v[i] >= v[i + 1])
            break;
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(i + 1 < n ? i : -1);
}

/* first_at_least_u32(values: native uint32 buffer, limit) -> the first i with
 * values[i] >= limit, or -1. */
static PyObject *
first_at_least_u32(PyObject *self, PyObject *args)
{
    Py_buffer view;
    unsigned long long limit;
    if (!PyArg_ParseTuple(args, "y*K:first_at_least_u32", &view, &limit))
        return NULL;
    const unsigned int *v = view.buf;
    Py_ssize_t n = view.len / 4, i;
    for (i = 0; i < n; i++)
        if (v[i] >= limit)
            break;
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(i < n ? i : -1);
}

/*
 * scan_headers(buf, sorted_offsets, rev, data_end, rawsz, path)
 *     -> (kinds, types, sizes, starts, ends)
 *
 * One pass over every entry in pack order (what cat-file --batch-check
 * --batch-all-objects needs).  Inputs: the pack, its entry offsets ascending
 * (native uint64), the index position of each (native uint32, the .rev order).
 * Outputs, indexed by index position: the entry's type number (bytes), the
 * object type (bytearray: OFS_DELTA chains resolved to their base's type, 0 where
 * that needs an id lookup: REF_DELTA), the size from the header (native uint64;
 * for a delta that is the delta's size), where the entry's zlib data starts and
 * where the entry ends (native uint64).
 */
static PyObject *
scan_headers(PyObject *self, PyObject *args)
{
    Py_buffer pack, sorted, rev;
    unsigned long long data_end;
    Py_ssize_t rawsz;
    PyObject *path;
    if (!PyArg_ParseTuple(args, "y*y*y*KnO:scan_headers", &pack, &sorted, &rev, &data_end,
                          &rawsz, &path))
        return NULL;
    Py_ssize_t n = sorted.len / 8;
    PyObject *result = NULL, *kinds = NULL, *types = NULL, *sizes = NULL, *starts = NULL,
             *ends = NULL;
    unsigned char *type_by_k = NULL;
    const char *err = NULL;
    unsigned long long err_off = 0;
    if (rev.len / 4 != n) {
        PyErr_SetString(PyExc_ValueError, "scan_headers: offsets and rev order differ in length");
        goto done;
    }
    kinds = PyBytes_FromStringAndSize(NULL, n);
    types = PyByteArray_FromStringAndSize(NULL, n);
    sizes = PyBytes_FromStringAndSize(NULL, n * 8);
    starts = PyBytes_FromStringAndSize(NULL, n * 8);
    ends = PyBytes_FromStringAndSize(NULL, n * 8);
    type_by_k = PyMem_RawMalloc(n ? n : 1);
    if (!kinds || !types || !sizes || !starts || !ends || !type_by_k) {
        PyErr_NoMemory();
        goto done;
    }
    {
        const unsigned char *buf = pack.buf;
        unsigned long long len = (unsigned long long)pack.len;
        const unsigned long long *so = sorted.buf;
        const unsigned int *pos_of = rev.buf;
        unsigned char *kind_out = (unsigned char *)PyBytes_AS_STRING(kinds);
        unsigned char *type_out = (unsigned char *)PyByteArray_AS_STRING(types);
        unsigned long long *size_out = (unsigned long long *)PyBytes_AS_STRING(sizes);
        unsigned long long *start_out = (unsigned long long *)PyBytes_AS_STRING(starts);
        unsigned long long *end_out = (unsigned long long *)PyBytes_AS_STRING(ends);
        if (data_end > len)
            data_end = len;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t k = 0; k < n && !err; k++) {
            unsigned long long off = so[k], pos = off;
            unsigned long long end = k + 1 < n ? so[k + 1] : data_end;
            unsigned int p = pos_of[k];
            if (p >= (unsigned long long)n || end > data_end || off >= end) {
                err = "pack entry offsets out of order or outside the pack";
                err_off = off;
                break;
            }
            unsigned char c = buf[pos++];
            unsigned int type = (c >> 4) & 7;
            unsigned long long size = c & 15;
            int shift = 4;
            while (c & 0x80) {
                if (pos >= end || pos - off >= 10 || (shift == 60 && (buf[pos] & 0x70))) {
                    err = "bad pack entry header";
                    break;
                }
                c = buf[pos++];
                size |= (unsigned long long)(c & 0x7f) << shift;
                shift += 7;
            }
            if (err) {
                err_off = off;
                break;
            }
            unsigned char object_type = 0;
            if (type >= 1 && type <= 4) {
                object_type = (unsigned char)type;
            } else if (type == 6) {
                if (pos >= end) {
                    err = "truncated OFS_DELTA base offset";
                    err_off = off;
                    break;
                }
                c = buf[pos++];
                unsigned long long dist = c & 0x7f;
                while (c & 0x80) {
                    if ((dist + 1) >> 57 || pos >= end) {
                        err = "bad OFS_DELTA base offset";
                        break;
                    }
                    c = buf[pos++];
                    dist = ((dist + 1) << 7) | (c & 0x7f);
                }
                if (err) {
                    err_off = off;
                    break;
                }
                /* The base comes earlier in the pack: binary search for its entry. */
                if (dist && dist <= off) {
                    Py_ssize_t at = gdc_offset_index(so, k, off - dist);
                    if (at >= 0)
                        object_type = type_by_k[at];
                }
            } else if (type == 7) {
                pos += (unsigned long long)rawsz;   /* the base's id follows */
                if (pos >= end) {
                    err = "truncated REF_DELTA base id";
                    err_off = off;
                    break;
                }
            } else {
                err = "pack entry has invalid type";
                err_off = off;
                break;
            }
            type_by_k[k] = object_type;
            kind_out[p] = (unsigned char)type;
            type_out[p] = object_type;
            size_out[p] = size;
            start_out[p] = pos;
            end_out[p] = end;
        }
        Py_END_ALLOW_THREADS
    }
    if (err) {
        char msg[96];
        snprintf(msg, sizeof(msg), "%s", err);
        raise_gitodb("PackError", msg, path, (Py_ssize_t)err_off);
        goto done;
    }
    result = PyTuple_Pack(5, kinds, types, sizes, starts, ends);
done:
    Py_XDECREF(kinds);
    Py_XDECREF(types);
    Py_XDECREF(sizes);
    Py_XDECREF(starts);
    Py_XDECREF(ends);
    PyMem_RawFree(type_by_k);
    PyBuffer_Release(&pack);
    PyBuffer_Release(&sorted);
    PyBuffer_Release(&rev);
    return result;
}

/* "<hex id> <type> <size>\n" (cat-file's default record line) at w, type 1..4 and
   w with room for GDC_CHECK_LINE_MAX bytes; returns the end. */
char *
gdc_check_line(char *w, const unsigned char *id, Py_ssize_t idlen, unsigned int type,
               unsigned long long size)
{
    static const char *names[] = {"", "commit", "tree", "blob", "tag"};
    static const char hex[] = "0123456789abcdef";
    for (Py_ssize_t k = 0; k < idlen; k++) {
        *w++ = hex[id[k] >> 4];
        *w++ = hex[id[k] & 15];
    }
    *w++ = ' ';
    size_t len = strlen(names[type]);
    memcpy(w, names[type], len);
    w += len;
    *w++ = ' ';
    char digits[24];
    int d = 0;
    do {
        digits[d++] = (char)('0' + size % 10);
        size /= 10;
    } while (size);
    while (d)
        *w++ = digits[--d];
    *w++ = '\n';
    return w;
}

/*
 * check_lines(oids, types: bytes-like, sizes: native uint64 buffer,
 *             positions: native uint32 buffer or None) -> bytes
 *
 * oids: a list of bytes, or (table, start, stride, rawsz, count): the id table of a
 * mapped .idx, entry i's id rawsz bytes at start + i * stride (no list of every id;
 * in pack order the reads stay inside one contiguous table).
 *
 * The lines "<hex id> <type> <size>\n" of cat-file's default --batch-check format
 * for the given index positions (all, in id order, when positions is None).
 */
static PyObject *
check_lines(PyObject *self, PyObject *args)
{
    PyObject *oids, *positions_obj;
    Py_buffer types, sizes, positions = {0}, table = {0};
    if (!PyArg_ParseTuple(args, "Oy*y*O:check_lines", &oids, &types, &sizes, &positions_obj))
        return NULL;
    PyObject *out = NULL;
    Py_ssize_t n = 0, tstart = 0, tstride = 0, rawsz = 0;
    int from_table = PyTuple_Check(oids);
    int have_positions = positions_obj != Py_None;
    if (from_table) {
        if (!PyArg_ParseTuple(oids, "y*nnnn:check_lines", &table, &tstart, &tstride, &rawsz,
                              &n))
            goto done;
        if (tstart < 0 || tstride < rawsz || rawsz <= 0 || rawsz > 32 || n < 0
            || (n && (table.len - tstart) / tstride < n)) {
            PyErr_SetString(PyExc_ValueError, "check_lines: id table out of bounds");
            goto done;
        }
    } else if (PyList_Check(oids)) {
        n = PyList_GET_SIZE(oids);
    } else {
        PyErr_SetString(PyExc_TypeError, "check_lines: ids must be a list or an id table");
        goto done;
    }
    if (have_positions && PyObject_GetBuffer(positions_obj, &positions, PyBUF_SIMPLE))
        goto done;
    Py_ssize_t count = have_positions ? positions.len / 4 : n;
    if (types.len < n || sizes.len / 8 < n) {
        PyErr_SetString(PyExc_ValueError, "check_lines: types/sizes shorter than oids");
        goto done;
    }
    /* Longest line: 2 * 32 hex + " commit " + 20 digits + "\n". */
    out = PyBytes_FromStringAndSize(NULL, count * GDC_CHECK_LINE_MAX + 1);
    if (!out)
        goto done;
    {
        char *w = PyBytes_AS_STRING(out);
        const unsigned char *t = types.buf;
        const unsigned long long *sz = sizes.buf;
        const unsigned int *pos = positions.buf;
        for (Py_ssize_t i = 0; i < count; i++) {
            Py_ssize_t p = have_positions ? (Py_ssize_t)pos[i] : i;
            if (p >= n || t[p] > 4) {
                Py_CLEAR(out);
                PyErr_SetString(PyExc_ValueError, "check_lines: bad position or type");
                goto done;
            }
            const unsigned char *id;
            Py_ssize_t idlen;
            if (from_table) {
                id = (const unsigned char *)table.buf + tstart + p * tstride;
                idlen = rawsz;
            } else {
                PyObject *oid = PyList_GET_ITEM(oids, p);
                if (!PyBytes_Check(oid) || PyBytes_GET_SIZE(oid) > 32) {
                    Py_CLEAR(out);
                    PyErr_SetString(PyExc_TypeError, "check_lines: ids must be bytes");
                    goto done;
                }
                id = (const unsigned char *)PyBytes_AS_STRING(oid);
                idlen = PyBytes_GET_SIZE(oid);
            }
            w = gdc_check_line(w, id, idlen, t[p], sz[p]);
        }
        _PyBytes_Resize(&out, w - PyBytes_AS_STRING(out));
    }
done:
    PyBuffer_Release(&types);
    PyBuffer_Release(&sizes);
    if (table.obj)
        PyBuffer_Release(&table);
    if (have_positions && positions.obj)
        PyBuffer_Release(&positions);
    return out;
}

static unsigned long long
fan_at(const unsigned char *fan, unsigned int k)
{
    const unsigned char *p = fan + 4 * k;
    return ((unsigned long long)p[0] << 24) | ((unsigned long long)p[1] << 16)
           | ((unsigned long long)p[2] << 8) | p[3];
}

/*
 * mark_present(table, fan_start, start, stride, rawsz, oids, marks, tag, positions)
 *   -> newly marked
 *
 * For every id of oids (rawsz bytes each, any order) that the index in table holds,
 * set marks[i] to tag (1-255; marks: one byte per id; ids already marked are skipped)
 * and, unless positions is None, positions[i] (int64) to its position in the index.  The
 * index is read straight in its mapping, as find_oid does: its fan-out (256
 * big-endian counts at fan_start) bounds each bisect of the ids at start + i * stride.
 * index-pack's collision check uses it to learn, in one call per pack of the
 * repository, which received objects the repository already has.
 */
static PyObject *
mark_present(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer table, oids, marks, where = {0};
    Py_ssize_t fan_start, start, stride, rawsz, tag, marked = 0;
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "mark_present() takes 9 positional arguments");
        return NULL;
    }
    fan_start = PyLong_AsSsize_t(args[1]);
    start = PyLong_AsSsize_t(args[2]);
    stride = PyLong_AsSsize_t(args[3]);
    rawsz = PyLong_AsSsize_t(args[4]);
    tag = PyLong_AsSsize_t(args[7]);
    if (PyErr_Occurred())
        return NULL;
    if (tag < 1 || tag > 255) {
        PyErr_SetString(PyExc_ValueError, "mark_present: tag outside 1-255");
        return NULL;
    }
    if (args[8] != Py_None && PyObject_GetBuffer(args[8], &where, PyBUF_WRITABLE))
        return NULL;
    if (PyObject_GetBuffer(args[0], &table, PyBUF_SIMPLE)) {
        PyBuffer_Release(&where);
        return NULL;
    }
    if (PyObject_GetBuffer(args[5], &oids, PyBUF_SIMPLE)) {
        PyBuffer_Release(&table);
        PyBuffer_Release(&where);
        return NULL;
    }
    if (PyObject_GetBuffer(args[6], &marks, PyBUF_WRITABLE)) {
        PyBuffer_Release(&table);
        PyBuffer_Release(&oids);
        PyBuffer_Release(&where);
        return NULL;
    }
    Py_ssize_t n = rawsz > 0 ? oids.len / rawsz : 0;
    const unsigned char *tab = table.buf;
    unsigned long long count = 0;
    int bad = rawsz <= 0 || stride < rawsz || fan_start < 0 || start < 0
              || oids.len != n * rawsz || marks.len != n || fan_start + 1024 > table.len
              || (where.buf && where.len != n * 8);
    if (!bad) {
        count = fan_at(tab + fan_start, 255);
        bad = count > 0 && (unsigned long long)start + (count - 1) * (unsigned long long)stride
                                   + (unsigned long long)rawsz
                               > (unsigned long long)table.len;
    }
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "mark_present: ids or marks outside the table");
        goto done;
    }
    const unsigned char *ids = oids.buf, *fan = tab + fan_start, *base = tab + start;
    unsigned char *mk = marks.buf;
    long long *pos = where.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        if (mk[i])
            continue;
        const unsigned char *want = ids + i * rawsz;
        Py_ssize_t lo = want[0] ? (Py_ssize_t)fan_at(fan, want[0] - 1u) : 0;
        Py_ssize_t hi = (Py_ssize_t)fan_at(fan, want[0]);
        if (hi > (Py_ssize_t)count)
            hi = (Py_ssize_t)count; /* a fan-out out of order: stay inside the table */
        Py_ssize_t at = lo < hi ? gdc_find_oid(base, stride, rawsz, lo, hi, want) : -1;
        if (at >= 0) {
            mk[i] = (unsigned char)tag;
            if (pos)
                pos[i] = at;
            marked++;
        }
    }
    Py_END_ALLOW_THREADS
done:
    PyBuffer_Release(&table);
    PyBuffer_Release(&oids);
    PyBuffer_Release(&marks);
    PyBuffer_Release(&where);
    if (PyErr_Occurred())
        return NULL;
    return PyLong_FromSsize_t(marked);
}

/*
 * find_oid(table, start, stride, rawsz, lo, hi, oid) -> position or -1
 *
 * Binary search of the sorted ids of an index, straight in its mapping: entry i's id
 * is rawsz bytes at start + i * stride (v2: stride rawsz; v1: offset then id).  lo
 * and hi come from the fan-out.  A point lookup costs log2(count) comparisons and no
 * per-index set-up (no list of every id).
 */
Py_ssize_t
gdc_find_oid(const unsigned char *base, Py_ssize_t stride, Py_ssize_t rawsz, Py_ssize_t lo,
             Py_ssize_t hi, const void *want)
{
    while (lo < hi) {
        Py_ssize_t mid = lo + ((hi - lo) >> 1);
        int c = memcmp(base + mid * stride, want, (size_t)rawsz);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int
gdc_buf_reserve(gdc_buf *b, size_t more)
{
    if (b->n + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + more)
        cap *= 2;
    char *p = PyMem_Realloc(b->p, cap);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

int
gdc_buf_put(gdc_buf *b, const void *s, size_t n)
{
    if (gdc_buf_reserve(b, n))
        return -1;
    if (n)
        memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

int
gdc_is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x0b || c == 0x0c;
}

int
gdc_subject(gdc_buf *b, const unsigned char *m, size_t n)
{
    size_t pos = 0;
    int parts = 0;
    while (pos < n) {
        const unsigned char *nl = memchr(m + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - m) + 1 : n, len = end - pos;
        while (len && gdc_is_space(m[pos + len - 1]))
            len--;
        if (len) {
            if ((parts++ && gdc_buf_put(b, " ", 1)) || gdc_buf_put(b, m + pos, len))
                return -1;
        } else if (parts) {
            break;
        }
        pos = end;
    }
    return 0;
}

/* The index of the entry at pack offset want among the sorted entry offsets
   so[0..k), or -1: how a scan in pack order finds an OFS_DELTA's base. */
Py_ssize_t
gdc_offset_index(const unsigned long long *so, Py_ssize_t k, unsigned long long want)
{
    Py_ssize_t lo = 0, hi = k;
    while (lo < hi) {
        Py_ssize_t mid = lo + ((hi - lo) >> 1);
        if (so[mid] < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < k && so[lo] == want ? lo : -1;
}

static PyObject *
find_oid(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer table, want;
    Py_ssize_t start, stride, rawsz, lo, hi, found = -1;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "find_oid() takes 7 positional arguments");
        return NULL;
    }
    start = PyLong_AsSsize_t(args[1]);
    stride = PyLong_AsSsize_t(args[2]);
    rawsz = PyLong_AsSsize_t(args[3]);
    lo = PyLong_AsSsize_t(args[4]);
    hi = PyLong_AsSsize_t(args[5]);
    if (PyErr_Occurred())
        return NULL;
    if (PyObject_GetBuffer(args[0], &table, PyBUF_SIMPLE))
        return NULL;
    if (PyObject_GetBuffer(args[6], &want, PyBUF_SIMPLE)) {
        PyBuffer_Release(&table);
        return NULL;
    }
    if (start < 0 || stride < rawsz || rawsz <= 0 || want.len != rawsz || lo < 0 || hi < lo
        || (hi > 0 && start + (hi - 1) * stride + rawsz > table.len)) {
        PyBuffer_Release(&table);
        PyBuffer_Release(&want);
        PyErr_SetString(PyExc_ValueError, "find_oid: range outside the table");
        return NULL;
    }
    found = gdc_find_oid((const unsigned char *)table.buf + start, stride, rawsz, lo, hi,
                         want.buf);
    PyBuffer_Release(&table);
    PyBuffer_Release(&want);
    return PyLong_FromSsize_t(found);
}

/*
 * ofs_base_counts(buf, sorted_offsets, data_end, key_base) -> {key_base + base: n}
 *
 * For every entry that later OFS_DELTA entries are deltas against, how many are:
 * what a walk in pack order must keep a base for (gitodb.pack.cache.PendingBases).
 * A damaged header ends the count there (the walk itself reports the damage, from
 * read_at); the pure-Python reference is PackFile._ofs_base_counts_python.
 */
static PyObject *
ofs_base_counts(PyObject *self, PyObject *args)
{
    Py_buffer pack, sorted;
    unsigned long long data_end, key_base;
    if (!PyArg_ParseTuple(args, "y*y*KK:ofs_base_counts", &pack, &sorted, &data_end,
                          &key_base))
        return NULL;
    Py_ssize_t n = sorted.len / 8;
    const unsigned char *buf = pack.buf;
    unsigned long long len = (unsigned long long)pack.len;
    const unsigned long long *so = sorted.buf;
    PyObject *counts = PyDict_New();
    if (!counts)
        goto done;
    if (data_end > len)
        data_end = len;
    for (Py_ssize_t k = 0; k < n; k++) {
        unsigned long long off = so[k], pos = off;
        unsigned long long end = k + 1 < n ? so[k + 1] : data_end;
        if (end > data_end || off >= end)
            break;
        unsigned char c = buf[pos++];
        unsigned int type = (c >> 4) & 7;
        while (c & 0x80) {
            if (pos >= end || pos - off >= 10)
                goto done;
            c = buf[pos++];
        }
        if (type != 6)
            continue;
        if (pos >= end)
            break;
        c = buf[pos++];
        unsigned long long dist = c & 0x7f;
        while (c & 0x80) {
            if ((dist + 1) >> 57 || pos >= end)
                goto done;
            c = buf[pos++];
            dist = ((dist + 1) << 7) | (c & 0x7f);
        }
        if (dist == 0 || dist > off)
            continue;
        PyObject *key = PyLong_FromUnsignedLongLong(key_base + off - dist);
        if (!key)
            goto fail;
        PyObject *old = PyDict_GetItemWithError(counts, key);
        long was = 0;
        if (old)
            was = PyLong_AsLong(old);
        else if (PyErr_Occurred()) {
            Py_DECREF(key);
            goto fail;
        }
        PyObject *now = PyLong_FromLong(was + 1);
        int r = now ? PyDict_SetItem(counts, key, now) : -1;
        Py_XDECREF(now);
        Py_DECREF(key);
        if (r)
            goto fail;
    }
    goto done;
fail:
    Py_CLEAR(counts);
done:
    PyBuffer_Release(&pack);
    PyBuffer_Release(&sorted);
    return counts;
}

PyMethodDef gdc_pack_methods[] = {
    {"ofs_base_counts", ofs_base_counts, METH_VARARGS,
     "ofs_base_counts(buf, sorted_offsets, data_end, key_base) -> {key: deltas against it}"},
    {"find_oid", (PyCFunction)(void (*)(void))find_oid, METH_FASTCALL,
     "find_oid(table, start, stride, rawsz, lo, hi, oid) -> position or -1"},
    {"mark_present", (PyCFunction)(void (*)(void))mark_present, METH_FASTCALL,
     "mark_present(table, fan_start, start, stride, rawsz, oids, marks, tag, positions) -> "
     "newly marked"},
    {"check_lines", check_lines, METH_VARARGS,
     "check_lines(oids, types, sizes, positions) -> bytes: default --batch-check lines"},
    {"rev_order", rev_order, METH_O,
     "rev_order(offsets) -> bytes: uint32 index positions in pack-offset order"},
    {"first_unordered_u64", first_unordered_u64, METH_O,
     "first_unordered_u64(values) -> first i with values[i] >= values[i + 1], or -1"},
    {"first_at_least_u32", first_at_least_u32, METH_VARARGS,
     "first_at_least_u32(values, limit) -> first i with values[i] >= limit, or -1"},
    {"gather_u64", gather_u64, METH_VARARGS,
     "gather_u64(values, order) -> bytes: values[order[i]] as native uint64"},
    {"scan_headers", scan_headers, METH_VARARGS,
     "scan_headers(buf, sorted_offsets, rev, data_end, rawsz, path) -> "
     "(kinds, types, sizes, starts, ends)"},
    {"parse_entry_header", (PyCFunction)(void (*)(void))parse_entry_header, METH_FASTCALL,
     "parse_entry_header(buf, offset, path=None) -> (type, size, header_length)"},
    {"parse_ofs_distance", (PyCFunction)(void (*)(void))parse_ofs_distance, METH_FASTCALL,
     "parse_ofs_distance(buf, offset, path=None) -> (distance, length)"},
    {"delta_sizes", delta_sizes, METH_O,
     "delta_sizes(delta) -> (base_size, result_size, header_length)"},
    {"apply_delta", apply_delta, METH_VARARGS,
     "apply_delta(base, delta) -> bytes: apply a Git delta; ValueError on bad input."},
    {NULL, NULL, 0, NULL},
};
