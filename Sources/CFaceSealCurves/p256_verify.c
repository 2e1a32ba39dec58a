// ECDSA P-256 verification with precomputed multiples of the public key (faceseal_curves.h).
//
// Integers mod p and mod n in four 64-bit limbs, Montgomery form (R = 2^256) for products; points in Jacobian
// coordinates (a = -3), tables of affine points. A key's table holds (k+1) * 65536^j * Q for j < 17, k < 8, so [u]Q
// for a 256-bit u in 65 signed radix-16 digits is at most 65 mixed additions and 12 doublings (a comb of four phases,
// 4 bits apart). The generator's one table, shared by every verification and so mostly in cache, is wider: (k+1) *
// 65536^j * G for k < 128, so [u]G in 33 signed radix-256 digits adds in two of the four phases, at most 33 additions;
// [u1]G + [u2]Q shares the doublings. (A key's rows 256^j apart would halve the doublings but double its table, 17 KB
// a key: with a server's many device keys the tables' cache misses cost more than the 8 doublings.) Public data only
// (keys, signatures, hashes): branches and table indices depend on public values, and inverses use the variable-time
// binary algorithm.
#include "faceseal_curves.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;
typedef struct { uint64_t v[4]; } u256;

typedef struct {
    u256 m;       // the odd modulus
    uint64_t n0;  // -m^-1 mod 2^64
    u256 one;     // R mod m (1 in Montgomery form)
    u256 rr;      // R^2 mod m
    u256 rrr;     // R^3 mod m
} modulus;

typedef struct { u256 x, y; } affine;           // Montgomery form
typedef struct { u256 X, Y, Z; int infinity; } jacobian;  // x = X/Z^2, y = Y/Z^3, Montgomery form

enum { ROWS = 17, COLUMNS = 8, G_COLUMNS = 128, WORDS_PER_ENTRY = 8, SLACK_WORDS = 8 };

// MARK: Multi-precision helpers

static const u256 zero256 = {{0, 0, 0, 0}};

static int is_zero(const u256 *a) { return (a->v[0] | a->v[1] | a->v[2] | a->v[3]) == 0; }

static int equal(const u256 *a, const u256 *b) { return memcmp(a, b, sizeof *a) == 0; }

// a >= b
static int at_least(const u256 *a, const u256 *b) {
    for (int i = 3; i >= 0; i--) {
        if (a->v[i] != b->v[i]) return a->v[i] > b->v[i];
    }
    return 1;
}

// r = a + b, returns the carry out.
static inline uint64_t add256(u256 *r, const u256 *a, const u256 *b) {
    u128 c = 0;
    for (int i = 0; i < 4; i++) {
        c += (u128)a->v[i] + b->v[i];
        r->v[i] = (uint64_t)c;
        c >>= 64;
    }
    return (uint64_t)c;
}

// r = a - b, returns the borrow out (0 or 1).
static inline uint64_t sub256(u256 *r, const u256 *a, const u256 *b) {
    u128 d = 0;
    for (int i = 0; i < 4; i++) {
        d = (u128)a->v[i] - b->v[i] - (uint64_t)(d >> 127);
        r->v[i] = (uint64_t)d;
    }
    return (uint64_t)(d >> 127);
}

static void from_bytes(u256 *r, const unsigned char b[32]) {  // big-endian
    for (int i = 0; i < 4; i++) {
        uint64_t w = 0;
        for (int j = 0; j < 8; j++) w = (w << 8) | b[8 * (3 - i) + j];
        r->v[i] = w;
    }
}

// MARK: Arithmetic mod m (inputs below m, results below m)

static inline void mod_add(u256 *r, const u256 *a, const u256 *b, const modulus *M) {
    u256 sum, reduced;
    uint64_t carry = add256(&sum, a, b);
    uint64_t borrow = sub256(&reduced, &sum, &M->m);
    *r = (carry || !borrow) ? reduced : sum;
}

static inline void mod_sub(u256 *r, const u256 *a, const u256 *b, const modulus *M) {
    u256 d;
    if (sub256(&d, a, b)) add256(&d, &d, &M->m);
    *r = d;
}

// a * b / R mod m (CIOS), with m's limbs and n0 as arguments an inlined call can fold (P-256's p: n0 = 1, a zero limb).
static inline __attribute__((always_inline)) void mont_mul_limbs(u256 *r, const u256 *a, const u256 *b, const uint64_t m[4],
                                                                uint64_t n0) {
    uint64_t t[6] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        u128 c = 0;
        for (int j = 0; j < 4; j++) {
            c += (u128)a->v[j] * b->v[i] + t[j];
            t[j] = (uint64_t)c;
            c >>= 64;
        }
        c += t[4];
        t[4] = (uint64_t)c;
        t[5] = (uint64_t)(c >> 64);
        uint64_t q = t[0] * n0;
        c = ((u128)q * m[0] + t[0]) >> 64;
        for (int j = 1; j < 4; j++) {
            c += (u128)q * m[j] + t[j];
            t[j - 1] = (uint64_t)c;
            c >>= 64;
        }
        c += t[4];
        t[3] = (uint64_t)c;
        t[4] = t[5] + (uint64_t)(c >> 64);
    }
    u256 low = {{t[0], t[1], t[2], t[3]}}, reduced;
    const u256 modulus_value = {{m[0], m[1], m[2], m[3]}};
    uint64_t borrow = sub256(&reduced, &low, &modulus_value);
    *r = (t[4] || !borrow) ? reduced : low;
}

static void mont_mul(u256 *r, const u256 *a, const u256 *b, const modulus *M) { mont_mul_limbs(r, a, b, M->m.v, M->n0); }

static const u256 p256_modulus = {{0xFFFFFFFFFFFFFFFFULL, 0x00000000FFFFFFFFULL, 0x0000000000000000ULL, 0xFFFFFFFF00000001ULL}};

// Arithmetic mod p (the points' arithmetic). fmul is mont_mul for P-256's p unrolled: n0 = 1, so each round's q is
// the low limb, q p's lowest limb (2^64 - 1) just carries q, its third limb is 0, and only q p1 and q p3 need products.
// Its four rounds are unrolled too (clang otherwise keeps the loop, and the limbs go through memory: +20 % instructions).
static inline void fmul(u256 *r, const u256 *a, const u256 *b) {
    const uint64_t a0 = a->v[0], a1 = a->v[1], a2 = a->v[2], a3 = a->v[3];
    const uint64_t p1 = 0x00000000FFFFFFFFULL, p3 = 0xFFFFFFFF00000001ULL;
    uint64_t t0 = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0, t5, q;
    u128 c;
#pragma clang loop unroll(full)
    for (int i = 0; i < 4; i++) {
        const uint64_t bi = b->v[i];
        c = (u128)a0 * bi + t0; t0 = (uint64_t)c; c >>= 64;
        c += (u128)a1 * bi + t1; t1 = (uint64_t)c; c >>= 64;
        c += (u128)a2 * bi + t2; t2 = (uint64_t)c; c >>= 64;
        c += (u128)a3 * bi + t3; t3 = (uint64_t)c; c >>= 64;
        c += t4; t4 = (uint64_t)c; t5 = (uint64_t)(c >> 64);
        q = t0;
        c = (u128)q + ((u128)q * p1 + t1); t0 = (uint64_t)c; c >>= 64;  // (t0 + q p0) / 2^64 = q
        c += t2; t1 = (uint64_t)c; c >>= 64;
        c += (u128)q * p3 + t3; t2 = (uint64_t)c; c >>= 64;
        c += t4; t3 = (uint64_t)c; c >>= 64;
        t4 = t5 + (uint64_t)c;
    }
    u256 low = {{t0, t1, t2, t3}}, reduced;
    uint64_t borrow = sub256(&reduced, &low, &p256_modulus);
    *r = (t4 || !borrow) ? reduced : low;
}
static inline void fsq(u256 *r, const u256 *a) { fmul(r, a, a); }
static inline void fadd(u256 *r, const u256 *a, const u256 *b) {
    u256 sum, reduced;
    uint64_t carry = add256(&sum, a, b);
    uint64_t borrow = sub256(&reduced, &sum, &p256_modulus);
    *r = (carry || !borrow) ? reduced : sum;
}
static inline void fsub(u256 *r, const u256 *a, const u256 *b) {
    u256 d;
    if (sub256(&d, a, b)) add256(&d, &d, &p256_modulus);
    *r = d;
}


// x 2^-k mod m for 0 < k < 64 and x < m: (x + t m) / 2^k, where t = x (-m^-1) mod 2^k makes the sum a multiple of
// 2^k; t < 2^k, so the sum is below 2^k m and the quotient below m.
static void divide_by_power_of_two(u256 *x, int k, const modulus *M) {
    const uint64_t t = (x->v[0] * M->n0) & ((UINT64_C(1) << k) - 1);
    uint64_t sum[5];
    unsigned __int128 carry = 0;
    for (int i = 0; i < 4; i++) {
        carry += (unsigned __int128)t * M->m.v[i] + x->v[i];
        sum[i] = (uint64_t)carry;
        carry >>= 64;
    }
    sum[4] = (uint64_t)carry;
    for (int i = 0; i < 4; i++) x->v[i] = (sum[i] >> k) | (sum[i + 1] << (64 - k));
}

// Divides u by its largest power of two and x by the same power mod m (u != 0).
static void remove_twos(u256 *u, u256 *x, const modulus *M) {
    while ((u->v[0] & 1) == 0) {
        const int k = u->v[0] == 0 ? 63 : __builtin_ctzll(u->v[0]);
        for (int i = 0; i < 3; i++) u->v[i] = (u->v[i] >> k) | (u->v[i + 1] << (64 - k));
        u->v[3] >>= k;
        divide_by_power_of_two(x, k, M);
    }
}

// a^-1 mod m for 0 < a < m, normal form (binary extended Euclid; m an odd prime). Invariants: x1 a = u and x2 a = v
// (mod m); each round strips u's and v's factors of two at once (the matching division of x1 and x2 by 2^k is one
// Montgomery-style reduction) and subtracts the smaller from the larger. Variable time: used on public values only.
static void mod_inverse(u256 *r, const u256 *a, const modulus *M) {
    u256 u = *a, v = M->m, x1 = {{1, 0, 0, 0}}, x2 = zero256;
    const u256 one = {{1, 0, 0, 0}};
    while (!equal(&u, &one) && !equal(&v, &one)) {
        remove_twos(&u, &x1, M);
        remove_twos(&v, &x2, M);
        if (at_least(&u, &v)) {
            sub256(&u, &u, &v);
            mod_sub(&x1, &x1, &x2, M);
        } else {
            sub256(&v, &v, &u);
            mod_sub(&x2, &x2, &x1, M);
        }
    }
    *r = equal(&u, &one) ? x1 : x2;
}

// The Montgomery form of a^-1, for a in Montgomery form (a != 0).
static void mont_inverse(u256 *r, const u256 *a, const modulus *M) {
    u256 inverse;
    mod_inverse(&inverse, a, M);        // (a R)^-1
    mont_mul(r, &inverse, &M->rrr, M);  // (a R)^-1 R^3 / R = a^-1 R
}

static void modulus_init(modulus *M, const u256 *m) {
    M->m = *m;
    uint64_t inverse = 1;  // m^-1 mod 2^64 by Newton's iteration (m odd)
    for (int i = 0; i < 6; i++) inverse *= 2 - m->v[0] * inverse;
    M->n0 = (uint64_t)0 - inverse;
    u256 x = {{1, 0, 0, 0}};
    for (int i = 0; i < 256; i++) mod_add(&x, &x, &x, M);
    M->one = x;
    for (int i = 0; i < 256; i++) mod_add(&x, &x, &x, M);
    M->rr = x;
    mont_mul(&M->rrr, &M->rr, &M->rr, M);
}

// MARK: Curve constants, set up once

static modulus field, order;
static u256 curve_b, three;  // Montgomery form (mod p)
static affine generator;
static pthread_once_t constants_once = PTHREAD_ONCE_INIT;

static void make_constants(void) {
    const u256 p = {{0xFFFFFFFFFFFFFFFFULL, 0x00000000FFFFFFFFULL, 0x0000000000000000ULL, 0xFFFFFFFF00000001ULL}};
    const u256 n = {{0xF3B9CAC2FC632551ULL, 0xBCE6FAADA7179E84ULL, 0xFFFFFFFFFFFFFFFFULL, 0xFFFFFFFF00000000ULL}};
    const u256 b = {{0x3BCE3C3E27D2604BULL, 0x651D06B0CC53B0F6ULL, 0xB3EBBD55769886BCULL, 0x5AC635D8AA3A93E7ULL}};
    const u256 gx = {{0xF4A13945D898C296ULL, 0x77037D812DEB33A0ULL, 0xF8BCE6E563A440F2ULL, 0x6B17D1F2E12C4247ULL}};
    const u256 gy = {{0xCBB6406837BF51F5ULL, 0x2BCE33576B315ECEULL, 0x8EE7EB4A7C0F9E16ULL, 0x4FE342E2FE1A7F9BULL}};
    const u256 three_normal = {{3, 0, 0, 0}};
    modulus_init(&field, &p);
    modulus_init(&order, &n);
    mont_mul(&curve_b, &b, &field.rr, &field);
    mont_mul(&three, &three_normal, &field.rr, &field);
    mont_mul(&generator.x, &gx, &field.rr, &field);
    mont_mul(&generator.y, &gy, &field.rr, &field);
}

// MARK: Points

static void point_double(jacobian *r, const jacobian *a) {
    if (a->infinity || is_zero(&a->Y)) {
        r->infinity = 1;
        return;
    }
    u256 delta, gamma, beta, alpha, t0, t1;
    fsq(&delta, &a->Z);
    fsq(&gamma, &a->Y);
    fmul(&beta, &a->X, &gamma);
    fsub(&t0, &a->X, &delta);
    fadd(&t1, &a->X, &delta);
    fmul(&t0, &t0, &t1);
    fadd(&alpha, &t0, &t0);
    fadd(&alpha, &alpha, &t0);                         // 3 (X - delta)(X + delta)
    u256 X3, Y3, Z3, beta4, beta8;
    fadd(&beta4, &beta, &beta);
    fadd(&beta4, &beta4, &beta4);
    fadd(&beta8, &beta4, &beta4);
    fsq(&X3, &alpha);
    fsub(&X3, &X3, &beta8);                      // alpha^2 - 8 beta
    fadd(&t0, &a->Y, &a->Z);
    fsq(&Z3, &t0);
    fsub(&Z3, &Z3, &gamma);
    fsub(&Z3, &Z3, &delta);                      // (Y + Z)^2 - gamma - delta
    fsub(&t0, &beta4, &X3);
    fmul(&Y3, &alpha, &t0);
    fsq(&t1, &gamma);
    fadd(&t1, &t1, &t1);
    fadd(&t1, &t1, &t1);
    fadd(&t1, &t1, &t1);
    fsub(&Y3, &Y3, &t1);                         // alpha (4 beta - X3) - 8 gamma^2
    r->X = X3;
    r->Y = Y3;
    r->Z = Z3;
    r->infinity = 0;
}

// r = a + (x, y) (or a + (x, -y) when `negate`).
static void point_add_affine(jacobian *r, const jacobian *a, const affine *q, int negate) {
    u256 y;
    if (negate) fsub(&y, &zero256, &q->y); else y = q->y;
    if (a->infinity) {
        r->X = q->x;
        r->Y = y;
        r->Z = field.one;
        r->infinity = 0;
        return;
    }
    u256 z1z1, u2, s2, h, rr;
    fsq(&z1z1, &a->Z);
    fmul(&u2, &q->x, &z1z1);
    fmul(&s2, &y, &a->Z);
    fmul(&s2, &s2, &z1z1);
    fsub(&h, &u2, &a->X);
    fsub(&rr, &s2, &a->Y);
    if (is_zero(&h)) {
        if (is_zero(&rr)) {
            jacobian same = *a;
            point_double(r, &same);
        } else {
            r->infinity = 1;
        }
        return;
    }
    u256 hh, i, j, v, t0, X3, Y3, Z3;
    fsq(&hh, &h);
    fadd(&i, &hh, &hh);
    fadd(&i, &i, &i);                            // I = 4 HH
    fmul(&j, &h, &i);                           // J = H I
    fadd(&rr, &rr, &rr);                         // r = 2 (S2 - Y1)
    fmul(&v, &a->X, &i);                        // V = X1 I
    fsq(&X3, &rr);
    fsub(&X3, &X3, &j);
    fsub(&X3, &X3, &v);
    fsub(&X3, &X3, &v);                          // r^2 - J - 2V
    fsub(&t0, &v, &X3);
    fmul(&Y3, &rr, &t0);
    fmul(&t0, &a->Y, &j);
    fadd(&t0, &t0, &t0);
    fsub(&Y3, &Y3, &t0);                         // r (V - X3) - 2 Y1 J
    fadd(&t0, &a->Z, &h);
    fsq(&Z3, &t0);
    fsub(&Z3, &Z3, &z1z1);
    fsub(&Z3, &Z3, &hh);                         // (Z1 + H)^2 - Z1Z1 - HH
    r->X = X3;
    r->Y = Y3;
    r->Z = Z3;
    r->infinity = 0;
}

static void to_affine(affine *r, const jacobian *a) {
    u256 zinv, zinv2, zinv3;
    mont_inverse(&zinv, &a->Z, &field);
    fsq(&zinv2, &zinv);
    fmul(&zinv3, &zinv2, &zinv);
    fmul(&r->x, &a->X, &zinv2);
    fmul(&r->y, &a->Y, &zinv3);
}

// MARK: Tables

size_t fs_p256_generator_table_size(void) { return (size_t)(ROWS * G_COLUMNS * WORDS_PER_ENTRY + SLACK_WORDS) * sizeof(uint64_t); }
size_t fs_p256_table_size(void) { return (size_t)(ROWS * COLUMNS * WORDS_PER_ENTRY + SLACK_WORDS) * sizeof(uint64_t); }

// A table's entries start at the first 64-byte boundary after its first word, so each entry is exactly one cache line
// (an entry across two lines costs two misses); the first word records that start's distance from the buffer, in words.
static uint64_t *entries_start(uint64_t *table) {
    return (uint64_t *)(((uintptr_t)(table + 1) + 63) & ~(uintptr_t)63);
}

// The entries of a table made by table_init/generator_table_init, or NULL when the buffer is not where it was made
// (a copy at another alignment would read its entries a few words off).
static const uint64_t *entries_of(const uint64_t *table) {
    const uint64_t *start = entries_start((uint64_t *)(uintptr_t)table);
    return table[0] == (uint64_t)(start - table) ? start : NULL;
}

// Row j: (k+1) 65536^j P for k < `columns`; the row's base in affine form (one inversion a row), its other multiples made
// affine together at the end (one inversion for all). -1 when memory is short.
static int build_table(uint64_t *buffer, const affine *point, int columns) {
    const int count = ROWS * columns;
    uint64_t *table = entries_start(buffer);
    buffer[0] = (uint64_t)(table - buffer);
    jacobian *points = malloc(sizeof(jacobian) * count);
    u256 *products = malloc(sizeof(u256) * count);
    if (points == NULL || products == NULL) {
        free(points);
        free(products);
        return -1;
    }
    affine base = *point;
    for (int row = 0; row < ROWS; row++) {
        jacobian multiple = {base.x, base.y, field.one, 0};
        points[row * columns] = multiple;
        for (int column = 1; column < columns; column++) {
            point_add_affine(&multiple, &multiple, &base, 0);
            points[row * columns + column] = multiple;
        }
        jacobian next = {base.x, base.y, field.one, 0};
        for (int i = 0; i < 16; i++) point_double(&next, &next);
        to_affine(&base, &next);
    }
    // Montgomery's trick: one inversion for every Z.
    products[0] = points[0].Z;
    for (int i = 1; i < count; i++) fmul(&products[i], &products[i - 1], &points[i].Z);
    u256 inverse;
    mont_inverse(&inverse, &products[count - 1], &field);
    for (int i = count - 1; i >= 0; i--) {
        u256 zinv, zinv2, zinv3;
        if (i > 0) {
            fmul(&zinv, &inverse, &products[i - 1]);
            fmul(&inverse, &inverse, &points[i].Z);
        } else {
            zinv = inverse;
        }
        affine entry;
        fsq(&zinv2, &zinv);
        fmul(&zinv3, &zinv2, &zinv);
        fmul(&entry.x, &points[i].X, &zinv2);
        fmul(&entry.y, &points[i].Y, &zinv3);
        memcpy(table + (size_t)i * WORDS_PER_ENTRY, &entry, sizeof entry);
    }
    free(points);
    free(products);
    return 0;
}

int fs_p256_table_init(uint64_t *table, const unsigned char x[32], const unsigned char y[32]) {
    pthread_once(&constants_once, make_constants);
    u256 xn, yn;
    from_bytes(&xn, x);
    from_bytes(&yn, y);
    if (at_least(&xn, &field.m) || at_least(&yn, &field.m)) return -1;
    affine point;
    fmul(&point.x, &xn, &field.rr);
    fmul(&point.y, &yn, &field.rr);
    // y^2 = x^3 - 3x + b
    u256 left, right, t;
    fsq(&left, &point.y);
    fsq(&right, &point.x);
    fmul(&right, &right, &point.x);
    fmul(&t, &point.x, &three);
    fsub(&right, &right, &t);
    fadd(&right, &right, &curve_b);
    if (!equal(&left, &right)) return -1;
    return build_table(table, &point, COLUMNS);
}

// MARK: Verification

// a < 2^256 as 65 signed digits e[i] in [-8, 8], a = sum e[i] 16^i.
static void recode16(signed char e[65], const u256 *a) {
    for (int i = 0; i < 64; i++) e[i] = (signed char)((a->v[i / 16] >> (4 * (i % 16))) & 15);
    signed char carry = 0;
    for (int i = 0; i < 64; i++) {
        e[i] = (signed char)(e[i] + carry);
        carry = (signed char)((e[i] + 8) >> 4);
        e[i] = (signed char)(e[i] - (carry << 4));
    }
    e[64] = carry;
}

// a < 2^256 as 33 signed digits, e[i] in [-128, 127] below the top one (0 or 1), a = sum e[i] 256^i.
static void recode256(signed char e[33], const u256 *a) {
    int carry = 0;
    for (int i = 0; i < 32; i++) {
        int d = (int)((a->v[i / 8] >> (8 * (i % 8))) & 255) + carry;
        carry = (d + 128) >> 8;
        e[i] = (signed char)(d - (carry << 8));
    }
    e[32] = (signed char)carry;
}

// The entry of `table` (entries, `columns` a row) that digit `digit` of row `row` adds, or NULL for a zero digit.
static const affine *entry_for(const uint64_t *table, int columns, int row, int digit) {
    if (digit == 0) return NULL;
    return (const affine *)(const void *)(table + ((size_t)row * (size_t)columns + (size_t)((digit < 0 ? -digit : digit) - 1)) * WORDS_PER_ENTRY);
}

int fs_p256_verify_with_tables(const uint64_t *generator_table, const uint64_t *key_table, const unsigned char digest[32],
                               const unsigned char signature[64]) {
    pthread_once(&constants_once, make_constants);
    const uint64_t *g_entries = entries_of(generator_table), *q_entries = entries_of(key_table);
    if (g_entries == NULL || q_entries == NULL) return -1;
    const modulus *N = &order;
    u256 r, s, e;
    from_bytes(&r, signature);
    from_bytes(&s, signature + 32);
    if (is_zero(&r) || is_zero(&s) || at_least(&r, &N->m) || at_least(&s, &N->m)) return -1;
    from_bytes(&e, digest);
    if (at_least(&e, &N->m)) sub256(&e, &e, &N->m);
    u256 w, u1, u2;
    mod_inverse(&w, &s, N);
    mont_mul(&w, &w, &N->rr, N);   // w R
    mont_mul(&u1, &e, &w, N);      // e w
    mont_mul(&u2, &r, &w, N);      // r w
    signed char d1[33], d2[65];
    recode256(d1, &u1);
    recode16(d2, &u2);
    // Q's digit i multiplies 16^i = 16^(i mod 4) 65536^(i/4): the digits of each phase i mod 4, from 3 down, with four
    // doublings (a factor 16) after each phase but the last. G's digit i/2 multiplies 256^(i/2), the same power when i
    // is even, so G's digits join phases 2 and 0. The entries are listed in that order first, so each can
    // be fetched from memory two additions before it is needed (a server's many key tables are seldom in cache).
    enum { MAX_ADDS = 65 + 33, AHEAD = 2 };
    const affine *adds[MAX_ADDS];
    signed char negate[MAX_ADDS];
    int ends[4], count = 0;
    for (int phase = 3; phase >= 0; phase--) {
        for (int i = phase; i < 65; i += 4) {
            const affine *g = phase % 2 == 0 ? entry_for(g_entries, G_COLUMNS, i / 4, d1[i / 2]) : NULL;
            const affine *q = entry_for(q_entries, COLUMNS, i / 4, d2[i]);
            if (g != NULL) { adds[count] = g; negate[count++] = d1[i / 2] < 0; }
            if (q != NULL) { adds[count] = q; negate[count++] = d2[i] < 0; }
        }
        ends[phase] = count;
    }
    for (int k = 0; k < AHEAD && k < count; k++) __builtin_prefetch(adds[k]);
    jacobian acc = {zero256, zero256, zero256, 1};
    int k = 0;
    for (int phase = 3; phase >= 0; phase--) {
        for (; k < ends[phase]; k++) {
            if (k + AHEAD < count) __builtin_prefetch(adds[k + AHEAD]);
            point_add_affine(&acc, &acc, adds[k], negate[k]);
        }
        if (phase > 0) for (int i = 0; i < 4; i++) point_double(&acc, &acc);
    }
    if (acc.infinity) return -1;
    // x(R) mod n == r, without an inversion: X == x Z^2 for x = r, or x = r + n when that is below p.
    u256 zz, candidate, scaled;
    fsq(&zz, &acc.Z);
    fmul(&candidate, &r, &field.rr);
    fmul(&scaled, &candidate, &zz);
    if (equal(&scaled, &acc.X)) return 0;
    u256 shifted;
    if (add256(&shifted, &r, &N->m) == 0 && !at_least(&shifted, &field.m)) {
        fmul(&candidate, &shifted, &field.rr);
        fmul(&scaled, &candidate, &zz);
        if (equal(&scaled, &acc.X)) return 0;
    }
    return -1;
}

int fs_p256_generator_table_init(uint64_t *table) {
    pthread_once(&constants_once, make_constants);
    return build_table(table, &generator, G_COLUMNS);
}
