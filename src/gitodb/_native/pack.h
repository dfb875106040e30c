/* The pack functions of gitodb._native (pack.c), added to the module in module.c. */
#ifndef GITODB_NATIVE_PACK_H
#define GITODB_NATIVE_PACK_H
#include <Python.h>

extern PyMethodDef gdc_pack_methods[];
extern PyMethodDef gdc_walk_methods[];
extern PyMethodDef gdc_heads_methods[];
extern PyMethodDef gdc_linediff_methods[];
extern PyMethodDef gdc_refformat_methods[];
extern PyMethodDef gdc_bulk_methods[];    /* bulkcols.c */
extern PyTypeObject gdc_ReachWalkType;   /* bulkcols.c */
/* zlib's version when heads.c was built with it (GITODB_HAVE_ZLIB), else NULL. */
extern const char *gdc_zlib_version;
/* zlibVersion() of the zlib linked at run time, or NULL without zlib. */
const char *gdc_zlib_runtime_version(void);

/* A delta-header size varint at *pp (advanced); -1 if truncated or over 64 bits. */
int gdc_read_size(const unsigned char **pp, const unsigned char *end, unsigned long long *out);

/* One z_stream reused across entries (walk.c): zlib's published API, when the
   core was built with zlib (GITODB_HAVE_ZLIB). */
#ifdef GITODB_HAVE_ZLIB
#include <zlib.h>
typedef struct {
    z_stream zs;
    int ready;
} gdc_zinflater;
/* [src, src+avail) inflated into out, exactly size bytes (the stream must end there;
   input after its end is allowed): 0 and *used the input it took, or -1 (no Python
   error set).  With release_gil, the GIL is dropped for outputs of 4 KiB or more. */
int gdc_zinflate(gdc_zinflater *z, const unsigned char *src, unsigned long long avail,
                 unsigned char *out, unsigned long long size, unsigned long long *used,
                 int release_gil);
#else
typedef struct {
    int ready;
} gdc_zinflater;
#endif
void gdc_zinflater_end(gdc_zinflater *z);

/* walk.c's per-entry steps (NULL, no error set, on any failure: the caller falls
   back): the delta applied to base (bytes), and [start, end) of buf inflated to
   exactly size bytes with the chosen inflate (a callable, or None: zlib's C API). */
PyObject *gdc_build(PyObject *base, PyObject *delta);
PyObject *gdc_walk_inflate(PyObject *inflate, gdc_zinflater *z, const unsigned char *buf,
                           unsigned long long start, unsigned long long end,
                           unsigned long long size);

/* cat-file's default record line "<hex id> <type> <size>\n" at w (pack.c): the end.
   Room needed: 2 * 32 hex + " commit " + 20 digits + "\n". */
#define GDC_CHECK_LINE_MAX (64 + 8 + 20 + 1)
char *gdc_check_line(char *w, const unsigned char *id, Py_ssize_t idlen, unsigned int type,
                     unsigned long long size);

/* Shortest unique abbreviations over sorted id tables (abbrev.c).  A table: count ids
   of rawsz bytes at ids + i * stride, with a 256-entry big-endian fan-out (or NULL). */
typedef struct {
    Py_buffer view;
    const unsigned char *ids, *fan;
    Py_ssize_t stride, count;
} gdc_abbrev_table;
typedef struct {
    gdc_abbrev_table *tables;
    Py_ssize_t ntables;
    int rawsz, min_len;
} gdc_abbrev;
extern PyMethodDef gdc_abbrev_methods[];
/* Open spec = (tables, min_len) as abbrev_lengths takes it (its buffers held until
   gdc_abbrev_close): 0, or -1 with an error set (nothing to close then). */
int gdc_abbrev_open(gdc_abbrev *a, PyObject *spec, int rawsz);
void gdc_abbrev_close(gdc_abbrev *a);
/* The length of oid's abbreviation; gdc_abbrev_put writes its hex digits at dst
   (room for 2 * rawsz) and returns their number. */
int gdc_abbrev_len(const gdc_abbrev *a, const unsigned char *oid);
int gdc_abbrev_put(const gdc_abbrev *a, const unsigned char *oid, char *dst);

/* Every object of a pack in id order, its cache planned ahead (idorder.c). */
extern PyTypeObject gdc_IdOrderWalkType;
extern PyMethodDef gdc_idorder_methods[];

/* libdeflate's published C API in the shared object at path, the one the compression
   layer's libdeflate backend runs on (walk.c; compress.native_inflate_library()):
   a decompressor, or NULL when the library or its symbols are not there (call it
   with the GIL held; the decompressor is then one thread's).  gdc_ld_inflate:
   [src, src+avail) inflated into out, exactly size bytes (size > 0): 0, or -1;
   no Python, so the GIL may be released around it. */
void *gdc_ld_new(const char *path);
void gdc_ld_end(void *d);
int gdc_ld_inflate(void *d, const unsigned char *src, unsigned long long avail, unsigned char *out,
                   unsigned long long size);

/* Pack entry headers and OFS_DELTA distances (pack.c): 0, or one of these. */
#define GDC_TRUNCATED (-1)
#define GDC_TOO_LONG (-2)
int gdc_entry_header(const unsigned char *buf, unsigned long long len, unsigned long long off,
                     unsigned int *type, unsigned long long *size, unsigned long long *hlen);
int gdc_ofs_distance(const unsigned char *buf, unsigned long long len, unsigned long long pos,
                     unsigned long long *dist, unsigned long long *nlen);

/* Binary search of sorted ids, entry i's id at base + i * stride (pack.c): the position
   of want (rawsz bytes) in [lo, hi), or -1. */
/* A growable byte buffer of the native core's output (pack.c): reserve room for more
   bytes, or append n bytes; -1 with MemoryError set when memory runs out.  Start it
   as {NULL, 0, 0}; its bytes are p[0..n), freed with PyMem_Free(p). */
typedef struct {
    char *p;
    size_t n, cap;
} gdc_buf;
int gdc_buf_reserve(gdc_buf *b, size_t more);
int gdc_buf_put(gdc_buf *b, const void *s, size_t n);

/* Git's %s (objects.commit.subject_of): the first paragraph of the message m[0..n),
   its lines right-trimmed of Git's whitespace and joined by spaces, appended to b. */
int gdc_is_space(unsigned char c);
int gdc_subject(gdc_buf *b, const unsigned char *m, size_t n);

Py_ssize_t gdc_offset_index(const unsigned long long *so, Py_ssize_t k, unsigned long long want);
Py_ssize_t gdc_find_oid(const unsigned char *base, Py_ssize_t stride, Py_ssize_t rawsz,
                        Py_ssize_t lo, Py_ssize_t hi, const void *want);

/* The result size a delta declares, from the start of its zlib data [p, p + len)
   (heads.c): 0 and *size, or -1 when undecided (no zlib at build time, a damaged or
   short stream: the Python path decides and reports).  z is set up on first use. */
int gdc_delta_result_size(gdc_zinflater *z, const unsigned char *p, unsigned long long len,
                          unsigned long long *size);

/* Walk a delta's opcodes [p, end) against base; copy into out unless NULL.  NULL or an
   error text (in msg when it has numbers); *produced_out is the result size. */
const char *gdc_run_opcodes(const unsigned char *p, const unsigned char *end,
                            const unsigned char *base, unsigned long long base_len,
                            unsigned long long dst_size, unsigned char *out,
                            unsigned long long *produced_out, char *msg, size_t msglen);

/* The delta-base cache (cache.c): gitodb.pack.cache.DeltaBaseCache when native. */
#define GDC_DEFAULT_CACHE_LIMIT (96 * 1024 * 1024)
#define GDC_KEY_STRIDE (1ULL << 44)

/* An open-addressing map from uint64 keys to non-NULL pointers. */
typedef struct {
    unsigned long long *keys;
    void **vals;
    size_t mask; /* capacity - 1, or 0 when nothing is allocated */
    size_t used;
} gdc_map;
void *gdc_map_get(const gdc_map *m, unsigned long long key);
int gdc_map_set(gdc_map *m, unsigned long long key, void *val);
void *gdc_map_del(gdc_map *m, unsigned long long key);
void gdc_map_free(gdc_map *m);

typedef struct gdc_cache gdc_cache;
typedef struct gdc_pending gdc_pending;
extern PyTypeObject gdc_DeltaCacheType;
extern PyTypeObject gdc_PendingType;
/* The cached (type, data) tuple (borrowed; now most recently used), or NULL. */
PyObject *gdc_cache_get(gdc_cache *c, unsigned long long key);
/* Keep bytes data under key unless too large or present: 1 kept, 0 not, -1 error. */
int gdc_cache_put(gdc_cache *c, unsigned long long key, unsigned int type, PyObject *data);
/* Remove key's entry: its (type, data) tuple (a new reference), or NULL if absent. */
PyObject *gdc_cache_pop(gdc_cache *c, unsigned long long key);
/* PendingBases.get in C: a new reference to (type, data), or NULL (no error). */
PyObject *gdc_pending_get(gdc_pending *p, unsigned long long key);
/* True if a later entry is a delta against key (PendingBases.put stores only those). */
int gdc_pending_wants(gdc_pending *p, unsigned long long key);
gdc_cache *gdc_pending_cache(gdc_pending *p);

/* index-pack's scan and resolve passes (indexpack.c). */
extern PyTypeObject gdc_IndexPackType;

#endif
