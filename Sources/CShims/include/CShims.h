#ifndef FACESEAL_CSHIMS_H
#define FACESEAL_CSHIMS_H
// C macros and variadic functions that Swift cannot import, one small function each.
#include <stddef.h>
#include <stdint.h>

/// Zeroes `len` bytes at `p` in a way the optimiser may not remove (OPENSSL_cleanse).
void fs_secure_zero(void *p, size_t len);

#endif
