#include "fs_microhttpd.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

struct MHD_Daemon *fs_mhd_start(const struct fs_mhd_settings *settings,
                                MHD_AccessHandlerCallback handler, void *handler_cls,
                                MHD_RequestCompletedCallback completed, void *completed_cls,
                                fs_mhd_uri_log_callback uri_log, void *uri_log_cls,
                                int *error_out) {
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

    struct MHD_OptionItem options[8];
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
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};

    struct MHD_Daemon *daemon = MHD_start_daemon(flags, settings->port, NULL, NULL, handler, handler_cls,
                                                 MHD_OPTION_ARRAY, options, MHD_OPTION_END);
    *error_out = daemon == NULL ? FS_MHD_START_FAILED : FS_MHD_START_OK;
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
        raw = &((const struct sockaddr_in *)address)->sin_addr;
    } else if (address->sa_family == AF_INET6) {
        raw = &((const struct sockaddr_in6 *)address)->sin6_addr;
    } else {
        return -1;
    }
    if (length > (size_t)INT32_MAX) length = INT32_MAX;
    return inet_ntop(address->sa_family, raw, buffer, (socklen_t)length) == NULL ? -1 : 0;
}
