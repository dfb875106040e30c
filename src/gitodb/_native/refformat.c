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
        for (Py_ssize_t k = 0; k < np; k++) {
            int r = 0;
            switch (codes[k]) {
            case A_LITERAL:
                r = gdc_buf_put(&o, lits[k], (size_t)litlens[k]);
                break;
            case A_REFNAME:
                r = gdc_buf_put(&o, name_p, (size_t)name_n);
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
            if (r) {
                Py_XDECREF(encoded);
                goto done;
            }
        }
        Py_XDECREF(encoded);
        if (omit_empty && o.n == line_start)
            continue;
        if (gdc_buf_put(&o, "\n", 1))
            goto done;
    }
    result = PyBytes_FromStringAndSize(o.p ? o.p : "", (Py_ssize_t)o.n);
done:
    PyMem_Free(o.p);
    PyMem_Free(codes);
    PyMem_Free(lits);
    PyMem_Free(litlens);
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

/* The id spelled by hexsz lower-case hex digits at p, or NULL (no error) if not hex. */
static PyObject *
hex_id(const unsigned char *p, Py_ssize_t hexsz, int *bad)
{
    unsigned char raw[32];
    unsigned char any = 0;
    for (Py_ssize_t k = 0; k < hexsz / 2; k++) {
        unsigned char hi = hex_values[p[2 * k]], lo = hex_values[p[2 * k + 1]];
        any |= hi | lo;
        raw[k] = (unsigned char)(hi << 4 | lo);
    }
    if (any & 16) {
        *bad = 1;
        return NULL;
    }
    return PyBytes_FromStringAndSize((const char *)raw, hexsz / 2);
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

/*
 * packed_refs_plain(data, hexsz, Ref) -> {name: Ref} or None
 *
 * gitodb.refs.packed.parse_plain in one pass (its pure-Python code is the reference,
 * and the contract is the same): an optional "# pack-refs with: " header, then only
 * "<hex id> refs/<name>\n" lines, each optionally followed by "^<hex id>\n", with
 * lower-case ids, ASCII names from the conservative set and none of the suspect
 * sequences; None for anything else (the reference parse decides and reports).  A
 * later line for a name wins.
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
    tables_init();
    if (hexsz != 40 && hexsz != 64) {
        PyErr_SetString(PyExc_ValueError, "packed_refs_plain: hexsz must be 40 or 64");
        goto done;
    }
    const unsigned char *p = data.buf, *end = p + data.len;
    for (const unsigned char *q = p; q < end; q++)
        if (*q >= 0x80)
            goto plain_no;
    if (p < end && *p == '#') {
        static const char header[] = "# pack-refs with: ";
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl || (size_t)(end - p) < sizeof(header) - 1
            || memcmp(p, header, sizeof(header) - 1))
            goto plain_no;
        p = nl + 1;
    }
    /* the suspect sequences (packed._SUSPECT), all starting with '.' or '/' */
    for (const unsigned char *q = p; q < end; q++) {
        if (*q != '.' && *q != '/')
            continue;
        unsigned char n1 = q + 1 < end ? q[1] : 0;
        if (n1 == '.' || n1 == '\n' || (*q == '/' && n1 == '/'))
            goto plain_no;
        if (*q == '.' && end - q >= 6 && !memcmp(q, ".lock", 5) && (q[5] == '\n' || q[5] == '/'))
            goto plain_no;
    }
    refs = PyDict_New();
    if (!refs)
        goto done;
    while (p < end) {
        int bad = 0;
        if (end - p < hexsz + 7 || p[hexsz] != ' ' || memcmp(p + hexsz + 1, "refs/", 5))
            goto plain_none;
        const unsigned char *name = p + hexsz + 1, *q = name + 5;
        while (q < end && name_chars[*q])
            q++;
        if (q == name + 5 || q >= end || *q != '\n')
            goto plain_none;
        PyObject *oid = hex_id(p, hexsz, &bad);
        if (!oid) {
            if (bad)
                goto plain_none;
            goto fail;
        }
        PyObject *peeled = NULL;
        p = q + 1;
        if (p < end && *p == '^' && end - p >= hexsz + 2 && p[hexsz + 1] == '\n') {
            peeled = hex_id(p + 1, hexsz, &bad);
            if (!peeled) {
                Py_DECREF(oid);
                if (bad)
                    goto plain_none;
                goto fail;
            }
            p += hexsz + 2;
        }
        PyObject *key = PyUnicode_DecodeASCII((const char *)name, q - name, NULL);
        if (!key) {
            Py_DECREF(oid);
            Py_XDECREF(peeled);
            goto fail;
        }
        PyObject *items[4] = {Py_NewRef(key), oid, NULL, peeled};
        PyObject *ref = new_record((PyTypeObject *)ref_type, 4, items);
        if (!ref || PyDict_SetItem(refs, key, ref) < 0) {
            Py_DECREF(key);
            Py_XDECREF(ref);
            goto fail;
        }
        Py_DECREF(key);
        Py_DECREF(ref);
    }
    goto done;
plain_none:
    Py_CLEAR(refs);
plain_no:
    refs = Py_NewRef(Py_None);
    goto done;
fail:
    Py_CLEAR(refs);
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
    unsigned char *last = NULL;
    size_t last_len = 0, last_cap = 0;
    if (check_record_type(rec_type, 6, "ref_block_records"))
        goto done;
    if (pos < 0 || end > view.len || pos > end || hash_size <= 0 || hash_size > 32) {
        PyErr_SetString(PyExc_ValueError, "ref_block_records: range outside the buffer");
        goto done;
    }
    out = PyList_New(0);
    last_cap = 256;
    last = PyMem_Malloc(last_cap);
    if (!out || !last) {
        if (out && !last)
            PyErr_NoMemory();
        Py_CLEAR(out);
        goto done;
    }
    const unsigned char *buf = view.buf;
    size_t tlen = (size_t)target.len;
    while (pos < end) {
        unsigned long long prefix, st, ui, n;
        if (rt_varint(buf, &pos, end, &prefix) || rt_varint(buf, &pos, end, &st))
            goto damaged;
        unsigned long long suffix = st >> 3;
        if (prefix > last_len || suffix > (unsigned long long)(end - pos))
            goto damaged;
        size_t klen = (size_t)(prefix + suffix);
        if (klen > last_cap) {
            size_t cap = last_cap;
            while (cap < klen)
                cap *= 2;
            unsigned char *nb = PyMem_Realloc(last, cap);
            if (!nb) {
                PyErr_NoMemory();
                goto fail;
            }
            last = nb;
            last_cap = cap;
        }
        memcpy(last + prefix, buf + pos, (size_t)suffix);
        last_len = klen;
        pos += (Py_ssize_t)suffix;
        if (rt_varint(buf, &pos, end, &ui))
            goto damaged;
        unsigned int vt = (unsigned int)(st & 7);
        Py_ssize_t vlen;
        if (vt == 1)
            vlen = hash_size;
        else if (vt == 2)
            vlen = 2 * hash_size;
        else if (vt == 3) {
            if (rt_varint(buf, &pos, end, &n) || n > (unsigned long long)(end - pos))
                goto damaged;
            vlen = (Py_ssize_t)n;
        } else if (vt == 0)
            vlen = 0;
        else
            goto damaged;
        if (vlen > end - pos)
            goto damaged;
        const unsigned char *val = buf + pos;
        pos += vlen;
        if (tlen) {
            /* every record of the block before target, stored in order or not, as
               the reference loop leaves them out */
            size_t m = klen < tlen ? klen : tlen;
            int c = memcmp(last, target.buf, m);
            if (c < 0 || (c == 0 && klen < tlen))
                continue;
        }
        PyObject *items[6] = {NULL};
        items[0] = PyBytes_FromStringAndSize((const char *)last, (Py_ssize_t)klen);
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
    PyMem_Free(last);
    PyBuffer_Release(&view);
    PyBuffer_Release(&target);
    return out;
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
     "pack_headers(idx, layout, pack, data_end, oids, types, sizes) -> ids decided: the "
     "type and size of each id this pack holds (255: Python must read it)"},
    {"format_refs", format_refs, METH_VARARGS,
     "format_refs(plan, names, oids, types, sizes, peeled, omit_empty) -> the output of a "
     "compiled for-each-ref format for every ref"},
    {NULL, NULL, 0, NULL},
};
