#include "fs_sqlite.h"
#include <pthread.h>

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

static int configure_result = SQLITE_OK;
static pthread_once_t configure_once = PTHREAD_ONCE_INIT;

static void configure(void) { configure_result = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

int fs_sqlite_configure(void) {
    pthread_once(&configure_once, configure);
    return configure_result;
}
