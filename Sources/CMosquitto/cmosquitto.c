#include "cmosquitto.h"
#include "dynamic_library.h"

#define TSG_MOSQUITTO_POINTER(type, name, parameters, arguments) type (*name) parameters;
#define TSG_MOSQUITTO_POINTER_VOID(name, parameters, arguments) void (*name) parameters;
static struct {
    TSG_MOSQUITTO_FUNCTIONS(TSG_MOSQUITTO_POINTER, TSG_MOSQUITTO_POINTER_VOID)
} library;

static const char *const mosquitto_files[] = {"libmosquitto.so.1", NULL};
#define TSG_MOSQUITTO_SYMBOL(type, name, parameters, arguments) {"mosquitto_" #name, (void **)&library.name},
#define TSG_MOSQUITTO_SYMBOL_VOID(name, parameters, arguments) TSG_MOSQUITTO_SYMBOL(void, name, parameters, arguments)
static const tsg_symbol mosquitto_symbols[] = {TSG_MOSQUITTO_FUNCTIONS(TSG_MOSQUITTO_SYMBOL, TSG_MOSQUITTO_SYMBOL_VOID)};

static tsg_library libmosquitto = TSG_LIBRARY("libmosquitto", mosquitto_files, mosquitto_symbols, NULL);

const char *tsg_mosquitto_load(void) { return tsg_library_open(&libmosquitto); }

#define TSG_MOSQUITTO_DEFINE(type, name, parameters, arguments) \
    type tsg_mosquitto_##name parameters { return library.name arguments; }
#define TSG_MOSQUITTO_DEFINE_VOID(name, parameters, arguments) \
    void tsg_mosquitto_##name parameters { library.name arguments; }
TSG_MOSQUITTO_FUNCTIONS(TSG_MOSQUITTO_DEFINE, TSG_MOSQUITTO_DEFINE_VOID)
