#ifndef FS_CURL_SHIM_H
#define FS_CURL_SHIM_H
// libcurl for FaceSealHTTP's client. curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are
// variadic, which Swift cannot call: these typed inline wrappers are the only way in. Only FaceSealHTTPClient uses them.
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

static inline CURLcode fs_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fs_curl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/// Strings (copied by libcurl, except CURLOPT_ERRORBUFFER), lists and callback data.
static inline CURLcode fs_curl_easy_setopt_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

/// CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION share this signature.
static inline CURLcode fs_curl_easy_setopt_write(CURL *handle, CURLoption option, curl_write_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLMcode fs_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

static inline CURLcode fs_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// CURL_GLOBAL_DEFAULT is a compound macro; libcurl ≥ 7.84 makes this call thread-safe and reference-counted.
static inline CURLcode fs_curl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

/// 1 when an IPv4 address (host order) is not public unicast: this-network, private (RFC 1918), shared (RFC 6598),
/// loopback, link-local, IETF protocol assignments, benchmarking, multicast, reserved and broadcast.
static inline int fs_ipv4_is_internal(uint32_t a) {
    return (a >> 24) == 0 || (a >> 24) == 10 || (a >> 22) == (100u << 2 | 1) || (a >> 24) == 127
        || (a >> 16) == (169u << 8 | 254) || (a >> 20) == (172u << 4 | 1) || (a >> 8) == (192u << 16)
        || (a >> 16) == (192u << 8 | 168) || (a >> 17) == (198u << 7 | 18 >> 1) || (a >> 28) >= 14;
}

/// 1 when `address` is not a public unicast address: the IPv4 ranges above (also mapped, compatible or NAT64
/// embedded in IPv6), and IPv6 unspecified, loopback, unique-local, link-local, site-local and multicast.
static inline int fs_address_is_internal(const struct sockaddr *address) {
    if (address->sa_family == AF_INET) {
        return fs_ipv4_is_internal(ntohl(((const struct sockaddr_in *)address)->sin_addr.s_addr));
    }
    if (address->sa_family != AF_INET6) return 1;
    const unsigned char *b = ((const struct sockaddr_in6 *)address)->sin6_addr.s6_addr;
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const unsigned char compatible[12] = {0};
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    if (memcmp(b, mapped, 12) == 0 || memcmp(b, compatible, 12) == 0 || memcmp(b, nat64, 12) == 0) {
        return fs_ipv4_is_internal((uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15]);
    }
    return (b[0] & 0xfe) == 0xfc || (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) || (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
        || b[0] == 0xff;
}

/// CURLOPT_OPENSOCKETFUNCTION for public destinations only: libcurl asks it for a socket for each address it is
/// about to connect to, after name resolution, so a name that resolves (or re-resolves) to an internal address is
/// refused too. `refused` (CURLOPT_OPENSOCKETDATA) is set to 1 when an address was refused.
static inline curl_socket_t fs_curl_open_public_socket(void *refused, curlsocktype purpose, struct curl_sockaddr *address) {
    if (purpose != CURLSOCKTYPE_IPCXN || fs_address_is_internal(&address->addr)) {
        *(int *)refused = 1;
        return CURL_SOCKET_BAD;
    }
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

/// Lets `handle` connect to public unicast addresses only; `refused` is set to 1 when it refused one.
static inline CURLcode fs_curl_public_addresses_only(CURL *handle, int *refused) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, fs_curl_open_public_socket);
    return code == CURLE_OK ? curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, refused) : code;
}

/// The sockets a multi handle's transfers wait on, as an epoll set libcurl keeps up to date itself
/// (CURLMOPT_SOCKETFUNCTION), so each wake-up costs only the sockets that are ready, not every running transfer.
///
/// A socket libcurl is done with (CURL_POLL_REMOVE: usually a kept-alive connection whose transfer ended) stays in
/// the epoll set, marked idle, because the next transfer on that connection most often wants it again: re-arming it
/// is then one EPOLL_CTL_MOD instead of a DEL and an ADD. An idle socket that becomes ready (its server closed it) is
/// taken out of the set then and not reported. Arming always makes a call (MOD, or ADD when the kernel no longer
/// knows the descriptor: a closed socket leaves the set by itself, and its number may come back as a new socket), so
/// a mark outliving its socket costs nothing but that fallback.
typedef struct {
    CURLM *multi;
    int epoll;
    /// idle[fd] is 1 while `fd` is in the epoll set but libcurl is done with it; `idle_capacity` entries.
    unsigned char *idle;
    int idle_capacity;
} fs_curl_socket_set;

/// Records whether `socket` is in the set without libcurl waiting on it; 0, or -1 when there was no memory for it.
static inline int fs_curl_socket_set_mark_idle(fs_curl_socket_set *sockets, curl_socket_t socket, unsigned char idle) {
    if (socket < 0) return -1;
    if (socket >= sockets->idle_capacity) {
        if (!idle) return 0;
        int capacity = sockets->idle_capacity > 0 ? sockets->idle_capacity : 64;
        while (capacity <= socket) capacity *= 2;
        unsigned char *grown = (unsigned char *)realloc(sockets->idle, (size_t)capacity);
        if (grown == NULL) return -1;
        memset(grown + sockets->idle_capacity, 0, (size_t)(capacity - sockets->idle_capacity));
        sockets->idle = grown;
        sockets->idle_capacity = capacity;
    }
    sockets->idle[socket] = idle;
    return 0;
}

static inline int fs_curl_socket_set_is_idle(const fs_curl_socket_set *sockets, int socket) {
    return socket >= 0 && socket < sockets->idle_capacity && sockets->idle[socket];
}

/// Frees the set's own memory (the epoll descriptor is its owner's).
static inline void fs_curl_socket_set_free(fs_curl_socket_set *sockets) {
    free(sockets->idle);
    sockets->idle = NULL;
    sockets->idle_capacity = 0;
}

/// CURLMOPT_SOCKETFUNCTION: libcurl says which events a socket now waits for (or that it is done with it). A
/// socket libcurl has not assigned yet is armed; `curl_multi_assign` marks it, and libcurl forgets the mark on REMOVE.
static inline int fs_curl_socket_changed(CURL *easy, curl_socket_t socket, int what, void *set, void *assigned) {
    (void)easy;
    fs_curl_socket_set *sockets = (fs_curl_socket_set *)set;
    if (what == CURL_POLL_REMOVE) {
        // Kept in the set, idle; without memory for the mark, removed at once.
        if (fs_curl_socket_set_mark_idle(sockets, socket, 1) != 0) epoll_ctl(sockets->epoll, EPOLL_CTL_DEL, socket, NULL);
        return 0;
    }
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
    event.data.fd = socket;
    int operation = assigned || fs_curl_socket_set_is_idle(sockets, socket) ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(sockets->epoll, operation, socket, &event) != 0) {
        // A closed socket leaves the set by itself, so its number may come back new or still registered.
        if (errno == EEXIST) epoll_ctl(sockets->epoll, EPOLL_CTL_MOD, socket, &event);
        else if (errno == ENOENT) epoll_ctl(sockets->epoll, EPOLL_CTL_ADD, socket, &event);
        else return -1;
    }
    fs_curl_socket_set_mark_idle(sockets, socket, 0);
    if (!assigned) curl_multi_assign(sockets->multi, socket, sockets);
    return 0;
}

/// Sets `sockets` (an epoll instance, and `multi` itself) up as `multi`'s socket set.
static inline CURLMcode fs_curl_multi_use_socket_set(CURLM *multi, fs_curl_socket_set *sockets) {
    CURLMcode code = curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, fs_curl_socket_changed);
    return code == CURLM_OK ? curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, sockets) : code;
}

/// Waits up to `timeout_ms` (-1: until something happens) for the set's sockets (and any other descriptor added with
/// `fs_epoll_add_readable`); writes each ready one to `ready` with its events as CURL_CSELECT_* bits to `events`.
/// An idle socket that is ready leaves the set instead. Returns how many, 0 when the time ran out, a signal
/// interrupted or only idle sockets were ready, -1 on another error.
static inline int fs_curl_socket_set_wait(fs_curl_socket_set *sockets, int timeout_ms, int *ready, int *events, int capacity) {
    struct epoll_event found[64];
    int count = epoll_wait(sockets->epoll, found, capacity < 64 ? capacity : 64, timeout_ms);
    if (count < 0) return errno == EINTR ? 0 : -1;
    int reported = 0;
    for (int i = 0; i < count; i++) {
        int socket = found[i].data.fd;
        if (fs_curl_socket_set_is_idle(sockets, socket)) {
            epoll_ctl(sockets->epoll, EPOLL_CTL_DEL, socket, NULL);
            sockets->idle[socket] = 0;
            continue;
        }
        ready[reported] = socket;
        events[reported] = ((found[i].events & EPOLLIN) ? CURL_CSELECT_IN : 0) | ((found[i].events & EPOLLOUT) ? CURL_CSELECT_OUT : 0)
            | ((found[i].events & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
        reported++;
    }
    return reported;
}

/// Waits up to `timeout_ms` on `epoll` and writes the ready descriptors to `ready` (at most `capacity`, at most 64):
/// how many, 0 when the time ran out or a signal interrupted, -1 on another error (`LoopbackHTTPClient`).
static inline int fs_epoll_wait_descriptors(int epoll, int timeout_ms, int *ready, int capacity) {
    struct epoll_event found[64];
    int count = epoll_wait(epoll, found, capacity < 64 ? capacity : 64, timeout_ms);
    if (count < 0) return errno == EINTR ? 0 : -1;
    for (int i = 0; i < count; i++) ready[i] = found[i].data.fd;
    return count;
}

/// Removes `descriptor` from `epoll`.
static inline int fs_epoll_remove(int epoll, int descriptor) {
    return epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, NULL);
}

/// Adds `descriptor` (the loop's wake-up eventfd) to the set, for reading.
static inline int fs_epoll_add_readable(int epoll, int descriptor) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = EPOLLIN;
    event.data.fd = descriptor;
    return epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event);
}

#endif
