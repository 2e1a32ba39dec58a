#ifndef FACESEAL_CIMAGESHIMS_H
#define FACESEAL_CIMAGESHIMS_H
// JPEG and PNG decoding with each library's longjmp error exit kept inside C; FaceSealFace's image decoder wraps them.
#include "fs_image.h"
#include "fs_jpeg.h"
#include "fs_png.h"
#endif
