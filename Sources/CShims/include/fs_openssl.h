#ifndef FS_OPENSSL_H
#define FS_OPENSSL_H
#include <stddef.h>

/// Zeroes `len` bytes at `p` in a way the optimiser may not remove (OPENSSL_cleanse).
void fs_secure_zero(void *p, size_t len);

#endif
