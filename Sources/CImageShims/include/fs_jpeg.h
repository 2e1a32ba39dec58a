#ifndef FS_JPEG_H
#define FS_JPEG_H
// libjpeg decoding with libjpeg's longjmp error exit kept inside C.
#include "fs_image.h"

// Decodes a baseline or progressive JPEG (grayscale, YCbCr or RGB) to RGB with libjpeg's default
// (accurate integer DCT, fancy upsampling) settings. A premature end of data counts as corrupt.
// On failure `message` (if not NULL) receives libjpeg's text, NUL-terminated.
fs_image_status fs_jpeg_decode_rgb(const uint8_t *data, size_t size, fs_image_limits limits,
                                   fs_image_rgb *out, char *message, size_t message_capacity);
#endif
