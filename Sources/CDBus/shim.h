// libdbus-1 for Swift. The project calls only its non-variadic functions (message iterators
// instead of dbus_message_append_args), so no wrapper code is needed here; type codes are the
// ASCII characters of the D-Bus specification.
#ifndef CDBUS_SHIM_H
#define CDBUS_SHIM_H
#include <dbus/dbus.h>
#include <poll.h>
#include <sys/eventfd.h>
#endif
