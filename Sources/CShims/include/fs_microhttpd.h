#ifndef FS_MICROHTTPD_H
#define FS_MICROHTTPD_H
// libmicrohttpd shims: MHD_start_daemon, MHD_get_daemon_info and MHD_get_connection_info are
// variadic, which Swift cannot call. Only FaceSealHTTP uses these.
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// Everything `fs_mhd_start` needs besides the callbacks. Zero means "library default" where noted.
struct fs_mhd_settings {
    /// Numeric IPv4 or IPv6 address to bind (no host names: resolution is the caller's job).
    const char *host;
    /// TCP port; 0 asks the kernel for an ephemeral port (read it back with `fs_mhd_bound_port`).
    uint16_t port;
    /// Maximum concurrent connections; 0 = library default (FD_SETSIZE-bound).
    unsigned int connection_limit;
    /// Idle timeout of a connection in seconds; 0 = never.
    unsigned int connection_timeout_seconds;
    /// Worker threads of the internal epoll pool; 0 or 1 = one internal polling thread.
    unsigned int thread_pool_size;
    /// Bytes per connection for headers and the read buffer; 0 = library default (32 KiB).
    size_t connection_memory_limit;
    /// Most connections open at once from one IP address; 0 = no per-address limit.
    unsigned int per_address_connection_limit;
    /// Seconds a connection has to deliver a complete request head, counted from its accept and again from the
    /// end of each request (a deadline, not an idle timeout: trickling bytes does not extend it); 0 = none.
    unsigned int request_head_timeout_seconds;
    /// Nonzero: the deadlines run on a manual clock that only `fs_mhd_head_clock_advance` moves (tests).
    int request_head_manual_clock;
};

/// The request-head deadlines of one daemon (opaque): connections waiting for a head, oldest first, and the
/// thread that shuts down those past their deadline.
struct fs_mhd_head_watch;

/// Why `fs_mhd_start` returned NULL.
enum fs_mhd_start_error {
    FS_MHD_START_OK = 0,
    FS_MHD_START_BAD_HOST = 1,
    FS_MHD_START_FAILED = 2,
};

/// The URI log callback: called once per request with the raw request target (path + query, not
/// unescaped); its return value becomes the request's `con_cls`.
typedef void *(*fs_mhd_uri_log_callback)(void *cls, const char *uri, struct MHD_Connection *connection);

/// Starts a daemon with an internal polling thread (epoll on Linux), suspend/resume allowed.
/// Returns NULL on failure and sets `*error_out` (and leaves `errno` as the library left it). With a request-head
/// timeout, `*watch_out` receives the deadline watch to pass to `fs_mhd_head_received`, `fs_mhd_head_expected` and
/// `fs_mhd_stop`; otherwise it is NULL.
struct MHD_Daemon *fs_mhd_start(const struct fs_mhd_settings *settings,
                                MHD_AccessHandlerCallback handler, void *handler_cls,
                                MHD_RequestCompletedCallback completed, void *completed_cls,
                                fs_mhd_uri_log_callback uri_log, void *uri_log_cls,
                                struct fs_mhd_head_watch **watch_out, int *error_out);

/// Stops the daemon (`MHD_stop_daemon`), then the deadline watch's thread, and frees the watch.
void fs_mhd_stop(struct MHD_Daemon *daemon, struct fs_mhd_head_watch *watch);

/// The connection's request head is complete: its deadline no longer applies. Call from the access handler.
void fs_mhd_head_received(struct MHD_Connection *connection);

/// The connection finished a request and now waits for the next head: its deadline starts again.
void fs_mhd_head_expected(struct MHD_Connection *connection);

/// Connections the deadline watch has shut down so far.
uint64_t fs_mhd_heads_timed_out(struct fs_mhd_head_watch *watch);

/// Manual clock only: moves it on by `milliseconds` and shuts down, before returning, every connection whose request
/// head deadline has passed. Does nothing for a watch on the monotonic clock.
void fs_mhd_head_clock_advance(struct fs_mhd_head_watch *watch, uint64_t milliseconds);

/// Waits (at most `bound_ms` of real time) until at least `count` connections are waiting for a request head under a
/// deadline; returns whether they are.
int fs_mhd_heads_await_watched(struct fs_mhd_head_watch *watch, uint64_t count, unsigned int bound_ms);

/// The port the daemon's listening socket is bound to, or 0 if unknown.
uint16_t fs_mhd_bound_port(struct MHD_Daemon *daemon);

/// Writes the client's numeric address (no port) into `buffer` as a NUL-terminated string.
/// Returns 0 on success, -1 if the address is unknown or does not fit.
int fs_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length);

#endif
