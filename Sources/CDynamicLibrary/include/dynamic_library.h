// A shared library opened with dlopen() on first use and its entry points found with dlsym(),
// for the C shims that call a library without linking it (CCurl, CMosquitto): a program that
// never uses the library never maps it, nor what it loads in turn.
#ifndef DYNAMIC_LIBRARY_H
#define DYNAMIC_LIBRARY_H
#include <pthread.h>
#include <stddef.h>

// One entry point: the symbol dlsym() looks up, and the function pointer its address goes to
// (passed as void ** because C has no generic function pointer type dlsym() could fill).
typedef struct {
    const char *symbol;
    void **address;
} tsg_symbol;

typedef struct {
    // The library as messages name it ("libcurl has no curl_easy_init").
    const char *name;
    // The file names dlopen() tries in turn, NULL-ended: distributions ship some libraries under
    // more than one soname (libcurl.so.4 or libcurl-gnutls.so.4).
    const char *const *files;
    // Every entry point the shim calls: the library is usable only when all of them are found.
    const tsg_symbol *symbols;
    size_t symbol_count;
    // Run once after every symbol is found, for a library's own set-up (curl_global_init); NULL
    // for none. Returns 0, or -1 with its words in error.
    int (*set_up)(char *error, size_t error_length);
    // Whether and how opening went: written once under the lock, then only read.
    pthread_mutex_t lock;
    int tried;
    int ready;
    char error[256];
} tsg_library;

// A tsg_library as a static initialiser: the state starts untried behind an unlocked mutex.
#define TSG_LIBRARY(name, files, symbols, set_up) \
    { (name), (files), (symbols), sizeof(symbols) / sizeof((symbols)[0]), (set_up), PTHREAD_MUTEX_INITIALIZER, 0, 0, {0} }

// Opens the library and resolves its symbols the first time it is called, from any thread;
// later calls answer the same. NULL when every symbol was found and set_up succeeded, else why
// not (dlerror()'s words for a missing file, "NAME has no SYMBOL" for a missing entry point);
// the words stay valid for the program's life.
const char *tsg_library_open(tsg_library *library);
#endif
