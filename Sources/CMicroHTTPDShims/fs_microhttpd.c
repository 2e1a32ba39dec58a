#include "fs_microhttpd.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// Request-head deadlines. libmicrohttpd's connection timeout is an idle timeout: a client that trickles one byte
// at a time keeps a connection forever. Each connection waiting for a request head is kept here, in order of
// deadline (every deadline is now + the same timeout, so appending keeps the order), and a thread shuts down the
// socket of the first one whose deadline passed; libmicrohttpd then sees end of file and closes the connection.
// The node lives in the connection's socket context from NOTIFY_STARTED to NOTIFY_CLOSED, and libmicrohttpd calls
// NOTIFY_CLOSED before it closes the socket: under the lock, a node's fd is always still that connection's.
// With a manual clock (tests) there is no thread: time moves only by `fs_mhd_head_clock_advance`, which sweeps.
struct fs_mhd_head_node {
    struct fs_mhd_head_watch *watch;
    struct fs_mhd_head_node *prev;
    struct fs_mhd_head_node *next;
    int fd;
    int armed;
    uint64_t deadline_ms;
};

struct fs_mhd_head_watch {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    struct fs_mhd_head_node *first;
    struct fs_mhd_head_node *last;
    pthread_cond_t changed;
    uint64_t timeout_ms;
    uint64_t timed_out;
    uint64_t armed_count;
    uint64_t manual_now_ms;
    int manual;
    int stopping;
};

static uint64_t fs_monotonic_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
}

// All under the watch's lock.
static uint64_t fs_head_now(const struct fs_mhd_head_watch *watch) {
    return watch->manual ? watch->manual_now_ms : fs_monotonic_ms();
}

static void fs_head_unlink(struct fs_mhd_head_watch *watch, struct fs_mhd_head_node *node) {
    if (!node->armed) return;
    watch->armed_count--;
    if (node->prev != NULL) node->prev->next = node->next; else watch->first = node->next;
    if (node->next != NULL) node->next->prev = node->prev; else watch->last = node->prev;
    node->prev = node->next = NULL;
    node->armed = 0;
}

static void fs_head_arm(struct fs_mhd_head_watch *watch, struct fs_mhd_head_node *node) {
    fs_head_unlink(watch, node);
    node->deadline_ms = fs_head_now(watch) + watch->timeout_ms;
    node->prev = watch->last;
    if (watch->last != NULL) watch->last->next = node; else watch->first = node;
    watch->last = node;
    node->armed = 1;
    watch->armed_count++;
    if (watch->first == node) pthread_cond_signal(&watch->wake);
    pthread_cond_broadcast(&watch->changed);
}

static void fs_head_sweep(struct fs_mhd_head_watch *watch) {
    uint64_t now = fs_head_now(watch);
    while (watch->first != NULL && watch->first->deadline_ms <= now) {
        struct fs_mhd_head_node *node = watch->first;
        fs_head_unlink(watch, node);
        shutdown(node->fd, SHUT_RDWR);
        watch->timed_out++;
    }
}

static void *fs_head_watch_run(void *argument) {
    struct fs_mhd_head_watch *watch = argument;
    pthread_mutex_lock(&watch->lock);
    while (!watch->stopping) {
        fs_head_sweep(watch);
        if (watch->first == NULL) {
            pthread_cond_wait(&watch->wake, &watch->lock);
        } else {
            uint64_t deadline = watch->first->deadline_ms;
            struct timespec until = { (time_t)(deadline / 1000), (long)(deadline % 1000) * 1000000 };
            pthread_cond_timedwait(&watch->wake, &watch->lock, &until);
        }
    }
    pthread_mutex_unlock(&watch->lock);
    return NULL;
}

static void fs_head_watch_destroy(struct fs_mhd_head_watch *watch) {
    pthread_cond_destroy(&watch->changed);
    pthread_cond_destroy(&watch->wake);
    pthread_mutex_destroy(&watch->lock);
    free(watch);
}

static struct fs_mhd_head_watch *fs_head_watch_new(unsigned int timeout_seconds, int manual_clock) {
    struct fs_mhd_head_watch *watch = calloc(1, sizeof *watch);
    if (watch == NULL) return NULL;
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_mutex_init(&watch->lock, NULL);
    pthread_cond_init(&watch->wake, &attributes);
    pthread_cond_init(&watch->changed, &attributes);
    pthread_condattr_destroy(&attributes);
    watch->timeout_ms = (uint64_t)timeout_seconds * 1000;
    watch->manual = manual_clock != 0;
    if (!watch->manual && pthread_create(&watch->thread, NULL, fs_head_watch_run, watch) != 0) {
        fs_head_watch_destroy(watch);
        return NULL;
    }
    return watch;
}

static void fs_head_watch_free(struct fs_mhd_head_watch *watch) {
    if (watch == NULL) return;
    if (!watch->manual) {
        pthread_mutex_lock(&watch->lock);
        watch->stopping = 1;
        pthread_cond_signal(&watch->wake);
        pthread_mutex_unlock(&watch->lock);
        pthread_join(watch->thread, NULL);
    }
    fs_head_watch_destroy(watch);
}

static void fs_head_notify(void *cls, struct MHD_Connection *connection, void **socket_context,
                           enum MHD_ConnectionNotificationCode code) {
    struct fs_mhd_head_watch *watch = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct fs_mhd_head_node *node = info != NULL ? calloc(1, sizeof *node) : NULL;
        *socket_context = node;
        if (node == NULL) return;
        node->watch = watch;
        node->fd = info->connect_fd;
        pthread_mutex_lock(&watch->lock);
        fs_head_arm(watch, node);
        pthread_mutex_unlock(&watch->lock);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        struct fs_mhd_head_node *node = *socket_context;
        *socket_context = NULL;
        if (node == NULL) return;
        pthread_mutex_lock(&watch->lock);
        fs_head_unlink(watch, node);
        pthread_mutex_unlock(&watch->lock);
        free(node);
    }
}

static struct fs_mhd_head_node *fs_head_node(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info != NULL ? info->socket_context : NULL;
}

void fs_mhd_head_received(struct MHD_Connection *connection) {
    struct fs_mhd_head_node *node = fs_head_node(connection);
    if (node == NULL) return;
    pthread_mutex_lock(&node->watch->lock);
    fs_head_unlink(node->watch, node);
    pthread_mutex_unlock(&node->watch->lock);
}

void fs_mhd_head_expected(struct MHD_Connection *connection) {
    struct fs_mhd_head_node *node = fs_head_node(connection);
    if (node == NULL) return;
    pthread_mutex_lock(&node->watch->lock);
    fs_head_arm(node->watch, node);
    pthread_mutex_unlock(&node->watch->lock);
}

uint64_t fs_mhd_heads_timed_out(struct fs_mhd_head_watch *watch) {
    if (watch == NULL) return 0;
    pthread_mutex_lock(&watch->lock);
    uint64_t count = watch->timed_out;
    pthread_mutex_unlock(&watch->lock);
    return count;
}

void fs_mhd_head_clock_advance(struct fs_mhd_head_watch *watch, uint64_t milliseconds) {
    if (watch == NULL || !watch->manual) return;
    pthread_mutex_lock(&watch->lock);
    watch->manual_now_ms += milliseconds;
    fs_head_sweep(watch);
    pthread_mutex_unlock(&watch->lock);
}

int fs_mhd_heads_await_watched(struct fs_mhd_head_watch *watch, uint64_t count, unsigned int bound_ms) {
    if (watch == NULL) return 0;
    uint64_t until_ms = fs_monotonic_ms() + bound_ms;
    struct timespec until = { (time_t)(until_ms / 1000), (long)(until_ms % 1000) * 1000000 };
    pthread_mutex_lock(&watch->lock);
    int result = 0;
    while (watch->armed_count < count && result == 0) result = pthread_cond_timedwait(&watch->changed, &watch->lock, &until);
    int reached = watch->armed_count >= count;
    pthread_mutex_unlock(&watch->lock);
    return reached;
}

void fs_mhd_stop(struct MHD_Daemon *daemon, struct fs_mhd_head_watch *watch) {
    MHD_stop_daemon(daemon);
    fs_head_watch_free(watch);
}

struct MHD_Daemon *fs_mhd_start(const struct fs_mhd_settings *settings,
                                MHD_AccessHandlerCallback handler, void *handler_cls,
                                MHD_RequestCompletedCallback completed, void *completed_cls,
                                fs_mhd_uri_log_callback uri_log, void *uri_log_cls,
                                struct fs_mhd_head_watch **watch_out, int *error_out) {
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    const struct sockaddr *address;
    unsigned int flags = MHD_ALLOW_SUSPEND_RESUME;
#ifdef __linux__
    flags |= MHD_USE_EPOLL_INTERNAL_THREAD;
#else
    flags |= MHD_USE_AUTO_INTERNAL_THREAD;
#endif
    memset(&v4, 0, sizeof v4);
    memset(&v6, 0, sizeof v6);
    if (settings->host != NULL && inet_pton(AF_INET, settings->host, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons(settings->port);
        address = (const struct sockaddr *)&v4;
    } else if (settings->host != NULL && inet_pton(AF_INET6, settings->host, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(settings->port);
        address = (const struct sockaddr *)&v6;
        flags |= MHD_USE_IPv6;
    } else {
        *error_out = FS_MHD_START_BAD_HOST;
        return NULL;
    }
    *watch_out = NULL;
    struct fs_mhd_head_watch *watch = NULL;
    if (settings->request_head_timeout_seconds > 0) {
        watch = fs_head_watch_new(settings->request_head_timeout_seconds, settings->request_head_manual_clock);
        if (watch == NULL) {
            *error_out = FS_MHD_START_FAILED;
            return NULL;
        }
    }

    struct MHD_OptionItem options[10];
    int n = 0;
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, (void *)address};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, completed_cls};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)uri_log, uri_log_cls};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, settings->connection_timeout_seconds, NULL};
    if (settings->connection_limit > 0)
        options[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, settings->connection_limit, NULL};
    if (settings->thread_pool_size > 1)
        options[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, settings->thread_pool_size, NULL};
    if (settings->connection_memory_limit > 0)
        options[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)settings->connection_memory_limit, NULL};
    if (settings->per_address_connection_limit > 0)
        options[n++] = (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT, settings->per_address_connection_limit, NULL};
    if (watch != NULL)
        options[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)fs_head_notify, watch};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};

    struct MHD_Daemon *daemon = MHD_start_daemon(flags, settings->port, NULL, NULL, handler, handler_cls,
                                                 MHD_OPTION_ARRAY, options, MHD_OPTION_END);
    if (daemon == NULL) {
        int saved = errno;
        fs_head_watch_free(watch);
        errno = saved;
        *error_out = FS_MHD_START_FAILED;
        return NULL;
    }
    *watch_out = watch;
    *error_out = FS_MHD_START_OK;
    return daemon;
}

uint16_t fs_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

int fs_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return -1;
    const struct sockaddr *address = info->client_addr;
    const void *raw;
    if (address->sa_family == AF_INET) {
        // Dotted decimal by hand: glibc's inet_ntop formats IPv4 with sprintf, a visible cost once per request.
        const unsigned char *octets = (const unsigned char *)&((const struct sockaddr_in *)address)->sin_addr;
        char text[16];
        size_t used = 0;
        for (int i = 0; i < 4; i++) {
            unsigned int value = octets[i];
            if (value >= 100) text[used++] = (char)('0' + value / 100);
            if (value >= 10) text[used++] = (char)('0' + value / 10 % 10);
            text[used++] = (char)('0' + value % 10);
            text[used++] = i < 3 ? '.' : '\0';
        }
        if (used > length) return -1;
        memcpy(buffer, text, used);
        return 0;
    } else if (address->sa_family == AF_INET6) {
        raw = &((const struct sockaddr_in6 *)address)->sin6_addr;
    } else {
        return -1;
    }
    if (length > (size_t)INT32_MAX) length = INT32_MAX;
    return inet_ntop(address->sa_family, raw, buffer, (socklen_t)length) == NULL ? -1 : 0;
}
