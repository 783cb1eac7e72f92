// libmosquitto, opened with dlopen() on first use rather than linked: a gateway without an
// mqtt: section never maps it and the OpenSSL it loads (about 1.8 MiB resident). mosquitto.h
// gives the types and constants; each call Swift makes is a tsg_ twin of libmosquitto's function
// with its prototype, reaching the library through a pointer found by dlsym().
#ifndef CMOSQUITTO_H
#define CMOSQUITTO_H
#include <stdbool.h>
#include <stddef.h>
#include <mosquitto.h>

// The functions used, as X(return type, name without mosquitto_, parameters, arguments);
// XV for the ones returning nothing.
#define TSG_MOSQUITTO_FUNCTIONS(X, XV) \
    X(int, lib_init, (void), ()) \
    X(struct mosquitto *, new, (const char *id, bool clean_session, void *obj), (id, clean_session, obj)) \
    XV(destroy, (struct mosquitto *mosq), (mosq)) \
    X(int, int_option, (struct mosquitto *mosq, enum mosq_opt_t option, int value), (mosq, option, value)) \
    X(int, reconnect_delay_set, (struct mosquitto *mosq, unsigned int delay, unsigned int delay_max, bool exponential), \
      (mosq, delay, delay_max, exponential)) \
    X(int, username_pw_set, (struct mosquitto *mosq, const char *username, const char *password), (mosq, username, password)) \
    X(int, tls_set, (struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile, const char *keyfile, \
                     int (*pw_callback)(char *buf, int size, int rwflag, void *userdata)), \
      (mosq, cafile, capath, certfile, keyfile, pw_callback)) \
    X(int, will_set, (struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos, bool retain), \
      (mosq, topic, payloadlen, payload, qos, retain)) \
    XV(connect_callback_set, (struct mosquitto *mosq, void (*on_connect)(struct mosquitto *, void *, int)), (mosq, on_connect)) \
    XV(disconnect_callback_set, (struct mosquitto *mosq, void (*on_disconnect)(struct mosquitto *, void *, int)), (mosq, on_disconnect)) \
    XV(publish_callback_set, (struct mosquitto *mosq, void (*on_publish)(struct mosquitto *, void *, int)), (mosq, on_publish)) \
    XV(message_callback_set, (struct mosquitto *mosq, void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *)), \
       (mosq, on_message)) \
    X(const char *, connack_string, (int connack_code), (connack_code)) \
    X(const char *, strerror, (int mosq_errno), (mosq_errno)) \
    X(int, connect_async, (struct mosquitto *mosq, const char *host, int port, int keepalive), (mosq, host, port, keepalive)) \
    X(int, loop_start, (struct mosquitto *mosq), (mosq)) \
    X(int, disconnect, (struct mosquitto *mosq), (mosq)) \
    X(int, loop_stop, (struct mosquitto *mosq, bool force), (mosq, force)) \
    X(int, publish, (struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload, int qos, bool retain), \
      (mosq, mid, topic, payloadlen, payload, qos, retain)) \
    X(int, subscribe, (struct mosquitto *mosq, int *mid, const char *sub, int qos), (mosq, mid, sub, qos))

#define TSG_MOSQUITTO_DECLARE(type, name, parameters, arguments) type tsg_mosquitto_##name parameters;
#define TSG_MOSQUITTO_DECLARE_VOID(name, parameters, arguments) void tsg_mosquitto_##name parameters;
TSG_MOSQUITTO_FUNCTIONS(TSG_MOSQUITTO_DECLARE, TSG_MOSQUITTO_DECLARE_VOID)

// Opens libmosquitto.so.1 once; NULL when every function above was found, else the loader's
// words (CDynamicLibrary's tsg_library_open). The tsg_mosquitto_ functions may be called only
// after a NULL.
const char *tsg_mosquitto_load(void);
#endif
