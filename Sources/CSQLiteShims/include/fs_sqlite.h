#ifndef FS_SQLITE_H
#define FS_SQLITE_H
// SQLite shims: SQLITE_STATIC and SQLITE_TRANSIENT are cast macros Swift cannot import, so the binding helpers live
// here. They bind without a copy (SQLITE_STATIC): the caller keeps the bytes alive and unchanged until the statement
// is reset and its bindings cleared.
#include <stddef.h>
#include <sqlite3.h>

/// Binds `len` bytes of UTF-8 text at 1-based `index`, not copied (SQLITE_STATIC).
int fs_sqlite_bind_text(sqlite3_stmt *stmt, int index, const char *text, int len);

/// Binds `len` bytes as a BLOB at 1-based `index`, not copied (SQLITE_STATIC).
/// A zero length binds an empty BLOB, never NULL.
int fs_sqlite_bind_blob(sqlite3_stmt *stmt, int index, const void *bytes, int len);

/// Turns SQLite's allocation statistics off, once a process, before its first connection: with them on, every
/// allocation SQLite makes takes one process-wide mutex (`sqlite3_memory_used` and friends, which nothing here reads).
/// Answers SQLITE_OK, or SQLITE_MISUSE when SQLite was already initialised (the statistics then stay on; harmless).
int fs_sqlite_configure(void);

#endif
