// libbluetooth (BlueZ's HCI library) for Swift. Its socket structures and functions
// (hci_open_dev, hci_send_req, hci_read_local_version, bt_compidtostr) are plain C that Swift
// calls directly; only macros Swift does not import are wrapped, one line each, no logic.
#ifndef CBLUETOOTH_SHIM_H
#define CBLUETOOTH_SHIM_H
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>

// ioctl() is variadic and HCIGETCONNINFO an _IOR() macro: Swift can call neither.
static inline int tsg_hci_get_conn_info(int fd, struct hci_conn_info_req *request) { return ioctl(fd, HCIGETCONNINFO, request); }
// CMSG_FIRSTHDR is a macro: the first control message (the kernel's timestamp) of a recvmsg().
static inline struct cmsghdr *tsg_cmsg_firsthdr(struct msghdr *message) { return CMSG_FIRSTHDR(message); }
// CMSG_DATA is a macro: where a control message's payload starts.
static inline unsigned char *tsg_cmsg_data(struct cmsghdr *control) { return CMSG_DATA(control); }
#endif
