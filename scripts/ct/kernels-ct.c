// Constant-time check of the CFaceSealPQ kernels, ctgrind-style: every input is marked undefined for
// valgrind's memcheck, so any branch, table index or address computed from it is reported as use of
// uninitialised data (valgrind --error-exitcode makes that a failure). Run by scripts/ct-check.sh.
#include "faceseal_pq.h"
#include <stdio.h>
#include <string.h>
#include <valgrind/memcheck.h>

#define SECRET(p, n) VALGRIND_MAKE_MEM_UNDEFINED((p), (n))
#define PUBLIC(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))

int main(void) {
    int level = fs_pq_cpu_level();
    if (level == 0) {
        printf("ct-check: no AVX2 on this CPU: no kernel to check\n");
        return 0;
    }
    static int16_t a[4 * 256] __attribute__((aligned(32))), b[4 * 256] __attribute__((aligned(32)));
    static int16_t cache[4 * 128], r[256];
    static int32_t x[256], matrix[8 * 7 * 256], vector[7 * 256], w[8 * 256];
    static uint64_t state[100] __attribute__((aligned(32)));
    for (int i = 0; i < 4 * 256; i++) { a[i] = (int16_t)(i * 7 % 3329); b[i] = (int16_t)(i * 13 % 3329 - 1664); }
    for (int i = 0; i < 4 * 128; i++) cache[i] = (int16_t)(i % 1000);
    for (int i = 0; i < 256; i++) x[i] = i * 32749 % 8380417 - 4190208;
    for (int i = 0; i < 8 * 7 * 256; i++) matrix[i] = i * 7919 % 8380417 - 4190208;
    for (int i = 0; i < 7 * 256; i++) vector[i] = i * 104729 % 8380417 - 4190208;
    for (int i = 0; i < 100; i++) state[i] = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);

    SECRET(a, sizeof a); SECRET(b, sizeof b); SECRET(cache, sizeof cache);
    SECRET(x, sizeof x); SECRET(matrix, sizeof matrix); SECRET(vector, sizeof vector); SECRET(state, sizeof state);

    fs_mlkem_ntt(a);
    fs_mlkem_invntt(b);
    fs_mlkem_basemul_sum(r, a, b, cache, 4);
    fs_mldsa_ntt(x);
    fs_mldsa_invntt(x);
    fs_mldsa_matvec(w, matrix, vector, 8, 7);
    for (int l = 1; l <= level; l++) fs_keccakf1600x4(state, l);

    // Declassify the outputs only to print a checksum, so the work cannot be optimised away.
    PUBLIC(r, sizeof r); PUBLIC(x, sizeof x); PUBLIC(w, sizeof w); PUBLIC(state, sizeof state);
    uint64_t sum = 0;
    for (int i = 0; i < 256; i++) sum += (uint16_t)r[i] + (uint32_t)x[i];
    for (int i = 0; i < 8 * 256; i++) sum += (uint32_t)w[i];
    for (int i = 0; i < 100; i++) sum ^= state[i];
    printf("ct-check: kernels up to level %d ran on secret-marked inputs (checksum %016llx)\n", level, (unsigned long long)sum);
    return 0;
}
