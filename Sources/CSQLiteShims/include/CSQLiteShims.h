#ifndef FACESEAL_CSQLITESHIMS_H
#define FACESEAL_CSQLITESHIMS_H
// SQLite's destructor-macro binds, in C; FaceSealAuthority's SQLite connection wraps them.
#include "fs_sqlite.h"
#endif
