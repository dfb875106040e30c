/*
 * gitodb._native: the native core.  SHA-1DC (sha1dc.c) as an incremental hasher
 * with hashlib's interface, and the per-object pack loops (pack.c: delta
 * application, entry headers, the header walk, index lookups, record formatting).
 *
 * The core raises gitodb's own error type for a detected collision: Python
 * hands it over once with set_collision_error() (gitodb.objects.sha1dc does,
 * at import), so this module imports nothing from gitodb.  The class is called
 * with the hex digest as its only argument.
 *
 * Large updates run without the GIL; a per-object lock (created on the first
 * such update, as hashlib does) keeps two threads from hashing into one
 * object at once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include "pack.h"
#include "sha1dc.h"

/* Inputs at least this long are hashed with the GIL released. */
#define GIL_MINSIZE 2048

static PyObject *collision_error;   /* set by set_collision_error(), or NULL */
static PyObject *fallback_error;    /* gitodb._native.CollisionError */

typedef struct {
    PyObject_HEAD
    gdc_sha1_ctx ctx;
    PyThread_type_lock lock;
} Sha1DCObject;

static PyTypeObject Sha1DCType;

static void
lock_obj(Sha1DCObject *self)
{
    if (self->lock && !PyThread_acquire_lock(self->lock, 0)) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(self->lock, 1);
        Py_END_ALLOW_THREADS
    }
}

static void
unlock_obj(Sha1DCObject *self)
{
    if (self->lock)
        PyThread_release_lock(self->lock);
}

static int
hash_buffer(Sha1DCObject *self, PyObject *data)
{
    Py_buffer view;
    if (PyUnicode_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "Strings must be encoded before hashing");
        return -1;
    }
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return -1;
    if (view.len >= GIL_MINSIZE && !self->lock)
        self->lock = PyThread_allocate_lock();
    if (view.len >= GIL_MINSIZE && self->lock) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(self->lock, 1);
        gdc_sha1_update(&self->ctx, view.buf, (size_t)view.len);
        PyThread_release_lock(self->lock);
        Py_END_ALLOW_THREADS
    } else {
        lock_obj(self);
        gdc_sha1_update(&self->ctx, view.buf, (size_t)view.len);
        unlock_obj(self);
    }
    PyBuffer_Release(&view);
    return 0;
}

static PyObject *
Sha1DC_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"data", "safe_hash", "detect", "detect_all", "usedforsecurity",
                             NULL};
    PyObject *data = NULL;
    int safe_hash = 0, detect = 1, detect_all = 0, usedforsecurity = 1;
    Sha1DCObject *self;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O$pppp", kwlist, &data, &safe_hash,
                                     &detect, &detect_all, &usedforsecurity))
        return NULL;
    self = (Sha1DCObject *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->lock = NULL;
    gdc_sha1_init(&self->ctx, safe_hash, detect, detect_all);
    if (data && hash_buffer(self, data) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void
Sha1DC_dealloc(Sha1DCObject *self)
{
    if (self->lock)
        PyThread_free_lock(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
Sha1DC_update(Sha1DCObject *self, PyObject *data)
{
    if (hash_buffer(self, data) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
Sha1DC_copy(Sha1DCObject *self, PyObject *Py_UNUSED(ignored))
{
    Sha1DCObject *other = (Sha1DCObject *)Sha1DCType.tp_alloc(&Sha1DCType, 0);
    if (!other)
        return NULL;
    other->lock = NULL;
    lock_obj(self);
    other->ctx = self->ctx;
    unlock_obj(self);
    return (PyObject *)other;
}

static int
finish(Sha1DCObject *self, unsigned char out[20])
{
    int hit;
    lock_obj(self);
    hit = gdc_sha1_final(&self->ctx, out);
    unlock_obj(self);
    return hit;
}

static PyObject *
raise_collision(const unsigned char out[20])
{
    static const char hexdigits[] = "0123456789abcdef";
    char hex[41];
    PyObject *cls = collision_error ? collision_error : fallback_error;
    PyObject *arg, *exc;
    int i;
    for (i = 0; i < 20; i++) {
        hex[2 * i] = hexdigits[out[i] >> 4];
        hex[2 * i + 1] = hexdigits[out[i] & 15];
    }
    hex[40] = '\0';
    arg = PyUnicode_FromString(hex);
    if (!arg)
        return NULL;
    exc = PyObject_CallOneArg(cls, arg);
    Py_DECREF(arg);
    if (!exc)
        return NULL;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

static PyObject *
Sha1DC_digest(Sha1DCObject *self, PyObject *Py_UNUSED(ignored))
{
    unsigned char out[20];
    if (finish(self, out))
        return raise_collision(out);
    return PyBytes_FromStringAndSize((const char *)out, 20);
}

static PyObject *
Sha1DC_hexdigest(Sha1DCObject *self, PyObject *Py_UNUSED(ignored))
{
    unsigned char out[20];
    PyObject *raw, *hex;
    if (finish(self, out))
        return raise_collision(out);
    raw = PyBytes_FromStringAndSize((const char *)out, 20);
    if (!raw)
        return NULL;
    hex = PyObject_CallMethod(raw, "hex", NULL);
    Py_DECREF(raw);
    return hex;
}

static PyObject *
Sha1DC_result(Sha1DCObject *self, PyObject *Py_UNUSED(ignored))
{
    unsigned char out[20];
    int hit = finish(self, out);
    return Py_BuildValue("(y#O)", (const char *)out, (Py_ssize_t)20,
                         hit ? Py_True : Py_False);
}

static PyObject *
Sha1DC_get_collision(Sha1DCObject *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(self->ctx.collision);
}

static PyObject *
Sha1DC_get_name(PyObject *self, void *Py_UNUSED(closure))
{
    return PyUnicode_FromString("sha1");
}

static PyObject *
Sha1DC_get_digest_size(PyObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLong(20);
}

static PyObject *
Sha1DC_get_block_size(PyObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLong(64);
}

static PyMethodDef Sha1DC_methods[] = {
    {"update", (PyCFunction)Sha1DC_update, METH_O, "Hash more bytes."},
    {"copy", (PyCFunction)Sha1DC_copy, METH_NOARGS, "An independent copy of the hasher."},
    {"digest", (PyCFunction)Sha1DC_digest, METH_NOARGS,
     "The 20-byte digest; raises the collision error if a collision was detected."},
    {"hexdigest", (PyCFunction)Sha1DC_hexdigest, METH_NOARGS,
     "The digest in hex; raises the collision error if a collision was detected."},
    {"result", (PyCFunction)Sha1DC_result, METH_NOARGS,
     "(digest, collision) without raising."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Sha1DC_getset[] = {
    {"collision", (getter)Sha1DC_get_collision, NULL,
     "True once a block completing a known collision attack was hashed.", NULL},
    {"name", Sha1DC_get_name, NULL, "Always 'sha1'.", NULL},
    {"digest_size", Sha1DC_get_digest_size, NULL, "20.", NULL},
    {"block_size", Sha1DC_get_block_size, NULL, "64.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject Sha1DCType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gitodb._native.sha1dc",
    .tp_basicsize = sizeof(Sha1DCObject),
    .tp_dealloc = (destructor)Sha1DC_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "sha1dc(data=b'', *, safe_hash=False, detect=True, detect_all=False)\n\n"
              "SHA-1 with collision detection, with hashlib's interface.\n"
              "detect=False: plain SHA-1; detect_all=True: check every disturbance\n"
              "vector on every block (no unavoidable-bit-condition filter).",
    .tp_methods = Sha1DC_methods,
    .tp_getset = Sha1DC_getset,
    .tp_new = Sha1DC_new,
};

static PyObject *
set_collision_error(PyObject *module, PyObject *cls)
{
    if (!PyCallable_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "collision error must be an exception class");
        return NULL;
    }
    Py_XSETREF(collision_error, Py_NewRef(cls));
    Py_RETURN_NONE;
}

static PyObject *
sha1dc_kernel(PyObject *module, PyObject *unused)
{
    return PyUnicode_FromString(gdc_sha1dc_kernel());
}

static PyObject *
use_sha1dc_kernel(PyObject *module, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    if (gdc_sha1dc_use_kernel(name) < 0) {
        PyErr_Format(PyExc_ValueError, "sha1dc kernel %R is unknown or not supported by this CPU",
                     arg);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"set_collision_error", set_collision_error, METH_O,
     "Set the exception class raised (with the hex digest) on a detected collision."},
    {"sha1dc_kernel", sha1dc_kernel, METH_NOARGS,
     "The SHA-1DC compression kernel in use: 'sha-ni' (x86 SHA extensions) or 'portable'."},
    {"use_sha1dc_kernel", use_sha1dc_kernel, METH_O,
     "Use the named SHA-1DC kernel from now on (ValueError if this CPU lacks it)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT, "gitodb._native",
    "gitodb's native core: SHA-1 with collision detection and the per-object pack loops.", -1, module_methods,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    PyObject *m;
    if (gdc_sha1dc_setup() < 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "sha1dc: bad tables (a DV without a test step, or UBC for other DVs)");
        return NULL;
    }
    if (PyType_Ready(&Sha1DCType) < 0 || PyType_Ready(&gdc_DeltaCacheType) < 0
        || PyType_Ready(&gdc_PendingType) < 0 || PyType_Ready(&gdc_IndexPackType) < 0
        || PyType_Ready(&gdc_IdOrderWalkType) < 0
        || PyType_Ready(&gdc_ReachWalkType) < 0)
        return NULL;
    m = PyModule_Create(&native_module);
    if (!m)
        return NULL;
    if (PyModule_AddFunctions(m, gdc_pack_methods) < 0
        || PyModule_AddFunctions(m, gdc_walk_methods) < 0
        || PyModule_AddFunctions(m, gdc_heads_methods) < 0
        || PyModule_AddFunctions(m, gdc_linediff_methods) < 0
        || PyModule_AddFunctions(m, gdc_refformat_methods) < 0
        || PyModule_AddFunctions(m, gdc_idorder_methods) < 0
        || PyModule_AddFunctions(m, gdc_bulk_methods) < 0
        || PyModule_AddFunctions(m, gdc_abbrev_methods) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    fallback_error = PyErr_NewException("gitodb._native.CollisionError", PyExc_ValueError, NULL);
    if (!fallback_error || PyModule_AddObjectRef(m, "CollisionError", fallback_error) < 0
        || PyModule_AddObjectRef(m, "sha1dc", (PyObject *)&Sha1DCType) < 0
        || PyModule_AddObjectRef(m, "DeltaCache", (PyObject *)&gdc_DeltaCacheType) < 0
        || PyModule_AddObjectRef(m, "PendingBases", (PyObject *)&gdc_PendingType) < 0
        || PyModule_AddObjectRef(m, "IndexPack", (PyObject *)&gdc_IndexPackType) < 0
        || PyModule_AddObjectRef(m, "IdOrderWalk", (PyObject *)&gdc_IdOrderWalkType) < 0
        || PyModule_AddObjectRef(m, "ReachWalk", (PyObject *)&gdc_ReachWalkType) < 0
        || PyModule_AddIntConstant(m, "SHA1DC_DV_COUNT", gdc_sha1dc_dv_count()) < 0
        || PyModule_AddIntConstant(m, "SHA1DC_UBC_COUNT", gdc_sha1dc_ubc_count()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    /* The zlib that heads.c was built with (None: none was found at build time). */
    PyObject *zv = gdc_zlib_version ? PyUnicode_FromString(gdc_zlib_version) : Py_NewRef(Py_None);
    if (!zv || PyModule_AddObjectRef(m, "ZLIB_VERSION", zv) < 0) {
        Py_XDECREF(zv);
        Py_DECREF(m);
        return NULL;
    }
    Py_DECREF(zv);
    /* The zlib linked at run time: walk_pack inflates with it only when it is the
       one the standard library's zlib module runs on (gitodb.compress checks). */
    const char *rv = gdc_zlib_runtime_version();
    zv = rv ? PyUnicode_FromString(rv) : Py_NewRef(Py_None);
    if (!zv || PyModule_AddObjectRef(m, "ZLIB_RUNTIME_VERSION", zv) < 0) {
        Py_XDECREF(zv);
        Py_DECREF(m);
        return NULL;
    }
    Py_DECREF(zv);
    return m;
}
