/*
 * SHA-1 with collision detection, written from the published description
 * (Stevens, "Counter-cryptanalysis", CRYPTO 2013; Stevens and Shumow,
 * "Speeding up detection of SHA-1 collision attacks using unavoidable attack
 * conditions", USENIX Security 2017).  The pure-Python reference with the
 * same structure is gitodb/objects/sha1dc_ref.py.
 *
 * Every known practical SHA-1 collision attack builds its near-collision
 * blocks on a disturbance vector (DV) of Manuel's classes I(K,b) / II(K,b).
 * For a DV, the two blocks of an attack have expanded messages that differ by
 * a fixed XOR difference DW[0..79], and their internal states are equal at
 * any step t where no local collision is in flight (DV[t-5..t-1] == 0).  So
 * for each DV we take this block's state at t, run the compression backwards
 * (to step 0) and forwards (to step 80) with W ^ DW, add the two ends (the
 * feed-forward) and compare with this block's real output.  Equality means
 * the block completes a collision.
 *
 * The DV words and DW are computed at module set-up from the DV parameters
 * alone, by the linear SHA-1 message recurrence; nothing is tabulated here.
 *
 * Checking a DV costs one extra 80-step compression; there are 33.  First the
 * unavoidable bit conditions (sha1dc_ubc.h, derived by
 * gitodb/objects/sha1dc_ubc.py) rule out the DVs this block cannot be an
 * attack block for: each condition is a relation between two expanded-message
 * bits that every attack block on the DV meets, and an ordinary block breaks
 * each with probability 1/2, so about one block in 200 leaves any DV standing.
 * The DVs left are grouped by test step (58 or 65) and checked eight at a time
 * in vector lanes, two chunks of lanes interleaved (GCC/Clang vector
 * extensions; an AVX2 clone is picked at run time on x86-64 Linux).  Without
 * the filter (detect_all) every DV is checked on every block.
 */
#include "sha1dc.h"

#include <string.h>

#include "sha1dc_ubc.h"

#define NLANES 8
typedef uint32_t v8u __attribute__((vector_size(4 * NLANES)));

#define ROL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))

#define K1 0x5A827999u
#define K2 0x6ED9EBA1u
#define K3 0x8F1BBCDCu
#define K4 0xCA62C1D6u

#define F_CH(b, c, d) ((d) ^ ((b) & ((c) ^ (d))))
#define F_PAR(b, c, d) ((b) ^ (c) ^ (d))
#define F_MAJ(b, c, d) (((b) & (c)) | ((d) & ((b) | (c))))

/* The attack classes the papers list: (type, K, b). */
static const struct { int type, k, b; } dv_specs[] = {
    {1, 43, 0}, {1, 44, 0}, {1, 45, 0}, {1, 46, 0}, {1, 47, 0}, {1, 48, 0},
    {1, 49, 0}, {1, 50, 0}, {1, 51, 0}, {1, 52, 0},
    {1, 46, 2}, {1, 47, 2}, {1, 48, 2}, {1, 49, 2}, {1, 50, 2}, {1, 51, 2}, {1, 52, 2},
    {2, 45, 0}, {2, 46, 0}, {2, 47, 0}, {2, 48, 0}, {2, 49, 0}, {2, 50, 0},
    {2, 51, 0}, {2, 52, 0}, {2, 53, 0}, {2, 54, 0}, {2, 55, 0}, {2, 56, 0},
    {2, 46, 2}, {2, 49, 2}, {2, 50, 2}, {2, 51, 2},
};
#define NDV ((int)(sizeof dv_specs / sizeof dv_specs[0]))

/* Two test steps suffice: every DV is quiet at 58 or, failing that, at 65. */
#define NGROUPS 2
static const int group_step[NGROUPS] = {58, 65};
#define MAXCHUNKS ((NDV + NLANES - 1) / NLANES)

typedef struct {
    int nchunks;
    uint64_t members[MAXCHUNKS];   /* bit n: dv_specs[n] is in this chunk */
    v8u dw[MAXCHUNKS][80];
} dv_group;

static dv_group groups[NGROUPS];
static int setup_done;

/* DV words for steps -5..79 (index i+5), from Manuel's 16-word window. */
static void
dv_words(int type, int k, int b, uint32_t dv[85])
{
    int i;
    memset(dv, 0, 85 * sizeof *dv);
    /* Window DV[k..k+15]: 2^b in word k+15; type II adds 2^(b+31) at k+1, k+3. */
    dv[k + 15 + 5] = b ? ROL(1u, b) : 1u;
    if (type == 2)
        dv[k + 1 + 5] = dv[k + 3 + 5] = ROL(0x80000000u, b);
    for (i = k + 16; i < 80; i++)
        dv[i + 5] = ROL(dv[i - 3 + 5] ^ dv[i - 8 + 5] ^ dv[i - 14 + 5] ^ dv[i - 16 + 5], 1);
    for (i = k - 1; i >= -5; i--)
        dv[i + 5] = ROL(dv[i + 16 + 5], 31) ^ dv[i + 13 + 5] ^ dv[i + 8 + 5] ^ dv[i + 2 + 5];
}

static int
quiet_at(const uint32_t dv[85], int t)
{
    int j;
    for (j = 1; j <= 5; j++)
        if (dv[t - j + 5])
            return 0;
    return 1;
}

int
gdc_sha1dc_setup(void)
{
    int n, g, i;
    int members[NGROUPS][NDV];
    int count[NGROUPS] = {0, 0};
    static uint32_t dw[NDV][80];

    if (setup_done)
        return 0;
    if (UBC_DV_COUNT != NDV)
        return -1;
    for (n = 0; n < NDV; n++) {
        uint32_t dv[85];
        dv_words(dv_specs[n].type, dv_specs[n].k, dv_specs[n].b, dv);
        /* The 6-step local collision: a disturbance in W[i] bit j is corrected
         * by bit j+5 of W[i+1], bit j of W[i+2], bit j-2 of W[i+3..i+5]. */
        for (i = 0; i < 80; i++)
            dw[n][i] = dv[i + 5] ^ ROL(dv[i + 4], 5) ^ dv[i + 3]
                       ^ ROL(dv[i + 2] ^ dv[i + 1] ^ dv[i], 30);
        if (quiet_at(dv, 58))
            g = 0;
        else if (quiet_at(dv, 65))
            g = 1;
        else
            return -1;
        members[g][count[g]++] = n;
    }
    for (g = 0; g < NGROUPS; g++) {
        dv_group *grp = &groups[g];
        grp->nchunks = (count[g] + NLANES - 1) / NLANES;
        for (i = 0; i < grp->nchunks * NLANES; i++) {
            /* Pad a short last chunk with copies of the first DV (never with a
             * zero difference, which would "find" the block itself). */
            int src = members[g][i < count[g] ? i : 0];
            int s;
            for (s = 0; s < 80; s++)
                grp->dw[i / NLANES][s][i % NLANES] = dw[src][s];
            grp->members[i / NLANES] |= (uint64_t)1 << src;
        }
    }
    setup_done = 1;
    return 0;
}

int
gdc_sha1dc_dv_count(void)
{
    return NDV;
}

int
gdc_sha1dc_ubc_count(void)
{
    return UBC_COUNT;
}

/* Check chunks of lanes of one group against a block: W its expansion, s its
 * state at the group's test step t, out its output chaining value.  One chain
 * of steps is latency-bound, so NC chunks run side by side (NC is a constant
 * in each instance, so the arrays below live in registers). */
#define DEFINE_CHECK(NAME, NC)                                                   \
static inline __attribute__((always_inline)) int                                 \
NAME(const v8u *const *dw, int t, const uint32_t W[80], const uint32_t s[5],     \
     const uint32_t out[5])                                                      \
{                                                                                \
    v8u zero = {0};                                                              \
    v8u a[NC], b[NC], c[NC], d[NC], e[NC], i0[NC][5], hit = zero;               \
    int i, k, lane;                                                              \
    for (k = 0; k < NC; k++) {                                                   \
        a[k] = zero + s[0]; b[k] = zero + s[1]; c[k] = zero + s[2];              \
        d[k] = zero + s[3]; e[k] = zero + s[4];                                  \
    }                                                                            \
    /* Backwards from step t: undo the shift, then solve for the old e. */       \
    BACK_RANGE(t - 1, 60, F_PAR, K4, NC);                                        \
    BACK_RANGE(i, 40, F_MAJ, K3, NC);                                            \
    BACK_RANGE(i, 20, F_PAR, K2, NC);                                            \
    BACK_RANGE(i, 0, F_CH, K1, NC);                                              \
    for (k = 0; k < NC; k++) {                                                   \
        i0[k][0] = a[k]; i0[k][1] = b[k]; i0[k][2] = c[k]; i0[k][3] = d[k];      \
        i0[k][4] = e[k];                                                         \
        a[k] = zero + s[0]; b[k] = zero + s[1]; c[k] = zero + s[2];              \
        d[k] = zero + s[3]; e[k] = zero + s[4];                                  \
    }                                                                            \
    FWD_RANGE(t, 60, F_MAJ, K3, NC);                                             \
    FWD_RANGE(i, 80, F_PAR, K4, NC);                                             \
    /* The related block ends in our output: a collision. */                    \
    for (k = 0; k < NC; k++)                                                     \
        hit |= ((i0[k][0] + a[k]) == out[0]) & ((i0[k][1] + b[k]) == out[1])     \
               & ((i0[k][2] + c[k]) == out[2]) & ((i0[k][3] + d[k]) == out[3])   \
               & ((i0[k][4] + e[k]) == out[4]);                                  \
    for (lane = 0; lane < NLANES; lane++)                                        \
        if (hit[lane])                                                           \
            return 1;                                                            \
    return 0;                                                                    \
}

#define BACK_RANGE(FROM, TO, F, K, NC)                                           \
    for (i = (FROM); i >= (TO); i--)                                             \
        for (k = 0; k < NC; k++) {                                               \
            v8u p_ = b[k];                                                       \
            b[k] = ROL(c[k], 2);                                                 \
            c[k] = d[k];                                                         \
            d[k] = e[k];                                                         \
            e[k] = a[k] - ROL(p_, 5) - F(b[k], c[k], d[k]) - (K) - (dw[k][i] ^ W[i]); \
            a[k] = p_;                                                           \
        }
#define FWD_RANGE(FROM, TO, F, K, NC)                                            \
    for (i = (FROM); i < (TO); i++)                                              \
        for (k = 0; k < NC; k++) {                                               \
            v8u p_ = ROL(a[k], 5) + F(b[k], c[k], d[k]) + e[k] + (K) + (dw[k][i] ^ W[i]); \
            e[k] = d[k];                                                         \
            d[k] = c[k];                                                         \
            c[k] = ROL(b[k], 30);                                                \
            b[k] = a[k];                                                         \
            a[k] = p_;                                                           \
        }

DEFINE_CHECK(check1, 1)
DEFINE_CHECK(check2, 2)

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static int
check_group(const dv_group *grp, int t, const uint32_t W[80], const uint32_t s[5],
            const uint32_t out[5], uint64_t alive)
{
    /* The chunks holding a DV still alive, two at a time (measured: two
     * chains fill the vector units on AVX2; three spill registers). */
    const v8u *dw[MAXCHUNKS];
    int ch, n = 0, k;
    for (ch = 0; ch < grp->nchunks; ch++)
        if (grp->members[ch] & alive)
            dw[n++] = grp->dw[ch];
    for (k = 0; k + 1 < n; k += 2)
        if (check2(dw + k, t, W, s, out))
            return 1;
    return k < n && check1(dw + k, t, W, s, out);
}

/* The DVs this block could be an attack block for, by the unavoidable bit
 * conditions: bit n set for dv_specs[n]. */
static uint64_t
ubc_alive(const uint32_t W[80])
{
    uint64_t alive = ((uint64_t)1 << NDV) - 1;
    int n;
    for (n = 0; n < UBC_COUNT && alive; n++) {
        uint32_t broken = ((W[ubc_table[n].w1] >> ubc_table[n].b1)
                           ^ (W[ubc_table[n].w2] >> ubc_table[n].b2)
                           ^ ubc_table[n].parity) & 1;
        alive &= ~(ubc_table[n].dvs & ((uint64_t)0 - broken));
    }
    return alive;
}

#define STEP(F, K, i)                                                     \
    do {                                                                  \
        uint32_t t_ = ROL(a, 5) + F(b, c, d) + e + (K) + W[i];            \
        e = d;                                                            \
        d = c;                                                            \
        c = ROL(b, 30);                                                   \
        b = a;                                                            \
        a = t_;                                                           \
    } while (0)
/* One step with the words renamed: the new A lands in e, B is rotated in place. */
#define R(a, b, c, d, e, F, K, i)                                                 \
    if ((i) >= 16)                                                                \
        W[i] = ROL(W[(i) - 3] ^ W[(i) - 8] ^ W[(i) - 14] ^ W[(i) - 16], 1);       \
    e += ROL(a, 5) + F(b, c, d) + (K) + W[i];                                     \
    b = ROL(b, 30);
#define R5(F, K, i)                                                               \
    R(a, b, c, d, e, F, K, i) R(e, a, b, c, d, F, K, (i) + 1)                     \
    R(d, e, a, b, c, F, K, (i) + 2) R(c, d, e, a, b, F, K, (i) + 3)               \
    R(b, c, d, e, a, F, K, (i) + 4)
#define SAVE(st) (st[0] = a, st[1] = b, st[2] = c, st[3] = d, st[4] = e)

static void
compress(gdc_sha1_ctx *ctx, const unsigned char *p)
{
    uint32_t W[80], s58[5], s65[5], out[5];
    uint32_t a, b, c, d, e;
    int i, hit = 0;

    for (i = 0; i < 16; i++)
        W[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16
               | (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];

    /* Fully unrolled, the five words renamed instead of moved, and each
     * message word expanded in the step that uses it: the expansion then runs
     * beside the steps' serial chain instead of before it (3x faster here). */
    a = ctx->ihv[0]; b = ctx->ihv[1]; c = ctx->ihv[2]; d = ctx->ihv[3]; e = ctx->ihv[4];
    R5(F_CH, K1, 0) R5(F_CH, K1, 5) R5(F_CH, K1, 10) R5(F_CH, K1, 15)
    R5(F_PAR, K2, 20) R5(F_PAR, K2, 25) R5(F_PAR, K2, 30) R5(F_PAR, K2, 35)
    R5(F_MAJ, K3, 40) R5(F_MAJ, K3, 45) R5(F_MAJ, K3, 50)
    R(a, b, c, d, e, F_MAJ, K3, 55) R(e, a, b, c, d, F_MAJ, K3, 56)
    R(d, e, a, b, c, F_MAJ, K3, 57)
    /* After 58 steps the words A, B, C, D, E are in c, d, e, a, b. */
    s58[0] = c; s58[1] = d; s58[2] = e; s58[3] = a; s58[4] = b;
    R(c, d, e, a, b, F_MAJ, K3, 58) R(b, c, d, e, a, F_MAJ, K3, 59)
    R5(F_PAR, K4, 60)
    SAVE(s65);
    R5(F_PAR, K4, 65) R5(F_PAR, K4, 70) R5(F_PAR, K4, 75)
    out[0] = ctx->ihv[0] + a; out[1] = ctx->ihv[1] + b; out[2] = ctx->ihv[2] + c;
    out[3] = ctx->ihv[3] + d; out[4] = ctx->ihv[4] + e;

    if (ctx->detect) {
        uint64_t alive = ctx->detect_all ? ((uint64_t)1 << NDV) - 1 : ubc_alive(W);
        hit = alive && (check_group(&groups[0], group_step[0], W, s58, out, alive)
                        || check_group(&groups[1], group_step[1], W, s65, out, alive));
    }
    if (hit) {
        ctx->collision = 1;
        if (ctx->safe_hash) {
            /* "Safe hash": compress the offending block twice more, so the
             * digest is not the one the attacker aimed for. */
            int round;
            for (round = 0; round < 2; round++) {
                uint32_t in[5];
                memcpy(in, out, sizeof in);
                a = in[0]; b = in[1]; c = in[2]; d = in[3]; e = in[4];
                for (i = 0; i < 20; i++)
                    STEP(F_CH, K1, i);
                for (; i < 40; i++)
                    STEP(F_PAR, K2, i);
                for (; i < 60; i++)
                    STEP(F_MAJ, K3, i);
                for (; i < 80; i++)
                    STEP(F_PAR, K4, i);
                out[0] = in[0] + a; out[1] = in[1] + b; out[2] = in[2] + c;
                out[3] = in[3] + d; out[4] = in[4] + e;
            }
        }
    }
    memcpy(ctx->ihv, out, sizeof out);
}

void
gdc_sha1_init(gdc_sha1_ctx *ctx, int safe_hash, int detect, int detect_all)
{
    static const uint32_t iv[5] = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u,
                                   0xC3D2E1F0u};
    memcpy(ctx->ihv, iv, sizeof iv);
    ctx->length = 0;
    ctx->buflen = 0;
    ctx->collision = 0;
    ctx->safe_hash = safe_hash;
    ctx->detect = detect;
    ctx->detect_all = detect_all;
}

void
gdc_sha1_update(gdc_sha1_ctx *ctx, const unsigned char *data, size_t len)
{
    ctx->length += len;
    if (ctx->buflen) {
        size_t take = 64 - ctx->buflen;
        if (take > len)
            take = len;
        memcpy(ctx->buf + ctx->buflen, data, take);
        ctx->buflen += (unsigned)take;
        data += take;
        len -= take;
        if (ctx->buflen < 64)
            return;
        compress(ctx, ctx->buf);
        ctx->buflen = 0;
    }
    while (len >= 64) {
        compress(ctx, data);
        data += 64;
        len -= 64;
    }
    memcpy(ctx->buf, data, len);
    ctx->buflen = (unsigned)len;
}

int
gdc_sha1_final(const gdc_sha1_ctx *src, unsigned char out[20])
{
    gdc_sha1_ctx ctx = *src;
    unsigned char pad[72];
    uint64_t bits = ctx.length * 8;
    size_t padlen = 1 + ((55 - ctx.length % 64 + 64) % 64);
    int i;

    memset(pad, 0, sizeof pad);
    pad[0] = 0x80;
    for (i = 0; i < 8; i++)
        pad[padlen + i] = (unsigned char)(bits >> (56 - 8 * i));
    gdc_sha1_update(&ctx, pad, padlen + 8);
    for (i = 0; i < 5; i++) {
        out[4 * i] = (unsigned char)(ctx.ihv[i] >> 24);
        out[4 * i + 1] = (unsigned char)(ctx.ihv[i] >> 16);
        out[4 * i + 2] = (unsigned char)(ctx.ihv[i] >> 8);
        out[4 * i + 3] = (unsigned char)ctx.ihv[i];
    }
    return ctx.collision;
}
