// Four-way Keccak-f[1600] (FIPS 202) for the XOF-heavy samplers of ML-KEM and ML-DSA.
#include "faceseal_pq.h"

#if defined(__x86_64__)
#include <immintrin.h>

static const uint64_t fs_keccak_rc[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808AULL, 0x8000000080008000ULL,
    0x000000000000808BULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008AULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000AULL,
    0x000000008000808BULL, 0x800000000000008BULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800AULL, 0x800000008000000AULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

#define XOR(a, b) _mm256_xor_si256((a), (b))
// ~a & b
#define ANDNOT(a, b) _mm256_andnot_si256((a), (b))
#define ROL(v, n) _mm256_or_si256(_mm256_slli_epi64((v), (n)), _mm256_srli_epi64((v), 64 - (n)))
// Byte-multiple rotations as one byte shuffle.
#define ROL8(v) _mm256_shuffle_epi8((v), _mm256_setr_epi8( \
    7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14, 7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14))
#define ROL56(v) _mm256_shuffle_epi8((v), _mm256_setr_epi8( \
    1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8))

#define FS_KECCAK_X4_NAME keccakf1600x4_avx2
#define FS_KECCAK_X4_TARGET __attribute__((target("avx2")))
#include "keccak_x4_body.h"
#undef FS_KECCAK_X4_NAME
#undef FS_KECCAK_X4_TARGET

// With AVX-512VL the byte shuffles lose to a native rotate.
#undef ROL8
#undef ROL56
#define ROL8(v) ROL((v), 8)
#define ROL56(v) ROL((v), 56)
#define FS_KECCAK_X4_NAME keccakf1600x4_avx512vl
#define FS_KECCAK_X4_TARGET __attribute__((target("avx2,avx512f,avx512vl")))
#include "keccak_x4_body.h"

void fs_keccakf1600x4(uint64_t *state, int level) {
    if (level >= 2) {
        keccakf1600x4_avx512vl(state);
    } else {
        keccakf1600x4_avx2(state);
    }
}

void fs_keccakf1600x1(uint64_t *state) {
    // Lane 0 of the four-way permutation: on AVX-512VL that is about half the scalar Swift's time.
    uint64_t lanes[100] __attribute__((aligned(32))) = {0};
    for (int i = 0; i < 25; i++) lanes[4 * i] = state[i];
    keccakf1600x4_avx512vl(lanes);
    for (int i = 0; i < 25; i++) state[i] = lanes[4 * i];
    fs_pq_wipe(lanes, sizeof lanes);  // it held the state
}

#else

void fs_keccakf1600x4(uint64_t *state, int level) {
    (void)state;
    (void)level;
    __builtin_trap();
}

void fs_keccakf1600x1(uint64_t *state) {
    (void)state;
    __builtin_trap();
}

#endif
