#include "ccurl.h"
#include "dynamic_library.h"
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// libcurl's entry points this file calls, found with dlsym(); curl.h gives their types only.
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} curl;

static const char *const curl_files[] = {"libcurl.so.4", "libcurl-gnutls.so.4", NULL};
static const tsg_symbol curl_symbols[] = {
    {"curl_global_init", (void **)&curl.global_init},
    {"curl_easy_init", (void **)&curl.easy_init},
    {"curl_easy_setopt", (void **)&curl.easy_setopt},
    {"curl_easy_perform", (void **)&curl.easy_perform},
    {"curl_easy_getinfo", (void **)&curl.easy_getinfo},
    {"curl_easy_cleanup", (void **)&curl.easy_cleanup},
    {"curl_easy_strerror", (void **)&curl.easy_strerror},
    {"curl_slist_append", (void **)&curl.slist_append},
    {"curl_slist_free_all", (void **)&curl.slist_free_all},
};

// Once, before any transfer: libcurl's global set-up is not safe beside a running transfer.
static int set_up(char *error, size_t error_length) {
    CURLcode code = curl.global_init(CURL_GLOBAL_DEFAULT);
    if (code == CURLE_OK) return 0;
    snprintf(error, error_length, "curl_global_init: %s", curl.easy_strerror(code));
    return -1;
}

static tsg_library libcurl = TSG_LIBRARY("libcurl", curl_files, curl_symbols, set_up);

const char *tsg_http_load(void) { return tsg_library_open(&libcurl); }

typedef struct {
    unsigned char *bytes;
    size_t length;
    int failed;
} answer_buffer;

// The answer's body; an allocation that fails stops the transfer rather than losing bytes.
static size_t keep_body(char *chunk, size_t size, size_t count, void *context) {
    answer_buffer *answer = context;
    size_t length = size * count;
    unsigned char *grown = realloc(answer->bytes, answer->length + length + 1);
    if (!grown) {
        answer->failed = 1;
        return 0;
    }
    memcpy(grown + answer->length, chunk, length);
    answer->bytes = grown;
    answer->length += length;
    return length;
}

// Called by libcurl about once a second and on every transfer step: non-zero aborts.
static int watch_cancel(void *flag, curl_off_t total_down, curl_off_t now_down, curl_off_t total_up, curl_off_t now_up) {
    (void)total_down, (void)now_down, (void)total_up, (void)now_up;
    return flag && __atomic_load_n((const int *)flag, __ATOMIC_ACQUIRE) != 0;
}

static tsg_http_outcome outcome_of(CURLcode code) {
    switch (code) {
    case CURLE_OPERATION_TIMEDOUT: return TSG_HTTP_TIMED_OUT;
    case CURLE_COULDNT_CONNECT: return TSG_HTTP_REFUSED;
    case CURLE_COULDNT_RESOLVE_HOST: return TSG_HTTP_UNRESOLVED;
    case CURLE_SSL_CONNECT_ERROR: case CURLE_PEER_FAILED_VERIFICATION: case CURLE_SSL_CERTPROBLEM: case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE: case CURLE_SSL_ISSUER_ERROR: case CURLE_USE_SSL_FAILED:
        return TSG_HTTP_TLS;
    case CURLE_ABORTED_BY_CALLBACK: return TSG_HTTP_CANCELLED;
    default: return TSG_HTTP_FAILED;
    }
}

void tsg_http_post(const char *url, const char *const *headers, size_t header_count, const unsigned char *body, size_t body_length,
                   long timeout_ms, const int *cancel, tsg_http_result *result) {
    memset(result, 0, sizeof *result);
    const char *problem = tsg_http_load();
    if (problem) {
        result->outcome = TSG_HTTP_NO_LIBRARY;
        snprintf(result->message, sizeof result->message, "%s", problem);
        return;
    }
    CURL *handle = curl.easy_init();
    if (!handle) {
        result->outcome = TSG_HTTP_FAILED;
        snprintf(result->message, sizeof result->message, "curl_easy_init failed");
        return;
    }
    struct curl_slist *lines = NULL;
    for (size_t index = 0; index < header_count; index++) {
        struct curl_slist *appended = curl.slist_append(lines, headers[index]);
        if (!appended) break;
        lines = appended;
    }
    // libcurl adds "Expect: 100-continue" to larger POSTs; a plain server would then wait a second.
    struct curl_slist *appended = curl.slist_append(lines, "Expect:");
    if (appended) lines = appended;
    answer_buffer answer = {0};
    char error_words[CURL_ERROR_SIZE] = {0};
    curl.easy_setopt(handle, CURLOPT_URL, url);
    curl.easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
    curl.easy_setopt(handle, CURLOPT_POST, 1L);
    curl.easy_setopt(handle, CURLOPT_POSTFIELDS, body ? (const char *)body : "");
    curl.easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
    curl.easy_setopt(handle, CURLOPT_HTTPHEADER, lines);
    curl.easy_setopt(handle, CURLOPT_WRITEFUNCTION, keep_body);
    curl.easy_setopt(handle, CURLOPT_WRITEDATA, &answer);
    curl.easy_setopt(handle, CURLOPT_TIMEOUT_MS, timeout_ms);
    // Threads and signals: libcurl must not use SIGALRM for its DNS timeout in a threaded program.
    curl.easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl.easy_setopt(handle, CURLOPT_ERRORBUFFER, error_words);
    curl.easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
    curl.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, watch_cancel);
    curl.easy_setopt(handle, CURLOPT_XFERINFODATA, (void *)cancel);
    CURLcode code = curl.easy_perform(handle);
    if (code == CURLE_OK && !answer.failed) {
        result->outcome = TSG_HTTP_ANSWERED;
        curl.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &result->status);
        result->body = answer.bytes;
        result->body_length = answer.length;
    } else {
        result->outcome = answer.failed ? TSG_HTTP_FAILED : outcome_of(code);
        snprintf(result->message, sizeof result->message, "%s",
                 answer.failed ? "out of memory for the answer" : (error_words[0] ? error_words : curl.easy_strerror(code)));
        free(answer.bytes);
    }
    curl.slist_free_all(lines);
    curl.easy_cleanup(handle);
}

void tsg_http_cancel(int *flag) { __atomic_store_n(flag, 1, __ATOMIC_RELEASE); }

void tsg_http_result_free(tsg_http_result *result) {
    free(result->body);
    result->body = NULL;
    result->body_length = 0;
}
