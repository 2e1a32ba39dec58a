#include "fs_openssl.h"
#include <openssl/crypto.h>

void fs_secure_zero(void *p, size_t len) { OPENSSL_cleanse(p, len); }
