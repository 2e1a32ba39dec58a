#ifndef FS_CURL_SHIM_H
#define FS_CURL_SHIM_H
// libcurl for FaceSealHTTP's client. curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are
// variadic, which Swift cannot call: these typed inline wrappers are the only way in. Only FaceSealHTTP uses them.
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

static inline CURLcode fs_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fs_curl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/// Strings (copied by libcurl, except CURLOPT_ERRORBUFFER), lists and callback data.
static inline CURLcode fs_curl_easy_setopt_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

/// CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION share this signature.
static inline CURLcode fs_curl_easy_setopt_write(CURL *handle, CURLoption option, curl_write_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode fs_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// CURL_GLOBAL_DEFAULT is a compound macro; libcurl ≥ 7.84 makes this call thread-safe and reference-counted.
static inline CURLcode fs_curl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

#endif
