#ifndef FACESEAL_CSHIMS_H
#define FACESEAL_CSHIMS_H
// C macros and variadic functions that Swift cannot import, one small function each,
// grouped by the library they shim (each group has its own header and .c file).
#include <stddef.h>
#include <stdint.h>
#include "fs_openssl.h"
#include "fs_microhttpd.h"
#include "fs_sqlite.h"
#include "fs_jpeg.h"
#include "fs_png.h"
#endif
