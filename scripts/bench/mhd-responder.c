/* The ceiling peer of `faceseal bench authority`: a plain C libmicrohttpd server that answers every request with a
 * small JSON body, as FaceSeal's own server does from its trivial handler. Same event model as FaceSealHTTP (epoll,
 * internal thread pool of min(cores, 4)), ephemeral loopback port, printed as "listening on http://127.0.0.1:PORT".
 * Runs until SIGTERM or SIGINT. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char body[] = "{\"ok\":true}";

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls) {
  (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
  if (*con_cls == NULL) { *con_cls = (void *)1; return MHD_YES; }
  if (*upload_data_size != 0) { *upload_data_size = 0; return MHD_YES; }
  struct MHD_Response *response = MHD_create_response_from_buffer(sizeof body - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header(response, "Content-Type", "application/json");
  enum MHD_Result queued = MHD_queue_response(connection, MHD_HTTP_OK, response);
  MHD_destroy_response(response);
  return queued;
}

int main(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  unsigned int pool = cores < 1 ? 1 : cores > 4 ? 4 : (unsigned int)cores;
  struct sockaddr_in address;
  memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  struct MHD_Daemon *daemon = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, answer, NULL,
                                               MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                                               MHD_OPTION_THREAD_POOL_SIZE, pool, MHD_OPTION_CONNECTION_LIMIT, 4096u,
                                               MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
  if (daemon == NULL) { fprintf(stderr, "mhd-responder: cannot start\n"); return 1; }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
  printf("listening on http://127.0.0.1:%u\n", info ? info->port : 0);
  fflush(stdout);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigprocmask(SIG_BLOCK, &signals, NULL);
  int received;
  sigwait(&signals, &received);
  MHD_stop_daemon(daemon);
  return 0;
}
