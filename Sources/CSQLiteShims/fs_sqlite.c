#include "fs_sqlite.h"

int fs_sqlite_bind_text(sqlite3_stmt *stmt, int index, const char *text, int len) {
    // A NULL pointer would bind SQL NULL; an empty string must stay an empty string.
    return sqlite3_bind_text(stmt, index, text ? text : "", len, SQLITE_STATIC);
}

int fs_sqlite_bind_blob(sqlite3_stmt *stmt, int index, const void *bytes, int len) {
    if (len == 0 || bytes == NULL) {
        return sqlite3_bind_zeroblob(stmt, index, 0);
    }
    return sqlite3_bind_blob(stmt, index, bytes, len, SQLITE_STATIC);
}
