/* The pack functions of gitodb._native (pack.c), added to the module in module.c. */
#ifndef GITODB_NATIVE_PACK_H
#define GITODB_NATIVE_PACK_H
#include <Python.h>

extern PyMethodDef gdc_pack_methods[];
extern PyMethodDef gdc_walk_methods[];
extern PyMethodDef gdc_heads_methods[];
/* zlib's version when heads.c was built with it (GITODB_HAVE_ZLIB), else NULL. */
extern const char *gdc_zlib_version;

/* A delta-header size varint at *pp (advanced); -1 if truncated or over 64 bits. */
int gdc_read_size(const unsigned char **pp, const unsigned char *end, unsigned long long *out);

/* Walk a delta's opcodes [p, end) against base; copy into out unless NULL.  NULL or an
   error text (in msg when it has numbers); *produced_out is the result size. */
const char *gdc_run_opcodes(const unsigned char *p, const unsigned char *end,
                            const unsigned char *base, unsigned long long base_len,
                            unsigned long long dst_size, unsigned char *out,
                            unsigned long long *produced_out, char *msg, size_t msglen);

#endif
