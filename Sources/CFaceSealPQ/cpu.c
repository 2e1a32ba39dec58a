// Run-time CPU feature detection for the kernels (the binary is built for baseline x86-64).
#include "faceseal_pq.h"

int fs_pq_cpu_level(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2")) return 0;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) return 2;
    return 1;
#else
    return 0;
#endif
}
