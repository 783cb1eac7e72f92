#include "cmosquitto.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define TSG_MOSQUITTO_POINTER(type, name, parameters, arguments) type (*name) parameters;
#define TSG_MOSQUITTO_POINTER_VOID(name, parameters, arguments) void (*name) parameters;
static struct {
    TSG_MOSQUITTO_FUNCTIONS(TSG_MOSQUITTO_POINTER, TSG_MOSQUITTO_POINTER_VOID)
} library;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded;
static char load_error[256];

static void load(void) {
    void *handle = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(load_error, sizeof load_error, "%s", dlerror());
        return;
    }
#define TSG_MOSQUITTO_FIND(type, name, parameters, arguments) \
    if (!(*(void **)&library.name = dlsym(handle, "mosquitto_" #name))) { \
        snprintf(load_error, sizeof load_error, "libmosquitto has no mosquitto_%s", #name); \
        return; \
    }
#define TSG_MOSQUITTO_FIND_VOID(name, parameters, arguments) TSG_MOSQUITTO_FIND(void, name, parameters, arguments)
    TSG_MOSQUITTO_FUNCTIONS(TSG_MOSQUITTO_FIND, TSG_MOSQUITTO_FIND_VOID)
    loaded = 1;
}

int tsg_mosquitto_load(char *message, size_t message_length) {
    pthread_once(&load_once, load);
    if (loaded) return 0;
    if (message && message_length) snprintf(message, message_length, "%s", load_error[0] ? load_error : "libmosquitto did not load");
    return -1;
}

#define TSG_MOSQUITTO_DEFINE(type, name, parameters, arguments) \
    type tsg_mosquitto_##name parameters { return library.name arguments; }
#define TSG_MOSQUITTO_DEFINE_VOID(name, parameters, arguments) \
    void tsg_mosquitto_##name parameters { library.name arguments; }
TSG_MOSQUITTO_FUNCTIONS(TSG_MOSQUITTO_DEFINE, TSG_MOSQUITTO_DEFINE_VOID)
