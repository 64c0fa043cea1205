#ifndef FERRY_CCURL_SHIM_H
#define FERRY_CCURL_SHIM_H

#include <curl/curl.h>

// Swift cannot call C variadic functions, so curl_easy_setopt and
// curl_easy_getinfo get one typed wrapper per argument kind (as GRDB does for
// sqlite3_config). Symbols carry the module prefix.

static inline CURLcode CCurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CCurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CCurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CCurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CCurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*CCurl_data_callback)(char *buffer, size_t size, size_t count, void *userdata);
static inline CURLcode CCurl_easy_setopt_data_callback(CURL *handle, CURLoption option, CCurl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

typedef int (*CCurl_xferinfo_callback)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                       curl_off_t ultotal, curl_off_t ulnow);
static inline CURLcode CCurl_easy_setopt_xferinfo_callback(CURL *handle, CCurl_xferinfo_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

typedef int (*CCurl_seek_callback)(void *userdata, curl_off_t offset, int origin);
static inline CURLcode CCurl_easy_setopt_seek_callback(CURL *handle, CCurl_seek_callback value) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, value);
}

static inline CURLcode CCurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode CCurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode CCurl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

// Cast macros do not import into Swift; these return their values.
static inline long CCurl_auth_basic(void) { return (long)CURLAUTH_BASIC; }
static inline long CCurl_auth_digest(void) { return (long)CURLAUTH_DIGEST; }
static inline long CCurl_auth_bearer(void) { return (long)CURLAUTH_BEARER; }
static inline long CCurl_auth_any_safe(void) { return (long)CURLAUTH_ANYSAFE; }
static inline CURLcode CCurl_global_init_all(void) { return curl_global_init(CURL_GLOBAL_ALL); }
static inline size_t CCurl_readfunc_abort(void) { return CURL_READFUNC_ABORT; }

#endif
