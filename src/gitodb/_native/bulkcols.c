/* Column buffers of the bulk tables (gitodb.bulk): the commits table without a
   Python object per row.

   commit_columns(raws, message) parses a batch of commit contents (Git's header
   block, the first author and committer lines split like split_ident_line, the
   subject as %s) into Arrow-ready buffers: int32 offsets and bytes for each
   string column, int64 values and validity bitmaps for the times.  It accepts only
   what it reads exactly like gitodb.objects (a continued author or committer line,
   a missing one, a time over int64 are left to the Python path: None).

   ReachWalk(text, rawsz, tips, nbits) takes the walk's listing in topological order
   ("<id> <parent>...\n", children first) and hands out, per batch of rows, the ids,
   the parents and the ref bits that reach each commit (the bits of a commit are
   final when it is reached: all its children come before it), each commit's set
   freed once it is handed down, so only the frontier is held.  Given the bits'
   names, it writes reachable_from's strings itself (no take of millions of names). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "pack.h"

/* -- growable buffers (gdc_buf, pack.h): as Arrow buffers ------------------------ */
static PyObject *
buf_bytes(gdc_buf *b)
{
    return PyBytes_FromStringAndSize(b->p ? b->p : "", (Py_ssize_t)b->n);
}

static void
buf_free(gdc_buf *b)
{
    PyMem_Free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

/* Arrow validity bitmap: bit i set when row i is not null. */
static int
bit_put(gdc_buf *b, Py_ssize_t row, int valid)
{
    size_t byte = (size_t)row / 8;
    if (byte >= b->n) {
        if (gdc_buf_reserve(b, byte + 1 - b->n))
            return -1;
        memset(b->p + b->n, 0, byte + 1 - b->n);
        b->n = byte + 1;
    }
    if (valid)
        b->p[byte] |= (char)(1 << (row % 8));
    return 0;
}

/* A string column: int32 offsets (one more than the rows), data, validity, and
   whether a value is not valid UTF-8 (then Python builds the column). */
typedef struct {
    gdc_buf off, data, valid;
    Py_ssize_t nulls;
    int bad;
} StrCol;

static int
utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c < 0xC2)
            return 0;
        if (c < 0xE0) {
            if (n - i < 2 || (s[i + 1] & 0xC0) != 0x80)
                return 0;
            i += 2;
        } else if (c < 0xF0) {
            if (n - i < 3 || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80)
                return 0;
            if ((c == 0xE0 && s[i + 1] < 0xA0) || (c == 0xED && s[i + 1] >= 0xA0))
                return 0;  /* overlong, or a surrogate (Python's strict UTF-8) */
            i += 3;
        } else if (c < 0xF5) {
            if (n - i < 4 || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80
                || (s[i + 3] & 0xC0) != 0x80)
                return 0;
            if ((c == 0xF0 && s[i + 1] < 0x90) || (c == 0xF4 && s[i + 1] >= 0x90))
                return 0;
            i += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

static int
col_start(StrCol *c)
{
    int32_t zero = 0;
    return gdc_buf_put(&c->off, &zero, 4);
}

/* Append a value (NULL: a null) as row `row`. */
static int
col_put(StrCol *c, Py_ssize_t row, const unsigned char *s, size_t n)
{
    if (s) {
        if (c->data.n + n > INT32_MAX) {
            PyErr_SetString(PyExc_OverflowError, "string column over 2 GiB");
            return -1;
        }
        if (gdc_buf_put(&c->data, s, n))
            return -1;
        if (!c->bad && !utf8_valid(s, n))
            c->bad = 1;
    } else {
        c->nulls++;
    }
    int32_t end = (int32_t)c->data.n;
    if (gdc_buf_put(&c->off, &end, 4) || bit_put(&c->valid, row, s != NULL))
        return -1;
    return 0;
}

/* (offsets, data, validity or None, bad) */
static PyObject *
col_tuple(StrCol *c)
{
    PyObject *valid = c->nulls ? buf_bytes(&c->valid) : Py_NewRef(Py_None);
    if (!valid)
        return NULL;
    return Py_BuildValue("(NNNO)", buf_bytes(&c->off), buf_bytes(&c->data), valid,
                         c->bad ? Py_True : Py_False);
}

static void
col_free(StrCol *c)
{
    buf_free(&c->off);
    buf_free(&c->data);
    buf_free(&c->valid);
}

/* A nullable int64 column. */
typedef struct {
    gdc_buf vals, valid;
    Py_ssize_t nulls;
} IntCol;

static int
int_put(IntCol *c, Py_ssize_t row, int64_t v, int valid)
{
    if (!valid) {
        v = 0;
        c->nulls++;
    }
    if (gdc_buf_put(&c->vals, &v, 8) || bit_put(&c->valid, row, valid))
        return -1;
    return 0;
}

/* -- commit parsing ------------------------------------------------------------- */
typedef struct {
    const unsigned char *name, *email, *tz;
    size_t name_len, email_len, tz_len;
    int64_t time;
    int has_time;
} Ident;

/* signature._split_ident: 0, or -1 when the time does not fit in int64 (Python). */
static int
split_ident(const unsigned char *v, size_t n, Ident *id)
{
    memset(id, 0, sizeof *id);
    static const unsigned char empty[1] = {0};
    id->name = id->email = empty;
    const unsigned char *lt = memchr(v, '<', n);
    const unsigned char *gt = lt ? memchr(lt + 1, '>', n - (size_t)(lt + 1 - v)) : NULL;
    if (!gt)
        return 0;
    size_t nl = (size_t)(lt - v);
    while (nl && gdc_is_space(v[nl - 1]))
        nl--;
    id->name = v;
    id->name_len = nl;
    id->email = lt + 1;
    id->email_len = (size_t)(gt - lt - 1);
    size_t last = n;
    while (last > 0 && v[last - 1] != '>')
        last--;
    size_t pos = last;  /* after the last '>' */
    while (pos < n && gdc_is_space(v[pos]))
        pos++;
    size_t de = pos;
    while (de < n && v[de] >= '0' && v[de] <= '9')
        de++;
    if (de == pos)
        return 0;
    size_t zone = de;
    while (zone < n && gdc_is_space(v[zone]))
        zone++;
    if (zone >= n || (v[zone] != '+' && v[zone] != '-'))
        return 0;
    size_t ze = zone + 1;
    while (ze < n && v[ze] >= '0' && v[ze] <= '9')
        ze++;
    if (ze == zone + 1)
        return 0;
    uint64_t t = 0;
    for (size_t i = pos; i < de; i++) {
        uint64_t digit = (uint64_t)(v[i] - '0');
        if (t > ((uint64_t)INT64_MAX - digit) / 10)
            return -1;
        t = t * 10 + digit;
    }
    id->time = (int64_t)t;
    id->has_time = 1;
    id->tz = v + zone;
    id->tz_len = ze - zone;
    return 0;
}

enum { C_AN, C_AE, C_ATZ, C_CN, C_CE, C_CTZ, C_SUBJ, C_MSG, C_NSTR };

typedef struct {
    StrCol s[C_NSTR];
    IntCol at, ct;
    gdc_buf tree;
} Columns;

static int
is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* One commit's columns; 1: done, 0: not accepted, -1: error. */
static int
commit_row(Columns *c, Py_ssize_t row, const unsigned char *d, size_t len, int rawsz,
           int message)
{
    size_t hexsz = 2 * (size_t)rawsz;
    if (len < 6 + hexsz || memcmp(d, "tree ", 5) || d[5 + hexsz] != '\n')
        return 0;
    for (size_t i = 0; i < hexsz; i++)
        if (!is_hex(d[5 + i]))
            return 0;
    const unsigned char *av = NULL, *cv = NULL, *msg = NULL;
    size_t alen = 0, clen = 0, mlen = 0;
    int prev = 0;  /* the previous header: 0 none or no value, 1 other, 2 the author or
                      committer line read (a continuation of it: not accepted) */
    size_t pos = 0;
    while (pos < len) {
        const unsigned char *nlp = memchr(d + pos, '\n', len - pos);
        size_t end = nlp ? (size_t)(nlp - d) : len;
        if (end == pos && nlp) {
            msg = d + end + 1;
            mlen = len - end - 1;
            break;
        }
        if (d[pos] == ' ' && prev) {
            if (prev == 2)
                return 0;
        } else {
            const unsigned char *sp = memchr(d + pos, ' ', end - pos);
            size_t klen = sp ? (size_t)(sp - d) - pos : end - pos;
            prev = sp ? 1 : 0;
            if (klen == 6 && !memcmp(d + pos, "author", 6) && !av) {
                if (!sp)
                    return 0;
                av = sp + 1;
                alen = end - (size_t)(av - d);
                prev = 2;
            } else if (klen == 9 && !memcmp(d + pos, "committer", 9) && !cv) {
                if (!sp)
                    return 0;
                cv = sp + 1;
                clen = end - (size_t)(cv - d);
                prev = 2;
            }
        }
        if (!nlp)
            break;
        pos = end + 1;
    }
    if (!av || !cv)
        return 0;
    Ident a, k;
    if (split_ident(av, alen, &a) || split_ident(cv, clen, &k))
        return 0;
    for (size_t i = 0; i < hexsz; i++) {
        unsigned char h = d[5 + i];
        if (h >= 'A' && h <= 'F')
            h = (unsigned char)(h - 'A' + 'a');
        if (gdc_buf_put(&c->tree, &h, 1))
            return -1;
    }
    if (col_put(&c->s[C_AN], row, a.name, a.name_len)
        || col_put(&c->s[C_AE], row, a.email, a.email_len)
        || int_put(&c->at, row, a.time, a.has_time)
        || col_put(&c->s[C_ATZ], row, a.has_time ? a.tz : NULL, a.tz_len)
        || col_put(&c->s[C_CN], row, k.name, k.name_len)
        || col_put(&c->s[C_CE], row, k.email, k.email_len)
        || int_put(&c->ct, row, k.time, k.has_time)
        || col_put(&c->s[C_CTZ], row, k.has_time ? k.tz : NULL, k.tz_len))
        return -1;
    static const unsigned char none[1] = {0};
    if (!msg) {
        msg = none;
        mlen = 0;
    }
    StrCol *s = &c->s[C_SUBJ];
    size_t before = s->data.n;
    if (gdc_subject(&s->data, msg, mlen))
        return -1;
    /* col_put's bookkeeping for the bytes subject_into added */
    if (s->data.n > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "string column over 2 GiB");
        return -1;
    }
    if (!s->bad && !utf8_valid((const unsigned char *)s->data.p + before, s->data.n - before))
        s->bad = 1;
    int32_t end = (int32_t)s->data.n;
    if (gdc_buf_put(&s->off, &end, 4) || bit_put(&s->valid, row, 1))
        return -1;
    if (message && col_put(&c->s[C_MSG], row, msg, mlen))
        return -1;
    return 1;
}

static void
columns_free(Columns *c)
{
    for (int i = 0; i < C_NSTR; i++)
        col_free(&c->s[i]);
    buf_free(&c->at.vals);
    buf_free(&c->at.valid);
    buf_free(&c->ct.vals);
    buf_free(&c->ct.valid);
    buf_free(&c->tree);
}

static PyObject *
int_tuple(IntCol *c)
{
    PyObject *valid = c->nulls ? buf_bytes(&c->valid) : Py_NewRef(Py_None);
    if (!valid)
        return NULL;
    return Py_BuildValue("(NN)", buf_bytes(&c->vals), valid);
}

/* commit_columns(raws, rawsz, message) -> (tree hex, author name, author email,
   author time, author tz, committer name, email, time, tz, subject, message or None),
   or None when a commit is not read here. */
static PyObject *
commit_columns(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *raws;
    int rawsz, message;
    if (!PyArg_ParseTuple(args, "O!ip:commit_columns", &PyList_Type, &raws, &rawsz, &message))
        return NULL;
    if (rawsz != 20 && rawsz != 32) {
        PyErr_SetString(PyExc_ValueError, "rawsz must be 20 or 32");
        return NULL;
    }
    Columns c;
    memset(&c, 0, sizeof c);
    PyObject *out = NULL;
    for (int i = 0; i < C_NSTR; i++)
        if (col_start(&c.s[i]))
            goto done;
    Py_ssize_t n = PyList_GET_SIZE(raws);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *raw = PyList_GET_ITEM(raws, i);
        if (!PyBytes_Check(raw)) {
            PyErr_SetString(PyExc_TypeError, "commit contents must be bytes");
            goto done;
        }
        int rc = commit_row(&c, i, (const unsigned char *)PyBytes_AS_STRING(raw),
                            (size_t)PyBytes_GET_SIZE(raw), rawsz, message);
        if (rc < 0)
            goto done;
        if (rc == 0) {
            out = Py_NewRef(Py_None);
            goto done;
        }
    }
    out = Py_BuildValue("(NNNNNNNNNNN)", buf_bytes(&c.tree), col_tuple(&c.s[C_AN]),
                        col_tuple(&c.s[C_AE]), int_tuple(&c.at), col_tuple(&c.s[C_ATZ]),
                        col_tuple(&c.s[C_CN]), col_tuple(&c.s[C_CE]), int_tuple(&c.ct),
                        col_tuple(&c.s[C_CTZ]), col_tuple(&c.s[C_SUBJ]),
                        message ? col_tuple(&c.s[C_MSG]) : Py_NewRef(Py_None));
done:
    columns_free(&c);
    return out;
}

/* -- reachable_from over the topological listing ---------------------------------- */
typedef struct {
    PyObject_HEAD
    PyObject *text;       /* the listing (kept alive: rows point into it) */
    int rawsz;
    Py_ssize_t n, pos;    /* rows, next row to hand out */
    size_t *line;         /* start of each row's line in text */
    unsigned char *ids;   /* binary ids, n * rawsz */
    Py_ssize_t *slots;    /* open addressing: row + 1, 0 empty */
    size_t mask;
    size_t words;         /* uint64 words per ref set */
    uint64_t **bits;      /* each row's set, NULL when empty or handed down */
    PyObject *names;      /* None, or a tuple of the bits' names (str) */
    const char **name_p;  /* their UTF-8 (owned by the str objects) */
    Py_ssize_t *name_n;
} ReachWalk;

static int
unhex_id(const unsigned char *h, int rawsz, unsigned char *out)
{
    for (int i = 0; i < 2 * rawsz; i++) {
        int ch = h[i], v;
        if (ch >= '0' && ch <= '9')
            v = ch - '0';
        else if (ch >= 'a' && ch <= 'f')
            v = ch - 'a' + 10;
        else
            return -1;
        if (i & 1)
            out[i / 2] |= (unsigned char)v;
        else
            out[i / 2] = (unsigned char)(v << 4);
    }
    return 0;
}

static size_t
rw_hash(const unsigned char *id)
{
    uint64_t h;
    memcpy(&h, id, 8);
    return (size_t)h;
}

static Py_ssize_t
rw_find(ReachWalk *w, const unsigned char *id)
{
    size_t i = rw_hash(id) & w->mask;
    for (;;) {
        Py_ssize_t r = w->slots[i];
        if (!r)
            return -1;
        if (!memcmp(w->ids + (size_t)(r - 1) * (size_t)w->rawsz, id, (size_t)w->rawsz))
            return r - 1;
        i = (i + 1) & w->mask;
    }
}

static uint64_t *
rw_set(ReachWalk *w, Py_ssize_t row)
{
    if (!w->bits[row]) {
        w->bits[row] = PyMem_Calloc(w->words, sizeof(uint64_t));
        if (!w->bits[row])
            PyErr_NoMemory();
    }
    return w->bits[row];
}

static void
rw_release(ReachWalk *w)
{
    if (w->bits) {
        for (Py_ssize_t i = 0; i < w->n; i++)
            PyMem_Free(w->bits[i]);
    }
    PyMem_Free(w->bits);
    PyMem_Free(w->line);
    PyMem_Free(w->ids);
    PyMem_Free(w->slots);
    PyMem_Free(w->name_p);
    PyMem_Free(w->name_n);
    w->name_p = NULL;
    w->name_n = NULL;
    Py_CLEAR(w->names);
    w->bits = NULL;
    w->line = NULL;
    w->ids = NULL;
    w->slots = NULL;
    Py_CLEAR(w->text);
}

static void
rw_dealloc(ReachWalk *w)
{
    rw_release(w);
    Py_TYPE(w)->tp_free((PyObject *)w);
}

static PyObject *
rw_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *text, *tips, *names = Py_None;
    int rawsz;
    Py_ssize_t nbits;
    static char *kwlist[] = {"text", "rawsz", "tips", "nbits", "names", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "SiOn|O:ReachWalk", kwlist, &text, &rawsz, &tips,
                                     &nbits, &names))
        return NULL;
    if ((rawsz != 20 && rawsz != 32) || nbits < 0) {
        PyErr_SetString(PyExc_ValueError, "ReachWalk: rawsz 20 or 32, nbits >= 0");
        return NULL;
    }
    ReachWalk *w = (ReachWalk *)type->tp_alloc(type, 0);
    if (!w)
        return NULL;
    w->text = Py_NewRef(text);
    w->rawsz = rawsz;
    if (names != Py_None) {
        /* The names of the bits: next() then gives reachable_from's strings. */
        w->names = PySequence_Tuple(names);
        if (!w->names)
            goto fail;
        if (PyTuple_GET_SIZE(w->names) != nbits) {
            PyErr_SetString(PyExc_ValueError, "ReachWalk: one name per bit");
            goto fail;
        }
        w->name_p = PyMem_Calloc((size_t)nbits + 1, sizeof(char *));
        w->name_n = PyMem_Calloc((size_t)nbits + 1, sizeof(Py_ssize_t));
        if (!w->name_p || !w->name_n) {
            PyErr_NoMemory();
            goto fail;
        }
        for (Py_ssize_t i = 0; i < nbits; i++) {
            PyObject *name = PyTuple_GET_ITEM(w->names, i);
            if (!PyUnicode_Check(name)) {
                PyErr_SetString(PyExc_TypeError, "ReachWalk: names must be str");
                goto fail;
            }
            w->name_p[i] = PyUnicode_AsUTF8AndSize(name, &w->name_n[i]);
            if (!w->name_p[i])
                goto fail;
        }
    }
    w->words = ((size_t)nbits + 63) / 64;
    const unsigned char *t = (const unsigned char *)PyBytes_AS_STRING(text);
    size_t len = (size_t)PyBytes_GET_SIZE(text), hexsz = 2 * (size_t)rawsz;
    Py_ssize_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += t[i] == '\n';
    w->line = PyMem_Malloc(((size_t)n + 1) * sizeof(size_t));
    w->ids = PyMem_Malloc(((size_t)n + 1) * (size_t)rawsz);
    size_t cap = 16;
    while (cap < 2 * (size_t)n + 2)
        cap *= 2;
    w->slots = PyMem_Calloc(cap, sizeof(Py_ssize_t));
    w->bits = PyMem_Calloc((size_t)n + 1, sizeof(uint64_t *));
    w->mask = cap - 1;
    if (!w->line || !w->ids || !w->slots || !w->bits) {
        PyErr_NoMemory();
        goto fail;
    }
    size_t pos = 0;
    for (Py_ssize_t r = 0; r < n; r++) {
        const unsigned char *nl = memchr(t + pos, '\n', len - pos);
        size_t end = (size_t)(nl - t);
        unsigned char *id = w->ids + (size_t)r * (size_t)rawsz;
        if (end - pos < hexsz || unhex_id(t + pos, rawsz, id)
            || (end - pos > hexsz && t[pos + hexsz] != ' ')) {
            PyErr_SetString(PyExc_ValueError, "ReachWalk: not a listing of ids");
            goto fail;
        }
        w->line[r] = pos;
        size_t i = rw_hash(id) & w->mask;
        while (w->slots[i])
            i = (i + 1) & w->mask;
        w->slots[i] = r + 1;
        pos = end + 1;
    }
    w->n = n;
    PyObject *it = PyObject_GetIter(tips);
    if (!it)
        goto fail;
    PyObject *item;
    while ((item = PyIter_Next(it))) {
        const char *oid;
        Py_ssize_t olen, bit;
        if (!PyArg_ParseTuple(item, "y#n", &oid, &olen, &bit)) {
            Py_DECREF(item);
            Py_DECREF(it);
            goto fail;
        }
        Py_DECREF(item);
        if (olen != rawsz || bit < 0 || bit >= nbits) {
            Py_DECREF(it);
            PyErr_SetString(PyExc_ValueError, "ReachWalk: a tip is (id, bit < nbits)");
            goto fail;
        }
        Py_ssize_t row = rw_find(w, (const unsigned char *)oid);
        if (row < 0)
            continue;  /* not listed (the walk ended early) */
        uint64_t *s = rw_set(w, row);
        if (!s) {
            Py_DECREF(it);
            goto fail;
        }
        s[bit / 64] |= 1ULL << (bit % 64);
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        goto fail;
    return (PyObject *)w;
fail:
    Py_DECREF(w);
    return NULL;
}

/* Hand row r's set (if any) down to its parents listed after it: the one step of
   the propagation, shared by next() and skip(). */
static int
rw_hand_down(ReachWalk *w, Py_ssize_t r, const unsigned char *l, const unsigned char *e)
{
    size_t hexsz = 2 * (size_t)w->rawsz;
    uint64_t *s = w->bits[r];
    for (const unsigned char *p = l + hexsz; p + 1 + hexsz <= e; p += 1 + hexsz) {
        unsigned char pid[64];
        if (unhex_id(p + 1, w->rawsz, pid)) {
            PyErr_SetString(PyExc_ValueError, "ReachWalk: not a listing of ids");
            return -1;
        }
        Py_ssize_t pr = s ? rw_find(w, pid) : -1;
        if (pr > r) {  /* later in the listing: hand the set down */
            uint64_t *ps = rw_set(w, pr);
            if (!ps)
                return -1;
            for (size_t k = 0; k < w->words; k++)
                ps[k] |= s[k];
        }
    }
    return 0;
}

/* skip(rows) -> rows skipped: pass over the next rows as next() would (their sets
   handed down to their parents), writing nothing; a part of the commits table that
   starts further down the listing skips the rows before it. */
static PyObject *
rw_skip(ReachWalk *w, PyObject *args)
{
    Py_ssize_t count, done = 0;
    if (!PyArg_ParseTuple(args, "n:skip", &count))
        return NULL;
    if (!w->text)
        return PyLong_FromSsize_t(0);
    const unsigned char *t = (const unsigned char *)PyBytes_AS_STRING(w->text);
    size_t len = (size_t)PyBytes_GET_SIZE(w->text);
    while (w->pos < w->n && done < count) {
        Py_ssize_t r = w->pos++;
        const unsigned char *l = t + w->line[r];
        const unsigned char *e = memchr(l, '\n', len - w->line[r]);
        if (rw_hand_down(w, r, l, e))
            return NULL;
        PyMem_Free(w->bits[r]);
        w->bits[r] = NULL;
        done++;
    }
    return PyLong_FromSsize_t(done);
}

/* counts() -> the number of bits of every row left, as native int32s (the rest of
   the walk passed over as skip() does): what reachable_from will list for each, so
   that a table split in slices can balance them by the names they write. */
static PyObject *
rw_counts(ReachWalk *w, PyObject *Py_UNUSED(ignored))
{
    gdc_buf out = {0};
    if (!w->text)
        return PyBytes_FromStringAndSize("", 0);
    const unsigned char *t = (const unsigned char *)PyBytes_AS_STRING(w->text);
    size_t len = (size_t)PyBytes_GET_SIZE(w->text);
    while (w->pos < w->n) {
        Py_ssize_t r = w->pos++;
        const unsigned char *l = t + w->line[r];
        const unsigned char *e = memchr(l, '\n', len - w->line[r]);
        if (rw_hand_down(w, r, l, e)) {
            buf_free(&out);
            return NULL;
        }
        int32_t c = 0;
        if (w->bits[r]) {
            for (size_t k = 0; k < w->words; k++)
                c += (int32_t)__builtin_popcountll(w->bits[r][k]);
            PyMem_Free(w->bits[r]);
            w->bits[r] = NULL;
        }
        if (gdc_buf_put(&out, &c, 4)) {
            buf_free(&out);
            return NULL;
        }
    }
    PyObject *got = buf_bytes(&out);
    buf_free(&out);
    return got;
}

/* len() -> the rows of the listing. */
static Py_ssize_t
rw_len(ReachWalk *w)
{
    return w->n;
}

/* next(max_rows, max_items) -> (rows, id hex, parent ends, parents hex, reach ends,
   reach indices, b"") for the next rows (at least one, at most max_rows, stopping once the
   reach indices reach max_items), and b"", or None when every row was handed out.
   With names, the reach indices and b"" are the names themselves instead, as an
   Arrow string column's buffers: (..., reach ends, name offsets, name bytes). */
static PyObject *
rw_next(ReachWalk *w, PyObject *args)
{
    Py_ssize_t max_rows, max_items;
    if (!PyArg_ParseTuple(args, "nn:next", &max_rows, &max_items))
        return NULL;
    if (w->pos >= w->n || !w->text)
        Py_RETURN_NONE;
    const unsigned char *t = (const unsigned char *)PyBytes_AS_STRING(w->text);
    size_t hexsz = 2 * (size_t)w->rawsz;
    gdc_buf ids = {0}, pends = {0}, phex = {0}, rends = {0}, ridx = {0}, ndata = {0};
    PyObject *out = NULL;
    int32_t zero = 0;
    Py_ssize_t rows = 0;
    /* With names, ridx holds the names' string offsets (Arrow int32) and ndata
       their bytes, instead of the bit indices. */
    if (gdc_buf_put(&pends, &zero, 4) || gdc_buf_put(&rends, &zero, 4)
        || (w->names && gdc_buf_put(&ridx, &zero, 4)))
        goto done;
    int32_t np = 0, nr = 0;
    while (w->pos < w->n && rows < (max_rows > 0 ? max_rows : 1)) {
        Py_ssize_t r = w->pos++;
        const unsigned char *l = t + w->line[r];
        const unsigned char *e = memchr(l, '\n', (size_t)PyBytes_GET_SIZE(w->text) - w->line[r]);
        if (gdc_buf_put(&ids, l, hexsz))
            goto done;
        uint64_t *s = w->bits[r];
        for (const unsigned char *p = l + hexsz; p + 1 + hexsz <= e; p += 1 + hexsz) {
            if (gdc_buf_put(&phex, p + 1, hexsz))
                goto done;
            np++;
        }
        if (rw_hand_down(w, r, l, e))
            goto done;
        if (s) {
            for (size_t k = 0; k < w->words; k++) {
                uint64_t v = s[k];
                while (v) {
                    int32_t bit = (int32_t)(k * 64 + (size_t)__builtin_ctzll(v));
                    if (w->names) {
                        if (ndata.n + (size_t)w->name_n[bit] > INT32_MAX) {
                            PyErr_SetString(PyExc_OverflowError, "reachable_from over 2 GiB");
                            goto done;
                        }
                        if (gdc_buf_put(&ndata, w->name_p[bit], (size_t)w->name_n[bit]))
                            goto done;
                        int32_t end = (int32_t)ndata.n;
                        if (gdc_buf_put(&ridx, &end, 4))
                            goto done;
                    } else if (gdc_buf_put(&ridx, &bit, 4)) {
                        goto done;
                    }
                    nr++;
                    v &= v - 1;
                }
            }
            PyMem_Free(s);
            w->bits[r] = NULL;
        }
        if (gdc_buf_put(&pends, &np, 4) || gdc_buf_put(&rends, &nr, 4))
            goto done;
        rows++;
        if (nr >= max_items)
            break;
    }
    out = Py_BuildValue("(nNNNNNN)", rows, buf_bytes(&ids), buf_bytes(&pends), buf_bytes(&phex),
                        buf_bytes(&rends), buf_bytes(&ridx), buf_bytes(&ndata));
done:
    buf_free(&ndata);
    buf_free(&ids);
    buf_free(&pends);
    buf_free(&phex);
    buf_free(&rends);
    buf_free(&ridx);
    return out;
}

static PyMethodDef rw_methods[] = {
    {"skip", (PyCFunction)rw_skip, METH_VARARGS,
     "skip(rows) -> rows passed over: their sets handed down, nothing written"},
    {"counts", (PyCFunction)rw_counts, METH_NOARGS,
     "counts() -> the bits of every row left (native int32s); the walk is then at its end"},
    {"next", (PyCFunction)rw_next, METH_VARARGS,
     "next(max_rows, max_items) -> (rows, ids hex, parent ends, parents hex, reach ends, "
     "reach indices, b'') or, with names, (..., reach ends, name offsets, name bytes); "
     "None at the end"},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods rw_as_sequence = {.sq_length = (lenfunc)rw_len};

PyTypeObject gdc_ReachWalkType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gitodb._native.ReachWalk",
    .tp_basicsize = sizeof(ReachWalk),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "ReachWalk(text, rawsz, tips, nbits, names=None): the commits table's ids, "
              "parents and reachable_from bits (or, with names, their names) over a "
              "topological listing, batch by batch.",
    .tp_new = rw_new,
    .tp_dealloc = (destructor)rw_dealloc,
    .tp_methods = rw_methods,
    .tp_as_sequence = &rw_as_sequence,
};

/* -- the files table over ls_tree's listing ---------------------------------------- */
/* ls_tree_columns(text, rawsz) -> (rows, path, mode, type, id hex, blob flags): the
   columns of OdbReader.ls_tree's recursive -z listing ("<mode> <type> <id>\t<path>\0"
   per entry); path as commit_columns' string columns, mode and type as (offsets,
   data), one byte per row set for a blob. */
static PyObject *
ls_tree_columns(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer text;
    int rawsz;
    if (!PyArg_ParseTuple(args, "y*i:ls_tree_columns", &text, &rawsz))
        return NULL;
    StrCol path, mode, kind;
    memset(&path, 0, sizeof path);
    memset(&mode, 0, sizeof mode);
    memset(&kind, 0, sizeof kind);
    gdc_buf ids = {0}, blobs = {0};
    PyObject *out = NULL;
    size_t hexsz = 2 * (size_t)rawsz;
    const unsigned char *t = text.buf;
    size_t len = (size_t)text.len, pos = 0;
    Py_ssize_t row = 0;
    if ((rawsz != 20 && rawsz != 32) || col_start(&path) || col_start(&mode) || col_start(&kind)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "rawsz must be 20 or 32");
        goto done;
    }
    while (pos < len) {
        const unsigned char *sp1 = memchr(t + pos, ' ', len - pos);
        const unsigned char *sp2 = sp1 ? memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - t)) : NULL;
        const unsigned char *end = sp2 ? memchr(sp2 + 1, '\0', len - (size_t)(sp2 + 1 - t)) : NULL;
        if (!end || (size_t)(end - sp2 - 1) < hexsz + 1 || sp2[1 + hexsz] != '\t') {
            PyErr_SetString(PyExc_ValueError, "ls_tree_columns: not an ls-tree -z listing");
            goto done;
        }
        const unsigned char *p = sp2 + 2 + hexsz;
        char blob = (char)(sp2 - sp1 - 1 == 4 && !memcmp(sp1 + 1, "blob", 4));
        if (col_put(&mode, row, t + pos, (size_t)(sp1 - t) - pos)
            || col_put(&kind, row, sp1 + 1, (size_t)(sp2 - sp1 - 1))
            || col_put(&path, row, p, (size_t)(end - p)) || gdc_buf_put(&ids, sp2 + 1, hexsz)
            || gdc_buf_put(&blobs, &blob, 1))
            goto done;
        row++;
        pos = (size_t)(end - t) + 1;
    }
    out = Py_BuildValue("(nNNNNN)", row, col_tuple(&path),
                        Py_BuildValue("(NN)", buf_bytes(&mode.off), buf_bytes(&mode.data)),
                        Py_BuildValue("(NN)", buf_bytes(&kind.off), buf_bytes(&kind.data)),
                        buf_bytes(&ids), buf_bytes(&blobs));
done:
    col_free(&path);
    col_free(&mode);
    col_free(&kind);
    buf_free(&ids);
    buf_free(&blobs);
    PyBuffer_Release(&text);
    return out;
}

/* -- the objects table in pack order --------------------------------------------- */
static void
hex_into(char *dst, const unsigned char *oid, int rawsz)
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < rawsz; i++) {
        dst[2 * i] = digits[oid[i] >> 4];
        dst[2 * i + 1] = digits[oid[i] & 15];
    }
}

/* pack_columns(buf, data_end, so, rev, ids, id_start, id_stride, rawsz, types_by_p,
   sizes_by_p, start, row0, first, last, depth_by_k, out_ids, out_kinds, out_sizes,
   out_bases, out_base_valid, out_depths) -> the next row not done.

   Rows first..last of the pack-order entries (so: sorted offsets, rev: their index
   positions) into the buffers of the batch starting at row0 (row k at k - row0: ids and bases as fixed-width
   hex, kinds uint8, sizes int64, depths int32; base validity a bitmap), the types and
   sizes from headers_by_position.  It stops at the first row it leaves to Python: a
   REF_DELTA, an OFS_DELTA whose base lies before `start` (the range's first entry), or
   any damage (Python raises the typed error).  depth_by_k (uint16, by k - start) is
   read for bases and written for the rows done, as the Python loop does. */
static PyObject *
pack_columns(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer buf, so, rev, ids, types, sizes, depth, o_ids, o_kinds, o_sizes, o_bases, o_valid,
        o_depths;
    unsigned long long data_end;
    Py_ssize_t id_start, id_stride, start, row0, first, last;
    int rawsz;
    if (!PyArg_ParseTuple(args, "y*Ky*y*y*nniy*y*nnnnw*w*w*w*w*w*w*:pack_columns", &buf,
                          &data_end, &so, &rev, &ids, &id_start, &id_stride, &rawsz, &types,
                          &sizes, &start, &row0, &first, &last, &depth, &o_ids, &o_kinds, &o_sizes,
                          &o_bases, &o_valid, &o_depths))
        return NULL;
    PyObject *res = NULL;
    Py_ssize_t n = so.len / 8, np = types.len, hexsz = 2 * rawsz, count = last - row0;
    if ((rawsz != 20 && rawsz != 32) || rev.len != n * 4 || sizes.len != np * 8 || start < 0
        || row0 < start || first < row0 || last < first || last > n || depth.len < (last - start) * 2
        || o_ids.len < count * hexsz || o_kinds.len < count || o_sizes.len < count * 8
        || o_bases.len < count * hexsz || o_valid.len < (count + 7) / 8
        || o_depths.len < count * 4 || id_start < 0 || id_stride < rawsz) {
        PyErr_SetString(PyExc_ValueError, "pack_columns: buffers of the wrong size");
        goto done;
    }
    const unsigned char *pb = buf.buf;
    unsigned long long plen = (unsigned long long)buf.len;
    if (data_end > plen)
        data_end = plen;
    const unsigned long long *offs = so.buf;
    const unsigned int *pos = rev.buf;
    const unsigned char *idt = ids.buf;
    const unsigned char *tp = types.buf;
    const unsigned long long *szp = sizes.buf;
    unsigned short *dk = depth.buf;
    unsigned char *ov = o_valid.buf;
    int32_t *od = o_depths.buf;
    Py_ssize_t k = first;
    for (; k < last; k++) {
        Py_ssize_t r = k - row0;
        unsigned long long off = offs[k];
        unsigned int p = pos[k];
        if ((Py_ssize_t)p >= np || id_start + (Py_ssize_t)p * id_stride + rawsz > ids.len)
            break;
        unsigned int t;
        unsigned long long size, hlen;
        if (off >= data_end || gdc_entry_header(pb, data_end, off, &t, &size, &hlen))
            break;
        int32_t dep = 0;
        ov[r / 8] &= (unsigned char)~(1 << (r % 8));
        if (t == 6) {
            unsigned long long dist, nlen;
            if (gdc_ofs_distance(pb, data_end, off + hlen, &dist, &nlen) || dist > off)
                break;
            unsigned long long base = off - dist;
            Py_ssize_t lo = 0, hi = k;
            while (lo < hi) {
                Py_ssize_t mid = lo + (hi - lo) / 2;
                if (offs[mid] < base)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo >= k || offs[lo] != base || lo < start)
                break;
            unsigned int bp = pos[lo];
            if (id_start + (Py_ssize_t)bp * id_stride + rawsz > ids.len)
                break;
            hex_into((char *)o_bases.buf + r * hexsz, idt + id_start + (Py_ssize_t)bp * id_stride,
                     rawsz);
            ov[r / 8] |= (unsigned char)(1 << (r % 8));
            dep = (int32_t)dk[lo - start] + 1;
        } else if (t < 1 || t > 4) {
            break;  /* REF_DELTA (its base by id: Python's chains) or damage */
        } else {
            memset((char *)o_bases.buf + r * hexsz, '0', (size_t)hexsz);
        }
        hex_into((char *)o_ids.buf + r * hexsz, idt + id_start + (Py_ssize_t)p * id_stride, rawsz);
        ((unsigned char *)o_kinds.buf)[r] = tp[p];
        int64_t sz = (int64_t)szp[p];
        memcpy((char *)o_sizes.buf + r * 8, &sz, 8);
        od[r] = dep;
        if (dep < 65535)
            dk[k - start] = (unsigned short)dep;
    }
    res = PyLong_FromSsize_t(k);
done:
    PyBuffer_Release(&buf);
    PyBuffer_Release(&so);
    PyBuffer_Release(&rev);
    PyBuffer_Release(&ids);
    PyBuffer_Release(&types);
    PyBuffer_Release(&sizes);
    PyBuffer_Release(&depth);
    PyBuffer_Release(&o_ids);
    PyBuffer_Release(&o_kinds);
    PyBuffer_Release(&o_sizes);
    PyBuffer_Release(&o_bases);
    PyBuffer_Release(&o_valid);
    PyBuffer_Release(&o_depths);
    return res;
}

PyMethodDef gdc_bulk_methods[] = {
    {"commit_columns", commit_columns, METH_VARARGS,
     "commit_columns(raws, rawsz, message) -> the commits table's columns as buffers, or None"},
    {"ls_tree_columns", ls_tree_columns, METH_VARARGS,
     "ls_tree_columns(text, rawsz) -> the files table's columns of an ls-tree -z listing"},
    {"pack_columns", pack_columns, METH_VARARGS,
     "pack_columns(...) -> the objects table's rows of a pack range into buffers; the next row"},
    {NULL, NULL, 0, NULL},
};
