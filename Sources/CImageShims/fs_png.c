#include "fs_png.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>

// libpng reports fatal errors through the error callback, which must not return: it longjmps to
// the setjmp in fs_png_decode_rgb (png_jmpbuf).
typedef struct {
    const uint8_t *data;
    size_t size;
    size_t position;
    char *message;
    size_t capacity;
} fs_png_context;

static void fs_png_read(png_structp png, png_bytep out, size_t count) {
    fs_png_context *ctx = (fs_png_context *)png_get_io_ptr(png);
    if (count > ctx->size - ctx->position) png_error(png, "premature end of PNG data");
    memcpy(out, ctx->data + ctx->position, count);
    ctx->position += count;
}

static void fs_png_error(png_structp png, png_const_charp text) {
    fs_png_context *ctx = (fs_png_context *)png_get_error_ptr(png);
    if (ctx->message != NULL && ctx->capacity > 0) snprintf(ctx->message, ctx->capacity, "%s", text);
    png_longjmp(png, 1);
}

static void fs_png_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

fs_image_status fs_png_decode_rgb(const uint8_t *data, size_t size, fs_image_limits limits,
                                  fs_image_rgb *out, char *message, size_t message_capacity) {
    fs_png_context ctx = { data, size, 0, message, message_capacity };
    png_structp png = NULL;
    png_infop info = NULL;
    uint8_t *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    volatile fs_image_status failure = FS_IMAGE_CORRUPT;

    out->pixels = NULL;
    out->width = 0;
    out->height = 0;
    if (message != NULL && message_capacity > 0) message[0] = '\0';
    if (data == NULL || size < 8 || png_sig_cmp((png_const_bytep)data, 0, 8) != 0) {
        if (message != NULL && message_capacity > 0) snprintf(message, message_capacity, "not PNG data");
        return FS_IMAGE_CORRUPT;
    }
    png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, fs_png_error, fs_png_warning);
    if (png == NULL) return FS_IMAGE_NO_MEMORY;
    info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_read_struct(&png, NULL, NULL);
        return FS_IMAGE_NO_MEMORY;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(rows);
        free(pixels);
        return failure;
    }
    png_set_read_fn(png, &ctx, fs_png_read);
    png_read_info(png, info);

    png_uint_32 width = png_get_image_width(png, info);
    png_uint_32 height = png_get_image_height(png, info);
    if (width > limits.max_width || height > limits.max_height ||
        (uint64_t)width * (uint64_t)height > limits.max_pixels) {
        if (message != NULL && message_capacity > 0) snprintf(message, message_capacity, "%ux%u", (unsigned)width, (unsigned)height);
        out->width = width;
        out->height = height;
        png_destroy_read_struct(&png, &info, NULL);
        return FS_IMAGE_TOO_LARGE;
    }
    int color = png_get_color_type(png, info);
    int depth = png_get_bit_depth(png, info);
    if (depth == 16) png_set_strip_16(png);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    if (color & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(png);
    (void)png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * 3) {
        if (message != NULL && message_capacity > 0) snprintf(message, message_capacity, "unexpected PNG row layout");
        png_destroy_read_struct(&png, &info, NULL);
        return FS_IMAGE_UNSUPPORTED;
    }
    failure = FS_IMAGE_NO_MEMORY;
    pixels = malloc((size_t)width * 3 * (size_t)height);
    rows = malloc(sizeof(png_bytep) * (size_t)height);
    if (pixels == NULL || rows == NULL) png_error(png, "out of memory");
    failure = FS_IMAGE_CORRUPT;
    for (png_uint_32 y = 0; y < height; y++) rows[y] = pixels + (size_t)y * width * 3;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    out->pixels = pixels;
    out->width = width;
    out->height = height;
    return FS_IMAGE_OK;
}
