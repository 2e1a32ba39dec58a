// Run-time CPU feature detection for the kernels (the binary is built for baseline x86-64), and wiping.
#include "faceseal_pq.h"
#include <string.h>

void fs_pq_wipe(void *p, size_t n) {
    memset(p, 0, n);
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

int fs_pq_cpu_level(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("popcnt")) return 0;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) return 2;
    return 1;
#else
    return 0;
#endif
}
