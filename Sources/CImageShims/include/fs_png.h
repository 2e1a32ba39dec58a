#ifndef FS_PNG_H
#define FS_PNG_H
// libpng decoding with libpng's longjmp error exit kept inside C.
#include "fs_image.h"

// Decodes any PNG to 8-bit RGB: palette and low-bit gray are expanded, gray is replicated,
// 16-bit samples keep their high byte, and alpha is dropped (not composited).
// On failure `message` (if not NULL) receives libpng's text, NUL-terminated.
fs_image_status fs_png_decode_rgb(const uint8_t *data, size_t size, fs_image_limits limits,
                                  fs_image_rgb *out, char *message, size_t message_capacity);
#endif
