#ifndef TRAIL_CCURL_SHIM_H
#define TRAIL_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt is variadic, which Swift cannot call: one typed wrapper per kind of value. */

static inline CURLcode trail_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode trail_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode trail_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode trail_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*trail_curl_read_callback)(char *buffer, size_t size, size_t count, void *userdata);

static inline CURLcode trail_curl_set_read_function(CURL *handle, trail_curl_read_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, callback);
}

#endif
