#ifndef FS_IMAGE_H
#define FS_IMAGE_H
// Shared result codes of the JPEG and PNG decoding shims (fs_jpeg.h, fs_png.h).
// Both decoders need setjmp/longjmp for their error paths, which Swift cannot do, so each
// whole decode runs inside one C function and reports a status instead of jumping.
#include <stddef.h>
#include <stdint.h>

typedef enum {
    FS_IMAGE_OK = 0,
    FS_IMAGE_CORRUPT = 1,       // not decodable: bad or truncated data
    FS_IMAGE_UNSUPPORTED = 2,   // valid but a variant we do not convert (e.g. CMYK JPEG)
    FS_IMAGE_TOO_LARGE = 3,     // header dimensions exceed the caller's limits
    FS_IMAGE_NO_MEMORY = 4
} fs_image_status;

// The limits a decode must respect, checked against the header before any pixel buffer exists.
typedef struct {
    uint32_t max_width;
    uint32_t max_height;
    uint64_t max_pixels;
} fs_image_limits;

// A decoded image: RGB, 8 bits per channel, interleaved, row-major, width*3 bytes per row.
// `pixels` is malloc'd by the decoder and released with fs_image_free. On FS_IMAGE_TOO_LARGE,
// width and height hold the declared dimensions and pixels is NULL.
typedef struct {
    uint8_t *pixels;
    uint32_t width;
    uint32_t height;
} fs_image_rgb;

void fs_image_free(fs_image_rgb *image);

#endif
