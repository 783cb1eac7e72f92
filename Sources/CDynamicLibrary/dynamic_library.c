#include "dynamic_library.h"
#include <dlfcn.h>
#include <stdio.h>

static void open_once(tsg_library *library) {
    void *handle = NULL;
    for (const char *const *file = library->files; *file && !handle; file++) handle = dlopen(*file, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *words = dlerror();
        snprintf(library->error, sizeof library->error, "%s", words ? words : "no file to open");
        return;
    }
    for (size_t index = 0; index < library->symbol_count; index++) {
        const tsg_symbol *wanted = &library->symbols[index];
        if (!(*wanted->address = dlsym(handle, wanted->symbol))) {
            snprintf(library->error, sizeof library->error, "%s has no %s", library->name, wanted->symbol);
            return;
        }
    }
    if (library->set_up && library->set_up(library->error, sizeof library->error) != 0) return;
    library->ready = 1;
}

const char *tsg_library_open(tsg_library *library) {
    pthread_mutex_lock(&library->lock);
    if (!library->tried) {
        library->tried = 1;
        open_once(library);
        if (!library->ready && !library->error[0]) snprintf(library->error, sizeof library->error, "%s did not load", library->name);
    }
    const char *problem = library->ready ? NULL : library->error;
    pthread_mutex_unlock(&library->lock);
    return problem;
}
