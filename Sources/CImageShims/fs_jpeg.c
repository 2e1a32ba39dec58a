#include "fs_jpeg.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

// libjpeg reports fatal errors through error_exit, which must not return: it longjmps back here.
typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    fs_image_status status;
    char *message;
    size_t capacity;
} fs_jpeg_error;

static void fs_jpeg_record(j_common_ptr cinfo) {
    fs_jpeg_error *err = (fs_jpeg_error *)cinfo->err;
    if (err->message != NULL && err->capacity > 0) {
        char text[JMSG_LENGTH_MAX];
        (*cinfo->err->format_message)(cinfo, text);
        snprintf(err->message, err->capacity, "%s", text);
    }
}

static void fs_jpeg_error_exit(j_common_ptr cinfo) {
    fs_jpeg_error *err = (fs_jpeg_error *)cinfo->err;
    fs_jpeg_record(cinfo);
    switch (cinfo->err->msg_code) {
    case JERR_CONVERSION_NOTIMPL:
    case JERR_NOT_COMPILED:
    case JERR_BAD_PRECISION:
    case JERR_ARITH_NOTIMPL:
        err->status = FS_IMAGE_UNSUPPORTED;
        break;
    case JERR_OUT_OF_MEMORY:
        err->status = FS_IMAGE_NO_MEMORY;
        break;
    default:
        err->status = FS_IMAGE_CORRUPT;
    }
    longjmp(err->jump, 1);
}

// Warnings are tolerated (real files often carry stray bytes before a marker), except a premature
// end of data: libjpeg would pad the rest of the image with grey, which must not pass as a face.
static void fs_jpeg_emit_message(j_common_ptr cinfo, int level) {
    if (level < 0) {
        cinfo->err->num_warnings++;
        if (cinfo->err->msg_code == JWRN_JPEG_EOF) {
            fs_jpeg_error *err = (fs_jpeg_error *)cinfo->err;
            fs_jpeg_record(cinfo);
            err->status = FS_IMAGE_CORRUPT;
            longjmp(err->jump, 1);
        }
    }
}

// A progressive JPEG may declare thousands of tiny scans, each forcing a pass over the whole image:
// a cheap file that costs minutes to decode. Real encoders write at most a few dozen scans.
#define FS_JPEG_MAX_SCANS 500

static void fs_jpeg_progress(j_common_ptr cinfo) {
    if (cinfo->is_decompressor && ((j_decompress_ptr)cinfo)->input_scan_number > FS_JPEG_MAX_SCANS) {
        fs_jpeg_error *err = (fs_jpeg_error *)cinfo->err;
        if (err->message != NULL && err->capacity > 0)
            snprintf(err->message, err->capacity, "more than %d scans", FS_JPEG_MAX_SCANS);
        err->status = FS_IMAGE_UNSUPPORTED;
        longjmp(err->jump, 1);
    }
}

void fs_image_free(fs_image_rgb *image) {
    if (image != NULL) {
        free(image->pixels);
        image->pixels = NULL;
        image->width = 0;
        image->height = 0;
    }
}

fs_image_status fs_jpeg_decode_rgb(const uint8_t *data, size_t size, fs_image_limits limits,
                                   fs_image_rgb *out, char *message, size_t message_capacity) {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_progress_mgr progress;
    fs_jpeg_error err;
    uint8_t *volatile pixels = NULL;

    out->pixels = NULL;
    out->width = 0;
    out->height = 0;
    if (message != NULL && message_capacity > 0) message[0] = '\0';
    if (data == NULL || size < 4 || size > (size_t)0xFFFFFFFFu) {
        if (message != NULL && message_capacity > 0) snprintf(message, message_capacity, "not JPEG data");
        return FS_IMAGE_CORRUPT;
    }

    memset(&cinfo, 0, sizeof cinfo);
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = fs_jpeg_error_exit;
    err.pub.emit_message = fs_jpeg_emit_message;
    err.status = FS_IMAGE_OK;
    err.message = message;
    err.capacity = message_capacity;
    if (setjmp(err.jump)) {
        jpeg_destroy_decompress(&cinfo);
        free(pixels);
        return err.status == FS_IMAGE_OK ? FS_IMAGE_CORRUPT : err.status;
    }

    jpeg_create_decompress(&cinfo);
    memset(&progress, 0, sizeof progress);
    progress.progress_monitor = fs_jpeg_progress;
    cinfo.progress = &progress;
    jpeg_mem_src(&cinfo, (const unsigned char *)data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
        if (message != NULL && message_capacity > 0) snprintf(message, message_capacity, "CMYK JPEG");
        jpeg_destroy_decompress(&cinfo);
        return FS_IMAGE_UNSUPPORTED;
    }
    if (cinfo.image_width == 0 || cinfo.image_height == 0 || cinfo.image_width > limits.max_width ||
        cinfo.image_height > limits.max_height ||
        (uint64_t)cinfo.image_width * (uint64_t)cinfo.image_height > limits.max_pixels) {
        if (message != NULL && message_capacity > 0)
            snprintf(message, message_capacity, "%ux%u", (unsigned)cinfo.image_width, (unsigned)cinfo.image_height);
        fs_image_status status = (cinfo.image_width == 0 || cinfo.image_height == 0) ? FS_IMAGE_CORRUPT : FS_IMAGE_TOO_LARGE;
        out->width = cinfo.image_width;
        out->height = cinfo.image_height;
        jpeg_destroy_decompress(&cinfo);
        return status;
    }
    cinfo.out_color_space = JCS_RGB;
    jpeg_start_decompress(&cinfo);
    if (cinfo.output_components != 3) {
        if (message != NULL && message_capacity > 0) snprintf(message, message_capacity, "%d output components", cinfo.output_components);
        jpeg_destroy_decompress(&cinfo);
        return FS_IMAGE_UNSUPPORTED;
    }
    size_t stride = (size_t)cinfo.output_width * 3;
    pixels = malloc(stride * (size_t)cinfo.output_height);
    if (pixels == NULL) {
        jpeg_destroy_decompress(&cinfo);
        return FS_IMAGE_NO_MEMORY;
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = (JSAMPROW)(pixels + stride * cinfo.output_scanline);
        if (jpeg_read_scanlines(&cinfo, &row, 1) != 1) {
            // A suspending source never happens with jpeg_mem_src; treat it as corrupt data anyway.
            jpeg_destroy_decompress(&cinfo);
            free(pixels);
            return FS_IMAGE_CORRUPT;
        }
    }
    jpeg_finish_decompress(&cinfo);
    out->pixels = pixels;
    out->width = cinfo.output_width;
    out->height = cinfo.output_height;
    jpeg_destroy_decompress(&cinfo);
    return FS_IMAGE_OK;
}
