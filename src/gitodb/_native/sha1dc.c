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
 *
 * Speed comes from two things.  The conditions read only the expanded message,
 * never the chaining value, so eight consecutive blocks are filtered at once,
 * a block per vector lane (ubc_alive_batch).  And where the CPU has the x86
 * SHA extensions the compression itself runs on them (compress_shani); they
 * cannot give the states at the test steps, so the rare block that keeps a DV
 * alive is compressed again by the portable kernel, which gives them.
 */
#include "sha1dc.h"

#include <string.h>

#include "sha1dc_ubc.h"

/* x86-64 has a second compression kernel on the SHA extensions (see compress_shani). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_SHANI_KERNEL 1
#endif

#define NLANES 8
typedef uint32_t v8u __attribute__((vector_size(4 * NLANES)));
typedef int32_t v8s __attribute__((vector_size(4 * NLANES)));

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
/* 1: the SHA-NI kernel is in use (chosen at set-up where the CPU has it). */
static int use_shani;
#ifdef HAVE_SHANI_KERNEL
static int cpu_has_shani(void);
#endif

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
#ifdef HAVE_SHANI_KERNEL
    use_shani = cpu_has_shani();
#endif
    setup_done = 1;
    return 0;
}

const char *
gdc_sha1dc_kernel(void)
{
    return use_shani ? "sha-ni" : "portable";
}

int
gdc_sha1dc_use_kernel(const char *name)
{
    if (strcmp(name, "portable") == 0) {
        use_shani = 0;
        return 0;
    }
#ifdef HAVE_SHANI_KERNEL
    if (strcmp(name, "sha-ni") == 0 && cpu_has_shani()) {
        use_shani = 1;
        return 0;
    }
#endif
    return -1;
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

/* One step on already expanded words (the safe hash, and the states a rare
 * block with a DV alive needs after the SHA-NI kernel). */
/* The same for NBATCH consecutive blocks at once, a block per vector lane.  The
 * conditions read the expanded message only, never the chaining value, so
 * blocks that are still to be compressed can be filtered side by side: eight
 * blocks cost about what one costs alone.  The loop stops once every lane's
 * DVs are ruled out (after about 90 of the conditions). */
#define NBATCH NLANES
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static void
ubc_alive_batch(const unsigned char *p, uint64_t alive[NBATCH])
{
    v8u W[80], zero = {0}, lo = zero - 1, hi = zero - 1, any;
    int i, k, n;
    for (i = 0; i < 16; i++)
        for (k = 0; k < NBATCH; k++) {
            const unsigned char *q = p + 64 * k + 4 * i;
            W[i][k] = (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
        }
    for (i = 16; i < 80; i++)
        W[i] = ROL(W[i - 3] ^ W[i - 8] ^ W[i - 14] ^ W[i - 16], 1);
    /* Unrolled, so that each condition's words, shifts and masks are
     * constants: a handful of vector instructions per condition. */
#pragma GCC unroll 256
    for (n = 0; n < UBC_COUNT; n++) {
        /* The two bits to the sign position; an arithmetic shift spreads their
         * XOR (with the parity) over the lane: all ones where it is broken. */
        v8s x = (v8s)((W[ubc_table[n].w1] << (31 - ubc_table[n].b1))
                      ^ (W[ubc_table[n].w2] << (31 - ubc_table[n].b2)));
        v8u broken = (v8u)((ubc_table[n].parity ? ~x : x) >> 31);
        lo &= ~(broken & (uint32_t)ubc_table[n].dvs);
        if (ubc_table[n].dvs >> 32)
            hi &= ~(broken & (uint32_t)(ubc_table[n].dvs >> 32));
        if ((n & 15) == 15) {
            any = lo | hi;
            for (k = 0; k < NBATCH && !any[k]; k++)
                ;
            if (k == NBATCH)
                break;
        }
    }
    for (k = 0; k < NBATCH; k++)
        alive[k] = ((uint64_t)hi[k] << 32 | lo[k]) & (((uint64_t)1 << NDV) - 1);
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

/* Steps [from, to) from the state st (updated in place) on expanded words W. */
static void
run_steps(uint32_t st[5], const uint32_t W[80], int from, int to)
{
    uint32_t a = st[0], b = st[1], c = st[2], d = st[3], e = st[4];
    int i;
    for (i = from; i < to && i < 20; i++)
        STEP(F_CH, K1, i);
    for (; i < to && i < 40; i++)
        STEP(F_PAR, K2, i);
    for (; i < to && i < 60; i++)
        STEP(F_MAJ, K3, i);
    for (; i < to; i++)
        STEP(F_PAR, K4, i);
    st[0] = a; st[1] = b; st[2] = c; st[3] = d; st[4] = e;
}

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

/* The portable kernel: out = the compression of block p from ihv, W its
 * expansion, s58/s65 the states at the two test steps. */
static void
compress_portable(const uint32_t ihv[5], const unsigned char *p, uint32_t W[80],
                  uint32_t s58[5], uint32_t s65[5], uint32_t out[5])
{
    uint32_t a, b, c, d, e;
    int i;

    for (i = 0; i < 16; i++)
        W[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16
               | (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];

    /* Fully unrolled, the five words renamed instead of moved, and each
     * message word expanded in the step that uses it: the expansion then runs
     * beside the steps' serial chain instead of before it (3x faster here). */
    a = ihv[0]; b = ihv[1]; c = ihv[2]; d = ihv[3]; e = ihv[4];
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
    out[0] = ihv[0] + a; out[1] = ihv[1] + b; out[2] = ihv[2] + c;
    out[3] = ihv[3] + d; out[4] = ihv[4] + e;
}

#ifdef HAVE_SHANI_KERNEL
#include <cpuid.h>
#include <immintrin.h>

/* The SHA-NI kernel: the x86 SHA extensions run four steps per instruction
 * (sha1rnds4) and expand the message four words at a time (sha1msg1/2), but
 * never expose the states inside a group of four steps.  Only out and W are
 * made here; the test-step states are recomputed from W for the rare block
 * that the bit conditions leave a DV alive for (about one in 280). */
__attribute__((target("sha,sse4.1,ssse3"))) static void
compress_shani(const uint32_t ihv[5], const unsigned char *p, uint32_t W[80], uint32_t out[5])
{
    /* A register holds words i..i+3 of a group with word i in the top lane. */
    const __m128i bswap = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m128i abcd0 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)ihv), 0x1B);
    __m128i e0 = _mm_set_epi32((int)ihv[4], 0, 0, 0);
    __m128i m[4], abcd = abcd0, prev, ein;
    int g;

    for (g = 0; g < 4; g++)
        m[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), bswap);
    /* Each group's E comes from the A at the start of the group before it. */
#define GROUP(G, F)                                                                  \
    do {                                                                             \
        __m128i w_ = m[(G) & 3];                                                     \
        if ((G) >= 4) {                                                              \
            w_ = _mm_sha1msg2_epu32(_mm_xor_si128(_mm_sha1msg1_epu32(m[(G) & 3],   \
                                                                     m[((G) + 1) & 3]), \
                                                  m[((G) + 2) & 3]),                 \
                                    m[((G) + 3) & 3]);                               \
            m[(G) & 3] = w_;                                                         \
        }                                                                            \
        _mm_storeu_si128((__m128i *)(W + 4 * (G)), _mm_shuffle_epi32(w_, 0x1B));    \
        ein = (G) ? _mm_sha1nexte_epu32(prev, w_) : _mm_add_epi32(e0, w_);          \
        prev = abcd;                                                                 \
        abcd = _mm_sha1rnds4_epu32(abcd, ein, F);                                    \
    } while (0)
    GROUP(0, 0); GROUP(1, 0); GROUP(2, 0); GROUP(3, 0); GROUP(4, 0);
    GROUP(5, 1); GROUP(6, 1); GROUP(7, 1); GROUP(8, 1); GROUP(9, 1);
    GROUP(10, 2); GROUP(11, 2); GROUP(12, 2); GROUP(13, 2); GROUP(14, 2);
    GROUP(15, 3); GROUP(16, 3); GROUP(17, 3); GROUP(18, 3); GROUP(19, 3);
#undef GROUP
    e0 = _mm_sha1nexte_epu32(prev, e0);
    abcd = _mm_add_epi32(abcd, abcd0);
    _mm_storeu_si128((__m128i *)out, _mm_shuffle_epi32(abcd, 0x1B));
    out[4] = (uint32_t)_mm_extract_epi32(e0, 3);
}

static int
cpu_has_shani(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSSE3) || !(c & bit_SSE4_1))
        return 0;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));
}
#endif

/* Compress block p into ctx; known_alive: its DVs left by ubc_alive_batch, or
 * NULL to find them here. */
static void
compress(gdc_sha1_ctx *ctx, const unsigned char *p, const uint64_t *known_alive)
{
    uint32_t W[80], s58[5], s65[5], out[5];
    uint64_t alive = 0;
    int hit = 0;

#ifdef HAVE_SHANI_KERNEL
    if (use_shani) {
        compress_shani(ctx->ihv, p, W, out);
        if (ctx->detect) {
            alive = known_alive        ? *known_alive
                    : ctx->detect_all ? ((uint64_t)1 << NDV) - 1
                                      : ubc_alive(W);
            /* The DV checks need the test-step states, which only the
             * portable kernel gives: rare enough to compress twice. */
            if (alive)
                compress_portable(ctx->ihv, p, W, s58, s65, out);
        }
    } else
#endif
    {
        compress_portable(ctx->ihv, p, W, s58, s65, out);
        if (ctx->detect)
            alive = known_alive        ? *known_alive
                    : ctx->detect_all ? ((uint64_t)1 << NDV) - 1
                                      : ubc_alive(W);
    }
    hit = alive && (check_group(&groups[0], group_step[0], W, s58, out, alive)
                    || check_group(&groups[1], group_step[1], W, s65, out, alive));
    if (hit) {
        ctx->collision = 1;
        if (ctx->safe_hash) {
            /* "Safe hash": compress the offending block twice more, so the
             * digest is not the one the attacker aimed for. */
            int round, i;
            for (round = 0; round < 2; round++) {
                uint32_t st[5];
                memcpy(st, out, sizeof st);
                run_steps(st, W, 0, 80);
                for (i = 0; i < 5; i++)
                    out[i] += st[i];
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
        compress(ctx, ctx->buf, NULL);
        ctx->buflen = 0;
    }
    if (ctx->detect && !ctx->detect_all)
        while (len >= 64 * NBATCH) {
            uint64_t alive[NBATCH];
            int k;
            ubc_alive_batch(data, alive);
            for (k = 0; k < NBATCH; k++, data += 64)
                compress(ctx, data, &alive[k]);
            len -= 64 * NBATCH;
        }
    while (len >= 64) {
        compress(ctx, data, NULL);
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
