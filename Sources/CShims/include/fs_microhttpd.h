#ifndef FS_MICROHTTPD_H
#define FS_MICROHTTPD_H
// libmicrohttpd shims (variadic MHD_start_daemon and friends).
#endif
