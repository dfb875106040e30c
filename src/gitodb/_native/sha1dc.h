/*
 * SHA-1 with collision detection (SHA-1DC) for gitodb's native core.
 * The algorithm and its derivation are described in sha1dc.c; the pure-Python
 * reference is gitodb/objects/sha1dc_ref.py.
 */
#ifndef GITODB_SHA1DC_H
#define GITODB_SHA1DC_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t ihv[5];
    uint64_t length;          /* bytes hashed so far */
    unsigned char buf[64];    /* partial block */
    unsigned buflen;
    int collision;            /* a block completing a known attack was seen */
    int safe_hash;            /* recompress such blocks (the digest then differs) */
    int detect;               /* 0: plain SHA-1 */
    int detect_all;           /* 1: check every DV on every block (no UBC filter) */
} gdc_sha1_ctx;

/* Compute the disturbance-vector tables; call once before hashing. 0 on success. */
int gdc_sha1dc_setup(void);
/* Number of disturbance vectors, and of distinct unavoidable bit conditions. */
int gdc_sha1dc_dv_count(void);
int gdc_sha1dc_ubc_count(void);

/* The compression kernel in use: "sha-ni" (x86 SHA extensions, chosen at set-up
 * where the CPU has them) or "portable". */
const char *gdc_sha1dc_kernel(void);
/* Use the named kernel from now on; -1 if it is unknown or this CPU lacks it. */
int gdc_sha1dc_use_kernel(const char *name);

void gdc_sha1_init(gdc_sha1_ctx *ctx, int safe_hash, int detect, int detect_all);
void gdc_sha1_update(gdc_sha1_ctx *ctx, const unsigned char *data, size_t len);
/* Finish a copy of ctx into out; returns 1 if a collision was detected. */
int gdc_sha1_final(const gdc_sha1_ctx *ctx, unsigned char out[20]);

#endif
