// One HTTP POST through libcurl, which is opened with dlopen() on first use, not linked: a
// program that never uploads does not map libcurl and the TLS, Kerberos and LDAP libraries it
// loads (about 5.4 MiB resident). Only this file's functions are seen by Swift.
#ifndef CCURL_H
#define CCURL_H
#include <stddef.h>

// Why a POST got no HTTP answer; the categories the uploader words its messages by.
typedef enum {
    TSG_HTTP_ANSWERED = 0,    // an HTTP status came back (any status)
    TSG_HTTP_NO_LIBRARY,      // libcurl could not be opened
    TSG_HTTP_TIMED_OUT,
    TSG_HTTP_REFUSED,         // could not connect to the host
    TSG_HTTP_UNRESOLVED,      // the host name did not resolve
    TSG_HTTP_TLS,             // TLS handshake or certificate verification failed
    TSG_HTTP_CANCELLED,       // *cancel became non-zero
    TSG_HTTP_FAILED,          // anything else; message says what
} tsg_http_outcome;

typedef struct {
    tsg_http_outcome outcome;
    long status;              // the HTTP status when answered
    unsigned char *body;      // the answer's body (malloc'd; free with tsg_http_result_free)
    size_t body_length;
    char message[256];        // libcurl's words for a failure
} tsg_http_result;

// Opens libcurl (libcurl.so.4, else libcurl-gnutls.so.4) once; NULL when usable, else the
// loader's words (CDynamicLibrary's tsg_library_open).
const char *tsg_http_load(void);

// POSTs body to url with the given "Name: value" header lines, at most timeout_ms for the whole
// exchange; returns early with TSG_HTTP_CANCELLED once *cancel (read atomically) is non-zero.
// Follows no redirects and speaks only http and https. Blocks the calling thread.
void tsg_http_post(const char *url, const char *const *headers, size_t header_count, const unsigned char *body, size_t body_length,
                   long timeout_ms, const int *cancel, tsg_http_result *result);

// Sets *flag for a tsg_http_post that watches it (from another thread).
void tsg_http_cancel(int *flag);

void tsg_http_result_free(tsg_http_result *result);
#endif
