#ifndef FS_SQLITE_H
#define FS_SQLITE_H
// SQLite shims (SQLITE_TRANSIENT and variadic config calls).
#endif
