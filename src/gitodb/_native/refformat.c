/*
 * for-each-ref's per-ref loops: listing refs (packed_refs_plain, ref_block_records),
 * their objects' headers (pack_headers) and the output (format_refs).
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
 * (gitodb.repo.refformat.formatter.Formatter.format) is the reference: it decides
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
    if (!z) { /* the type only: the size a delta declares is not wanted */
        *size = 0;
        return 0;
    }
    unsigned long long stop = data_at + HEAD_WINDOW < end ? data_at + HEAD_WINDOW : end;
    if (data_at >= stop || gdc_delta_result_size(z, buf + data_at, stop - data_at, size))
        return -1;
    return 0;
}

/*
 * pack_headers(idx, layout, pack, data_end, oids, types, sizes[, want_size]) -> decided
 *
 * oids: a list of bytes, or the ids back to back in one bytes-like object (rawsz
 * each).  want_size false: the types only (a delta's size is left 0, its zlib data
 * not read).
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
    int want_size = 1;
    if (!PyArg_ParseTuple(args, "y*O!y*KOw*w*|p:pack_headers", &idx, &PyTuple_Type, &layout,
                          &pack, &data_end, &oids, &types, &sizes, &want_size))
        return NULL;
    PyObject *result = NULL;
    Py_buffer blob = {0};
    int is_list = PyList_Check(oids);
    Py_ssize_t n = 0, decided = 0;
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
    if (is_list)
        n = PyList_GET_SIZE(oids);
    else {
        /* ids back to back, rawsz bytes each (a ref table's ids) */
        if (PyObject_GetBuffer(oids, &blob, PyBUF_SIMPLE) < 0)
            goto done;
        if (blob.len % v.rawsz) {
            PyErr_SetString(PyExc_ValueError, "pack_headers: ids not a whole number of ids");
            goto done;
        }
        n = blob.len / v.rawsz;
    }
    if (types.len != n || sizes.len != n * 8) {
        PyErr_SetString(PyExc_ValueError, "pack_headers: types/sizes differ in length from oids");
        goto done;
    }
    for (Py_ssize_t i = 0; is_list && i < n; i++) {
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
            const unsigned char *id;
            if (is_list) {
                PyObject *oid = PyList_GET_ITEM(oids, i);
                if (PyBytes_GET_SIZE(oid) != v.rawsz)
                    continue;
                id = (const unsigned char *)PyBytes_AS_STRING(oid);
            } else
                id = (const unsigned char *)blob.buf + i * v.rawsz;
            Py_ssize_t pos = view_find(&v, id);
            if (pos < 0)
                continue;
            unsigned long long off, size = 0;
            unsigned int type = 0;
            if (view_offset(&v, pos, &off)
                || entry_type_size(&v, want_size ? &z : NULL, off, &type, &size)) {
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
    if (blob.obj)
        PyBuffer_Release(&blob);
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

static int
out_hex(gdc_buf *o, const unsigned char *id, Py_ssize_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (gdc_buf_reserve(o, (size_t)n * 2))
        return -1;
    char *w = o->p + o->n;
    for (Py_ssize_t k = 0; k < n; k++) {
        *w++ = hex[id[k] >> 4];
        *w++ = hex[id[k] & 15];
    }
    o->n += (size_t)n * 2;
    return 0;
}

static int
out_type(gdc_buf *o, unsigned long type)
{
    if (type < 1 || type > 4) {
        PyErr_SetString(PyExc_ValueError, "format_refs: object type not known");
        return -1;
    }
    return gdc_buf_put(o, type_names[type], strlen(type_names[type]));
}

static int
out_number(gdc_buf *o, unsigned long long v)
{
    char digits[24];
    int d = 0;
    do {
        digits[d++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (gdc_buf_reserve(o, (size_t)d))
        return -1;
    while (d)
        o->p[o->n++] = digits[--d];
    return 0;
}

/* A compiled format: atom codes and literal pieces. */
typedef struct {
    Py_ssize_t n;
    int *codes;
    const char **lits;
    Py_ssize_t *litlens;
} plan_t;

static void
plan_free(plan_t *pl)
{
    PyMem_Free(pl->codes);
    PyMem_Free(pl->lits);
    PyMem_Free(pl->litlens);
}

/* Read plan (a tuple of (code, literal bytes)); deref atoms only when allow_deref.
   The literals stay owned by plan.  0, or -1 with an error set. */
static int
plan_get(PyObject *plan, int allow_deref, plan_t *pl, const char *fname)
{
    Py_ssize_t np = PyTuple_GET_SIZE(plan);
    pl->n = np;
    pl->codes = PyMem_Malloc(sizeof(int) * (size_t)(np ? np : 1));
    pl->lits = PyMem_Malloc(sizeof(char *) * (size_t)(np ? np : 1));
    pl->litlens = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(np ? np : 1));
    if (!pl->codes || !pl->lits || !pl->litlens) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < np; k++) {
        PyObject *step = PyTuple_GET_ITEM(plan, k);
        PyObject *lit;
        if (!PyTuple_Check(step)) {
            PyErr_Format(PyExc_TypeError, "%s: a plan step is a (code, literal) tuple", fname);
            return -1;
        }
        if (!PyArg_ParseTuple(step, "iS", &pl->codes[k], &lit))
            return -1;
        if (pl->codes[k] < 0 || pl->codes[k] >= A_COUNT) {
            PyErr_Format(PyExc_ValueError, "%s: unknown atom code", fname);
            return -1;
        }
        if (pl->codes[k] >= A_DEREF_OBJECTNAME && !allow_deref) {
            PyErr_Format(PyExc_ValueError, "%s: a deref atom needs peeled values", fname);
            return -1;
        }
        pl->lits[k] = PyBytes_AS_STRING(lit);
        pl->litlens[k] = PyBytes_GET_SIZE(lit);
    }
    return 0;
}

/* One ref's line by pl (its newline not included); p_oid NULL: the deref atoms are
   empty.  0, or -1 with an error set. */
static int
emit_ref(gdc_buf *o, const plan_t *pl, const char *name_p, Py_ssize_t name_n,
         const unsigned char *oid, Py_ssize_t oid_n, unsigned long type, unsigned long long size,
         const unsigned char *p_oid, Py_ssize_t p_oid_n, unsigned long p_type,
         unsigned long long p_size)
{
    for (Py_ssize_t k = 0; k < pl->n; k++) {
        int r = 0;
        switch (pl->codes[k]) {
        case A_LITERAL:
            r = gdc_buf_put(o, pl->lits[k], (size_t)pl->litlens[k]);
            break;
        case A_REFNAME:
            r = gdc_buf_put(o, name_p, (size_t)name_n);
            break;
        case A_OBJECTNAME:
            r = out_hex(o, oid, oid_n);
            break;
        case A_OBJECTTYPE:
            r = out_type(o, type);
            break;
        case A_OBJECTSIZE:
            r = out_number(o, size);
            break;
        case A_DEREF_OBJECTNAME:
            if (p_oid)
                r = out_hex(o, p_oid, p_oid_n);
            break;
        case A_DEREF_OBJECTTYPE:
            if (p_oid)
                r = out_type(o, p_type);
            break;
        case A_DEREF_OBJECTSIZE:
            if (p_oid)
                r = out_number(o, p_size);
            break;
        }
        if (r)
            return -1;
    }
    return 0;
}

/*
 * format_refs(plan, names, oids, types, sizes, peeled, omit_empty) -> bytes
 *
 * plan: tuple of (code, literal bytes); names: list of str (UTF-8 with surrogate
 * escapes, as gitodb spells ref names) or bytes; oids: list of bytes, one per ref;
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
    gdc_buf o = {NULL, 0, 0};
    Py_ssize_t n = PyList_GET_SIZE(names);
    plan_t pl = {0, NULL, NULL, NULL};
    if (PyList_GET_SIZE(oids) != n || types.len != n || sizes.len != n * 8
        || (peeled != Py_None && (!PyList_Check(peeled) || PyList_GET_SIZE(peeled) != n))) {
        PyErr_SetString(PyExc_ValueError, "format_refs: per-ref lists differ in length");
        goto done;
    }
    if (plan_get(plan, peeled != Py_None, &pl, "format_refs"))
        goto done;
    const unsigned char *t = types.buf;
    const unsigned long long *sz = sizes.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyList_GET_ITEM(names, i), *oid = PyList_GET_ITEM(oids, i);
        PyObject *peel = peeled == Py_None ? Py_None : PyList_GET_ITEM(peeled, i);
        const char *name_p;
        Py_ssize_t name_n;
        PyObject *encoded = NULL;
        if (!PyBytes_Check(oid) || PyBytes_GET_SIZE(oid) > 32) {
            PyErr_SetString(PyExc_TypeError, "format_refs: ids must be bytes");
            goto done;
        }
        if (PyUnicode_Check(name) && PyUnicode_IS_ASCII(name)) {
            name_p = (const char *)PyUnicode_DATA(name);
            name_n = PyUnicode_GET_LENGTH(name);
        } else if (PyUnicode_Check(name)) {
            encoded = PyUnicode_AsEncodedString(name, "utf-8", "surrogateescape");
            if (!encoded)
                goto done;
            name_p = PyBytes_AS_STRING(encoded);
            name_n = PyBytes_GET_SIZE(encoded);
        } else if (PyBytes_Check(name)) {
            name_p = PyBytes_AS_STRING(name);
            name_n = PyBytes_GET_SIZE(name);
        } else {
            PyErr_SetString(PyExc_TypeError, "format_refs: names must be str or bytes");
            goto done;
        }
        PyObject *p_oid = NULL;
        unsigned long p_type = 0;
        unsigned long long p_size = 0;
        if (peel != Py_None) {
            if (!PyArg_ParseTuple(peel, "SkK:format_refs", &p_oid, &p_type, &p_size)) {
                Py_XDECREF(encoded);
                goto done;
            }
            if (PyBytes_GET_SIZE(p_oid) > 32) {
                Py_XDECREF(encoded);
                PyErr_SetString(PyExc_TypeError, "format_refs: peeled id too long");
                goto done;
            }
        }
        size_t line_start = o.n;
        int r = emit_ref(&o, &pl, name_p, name_n, (const unsigned char *)PyBytes_AS_STRING(oid),
                         PyBytes_GET_SIZE(oid), t[i], sz[i],
                         p_oid ? (const unsigned char *)PyBytes_AS_STRING(p_oid) : NULL,
                         p_oid ? PyBytes_GET_SIZE(p_oid) : 0, p_type, p_size);
        Py_XDECREF(encoded);
        if (r)
            goto done;
        if (omit_empty && o.n == line_start)
            continue;
        if (gdc_buf_put(&o, "\n", 1))
            goto done;
    }
    result = PyBytes_FromStringAndSize(o.p ? o.p : "", (Py_ssize_t)o.n);
done:
    PyMem_Free(o.p);
    plan_free(&pl);
    PyBuffer_Release(&types);
    PyBuffer_Release(&sizes);
    return result;
}

/* -- listing refs: packed-refs and reftable ref blocks -------------------------------- */

/* A new instance of the tuple subclass type (a NamedTuple) holding the n items (stolen;
   NULL items mean None).  NULL with an error set. */
static PyObject *
new_record(PyTypeObject *type, Py_ssize_t n, PyObject **items)
{
    PyObject *t = type->tp_alloc(type, n);
    if (!t) {
        for (Py_ssize_t k = 0; k < n; k++)
            Py_XDECREF(items[k]);
        return NULL;
    }
    for (Py_ssize_t k = 0; k < n; k++)
        PyTuple_SET_ITEM(t, k, items[k] ? items[k] : Py_NewRef(Py_None));
    return t;
}

/* A NamedTuple type of n fields: a tuple subclass with the tuple's own layout. */
static int
check_record_type(PyObject *type, Py_ssize_t n, const char *fname)
{
    if (!PyType_Check(type) || !PyType_IsSubtype((PyTypeObject *)type, &PyTuple_Type)
        || ((PyTypeObject *)type)->tp_basicsize != PyTuple_Type.tp_basicsize
        || ((PyTypeObject *)type)->tp_itemsize != PyTuple_Type.tp_itemsize) {
        PyErr_Format(PyExc_TypeError, "%s: the record type must be a NamedTuple", fname);
        return -1;
    }
    (void)n;
    return 0;
}

/* Digit values of lower-case hex, 16 for anything else (upper case too: the plain
   parse takes lower-case ids only). */
static unsigned char hex_values[256];

/* Decode hexsz lower-case hex digits at p into raw: 0, or 1 if one is not such a digit. */
static int
hex_raw(const unsigned char *p, Py_ssize_t hexsz, unsigned char *raw)
{
    unsigned char any = 0;
    for (Py_ssize_t k = 0; k < hexsz / 2; k++) {
        unsigned char hi = hex_values[p[2 * k]], lo = hex_values[p[2 * k + 1]];
        any |= hi | lo;
        raw[k] = (unsigned char)(hi << 4 | lo);
    }
    return (any & 16) != 0;
}

/* The characters the plain parse accepts in a name (gitodb.refs.packed._NAME), as a
   table: names are most of the file, and a test per character is most of the parse. */
static unsigned char name_chars[256];

static void
tables_init(void)
{
    if (name_chars['a'])
        return;
    for (int c = 0; c < 256; c++)
        hex_values[c] = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : 16;
    for (int c = 0; c < 256; c++)
        name_chars[c] = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                        || (c && strchr("!\"#$%&'()+,-./;<=>@]_`|}", c) != NULL);
}

/* One record of a plainly valid packed-refs file, as plain_scan gives it. */
typedef struct {
    const unsigned char *name; /* "refs/...", name_len bytes, in the file */
    Py_ssize_t name_len;
    unsigned char id[32], peeled[32];
    int has_peeled;
} plain_rec;

/*
 * The records of packed-refs data[0..len) by gitodb.refs.packed.parse_plain's contract
 * (its pure-Python code is the reference): an optional "# pack-refs with: " header,
 * then only "<hex id> refs/<name>\n" lines, each optionally followed by
 * "^<hex id>\n", with lower-case ids, ASCII names from the conservative set and none
 * of the suspect sequences.  Calls each(ctx, record) in file order; 0 when every line
 * was plain, 1 when one was not (nothing is raised: the reference parse decides and
 * reports it), -1 when each failed (its error set).
 */
static int
plain_scan(const unsigned char *p, Py_ssize_t len, Py_ssize_t hexsz,
           int (*each)(void *, const plain_rec *), void *ctx)
{
    const unsigned char *end = p + len;
    tables_init();
    if (p < end && *p == '#') {
        static const char header[] = "# pack-refs with: ";
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl || (size_t)(end - p) < sizeof(header) - 1
            || memcmp(p, header, sizeof(header) - 1))
            return 1;
        for (const unsigned char *q = p; q < nl; q++)
            if (*q >= 0x80)
                return 1;
        p = nl + 1;
    }
    /* One pass: past the header only ids (hex), names (ASCII from name_chars) and
       line ends remain, so the ASCII rule and the suspect sequences (packed._SUSPECT,
       all starting with '.' or '/' and ending inside a name or at its newline) are
       checked while each name is read. */
    plain_rec rec;
    while (p < end) {
        if (end - p < hexsz + 7 || p[hexsz] != ' ' || memcmp(p + hexsz + 1, "refs/", 5))
            return 1;
        const unsigned char *name = p + hexsz + 1, *q = name + 4; /* the "/" of "refs/" */
        for (; q < end && name_chars[*q]; q++) {
            if (*q != '.' && *q != '/')
                continue;
            unsigned char n1 = q + 1 < end ? q[1] : 0;
            if (n1 == '.' || n1 == '\n' || (*q == '/' && n1 == '/'))
                return 1;
            if (*q == '.' && end - q >= 6 && !memcmp(q, ".lock", 5)
                && (q[5] == '\n' || q[5] == '/'))
                return 1;
        }
        if (q == name + 5 || q >= end || *q != '\n')
            return 1;
        if (hex_raw(p, hexsz, rec.id))
            return 1;
        rec.name = name;
        rec.name_len = q - name;
        rec.has_peeled = 0;
        p = q + 1;
        if (p < end && *p == '^' && end - p >= hexsz + 2 && p[hexsz + 1] == '\n') {
            if (hex_raw(p + 1, hexsz, rec.peeled))
                return 1;
            rec.has_peeled = 1;
            p += hexsz + 2;
        }
        if (each(ctx, &rec))
            return -1;
    }
    return 0;
}

typedef struct {
    PyObject *refs, *ref_type;
    Py_ssize_t rawsz;
} plain_dict;

static int
plain_dict_add(void *ctx, const plain_rec *r)
{
    plain_dict *d = ctx;
    PyObject *key = PyUnicode_DecodeASCII((const char *)r->name, r->name_len, NULL);
    if (!key)
        return -1;
    PyObject *items[4] = {Py_NewRef(key),
                          PyBytes_FromStringAndSize((const char *)r->id, d->rawsz), NULL,
                          r->has_peeled
                              ? PyBytes_FromStringAndSize((const char *)r->peeled, d->rawsz)
                              : NULL};
    if (!items[1] || (r->has_peeled && !items[3])) {
        Py_DECREF(key);
        for (int k = 0; k < 4; k++)
            Py_XDECREF(items[k]);
        return -1;
    }
    PyObject *ref = new_record((PyTypeObject *)d->ref_type, 4, items);
    /* a later line for a name wins, as in the reference parse */
    int rc = !ref || PyDict_SetItem(d->refs, key, ref) < 0 ? -1 : 0;
    Py_DECREF(key);
    Py_XDECREF(ref);
    return rc;
}

/*
 * packed_refs_plain(data, hexsz, Ref) -> {name: Ref} or None
 *
 * gitodb.refs.packed.parse_plain in one pass (plain_scan's contract); None where the
 * reference parse must decide.  A later line for a name wins.
 */
static PyObject *
packed_refs_plain(PyObject *self, PyObject *args)
{
    Py_buffer data;
    Py_ssize_t hexsz;
    PyObject *ref_type;
    if (!PyArg_ParseTuple(args, "y*nO:packed_refs_plain", &data, &hexsz, &ref_type))
        return NULL;
    PyObject *refs = NULL;
    if (check_record_type(ref_type, 4, "packed_refs_plain"))
        goto done;
    if (hexsz != 40 && hexsz != 64) {
        PyErr_SetString(PyExc_ValueError, "packed_refs_plain: hexsz must be 40 or 64");
        goto done;
    }
    plain_dict d = {PyDict_New(), ref_type, hexsz / 2};
    if (!d.refs)
        goto done;
    int rc = plain_scan(data.buf, data.len, hexsz, plain_dict_add, &d);
    if (rc == 0)
        refs = d.refs;
    else {
        Py_DECREF(d.refs);
        if (rc == 1)
            refs = Py_NewRef(Py_None);
    }
done:
    PyBuffer_Release(&data);
    return refs;
}

/*
 * packed_refs_lines_plain(data, start, hexsz) -> bool
 *
 * Whether data[start:] is only "<hex id> refs/<part>(/<part>)*\n" records, each
 * optionally followed by "^<hex id>\n", with lower-case ids and parts of the plain
 * parse's name characters without '/' (gitodb.refs.packed.searchable's whole-file
 * regular expression, its reference): one pass, no object per ref, for the check a
 * point lookup makes before it bisects the file.
 */
static PyObject *
packed_refs_lines_plain(PyObject *self, PyObject *args)
{
    Py_buffer data;
    Py_ssize_t start, hexsz;
    if (!PyArg_ParseTuple(args, "y*nn:packed_refs_lines_plain", &data, &start, &hexsz))
        return NULL;
    tables_init();
    int ok = start >= 0 && start <= data.len && hexsz > 0;
    const unsigned char *p = (const unsigned char *)data.buf + (ok ? start : 0);
    const unsigned char *end = (const unsigned char *)data.buf + data.len;
    while (ok && p < end) {
        /* the id, a space and "refs/" */
        ok = end - p > hexsz + 6 && p[hexsz] == ' ' && !memcmp(p + hexsz + 1, "refs/", 5);
        for (Py_ssize_t k = 0; ok && k < hexsz; k++)
            ok = hex_values[p[k]] < 16;
        if (!ok)
            break;
        /* one or more parts, each one or more name characters, "/" between them */
        const unsigned char *q = p + hexsz + 6;
        for (;;) {
            const unsigned char *part = q;
            while (q < end && *q != '/' && name_chars[*q])
                q++;
            if (q == part || q >= end || (*q != '/' && *q != '\n')) {
                ok = 0;
                break;
            }
            if (*q++ == '\n')
                break;
        }
        p = q;
        if (ok && p < end && *p == '^') {
            ok = end - p >= hexsz + 2 && p[hexsz + 1] == '\n';
            for (Py_ssize_t k = 1; ok && k <= hexsz; k++)
                ok = hex_values[p[k]] < 16;
            p += hexsz + 2;
        }
    }
    PyBuffer_Release(&data);
    return PyBool_FromLong(ok);
}

/* -- ref tables: a listing of refs as a few byte strings, no object per ref ---------- */

/*
 * A ref table (gitodb.refs.table.RefTable) is five byte strings: names (every name
 * followed by "\n"), starts (native uint32 per ref and one more: where each name
 * starts in names, the last the length of names), ids (rawsz bytes per ref), peeled
 * (rawsz bytes per ref, zeros where none is known) and has_peeled (one byte per ref).
 * Names are in strictly increasing byte order.
 */
typedef struct {
    gdc_buf names, starts, ids, peeled, flags;
    Py_ssize_t n, rawsz;
} table_out;

static void
table_free(table_out *t)
{
    PyMem_Free(t->names.p);
    PyMem_Free(t->starts.p);
    PyMem_Free(t->ids.p);
    PyMem_Free(t->peeled.p);
    PyMem_Free(t->flags.p);
}

static int
table_add(table_out *t, const unsigned char *name, Py_ssize_t name_len, const unsigned char *id,
          const unsigned char *peeled)
{
    static const unsigned char zeros[32] = {0};
    unsigned int start = (unsigned int)t->names.n;
    unsigned char flag = peeled != NULL;
    if (t->names.n + (size_t)name_len + 1 > 0xffffffffU) {
        PyErr_SetString(PyExc_OverflowError, "ref table: names over 4 GiB");
        return -1;
    }
    if (gdc_buf_put(&t->starts, &start, sizeof start) || gdc_buf_put(&t->names, name, (size_t)name_len)
        || gdc_buf_put(&t->names, "\n", 1) || gdc_buf_put(&t->ids, id, (size_t)t->rawsz)
        || gdc_buf_put(&t->peeled, peeled ? peeled : zeros, (size_t)t->rawsz)
        || gdc_buf_put(&t->flags, &flag, 1))
        return -1;
    t->n++;
    return 0;
}

/* Room in t for count more refs with names_len more bytes of names: 0, or -1. */
static int
table_reserve(table_out *t, size_t names_len, size_t count)
{
    size_t r = (size_t)t->rawsz;
    return gdc_buf_reserve(&t->names, names_len) || gdc_buf_reserve(&t->starts, 4 * (count + 1))
           || gdc_buf_reserve(&t->ids, r * count) || gdc_buf_reserve(&t->peeled, r * count)
           || gdc_buf_reserve(&t->flags, count);
}

/* Append the refs i..j-1 of in (ids of rawsz bytes) to t: one copy per part. */
static int table_add_run(table_out *t, const void *in, Py_ssize_t i, Py_ssize_t j);

static PyObject *
bytes_of(const gdc_buf *b)
{
    return PyBytes_FromStringAndSize(b->p ? b->p : "", (Py_ssize_t)b->n);
}

/* (names, starts, ids, peeled, has_peeled) of t, the starts closed by names' length. */
static PyObject *
table_result(table_out *t)
{
    unsigned int last = (unsigned int)t->names.n;
    if (gdc_buf_put(&t->starts, &last, sizeof last))
        return NULL;
    PyObject *a = bytes_of(&t->names), *b = bytes_of(&t->starts), *c = bytes_of(&t->ids),
             *d = bytes_of(&t->peeled), *e = bytes_of(&t->flags);
    PyObject *r = a && b && c && d && e ? PyTuple_Pack(5, a, b, c, d, e) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(b);
    Py_XDECREF(c);
    Py_XDECREF(d);
    Py_XDECREF(e);
    return r;
}

typedef struct {
    table_out t;
    const unsigned char *last;
    Py_ssize_t last_len;
    int sorted;
} plain_table;

static int
name_cmp(const unsigned char *a, Py_ssize_t an, const unsigned char *b, Py_ssize_t bn)
{
    int c = memcmp(a, b, (size_t)(an < bn ? an : bn));
    return c ? c : (an > bn) - (an < bn);
}

static int
plain_table_add(void *ctx, const plain_rec *r)
{
    plain_table *pt = ctx;
    if (pt->last && name_cmp(pt->last, pt->last_len, r->name, r->name_len) >= 0)
        pt->sorted = 0;
    pt->last = r->name;
    pt->last_len = r->name_len;
    return pt->sorted ? table_add(&pt->t, r->name, r->name_len, r->id,
                                  r->has_peeled ? r->peeled : NULL)
                      : 0;
}

/*
 * packed_refs_table(data, hexsz) -> (names, starts, ids, peeled, has_peeled) | False | None
 *
 * The ref table of a plainly valid packed-refs file (plain_scan) whose names are in
 * strictly increasing order, as Git writes it: one pass, no object per ref.  False
 * when every line is plain but the names are out of order or repeated (the dict
 * parse orders them, the later line winning); None when a line is not plain.
 */
static PyObject *
packed_refs_table(PyObject *self, PyObject *args)
{
    Py_buffer data;
    Py_ssize_t hexsz;
    if (!PyArg_ParseTuple(args, "y*n:packed_refs_table", &data, &hexsz))
        return NULL;
    PyObject *result = NULL;
    plain_table pt = {{{NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}, 0,
                       hexsz / 2},
                      NULL, 0, 1};
    if (hexsz != 40 && hexsz != 64) {
        PyErr_SetString(PyExc_ValueError, "packed_refs_table: hexsz must be 40 or 64");
        goto done;
    }
    {
        /* room for every ref the file can hold (a line is at least hexsz + 7 bytes):
           pages never written are never touched, and no buffer grows in the loop */
        size_t most = (size_t)(data.len / (hexsz + 7)) + 1;
        if (table_reserve(&pt.t, (size_t)data.len, most))
            goto done;
    }
    int rc = plain_scan(data.buf, data.len, hexsz, plain_table_add, &pt);
    if (rc == 1)
        result = Py_NewRef(Py_None);
    else if (rc == 0)
        result = pt.sorted ? table_result(&pt.t) : Py_NewRef(Py_False);
done:
    table_free(&pt.t);
    PyBuffer_Release(&data);
    return result;
}

/* The parts of a ref table passed in from Python, checked for consistency. */
typedef struct {
    Py_buffer names, starts, ids, peeled, flags;
    Py_ssize_t n;
} table_in;

static void
table_in_release(table_in *t)
{
    PyBuffer_Release(&t->names);
    PyBuffer_Release(&t->starts);
    PyBuffer_Release(&t->ids);
    PyBuffer_Release(&t->peeled);
    PyBuffer_Release(&t->flags);
}

/* Parse the 5-tuple table with ids of rawsz bytes: 0, or -1 with an error set. */
static int
table_in_get(PyObject *tuple, Py_ssize_t rawsz, table_in *t, const char *fname)
{
    memset(t, 0, sizeof *t);
    if (!PyTuple_Check(tuple) || PyTuple_GET_SIZE(tuple) != 5) {
        PyErr_Format(PyExc_TypeError, "%s: a ref table is a 5-tuple", fname);
        return -1;
    }
    Py_buffer *parts[5] = {&t->names, &t->starts, &t->ids, &t->peeled, &t->flags};
    for (int k = 0; k < 5; k++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(tuple, k), parts[k], PyBUF_SIMPLE) < 0) {
            for (int j = 0; j < k; j++)
                PyBuffer_Release(parts[j]);
            memset(t, 0, sizeof *t);
            return -1;
        }
    }
    t->n = t->flags.len;
    int ok = rawsz > 0 && t->starts.len == 4 * (t->n + 1) && t->ids.len == t->n * rawsz
             && t->peeled.len == t->n * rawsz;
    if (ok) {
        /* every name inside names, in order, each ending in its "\n" */
        const unsigned int *st = t->starts.buf;
        const unsigned char *nm = t->names.buf;
        ok = st[t->n] == (unsigned long long)t->names.len && (t->n == 0 || st[0] == 0);
        for (Py_ssize_t i = 0; ok && i < t->n; i++)
            ok = st[i] < st[i + 1] && nm[st[i + 1] - 1] == '\n';
    }
    if (!ok) {
        table_in_release(t);
        memset(t, 0, sizeof *t);
        PyErr_Format(PyExc_ValueError, "%s: inconsistent ref table", fname);
        return -1;
    }
    return 0;
}

static int
table_add_run(table_out *t, const void *in_, Py_ssize_t i, Py_ssize_t j)
{
    const table_in *in = in_;
    const unsigned int *st = in->starts.buf;
    size_t r = (size_t)t->rawsz, n = (size_t)(j - i);
    if (n == 0)
        return 0;
    if (t->names.n + (st[j] - st[i]) > 0xffffffffU) {
        PyErr_SetString(PyExc_OverflowError, "ref table: names over 4 GiB");
        return -1;
    }
    if (gdc_buf_reserve(&t->starts, 4 * n))
        return -1;
    /* the run's starts, moved from where its names were to where they go */
    unsigned int *out = (unsigned int *)(t->starts.p + t->starts.n);
    unsigned int shift = (unsigned int)t->names.n - st[i];
    for (size_t k = 0; k < n; k++)
        out[k] = st[i + (Py_ssize_t)k] + shift;
    t->starts.n += 4 * n;
    if (gdc_buf_put(&t->names, (const char *)in->names.buf + st[i], st[j] - st[i])
        || gdc_buf_put(&t->ids, (const char *)in->ids.buf + (size_t)i * r, n * r)
        || gdc_buf_put(&t->peeled, (const char *)in->peeled.buf + (size_t)i * r, n * r)
        || gdc_buf_put(&t->flags, (const char *)in->flags.buf + i, n))
        return -1;
    t->n += (Py_ssize_t)n;
    return 0;
}

/*
 * ref_table_overlay(table, rawsz, names, ids) -> table
 *
 * table with the refs names[k] (bytes, strictly increasing) set to ids[k] (rawsz
 * bytes, no peeled value known) or, where ids[k] is None, left out: how loose refs
 * override packed ones.  One merge pass.
 */
static PyObject *
ref_table_overlay(PyObject *self, PyObject *args)
{
    PyObject *tuple, *names, *ids;
    Py_ssize_t rawsz;
    if (!PyArg_ParseTuple(args, "OnO!O!:ref_table_overlay", &tuple, &rawsz, &PyList_Type, &names,
                          &PyList_Type, &ids))
        return NULL;
    table_in in;
    if (table_in_get(tuple, rawsz, &in, "ref_table_overlay"))
        return NULL;
    PyObject *result = NULL;
    table_out t = {{NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}, 0, rawsz};
    Py_ssize_t m = PyList_GET_SIZE(names);
    if (PyList_GET_SIZE(ids) != m) {
        PyErr_SetString(PyExc_ValueError, "ref_table_overlay: names and ids differ in length");
        goto done;
    }
    for (Py_ssize_t k = 0; k < m; k++) {
        PyObject *nm = PyList_GET_ITEM(names, k), *id = PyList_GET_ITEM(ids, k);
        if (!PyBytes_Check(nm) || (id != Py_None && (!PyBytes_Check(id) || PyBytes_GET_SIZE(id) != rawsz))
            || (k && name_cmp((const unsigned char *)PyBytes_AS_STRING(PyList_GET_ITEM(names, k - 1)),
                              PyBytes_GET_SIZE(PyList_GET_ITEM(names, k - 1)),
                              (const unsigned char *)PyBytes_AS_STRING(nm), PyBytes_GET_SIZE(nm))
                         >= 0)) {
            PyErr_SetString(PyExc_ValueError,
                            "ref_table_overlay: names must be increasing bytes, ids bytes or None");
            goto done;
        }
    }
    const unsigned int *st = in.starts.buf;
    const unsigned char *nm = in.names.buf;
    Py_ssize_t i = 0, k = 0;
    if (table_reserve(&t, (size_t)in.names.len, (size_t)(in.n + m)))
        goto done;
    while (i < in.n || k < m) {
        int c;
        const unsigned char *on = NULL;
        Py_ssize_t onl = 0;
        if (k < m) {
            on = (const unsigned char *)PyBytes_AS_STRING(PyList_GET_ITEM(names, k));
            onl = PyBytes_GET_SIZE(PyList_GET_ITEM(names, k));
        }
        if (i >= in.n)
            c = 1;
        else if (k >= m)
            c = -1;
        else
            c = name_cmp(nm + st[i], st[i + 1] - st[i] - 1, on, onl);
        int r = 0;
        if (c < 0) {
            /* the packed refs up to the next loose name, copied as one run */
            Py_ssize_t j = i + 1;
            if (k >= m)
                j = in.n;
            else
                while (j < in.n && name_cmp(nm + st[j], st[j + 1] - st[j] - 1, on, onl) < 0)
                    j++;
            r = table_add_run(&t, &in, i, j);
            i = j;
        } else {
            PyObject *id = PyList_GET_ITEM(ids, k);
            if (id != Py_None)
                r = table_add(&t, on, onl, (const unsigned char *)PyBytes_AS_STRING(id), NULL);
            k++;
            if (c == 0)
                i++;
        }
        if (r)
            goto done;
    }
    result = table_result(&t);
done:
    table_free(&t);
    table_in_release(&in);
    return result;
}

/* Git's varint (each continuation byte adds one before shifting): 0, or -1. */
static int
rt_varint(const unsigned char *buf, Py_ssize_t *pos, Py_ssize_t end, unsigned long long *out)
{
    if (*pos >= end)
        return -1;
    unsigned char b = buf[(*pos)++];
    unsigned long long val = b & 0x7f;
    while (b & 0x80) {
        if (*pos >= end || val > (1ULL << 56))
            return -1;
        b = buf[(*pos)++];
        val = ((val + 1) << 7) | (b & 0x7f);
    }
    *out = val;
    return 0;
}

/*
 * ref_block_records(buf, pos, end, hash_size, min_update_index, RefRecord, target)
 *     -> [RefRecord] or None
 *
 * The ref records of one reftable block from buf[pos:end) (pos: the first record or a
 * restart point), leaving out every one whose name sorts before target (b"": none), as
 * gitodb.reftable.reader._ref_records yields them (its Python loop is the reference).
 * None for a damaged record: the reference loop reads the block again and raises the
 * error naming the table and offset.
 */
/* The growing name of the records of a block: each shares a prefix with the last. */
typedef struct {
    unsigned char *p;
    size_t len, cap;
} rt_name;

/* One ref record at buf[*pos..end) (moving *pos past it): its name in name, its update
   index delta, value type and value.  0; 1 for a damaged record; -1 with an error. */
static int
rt_record(const unsigned char *buf, Py_ssize_t *pos, Py_ssize_t end, Py_ssize_t hash_size,
          rt_name *name, unsigned long long *ui, unsigned int *vt, const unsigned char **val,
          Py_ssize_t *vlen)
{
    unsigned long long prefix, st, n;
    if (rt_varint(buf, pos, end, &prefix) || rt_varint(buf, pos, end, &st))
        return 1;
    unsigned long long suffix = st >> 3;
    if (prefix > name->len || suffix > (unsigned long long)(end - *pos))
        return 1;
    size_t klen = (size_t)(prefix + suffix);
    if (klen > name->cap || !name->p) {
        size_t cap = name->cap ? name->cap : 256;
        while (cap < klen)
            cap *= 2;
        unsigned char *nb = PyMem_Realloc(name->p, cap);
        if (!nb) {
            PyErr_NoMemory();
            return -1;
        }
        name->p = nb;
        name->cap = cap;
    }
    memcpy(name->p + prefix, buf + *pos, (size_t)suffix);
    name->len = klen;
    *pos += (Py_ssize_t)suffix;
    if (rt_varint(buf, pos, end, ui))
        return 1;
    *vt = (unsigned int)(st & 7);
    if (*vt == 1)
        *vlen = hash_size;
    else if (*vt == 2)
        *vlen = 2 * hash_size;
    else if (*vt == 3) {
        if (rt_varint(buf, pos, end, &n) || n > (unsigned long long)(end - *pos))
            return 1;
        *vlen = (Py_ssize_t)n;
    } else if (*vt == 0)
        *vlen = 0;
    else
        return 1;
    if (*vlen > end - *pos)
        return 1;
    *val = buf + *pos;
    *pos += *vlen;
    return 0;
}

static PyObject *
ref_block_records(PyObject *self, PyObject *args)
{
    Py_buffer view, target;
    Py_ssize_t pos, end, hash_size;
    unsigned long long min_ui;
    PyObject *rec_type;
    if (!PyArg_ParseTuple(args, "y*nnnKOy*:ref_block_records", &view, &pos, &end, &hash_size,
                          &min_ui, &rec_type, &target))
        return NULL;
    PyObject *out = NULL;
    rt_name last = {NULL, 0, 0};
    if (check_record_type(rec_type, 6, "ref_block_records"))
        goto done;
    if (pos < 0 || end > view.len || pos > end || hash_size <= 0 || hash_size > 32) {
        PyErr_SetString(PyExc_ValueError, "ref_block_records: range outside the buffer");
        goto done;
    }
    out = PyList_New(0);
    if (!out)
        goto done;
    const unsigned char *buf = view.buf;
    size_t tlen = (size_t)target.len;
    while (pos < end) {
        unsigned long long ui;
        unsigned int vt;
        const unsigned char *val;
        Py_ssize_t vlen;
        int rc = rt_record(buf, &pos, end, hash_size, &last, &ui, &vt, &val, &vlen);
        if (rc > 0)
            goto damaged;
        if (rc < 0)
            goto fail;
        size_t klen = last.len;
        if (tlen) {
            /* every record of the block before target, stored in order or not, as
               the reference loop leaves them out */
            size_t m = klen < tlen ? klen : tlen;
            int c = memcmp(last.p, target.buf, m);
            if (c < 0 || (c == 0 && klen < tlen))
                continue;
        }
        PyObject *items[6] = {NULL};
        items[0] = PyBytes_FromStringAndSize((const char *)last.p, (Py_ssize_t)klen);
        items[1] = PyLong_FromUnsignedLongLong(min_ui + ui);
        items[2] = PyLong_FromLong((long)vt);
        if (vt == 1 || vt == 2)
            items[3] = PyBytes_FromStringAndSize((const char *)val, hash_size);
        if (vt == 2)
            items[4] = PyBytes_FromStringAndSize((const char *)val + hash_size, hash_size);
        if (vt == 3)
            items[5] = PyBytes_FromStringAndSize((const char *)val, vlen);
        if (!items[0] || !items[1] || !items[2] || ((vt == 1 || vt == 2) && !items[3])
            || (vt == 2 && !items[4]) || (vt == 3 && !items[5])) {
            for (int k = 0; k < 6; k++)
                Py_XDECREF(items[k]);
            goto fail;
        }
        PyObject *rec = new_record((PyTypeObject *)rec_type, 6, items);
        if (!rec || PyList_Append(out, rec) < 0) {
            Py_XDECREF(rec);
            goto fail;
        }
        Py_DECREF(rec);
    }
    goto done;
damaged:
    Py_SETREF(out, Py_NewRef(Py_None));
    goto done;
fail:
    Py_CLEAR(out);
done:
    PyMem_Free(last.p);
    PyBuffer_Release(&view);
    PyBuffer_Release(&target);
    return out;
}

/*
 * ref_blocks_table(buf, spans, hash_size) -> (table, symrefs, tombstones) | None
 *
 * The ref records under "refs/" of one reftable's ref blocks, spans a list of
 * (first record, records' end) positions in buf in block order, as a ref table (see
 * table_out: value types 1 and 2, the peeled id of 2 kept) and the names (bytes) of
 * its symbolic refs and of its deletions (value types 3 and 0), each list in order:
 * what TableReader.iter_refs(b"refs/") yields, without an object per ref.  None when
 * a record is damaged or the names are not in strictly increasing order: the
 * reference reads the table and reports it.
 */
static PyObject *
ref_blocks_table(PyObject *self, PyObject *args)
{
    Py_buffer view;
    PyObject *spans;
    Py_ssize_t hash_size;
    if (!PyArg_ParseTuple(args, "y*O!n:ref_blocks_table", &view, &PyList_Type, &spans,
                          &hash_size))
        return NULL;
    PyObject *result = NULL, *symrefs = NULL, *tombs = NULL, *parts = NULL;
    rt_name name = {NULL, 0, 0};
    unsigned char *prev = NULL;
    size_t prev_len = 0, prev_cap = 0;
    int have_prev = 0;
    table_out t = {{NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}, 0,
                   hash_size};
    if (hash_size <= 0 || hash_size > 32) {
        PyErr_SetString(PyExc_ValueError, "ref_blocks_table: bad hash size");
        goto done;
    }
    symrefs = PyList_New(0);
    tombs = PyList_New(0);
    if (!symrefs || !tombs)
        goto done;
    const unsigned char *buf = view.buf;
    for (Py_ssize_t b = 0; b < PyList_GET_SIZE(spans); b++) {
        Py_ssize_t pos, end;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(spans, b), "nn:ref_blocks_table", &pos, &end))
            goto done;
        if (pos < 0 || end > view.len || pos > end) {
            PyErr_SetString(PyExc_ValueError, "ref_blocks_table: span outside the buffer");
            goto done;
        }
        name.len = 0; /* each block's first record spells its name whole */
        while (pos < end) {
            unsigned long long ui;
            unsigned int vt;
            const unsigned char *val;
            Py_ssize_t vlen;
            int rc = rt_record(buf, &pos, end, hash_size, &name, &ui, &vt, &val, &vlen);
            if (rc > 0)
                goto damaged;
            if (rc < 0)
                goto done;
            /* strictly increasing over the whole table, as the merge below needs */
            if (have_prev
                && name_cmp(prev, (Py_ssize_t)prev_len, name.p, (Py_ssize_t)name.len) >= 0)
                goto damaged;
            if (name.len > prev_cap) {
                size_t cap = prev_cap ? prev_cap : 256;
                while (cap < name.len)
                    cap *= 2;
                unsigned char *nb = PyMem_Realloc(prev, cap);
                if (!nb) {
                    PyErr_NoMemory();
                    goto done;
                }
                prev = nb;
                prev_cap = cap;
            }
            memcpy(prev, name.p, name.len);
            prev_len = name.len;
            have_prev = 1;
            if (name.len < 5 || memcmp(name.p, "refs/", 5))
                continue; /* HEAD and other root refs sort before refs/ */
            if (vt == 1 || vt == 2) {
                if (table_add(&t, name.p, (Py_ssize_t)name.len, val, vt == 2 ? val + hash_size : NULL))
                    goto done;
                continue;
            }
            PyObject *nm = PyBytes_FromStringAndSize((const char *)name.p, (Py_ssize_t)name.len);
            if (!nm || PyList_Append(vt == 3 ? symrefs : tombs, nm) < 0) {
                Py_XDECREF(nm);
                goto done;
            }
            Py_DECREF(nm);
        }
    }
    parts = table_result(&t);
    if (parts)
        result = PyTuple_Pack(3, parts, symrefs, tombs);
    goto done;
damaged:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(parts);
    Py_XDECREF(symrefs);
    Py_XDECREF(tombs);
    PyMem_Free(name.p);
    PyMem_Free(prev);
    table_free(&t);
    PyBuffer_Release(&view);
    return result;
}

/*
 * format_ref_table(plan, table, rawsz, lo, hi, reverse, types, sizes, omit_empty) -> bytes
 *
 * format_refs for the refs lo..hi-1 of a ref table (no deref atoms), in table order
 * or, with reverse, from hi-1 down: types and sizes hold one entry per ref lo..hi-1,
 * in table order.  No Python object per ref.
 */
static PyObject *
format_ref_table(PyObject *self, PyObject *args)
{
    PyObject *plan, *tuple;
    Py_ssize_t rawsz, lo, hi;
    int reverse, omit_empty;
    Py_buffer types, sizes;
    if (!PyArg_ParseTuple(args, "O!Onnnpy*y*p:format_ref_table", &PyTuple_Type, &plan, &tuple,
                          &rawsz, &lo, &hi, &reverse, &types, &sizes, &omit_empty))
        return NULL;
    PyObject *result = NULL;
    gdc_buf o = {NULL, 0, 0};
    plan_t pl = {0, NULL, NULL, NULL};
    table_in in;
    int have_in = 0;
    if (rawsz <= 0 || rawsz > 32) {
        PyErr_SetString(PyExc_ValueError, "format_ref_table: bad id length");
        goto done;
    }
    if (table_in_get(tuple, rawsz, &in, "format_ref_table"))
        goto done;
    have_in = 1;
    if (lo < 0 || hi > in.n || lo > hi || types.len != hi - lo || sizes.len != 8 * (hi - lo)) {
        PyErr_SetString(PyExc_ValueError, "format_ref_table: range or tables out of bounds");
        goto done;
    }
    if (plan_get(plan, 0, &pl, "format_ref_table"))
        goto done;
    const unsigned int *st = in.starts.buf;
    const char *nm = in.names.buf;
    const unsigned char *ids = in.ids.buf, *t = types.buf;
    const unsigned long long *sz = sizes.buf;
    for (Py_ssize_t j = 0; j < hi - lo; j++) {
        Py_ssize_t i = reverse ? hi - 1 - j : lo + j;
        size_t line_start = o.n;
        if (emit_ref(&o, &pl, nm + st[i], st[i + 1] - st[i] - 1, ids + i * rawsz, rawsz,
                     t[i - lo], sz[i - lo], NULL, 0, 0, 0))
            goto done;
        if (omit_empty && o.n == line_start)
            continue;
        if (gdc_buf_put(&o, "\n", 1))
            goto done;
    }
    result = PyBytes_FromStringAndSize(o.p ? o.p : "", (Py_ssize_t)o.n);
done:
    PyMem_Free(o.p);
    plan_free(&pl);
    if (have_in)
        table_in_release(&in);
    PyBuffer_Release(&types);
    PyBuffer_Release(&sizes);
    return result;
}

PyMethodDef gdc_refformat_methods[] = {
    {"packed_refs_plain", packed_refs_plain, METH_VARARGS,
     "packed_refs_plain(data, hexsz, Ref) -> {name: Ref}, or None where the reference "
     "parse must decide"},
    {"packed_refs_lines_plain", packed_refs_lines_plain, METH_VARARGS,
     "packed_refs_lines_plain(data, start, hexsz) -> whether data[start:] holds only plain "
     "packed-refs records"},
    {"ref_block_records", ref_block_records, METH_VARARGS,
     "ref_block_records(buf, pos, end, hash_size, min_update_index, RefRecord, target) -> "
     "the block's ref records from pos, or None for a damaged one"},
    {"pack_headers", pack_headers, METH_VARARGS,
     "pack_headers(idx, layout, pack, data_end, oids, types, sizes[, want_size]) -> ids decided: the "
     "type and size of each id this pack holds (255: Python must read it)"},
    {"packed_refs_table", packed_refs_table, METH_VARARGS,
     "packed_refs_table(data, hexsz) -> (names, starts, ids, peeled, has_peeled), False "
     "(plain but not sorted) or None (not plain)"},
    {"ref_table_overlay", ref_table_overlay, METH_VARARGS,
     "ref_table_overlay(table, rawsz, names, ids) -> table with names set to ids (None: "
     "left out)"},
    {"format_ref_table", format_ref_table, METH_VARARGS,
     "format_ref_table(plan, table, rawsz, lo, hi, reverse, types, sizes, omit_empty) -> "
     "the output of a compiled format for refs lo..hi-1 of a ref table"},
    {"ref_blocks_table", ref_blocks_table, METH_VARARGS,
     "ref_blocks_table(buf, spans, hash_size) -> (table, symrefs, tombstones) of a "
     "reftable's refs under refs/, or None for a damaged block"},
    {"format_refs", format_refs, METH_VARARGS,
     "format_refs(plan, names, oids, types, sizes, peeled, omit_empty) -> the output of a "
     "compiled for-each-ref format for every ref"},
    {NULL, NULL, 0, NULL},
};
