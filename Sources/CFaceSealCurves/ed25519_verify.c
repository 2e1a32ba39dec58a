// Ed25519 verification with precomputed multiples of the public key (faceseal_curves.h).
//
// Field elements mod p = 2^255 - 19 in radix 2^51 (five 64-bit limbs, 128-bit products); points on the twisted Edwards
// curve -x^2 + y^2 = 1 + d x^2 y^2 in extended coordinates, with the unified addition formulas of Hisil, Wong, Carter
// and Dawson (complete on this curve: d is not a square), in the forms of the Ed25519 paper's reference code. A
// table holds (k+1) * 256^j * P for j < 32, k < 8 in affine (y+x, y-x, 2dxy) form, so [a]P for a 253-bit scalar a in
// signed radix-16 digits is 64 mixed additions and 4 doublings; R' = [S]B - [h]A shares the doublings. Public data
// only: branches and table indices depend on public values.
#include "faceseal_curves.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

#define MASK51 ((uint64_t)0x7ffffffffffff)

typedef struct { uint64_t v[5]; } fe;
typedef struct { fe X, Y, Z, T; } ge_p3;      // x = X/Z, y = Y/Z, xy = T/Z
typedef struct { fe X, Y, Z, T; } ge_p1p1;    // x = X/Z, y = Y/T
typedef struct { fe X, Y, Z; } ge_p2;         // x = X/Z, y = Y/Z
typedef struct { fe yplusx, yminusx, xy2d; } ge_precomp;  // affine
typedef struct { fe YplusX, YminusX, Z, T2d; } ge_cached;

enum { ROWS = 32, COLUMNS = 8, LIMBS_PER_ENTRY = 15 };

// MARK: Field arithmetic

static void fe_carry(fe *h) {
    uint64_t c;
    c = h->v[0] >> 51; h->v[0] &= MASK51; h->v[1] += c;
    c = h->v[1] >> 51; h->v[1] &= MASK51; h->v[2] += c;
    c = h->v[2] >> 51; h->v[2] &= MASK51; h->v[3] += c;
    c = h->v[3] >> 51; h->v[3] &= MASK51; h->v[4] += c;
    c = h->v[4] >> 51; h->v[4] &= MASK51; h->v[0] += 19 * c;
}

static void fe_0(fe *h) { memset(h, 0, sizeof *h); }
static void fe_1(fe *h) { fe_0(h); h->v[0] = 1; }
static void fe_small(fe *h, uint64_t n) { fe_0(h); h->v[0] = n; }

// Limb bounds: sub, mul and sq leave limbs below 2^51 + 2^13 ("carried"); add of two carried values leaves them below
// 2^52.1, and of such a sum and a carried value below 2^52.7. Any of these may enter mul and sq (every product and sum
// stays within 128 bits, every carry within 64), but only carried values may be subtracted (2p's limbs must exceed the
// subtrahend's): where a sum is subtracted later, it is carried first (fe_add_carried).
static void fe_add(fe *h, const fe *f, const fe *g) {
    for (int i = 0; i < 5; i++) h->v[i] = f->v[i] + g->v[i];
}

static void fe_add_carried(fe *h, const fe *f, const fe *g) {
    fe_add(h, f, g);
    fe_carry(h);
}

// f + 2p - g: 2p's limbs exceed any carried limb of g.
static void fe_sub(fe *h, const fe *f, const fe *g) {
    h->v[0] = f->v[0] + 0xfffffffffffdaULL - g->v[0];
    for (int i = 1; i < 5; i++) h->v[i] = f->v[i] + 0xffffffffffffeULL - g->v[i];
    fe_carry(h);
}

static void fe_neg(fe *h, const fe *f) {
    fe zero;
    fe_0(&zero);
    fe_sub(h, &zero, f);
}

static void fe_mul(fe *h, const fe *f, const fe *g) {
    const uint64_t f0 = f->v[0], f1 = f->v[1], f2 = f->v[2], f3 = f->v[3], f4 = f->v[4];
    const uint64_t g0 = g->v[0], g1 = g->v[1], g2 = g->v[2], g3 = g->v[3], g4 = g->v[4];
    const uint64_t g1_19 = 19 * g1, g2_19 = 19 * g2, g3_19 = 19 * g3, g4_19 = 19 * g4;
    u128 r0 = (u128)f0 * g0 + (u128)f1 * g4_19 + (u128)f2 * g3_19 + (u128)f3 * g2_19 + (u128)f4 * g1_19;
    u128 r1 = (u128)f0 * g1 + (u128)f1 * g0 + (u128)f2 * g4_19 + (u128)f3 * g3_19 + (u128)f4 * g2_19;
    u128 r2 = (u128)f0 * g2 + (u128)f1 * g1 + (u128)f2 * g0 + (u128)f3 * g4_19 + (u128)f4 * g3_19;
    u128 r3 = (u128)f0 * g3 + (u128)f1 * g2 + (u128)f2 * g1 + (u128)f3 * g0 + (u128)f4 * g4_19;
    u128 r4 = (u128)f0 * g4 + (u128)f1 * g3 + (u128)f2 * g2 + (u128)f3 * g1 + (u128)f4 * g0;
    r1 += (uint64_t)(r0 >> 51);
    uint64_t h0 = (uint64_t)r0 & MASK51;
    r2 += (uint64_t)(r1 >> 51);
    uint64_t h1 = (uint64_t)r1 & MASK51;
    r3 += (uint64_t)(r2 >> 51);
    uint64_t h2 = (uint64_t)r2 & MASK51;
    r4 += (uint64_t)(r3 >> 51);
    uint64_t h3 = (uint64_t)r3 & MASK51;
    uint64_t c = (uint64_t)(r4 >> 51);
    uint64_t h4 = (uint64_t)r4 & MASK51;
    h0 += c * 19;
    h1 += h0 >> 51;
    h0 &= MASK51;
    h->v[0] = h0; h->v[1] = h1; h->v[2] = h2; h->v[3] = h3; h->v[4] = h4;
}

static void fe_sq(fe *h, const fe *f) {
    const uint64_t f0 = f->v[0], f1 = f->v[1], f2 = f->v[2], f3 = f->v[3], f4 = f->v[4];
    const uint64_t f0_2 = 2 * f0, f1_2 = 2 * f1, f1_38 = 38 * f1, f2_38 = 38 * f2, f3_38 = 38 * f3, f3_19 = 19 * f3,
                   f4_19 = 19 * f4;
    u128 r0 = (u128)f0 * f0 + (u128)f1_38 * f4 + (u128)f2_38 * f3;
    u128 r1 = (u128)f0_2 * f1 + (u128)f2_38 * f4 + (u128)f3_19 * f3;
    u128 r2 = (u128)f0_2 * f2 + (u128)f1 * f1 + (u128)f3_38 * f4;
    u128 r3 = (u128)f0_2 * f3 + (u128)f1_2 * f2 + (u128)f4_19 * f4;
    u128 r4 = (u128)f0_2 * f4 + (u128)f1_2 * f3 + (u128)f2 * f2;
    r1 += (uint64_t)(r0 >> 51);
    uint64_t h0 = (uint64_t)r0 & MASK51;
    r2 += (uint64_t)(r1 >> 51);
    uint64_t h1 = (uint64_t)r1 & MASK51;
    r3 += (uint64_t)(r2 >> 51);
    uint64_t h2 = (uint64_t)r2 & MASK51;
    r4 += (uint64_t)(r3 >> 51);
    uint64_t h3 = (uint64_t)r3 & MASK51;
    uint64_t c = (uint64_t)(r4 >> 51);
    uint64_t h4 = (uint64_t)r4 & MASK51;
    h0 += c * 19;
    h1 += h0 >> 51;
    h0 &= MASK51;
    h->v[0] = h0; h->v[1] = h1; h->v[2] = h2; h->v[3] = h3; h->v[4] = h4;
}

static void fe_sqn(fe *h, const fe *f, int n) {
    fe_sq(h, f);
    for (int i = 1; i < n; i++) fe_sq(h, h);
}

static void fe_frombytes(fe *h, const unsigned char s[32]) {
    uint64_t w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = 0;
        for (int j = 7; j >= 0; j--) w[i] = (w[i] << 8) | s[8 * i + j];
    }
    h->v[0] = w[0] & MASK51;
    h->v[1] = ((w[0] >> 51) | (w[1] << 13)) & MASK51;
    h->v[2] = ((w[1] >> 38) | (w[2] << 26)) & MASK51;
    h->v[3] = ((w[2] >> 25) | (w[3] << 39)) & MASK51;
    h->v[4] = (w[3] >> 12) & MASK51;  // bit 255 (the sign of x in a point encoding) is dropped
}

// The unique representative below p, little-endian.
static void fe_tobytes(unsigned char s[32], const fe *f) {
    fe t = *f;
    fe_carry(&t);
    fe_carry(&t);
    // Now 0 <= t < 2^255 with carried limbs. Adding 19 carries into bit 255 exactly when t >= p.
    t.v[0] += 19;
    fe_carry(&t);
    // t + 19 mod 2^255 (the wrap added 19 more when it carried); adding 2^255 - 19 and dropping bit 255 gives t mod p.
    t.v[0] += MASK51 + 1 - 19;
    for (int i = 1; i < 5; i++) t.v[i] += MASK51;
    t.v[1] += t.v[0] >> 51; t.v[0] &= MASK51;
    t.v[2] += t.v[1] >> 51; t.v[1] &= MASK51;
    t.v[3] += t.v[2] >> 51; t.v[2] &= MASK51;
    t.v[4] += t.v[3] >> 51; t.v[3] &= MASK51;
    t.v[4] &= MASK51;
    uint64_t w[4] = {
        t.v[0] | (t.v[1] << 51),
        (t.v[1] >> 13) | (t.v[2] << 38),
        (t.v[2] >> 26) | (t.v[3] << 25),
        (t.v[3] >> 39) | (t.v[4] << 12),
    };
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++) s[8 * i + j] = (unsigned char)(w[i] >> (8 * j));
}

static int fe_isnegative(const fe *f) {
    unsigned char s[32];
    fe_tobytes(s, f);
    return s[0] & 1;
}

static int fe_iszero(const fe *f) {
    unsigned char s[32];
    fe_tobytes(s, f);
    unsigned char any = 0;
    for (int i = 0; i < 32; i++) any |= s[i];
    return any == 0;
}

// z^(2^250 - 1), and z^11 on the way (the start of both exponentiations below).
static void fe_pow2250m1(fe *out, fe *z11, const fe *z) {
    fe t0, t1, t2;
    fe_sq(&t0, z);                 // z^2
    fe_sqn(&t1, &t0, 2);           // z^8
    fe_mul(&t1, z, &t1);           // z^9
    fe_mul(z11, &t0, &t1);         // z^11
    fe_sq(&t0, z11);               // z^22
    fe_mul(&t1, &t1, &t0);         // z^(2^5 - 1)
    fe_sqn(&t0, &t1, 5);
    fe_mul(&t1, &t0, &t1);         // z^(2^10 - 1)
    fe_sqn(&t0, &t1, 10);
    fe_mul(&t0, &t0, &t1);         // z^(2^20 - 1)
    fe_sqn(&t2, &t0, 20);
    fe_mul(&t0, &t2, &t0);         // z^(2^40 - 1)
    fe_sqn(&t0, &t0, 10);
    fe_mul(&t1, &t0, &t1);         // z^(2^50 - 1)
    fe_sqn(&t0, &t1, 50);
    fe_mul(&t0, &t0, &t1);         // z^(2^100 - 1)
    fe_sqn(&t2, &t0, 100);
    fe_mul(&t0, &t2, &t0);         // z^(2^200 - 1)
    fe_sqn(&t0, &t0, 50);
    fe_mul(out, &t0, &t1);         // z^(2^250 - 1)
}

// z^(p - 2) = 1/z.
static void fe_invert(fe *out, const fe *z) {
    fe t, z11;
    fe_pow2250m1(&t, &z11, z);
    fe_sqn(&t, &t, 5);             // z^(2^255 - 32)
    fe_mul(out, &t, &z11);         // z^(2^255 - 21)
}

// z^((p - 5) / 8) = z^(2^252 - 3).
static void fe_pow22523(fe *out, const fe *z) {
    fe t, z11;
    fe_pow2250m1(&t, &z11, z);
    fe_sqn(&t, &t, 2);             // z^(2^252 - 4)
    fe_mul(out, &t, z);
}

// MARK: Constants, computed once

static fe curve_d, curve_d2, sqrt_m1;
static pthread_once_t constants_once = PTHREAD_ONCE_INIT;

static void make_constants(void) {
    fe n, inverse;
    fe_small(&n, 121666);
    fe_invert(&inverse, &n);
    fe_small(&n, 121665);
    fe_neg(&n, &n);
    fe_mul(&curve_d, &n, &inverse);          // d = -121665/121666
    fe_add(&curve_d2, &curve_d, &curve_d);
    // 2 is not a square mod p (p = 5 mod 8), so 2^((p-1)/4) = (2^((p-5)/8))^2 * 2 is a square root of -1.
    fe two, t;
    fe_small(&two, 2);
    fe_pow22523(&t, &two);
    fe_sq(&t, &t);
    fe_mul(&sqrt_m1, &t, &two);
}

// MARK: Points

static void ge_p3_0(ge_p3 *h) {
    fe_0(&h->X);
    fe_1(&h->Y);
    fe_1(&h->Z);
    fe_0(&h->T);
}

static void ge_p1p1_to_p2(ge_p2 *r, const ge_p1p1 *p) {
    fe_mul(&r->X, &p->X, &p->T);
    fe_mul(&r->Y, &p->Y, &p->Z);
    fe_mul(&r->Z, &p->Z, &p->T);
}

static void ge_p1p1_to_p3(ge_p3 *r, const ge_p1p1 *p) {
    fe_mul(&r->X, &p->X, &p->T);
    fe_mul(&r->Y, &p->Y, &p->Z);
    fe_mul(&r->Z, &p->Z, &p->T);
    fe_mul(&r->T, &p->X, &p->Y);
}

static void ge_p2_dbl(ge_p1p1 *r, const ge_p2 *p) {
    fe t0;
    fe_sq(&r->X, &p->X);
    fe_sq(&r->Z, &p->Y);
    fe_sq(&r->T, &p->Z);
    fe_add(&r->T, &r->T, &r->T);
    fe_add(&r->Y, &p->X, &p->Y);
    fe_sq(&t0, &r->Y);
    fe_add_carried(&r->Y, &r->Z, &r->X);
    fe_sub(&r->Z, &r->Z, &r->X);
    fe_sub(&r->X, &t0, &r->Y);
    fe_sub(&r->T, &r->T, &r->Z);
}

static void ge_p3_to_p2(ge_p2 *r, const ge_p3 *p) {
    r->X = p->X;
    r->Y = p->Y;
    r->Z = p->Z;
}

static void ge_p3_dbl(ge_p1p1 *r, const ge_p3 *p) {
    ge_p2 q;
    ge_p3_to_p2(&q, p);
    ge_p2_dbl(r, &q);
}

static void ge_p3_to_cached(ge_cached *r, const ge_p3 *p) {
    fe_add(&r->YplusX, &p->Y, &p->X);
    fe_sub(&r->YminusX, &p->Y, &p->X);
    r->Z = p->Z;
    fe_mul(&r->T2d, &p->T, &curve_d2);
}

static void ge_add(ge_p1p1 *r, const ge_p3 *p, const ge_cached *q) {
    fe t0;
    fe_add(&r->X, &p->Y, &p->X);
    fe_sub(&r->Y, &p->Y, &p->X);
    fe_mul(&r->Z, &r->X, &q->YplusX);
    fe_mul(&r->Y, &r->Y, &q->YminusX);
    fe_mul(&r->T, &q->T2d, &p->T);
    fe_mul(&r->X, &p->Z, &q->Z);
    fe_add(&t0, &r->X, &r->X);
    fe_sub(&r->X, &r->Z, &r->Y);
    fe_add(&r->Y, &r->Z, &r->Y);
    fe_add(&r->Z, &t0, &r->T);
    fe_sub(&r->T, &t0, &r->T);
}

// p + q (mixed: q affine).
static void ge_madd(ge_p1p1 *r, const ge_p3 *p, const ge_precomp *q) {
    fe t0;
    fe_add(&r->X, &p->Y, &p->X);
    fe_sub(&r->Y, &p->Y, &p->X);
    fe_mul(&r->Z, &r->X, &q->yplusx);
    fe_mul(&r->Y, &r->Y, &q->yminusx);
    fe_mul(&r->T, &q->xy2d, &p->T);
    fe_add(&t0, &p->Z, &p->Z);
    fe_sub(&r->X, &r->Z, &r->Y);
    fe_add(&r->Y, &r->Z, &r->Y);
    fe_add(&r->Z, &t0, &r->T);
    fe_sub(&r->T, &t0, &r->T);
}

// p - q (mixed: q affine).
static void ge_msub(ge_p1p1 *r, const ge_p3 *p, const ge_precomp *q) {
    fe t0;
    fe_add(&r->X, &p->Y, &p->X);
    fe_sub(&r->Y, &p->Y, &p->X);
    fe_mul(&r->Z, &r->X, &q->yminusx);
    fe_mul(&r->Y, &r->Y, &q->yplusx);
    fe_mul(&r->T, &q->xy2d, &p->T);
    fe_add(&t0, &p->Z, &p->Z);
    fe_sub(&r->X, &r->Z, &r->Y);
    fe_add(&r->Y, &r->Z, &r->Y);
    fe_sub(&r->Z, &t0, &r->T);
    fe_add(&r->T, &t0, &r->T);
}

static void ge_tobytes(unsigned char s[32], const fe *X, const fe *Y, const fe *Z) {
    fe recip, x, y;
    fe_invert(&recip, Z);
    fe_mul(&x, X, &recip);
    fe_mul(&y, Y, &recip);
    fe_tobytes(s, &y);
    s[31] ^= (unsigned char)(fe_isnegative(&x) << 7);
}

// The point of a canonical encoding (x's sign in bit 255), or -1.
static int ge_frombytes(ge_p3 *h, const unsigned char s[32]) {
    fe u, v, v3, vxx, check;
    fe_frombytes(&h->Y, s);
    unsigned char again[32];
    fe_tobytes(again, &h->Y);
    if (memcmp(again, s, 31) != 0 || again[31] != (s[31] & 0x7f)) return -1;  // y >= p
    fe_1(&h->Z);
    fe_sq(&u, &h->Y);
    fe_mul(&v, &u, &curve_d);
    fe_sub(&u, &u, &h->Z);         // u = y^2 - 1
    fe_add(&v, &v, &h->Z);         // v = d y^2 + 1
    fe_sq(&v3, &v);
    fe_mul(&v3, &v3, &v);          // v^3
    fe_sq(&h->X, &v3);
    fe_mul(&h->X, &h->X, &v);
    fe_mul(&h->X, &h->X, &u);      // u v^7
    fe_pow22523(&h->X, &h->X);     // (u v^7)^((p-5)/8)
    fe_mul(&h->X, &h->X, &v3);
    fe_mul(&h->X, &h->X, &u);      // x = u v^3 (u v^7)^((p-5)/8)
    fe_sq(&vxx, &h->X);
    fe_mul(&vxx, &vxx, &v);
    fe_sub(&check, &vxx, &u);
    if (!fe_iszero(&check)) {
        fe_add(&check, &vxx, &u);
        if (!fe_iszero(&check)) return -1;  // (y^2 - 1)/(d y^2 + 1) is not a square: not a point
        fe_mul(&h->X, &h->X, &sqrt_m1);
    }
    if (fe_isnegative(&h->X) != (s[31] >> 7)) {
        if (fe_iszero(&h->X)) return -1;     // x = 0 has no negative encoding
        fe_neg(&h->X, &h->X);
    }
    fe_mul(&h->T, &h->X, &h->Y);
    return 0;
}

// MARK: Tables

size_t fs_ed25519_table_size(void) { return (size_t)ROWS * COLUMNS * LIMBS_PER_ENTRY * sizeof(uint64_t); }

static const ge_precomp *table_entry(const uint64_t *table, int row, int column) {
    return (const ge_precomp *)(const void *)(table + ((size_t)row * COLUMNS + (size_t)column) * LIMBS_PER_ENTRY);
}

int fs_ed25519_table_init(uint64_t *table, const unsigned char pk[32]) {
    pthread_once(&constants_once, make_constants);
    ge_p3 point;
    if (ge_frombytes(&point, pk) != 0) return -1;
    enum { COUNT = ROWS * COLUMNS };
    ge_p3 *multiples = malloc(sizeof(ge_p3) * COUNT);
    fe *products = malloc(sizeof(fe) * COUNT);
    if (multiples == NULL || products == NULL) {
        free(multiples);
        free(products);
        return -1;
    }
    // Row j: (k+1) 256^j P, from 256^j P by additions; the next row starts 8 doublings later.
    ge_p3 base = point;
    for (int row = 0; row < ROWS; row++) {
        ge_cached cached;
        ge_p1p1 sum;
        ge_p3_to_cached(&cached, &base);
        multiples[row * COLUMNS] = base;
        for (int column = 1; column < COLUMNS; column++) {
            ge_add(&sum, &multiples[row * COLUMNS + column - 1], &cached);
            ge_p1p1_to_p3(&multiples[row * COLUMNS + column], &sum);
        }
        for (int i = 0; i < 8; i++) {
            ge_p3_dbl(&sum, &base);
            ge_p1p1_to_p3(&base, &sum);
        }
    }
    // One inversion for every Z (Montgomery's trick), then the affine (y+x, y-x, 2dxy).
    products[0] = multiples[0].Z;
    for (int i = 1; i < COUNT; i++) fe_mul(&products[i], &products[i - 1], &multiples[i].Z);
    fe inverse;
    fe_invert(&inverse, &products[COUNT - 1]);
    for (int i = COUNT - 1; i >= 0; i--) {
        fe zinv, x, y;
        if (i > 0) {
            fe_mul(&zinv, &inverse, &products[i - 1]);
            fe_mul(&inverse, &inverse, &multiples[i].Z);
        } else {
            zinv = inverse;
        }
        fe_mul(&x, &multiples[i].X, &zinv);
        fe_mul(&y, &multiples[i].Y, &zinv);
        ge_precomp *entry = (ge_precomp *)(void *)(table + (size_t)i * LIMBS_PER_ENTRY);
        fe_add(&entry->yplusx, &y, &x);
        fe_sub(&entry->yminusx, &y, &x);
        fe_mul(&entry->xy2d, &x, &y);
        fe_mul(&entry->xy2d, &entry->xy2d, &curve_d2);
    }
    free(multiples);
    free(products);
    return 0;
}

// MARK: Verification

// a (little-endian, a[31] <= 127) as 64 signed digits e[i] in [-8, 8], a = sum e[i] 16^i.
static void recode16(signed char e[64], const unsigned char a[32]) {
    for (int i = 0; i < 32; i++) {
        e[2 * i] = (signed char)(a[i] & 15);
        e[2 * i + 1] = (signed char)((a[i] >> 4) & 15);
    }
    signed char carry = 0;
    for (int i = 0; i < 63; i++) {
        e[i] = (signed char)(e[i] + carry);
        carry = (signed char)((e[i] + 8) >> 4);
        e[i] = (signed char)(e[i] - (carry << 4));
    }
    e[63] = (signed char)(e[63] + carry);
}

// h += digit * 16^(2 row or 2 row + 1 before the final doublings) * P, negated when `subtract`.
static void accumulate(ge_p3 *h, const uint64_t *table, int row, signed char digit, int subtract) {
    if (digit == 0) return;
    ge_p1p1 r;
    int negative = (digit < 0) != (subtract != 0);
    const ge_precomp *entry = table_entry(table, row, (digit < 0 ? -digit : digit) - 1);
    if (negative) ge_msub(&r, h, entry); else ge_madd(&r, h, entry);
    ge_p1p1_to_p3(h, &r);
}

// L = 2^252 + 27742317777372353535851937790883648493, little-endian.
static const unsigned char group_order[32] = {
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
};

static int below_group_order(const unsigned char s[32]) {
    for (int i = 31; i >= 0; i--) {
        if (s[i] != group_order[i]) return s[i] < group_order[i];
    }
    return 0;
}

// Whether an encoded point, sign bit ignored, is one libsodium refuses as of small order: y = 0 (order 4), y = 1
// (identity), y = -1 (order 2), the two y of the order-8 points, and the non-canonical y = p and y = p + 1.
static int has_small_order(const unsigned char s[32]) {
    static const unsigned char blocklist[7][32] = {
        {0},
        {0x01},
        {0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef, 0x98, 0xf0,
         0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05},
        {0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10, 0x67, 0x0f,
         0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a},
        {0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
         0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
        {0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
         0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
        {0xee, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
         0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
    };
    for (int i = 0; i < 7; i++) {
        if (memcmp(s, blocklist[i], 31) == 0 && (s[31] & 0x7f) == blocklist[i][31]) return 1;
    }
    return 0;
}

int fs_ed25519_verify_with_tables(const uint64_t *base_table, const uint64_t *key_table, const unsigned char sig[64],
                                  const unsigned char h[32]) {
    if (!below_group_order(sig + 32) || has_small_order(sig)) return -1;
    if (h[31] > 127) return -1;  // the caller reduces h mod L
    signed char es[64], eh[64];
    recode16(es, sig + 32);
    recode16(eh, h);
    ge_p3 acc;
    ge_p3_0(&acc);
    for (int i = 1; i < 64; i += 2) {
        accumulate(&acc, base_table, i / 2, es[i], 0);
        accumulate(&acc, key_table, i / 2, eh[i], 1);
    }
    ge_p1p1 r;
    ge_p2 s;
    ge_p3_dbl(&r, &acc);
    ge_p1p1_to_p2(&s, &r);
    ge_p2_dbl(&r, &s);
    ge_p1p1_to_p2(&s, &r);
    ge_p2_dbl(&r, &s);
    ge_p1p1_to_p2(&s, &r);
    ge_p2_dbl(&r, &s);
    ge_p1p1_to_p3(&acc, &r);
    for (int i = 0; i < 64; i += 2) {
        accumulate(&acc, base_table, i / 2, es[i], 0);
        accumulate(&acc, key_table, i / 2, eh[i], 1);
    }
    unsigned char check[32];
    ge_tobytes(check, &acc.X, &acc.Y, &acc.Z);
    return memcmp(check, sig, 32) == 0 ? 0 : -1;
}
