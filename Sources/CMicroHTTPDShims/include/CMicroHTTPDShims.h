#ifndef FACESEAL_CMICROHTTPDSHIMS_H
#define FACESEAL_CMICROHTTPDSHIMS_H
// libmicrohttpd's variadic start-up and the request-head deadlines, in C; FaceSealHTTP's server wraps them.
#include "fs_microhttpd.h"
#endif
