/*
 * The delta-base cache in C (gitodb._native.DeltaCache and PendingBases).
 *
 * gitodb.pack.cache's Python classes are the reference and the fallback; when the
 * native core is built, gitodb.pack.cache.DeltaBaseCache *is* this type, so every
 * path (read_at, iter_objects, the indexer, the history reader) uses one cache and
 * one account of its bytes.  walk.c calls the functions below directly, without a
 * Python call per object.
 *
 * Semantics, as the Python reference: values are (type_number, data) tuples keyed
 * by an unsigned 64-bit int; the account is len(data) on the way in and on the way
 * out; an object larger than the limit is never kept; putting a key already there
 * changes nothing; least recently used entries are evicted first.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#include "pack.h"

/* -- an open-addressing map from uint64 to a non-NULL pointer ----------------- */

static size_t
slot_of(const gdc_map *m, unsigned long long key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 32) & m->mask;
}

static int
map_grow(gdc_map *m)
{
    size_t cap = m->mask ? (m->mask + 1) * 2 : 64;
    unsigned long long *keys = PyMem_RawCalloc(cap, sizeof(*keys));
    void **vals = PyMem_RawCalloc(cap, sizeof(*vals));
    if (!keys || !vals) {
        PyMem_RawFree(keys);
        PyMem_RawFree(vals);
        PyErr_NoMemory();
        return -1;
    }
    gdc_map old = *m;
    m->keys = keys;
    m->vals = vals;
    m->mask = cap - 1;
    m->used = 0;
    for (size_t i = 0; old.mask && i <= old.mask; i++) {
        if (old.vals[i]) {
            size_t s = slot_of(m, old.keys[i]);
            while (m->vals[s])
                s = (s + 1) & m->mask;
            m->keys[s] = old.keys[i];
            m->vals[s] = old.vals[i];
            m->used++;
        }
    }
    PyMem_RawFree(old.keys);
    PyMem_RawFree(old.vals);
    return 0;
}

void *
gdc_map_get(const gdc_map *m, unsigned long long key)
{
    if (!m->mask)
        return NULL;
    for (size_t s = slot_of(m, key); m->vals[s]; s = (s + 1) & m->mask)
        if (m->keys[s] == key)
            return m->vals[s];
    return NULL;
}

/* Set key to val (non-NULL), replacing any value; 0, or -1 with MemoryError.
   Replacing a present key never allocates. */
int
gdc_map_set(gdc_map *m, unsigned long long key, void *val)
{
    if (m->mask) {
        size_t s = slot_of(m, key);
        for (; m->vals[s]; s = (s + 1) & m->mask) {
            if (m->keys[s] == key) {
                m->vals[s] = val;
                return 0;
            }
        }
    }
    if ((m->used + 1) * 2 > (m->mask ? m->mask + 1 : 0) && map_grow(m))
        return -1;
    size_t s = slot_of(m, key);
    while (m->vals[s])
        s = (s + 1) & m->mask;
    m->keys[s] = key;
    m->vals[s] = val;
    m->used++;
    return 0;
}

/* Remove key; its value, or NULL if absent.  Backward-shift deletion: no tombstones. */
void *
gdc_map_del(gdc_map *m, unsigned long long key)
{
    if (!m->mask)
        return NULL;
    size_t i = slot_of(m, key);
    while (m->vals[i] && m->keys[i] != key)
        i = (i + 1) & m->mask;
    void *val = m->vals[i];
    if (!val)
        return NULL;
    size_t j = i;
    for (;;) {
        j = (j + 1) & m->mask;
        if (!m->vals[j])
            break;
        size_t k = slot_of(m, m->keys[j]);
        /* The entry at j may move to i unless its home k lies cyclically in (i, j]. */
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        m->keys[i] = m->keys[j];
        m->vals[i] = m->vals[j];
        i = j;
    }
    m->vals[i] = NULL;
    m->used--;
    return val;
}

void
gdc_map_free(gdc_map *m)
{
    PyMem_RawFree(m->keys);
    PyMem_RawFree(m->vals);
    memset(m, 0, sizeof(*m));
}

/* -- DeltaCache ----------------------------------------------------------------- */

typedef struct Entry {
    unsigned long long key;
    PyObject *item; /* (type_number, data) */
    Py_ssize_t n;   /* len(data) */
    struct Entry *prev, *next;
} Entry;

/* head.next is the least recently used entry, head.prev the most recent. */
struct gdc_cache {
    PyObject_HEAD
    Py_ssize_t limit, size;
    unsigned long long next_key;
    gdc_map map;
    Entry head;
};

static void
unlink_entry(Entry *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
}

static void
link_newest(gdc_cache *c, Entry *e)
{
    e->prev = c->head.prev;
    e->next = &c->head;
    c->head.prev->next = e;
    c->head.prev = e;
}

PyObject *
gdc_cache_get(gdc_cache *c, unsigned long long key)
{
    Entry *e = gdc_map_get(&c->map, key);
    if (!e)
        return NULL;
    unlink_entry(e);
    link_newest(c, e);
    return e->item;
}

/* Remove key's entry; its item (a new reference to the caller), or NULL. */
PyObject *
gdc_cache_pop(gdc_cache *c, unsigned long long key)
{
    Entry *e = gdc_map_del(&c->map, key);
    if (!e)
        return NULL;
    unlink_entry(e);
    c->size -= e->n;
    PyObject *item = e->item;
    PyMem_RawFree(e);
    return item;
}

static void
drop_oldest(gdc_cache *c)
{
    Entry *e = c->head.next;
    gdc_map_del(&c->map, e->key);
    unlink_entry(e);
    c->size -= e->n;
    Py_DECREF(e->item);
    PyMem_RawFree(e);
}

/* Keep item ((type, data), len(data) == n) under key: 1 if kept, 0 if not (larger
   than the limit, or the key is there), -1 with an error set. */
int
gdc_cache_put_item(gdc_cache *c, unsigned long long key, PyObject *item, Py_ssize_t n)
{
    if (n > c->limit || gdc_map_get(&c->map, key))
        return 0;
    Entry *e = PyMem_RawMalloc(sizeof(Entry));
    if (!e) {
        PyErr_NoMemory();
        return -1;
    }
    if (gdc_map_set(&c->map, key, e)) {
        PyMem_RawFree(e);
        return -1;
    }
    e->key = key;
    Py_INCREF(item);
    e->item = item;
    e->n = n;
    link_newest(c, e);
    c->size += n;
    while (c->size > c->limit)
        drop_oldest(c);
    return 1;
}

int
gdc_cache_put(gdc_cache *c, unsigned long long key, unsigned int type, PyObject *data)
{
    Py_ssize_t n = PyBytes_GET_SIZE(data);
    if (n > c->limit || gdc_map_get(&c->map, key))
        return 0;
    PyObject *item = Py_BuildValue("(IO)", type, data);
    if (!item)
        return -1;
    int r = gdc_cache_put_item(c, key, item, n);
    Py_DECREF(item);
    return r;
}

static void
cache_clear_all(gdc_cache *c)
{
    while (c->head.next != &c->head)
        drop_oldest(c);
    c->size = 0;
}

static int
key_of(PyObject *obj, unsigned long long *key)
{
    *key = PyLong_AsUnsignedLongLong(obj);
    if (*key == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    return 0;
}

static PyObject *
DeltaCache_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"limit", NULL};
    Py_ssize_t limit = GDC_DEFAULT_CACHE_LIMIT;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|n:DeltaCache", kwlist, &limit))
        return NULL;
    gdc_cache *c = (gdc_cache *)type->tp_alloc(type, 0);
    if (!c)
        return NULL;
    c->limit = limit < 0 ? 0 : limit;
    c->head.next = c->head.prev = &c->head;
    return (PyObject *)c;
}

static int
DeltaCache_traverse(gdc_cache *c, visitproc visit, void *arg)
{
    for (Entry *e = c->head.next; e != &c->head; e = e->next)
        Py_VISIT(e->item);
    return 0;
}

static int
DeltaCache_tp_clear(gdc_cache *c)
{
    cache_clear_all(c);
    return 0;
}

static void
DeltaCache_dealloc(gdc_cache *c)
{
    PyObject_GC_UnTrack(c);
    cache_clear_all(c);
    gdc_map_free(&c->map);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyObject *
DeltaCache_get(gdc_cache *c, PyObject *arg)
{
    unsigned long long key;
    if (key_of(arg, &key))
        return NULL;
    PyObject *hit = gdc_cache_get(c, key);
    return Py_NewRef(hit ? hit : Py_None);
}

static PyObject *
DeltaCache_put(gdc_cache *c, PyObject *const *args, Py_ssize_t nargs)
{
    unsigned long long key;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "put(key, type_num, data) takes 3 arguments");
        return NULL;
    }
    if (key_of(args[0], &key))
        return NULL;
    Py_ssize_t n = PyObject_Size(args[2]);
    if (n < 0)
        return NULL;
    if (n > c->limit || gdc_map_get(&c->map, key))
        Py_RETURN_NONE;
    PyObject *item = PyTuple_Pack(2, args[1], args[2]);
    if (!item)
        return NULL;
    int r = gdc_cache_put_item(c, key, item, n);
    Py_DECREF(item);
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
DeltaCache_pop(gdc_cache *c, PyObject *arg)
{
    unsigned long long key;
    if (key_of(arg, &key))
        return NULL;
    PyObject *hit = gdc_cache_pop(c, key);
    return hit ? hit : Py_NewRef(Py_None);
}

static PyObject *
DeltaCache_keys(gdc_cache *c)
{
    PyObject *keys = PyList_New(0);
    for (Entry *e = c->head.next; keys && e != &c->head; e = e->next) {
        PyObject *k = PyLong_FromUnsignedLongLong(e->key);
        if (!k || PyList_Append(keys, k)) {
            Py_XDECREF(k);
            Py_CLEAR(keys);
            break;
        }
        Py_DECREF(k);
    }
    return keys;
}

static PyObject *
DeltaCache_discard_if(gdc_cache *c, PyObject *drop)
{
    PyObject *keys = DeltaCache_keys(c);
    if (!keys)
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); i++) {
        PyObject *k = PyList_GET_ITEM(keys, i);
        PyObject *r = PyObject_CallOneArg(drop, k);
        if (!r) {
            Py_DECREF(keys);
            return NULL;
        }
        int yes = PyObject_IsTrue(r);
        Py_DECREF(r);
        if (yes < 0) {
            Py_DECREF(keys);
            return NULL;
        }
        if (yes) {
            PyObject *hit = gdc_cache_pop(c, PyLong_AsUnsignedLongLong(k));
            Py_XDECREF(hit);
        }
    }
    Py_DECREF(keys);
    Py_RETURN_NONE;
}

static PyObject *
DeltaCache_clear(gdc_cache *c, PyObject *unused)
{
    cache_clear_all(c);
    Py_RETURN_NONE;
}

static PyObject *
DeltaCache_new_pack_key(gdc_cache *c, PyObject *unused)
{
    c->next_key += GDC_KEY_STRIDE;
    return PyLong_FromUnsignedLongLong(c->next_key);
}

static PyObject *
DeltaCache_entries(gdc_cache *c, void *closure)
{
    PyObject *d = PyDict_New();
    for (Entry *e = c->head.next; d && e != &c->head; e = e->next) {
        PyObject *k = PyLong_FromUnsignedLongLong(e->key);
        if (!k || PyDict_SetItem(d, k, e->item)) {
            Py_XDECREF(k);
            Py_CLEAR(d);
            break;
        }
        Py_DECREF(k);
    }
    return d;
}

static Py_ssize_t
DeltaCache_len(gdc_cache *c)
{
    return (Py_ssize_t)c->map.used;
}

static int
DeltaCache_contains(gdc_cache *c, PyObject *arg)
{
    unsigned long long key = PyLong_AsUnsignedLongLong(arg);
    if (key == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear(); /* not a key this cache can hold */
        return 0;
    }
    return gdc_map_get(&c->map, key) != NULL;
}

static PyMethodDef DeltaCache_methods[] = {
    {"get", (PyCFunction)DeltaCache_get, METH_O,
     "get(key) -> (type_number, data) or None; marks it most recently used"},
    {"put", (PyCFunction)(void (*)(void))DeltaCache_put, METH_FASTCALL,
     "put(key, type_number, data): keep it unless larger than the limit; evict the oldest"},
    {"pop", (PyCFunction)DeltaCache_pop, METH_O, "pop(key) -> the entry or None, removed"},
    {"discard_if", (PyCFunction)DeltaCache_discard_if, METH_O,
     "discard_if(drop): remove every entry for whose key drop(key) is true"},
    {"clear", (PyCFunction)DeltaCache_clear, METH_NOARGS, "clear(): drop everything"},
    {"new_pack_key", (PyCFunction)DeltaCache_new_pack_key, METH_NOARGS,
     "new_pack_key() -> the key base of one more pack"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef DeltaCache_members[] = {
    {"limit", T_PYSSIZET, offsetof(gdc_cache, limit), READONLY, "the bound on size"},
    {"size", T_PYSSIZET, offsetof(gdc_cache, size), READONLY, "bytes held (len of the data)"},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef DeltaCache_getset[] = {
    {"entries", (getter)DeltaCache_entries, NULL,
     "a dict copy {key: (type_number, data)}, oldest first", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods DeltaCache_as_sequence = {
    .sq_length = (lenfunc)DeltaCache_len,
    .sq_contains = (objobjproc)DeltaCache_contains,
};

PyTypeObject gdc_DeltaCacheType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gitodb._native.DeltaCache",
    .tp_basicsize = sizeof(gdc_cache),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "DeltaCache(limit=96 MiB): the delta-base cache (gitodb.pack.cache)",
    .tp_new = DeltaCache_new,
    .tp_dealloc = (destructor)DeltaCache_dealloc,
    .tp_traverse = (traverseproc)DeltaCache_traverse,
    .tp_clear = (inquiry)DeltaCache_tp_clear,
    .tp_methods = DeltaCache_methods,
    .tp_members = DeltaCache_members,
    .tp_getset = DeltaCache_getset,
    .tp_as_sequence = &DeltaCache_as_sequence,
};

/* -- PendingBases --------------------------------------------------------------- */

struct gdc_pending {
    PyObject_HEAD
    gdc_cache *cache;
    gdc_map counts; /* key -> (void *)(uintptr_t)count, count >= 1 */
};

PyObject *
gdc_pending_get(gdc_pending *p, unsigned long long key)
{
    PyObject *hit = gdc_cache_get(p->cache, key);
    uintptr_t left = (uintptr_t)gdc_map_get(&p->counts, key);
    if (left > 1) {
        gdc_map_set(&p->counts, key, (void *)(left - 1)); /* present: no allocation */
        return hit ? Py_NewRef(hit) : NULL;
    }
    if (left)
        gdc_map_del(&p->counts, key);
    return hit ? gdc_cache_pop(p->cache, key) : NULL;
}

int
gdc_pending_wants(gdc_pending *p, unsigned long long key)
{
    return gdc_map_get(&p->counts, key) != NULL;
}

gdc_cache *
gdc_pending_cache(gdc_pending *p)
{
    return p->cache;
}

static PyObject *
Pending_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *cache, *counts;
    if (!PyArg_ParseTuple(args, "O!O!:PendingBases", &gdc_DeltaCacheType, &cache, &PyDict_Type,
                          &counts))
        return NULL;
    gdc_pending *p = (gdc_pending *)type->tp_alloc(type, 0);
    if (!p)
        return NULL;
    p->cache = (gdc_cache *)Py_NewRef(cache);
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(counts, &pos, &k, &v)) {
        unsigned long long key, n;
        if (key_of(k, &key) || key_of(v, &n)) {
            Py_DECREF(p);
            return NULL;
        }
        if (n && gdc_map_set(&p->counts, key, (void *)(uintptr_t)n)) {
            Py_DECREF(p);
            return NULL;
        }
    }
    return (PyObject *)p;
}

static int
Pending_traverse(gdc_pending *p, visitproc visit, void *arg)
{
    Py_VISIT(p->cache);
    return 0;
}

static int
Pending_tp_clear(gdc_pending *p)
{
    Py_CLEAR(p->cache);
    return 0;
}

static void
Pending_dealloc(gdc_pending *p)
{
    PyObject_GC_UnTrack(p);
    Py_CLEAR(p->cache);
    gdc_map_free(&p->counts);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static PyObject *
Pending_get(gdc_pending *p, PyObject *arg)
{
    unsigned long long key;
    if (key_of(arg, &key))
        return NULL;
    PyObject *hit = gdc_pending_get(p, key);
    return hit ? hit : Py_NewRef(Py_None);
}

static PyObject *
Pending_put(gdc_pending *p, PyObject *const *args, Py_ssize_t nargs)
{
    unsigned long long key;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "put(key, type_num, data) takes 3 arguments");
        return NULL;
    }
    if (key_of(args[0], &key))
        return NULL;
    if (!gdc_pending_wants(p, key))
        Py_RETURN_NONE;
    return DeltaCache_put(p->cache, args, nargs);
}

static PyObject *
Pending_cache(gdc_pending *p, void *closure)
{
    return Py_NewRef((PyObject *)p->cache);
}

static PyObject *
Pending_pending(gdc_pending *p, void *closure)
{
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && p->counts.mask && i <= p->counts.mask; i++) {
        if (!p->counts.vals[i])
            continue;
        PyObject *k = PyLong_FromUnsignedLongLong(p->counts.keys[i]);
        PyObject *v = PyLong_FromSize_t((size_t)(uintptr_t)p->counts.vals[i]);
        if (!k || !v || PyDict_SetItem(d, k, v))
            Py_CLEAR(d);
        Py_XDECREF(k);
        Py_XDECREF(v);
    }
    return d;
}

static PyMethodDef Pending_methods[] = {
    {"get", (PyCFunction)Pending_get, METH_O,
     "get(key) -> the cached base for one more of its deltas; dropped after its last"},
    {"put", (PyCFunction)(void (*)(void))Pending_put, METH_FASTCALL,
     "put(key, type_number, data): cache it if a later entry is a delta against it"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Pending_getset[] = {
    {"cache", (getter)Pending_cache, NULL, "the DeltaCache", NULL},
    {"pending", (getter)Pending_pending, NULL, "a dict copy {key: deltas still to come}", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject gdc_PendingType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gitodb._native.PendingBases",
    .tp_basicsize = sizeof(gdc_pending),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "PendingBases(cache, counts): the cache as a walk in pack order uses it",
    .tp_new = Pending_new,
    .tp_dealloc = (destructor)Pending_dealloc,
    .tp_traverse = (traverseproc)Pending_traverse,
    .tp_clear = (inquiry)Pending_tp_clear,
    .tp_methods = Pending_methods,
    .tp_getset = Pending_getset,
};
