// libmosquitto, as Swift sees it. Nothing to wrap: every call Swift needs is a plain function.
#include <mosquitto.h>
