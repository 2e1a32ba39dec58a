#ifndef FACESEAL_COPENSSLSHIMS_H
#define FACESEAL_COPENSSLSHIMS_H
// OpenSSL macros and variadic functions Swift cannot import, one small function each; FaceSealCrypto wraps them.
#include "fs_openssl.h"
#endif
