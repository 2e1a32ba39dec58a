#ifndef FS_SQLITE_H
#define FS_SQLITE_H
// SQLite shims: SQLITE_TRANSIENT is a cast macro Swift cannot import, so binding helpers that
// make SQLite copy the bytes (the Swift buffer does not outlive the call) live here.
#include <stddef.h>
#include <sqlite3.h>

/// Binds `len` bytes of UTF-8 text at 1-based `index`; SQLite copies them (SQLITE_TRANSIENT).
int fs_sqlite_bind_text(sqlite3_stmt *stmt, int index, const char *text, int len);

/// Binds `len` bytes as a BLOB at 1-based `index`; SQLite copies them (SQLITE_TRANSIENT).
/// A zero length binds an empty BLOB, never NULL.
int fs_sqlite_bind_blob(sqlite3_stmt *stmt, int index, const void *bytes, int len);

#endif
