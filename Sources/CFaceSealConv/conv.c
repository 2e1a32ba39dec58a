// The direct convolution kernel (faceseal_conv.h) for AVX2 + FMA and AVX-512F, chosen at run time (the
// binary is built for baseline x86-64).
#include "faceseal_conv.h"

#if defined(__x86_64__)
#include <immintrin.h>

int fs_conv_cpu_level(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 2;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 1;
    return 0;
}

// AVX-512: 8 filters × 48 positions, 24 of the 32 registers.
#define FS_VEC __m512
#define FS_LANES 16
#define FS_VECTORS 3
#define FS_BLOCK 8
#define FS_FILTERS 8
#define FS_ZERO() _mm512_setzero_ps()
#define FS_LOAD(p) _mm512_loadu_ps(p)
#define FS_STORE(p, v) _mm512_storeu_ps((p), (v))
#define FS_SPLAT(x) _mm512_set1_ps(x)
#define FS_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define FS_CONV_NAME conv_tiles_avx512
#define FS_CONV_TARGET __attribute__((target("avx512f")))
#include "conv_body.h"
// One filter (the detector's scorer): 48 positions, bound by the loads.
#undef FS_BLOCK
#undef FS_FILTERS
#undef FS_CONV_NAME
#define FS_BLOCK 1
#define FS_FILTERS 1
#define FS_CONV_NAME conv_tiles1_avx512
#include "conv_body.h"
// Narrow layers: 16 filters (one vector) × tiles of up to 4×4 positions, or 4 blocks × one position.
#define FS_FV 1
#define FS_NB 1
#define FS_NR 4
#define FS_NC 4
#define FS_NARROW_NAME narrow4x4_avx512
#include "narrow_body.h"
#undef FS_NR
#undef FS_NC
#undef FS_NARROW_NAME
#define FS_NR 3
#define FS_NC 4
#define FS_NARROW_NAME narrow3x4_avx512
#include "narrow_body.h"
#undef FS_NR
#undef FS_NC
#undef FS_NARROW_NAME
#define FS_NR 2
#define FS_NC 4
#define FS_NARROW_NAME narrow2x4_avx512
#include "narrow_body.h"
#undef FS_NR
#undef FS_NC
#undef FS_NARROW_NAME
#define FS_NR 1
#define FS_NC 4
#define FS_NARROW_NAME narrow1x4_avx512
#include "narrow_body.h"
#undef FS_NR
#undef FS_NC
#undef FS_NARROW_NAME
#undef FS_NB
#define FS_NB 4
#define FS_NR 1
#define FS_NC 1
#define FS_NARROW_NAME narrow1x1_avx512
#include "narrow_body.h"
#undef FS_NR
#undef FS_NC
#undef FS_NARROW_NAME
#undef FS_FV
#undef FS_NB
#undef FS_VEC
#undef FS_LANES
#undef FS_VECTORS
#undef FS_BLOCK
#undef FS_FILTERS
#undef FS_ZERO
#undef FS_LOAD
#undef FS_STORE
#undef FS_SPLAT
#undef FS_FMA
#undef FS_CONV_NAME
#undef FS_CONV_TARGET

// AVX2: 4 filters × 16 positions, 8 of the 16 registers (the other half-block in a second pass; with 12
// accumulators the compiler runs out of registers for the inputs and spills).
#define FS_VEC __m256
#define FS_LANES 8
#define FS_VECTORS 2
#define FS_BLOCK 8
#define FS_FILTERS 4
#define FS_ZERO() _mm256_setzero_ps()
#define FS_LOAD(p) _mm256_loadu_ps(p)
#define FS_STORE(p, v) _mm256_storeu_ps((p), (v))
#define FS_SPLAT(x) _mm256_set1_ps(x)
#define FS_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define FS_CONV_NAME conv_tiles_avx2
#define FS_CONV_TARGET __attribute__((target("avx2,fma")))
#include "conv_body.h"
#undef FS_VECTORS
#undef FS_BLOCK
#undef FS_FILTERS
#undef FS_CONV_NAME
#define FS_VECTORS 6
#define FS_BLOCK 1
#define FS_FILTERS 1
#define FS_CONV_NAME conv_tiles1_avx2
#include "conv_body.h"
// Narrow layers: 16 filters (two vectors) × tiles of up to 2×3 positions (12 accumulators), or 4 blocks × one
// position.
#define FS_FV 2
#define FS_NB 1
#define FS_NR 2
#define FS_NC 3
#define FS_NARROW_NAME narrow2x3_avx2
#include "narrow_body.h"
#undef FS_NR
#undef FS_NC
#undef FS_NARROW_NAME
#define FS_NR 1
#define FS_NC 3
#define FS_NARROW_NAME narrow1x3_avx2
#include "narrow_body.h"
#undef FS_NR
#undef FS_NC
#undef FS_NARROW_NAME
#undef FS_NB
#define FS_NB 4
#define FS_NR 1
#define FS_NC 1
#define FS_NARROW_NAME narrow1x1_avx2
#include "narrow_body.h"
#undef FS_NR
#undef FS_NC
#undef FS_NARROW_NAME
#undef FS_FV
#undef FS_NB

// Stride phases of one row; the compiler vectorises the stride-2 split.
#define FS_SPLIT_BODY                                                                                   \
    for (int b = 0; b < stride; b++) {                                                                  \
        float *to = destination + b * phaseStride;                                                      \
        ptrdiff_t n = count > b ? (count - b + stride - 1) / stride : 0;                                \
        if (n > pitch) n = pitch;                                                                       \
        if (stride == 2) {                                                                              \
            const float *from = source + b;                                                             \
            for (ptrdiff_t x = 0; x < n; x++) to[x] = from[2 * x];                                      \
        } else {                                                                                        \
            for (ptrdiff_t x = 0; x < n; x++) to[x] = source[x * stride + b];                           \
        }                                                                                               \
        for (ptrdiff_t x = n; x < pitch; x++) to[x] = 0;                                                \
    }

__attribute__((target("avx2")))
static void split_row_avx2(const float *source, ptrdiff_t count, int stride, float *destination, ptrdiff_t phaseStride,
                           ptrdiff_t pitch) {
    FS_SPLIT_BODY
}

__attribute__((target("avx512f")))
static void split_row_avx512(const float *source, ptrdiff_t count, int stride, float *destination, ptrdiff_t phaseStride,
                             ptrdiff_t pitch) {
    FS_SPLIT_BODY
}

void fs_conv_split_row(const float *source, ptrdiff_t count, int stride, float *destination, ptrdiff_t phaseStride,
                       ptrdiff_t pitch, int level) {
    if (level >= 2) {
        split_row_avx512(source, count, stride, destination, phaseStride, pitch);
    } else {
        split_row_avx2(source, count, stride, destination, phaseStride, pitch);
    }
}

void fs_conv_tiles(const float *input, ptrdiff_t channelStride, const int32_t *offsets, int taps, int channels,
                   const float *weights, int blockFilters, int blockBegin, int blockEnd,
                   float *output, ptrdiff_t outputStride, ptrdiff_t positionBegin, ptrdiff_t positionEnd, int level) {
    if (blockFilters == 1) {
        (level >= 2 ? conv_tiles1_avx512 : conv_tiles1_avx2)(input, channelStride, offsets, taps, channels, weights,
                                                             blockBegin, blockEnd, output, outputStride, positionBegin,
                                                             positionEnd);
    } else {
        (level >= 2 ? conv_tiles_avx512 : conv_tiles_avx2)(input, channelStride, offsets, taps, channels, weights,
                                                           blockBegin, blockEnd, output, outputStride, positionBegin,
                                                           positionEnd);
    }
}

typedef void (*narrow_tile)(const float *, ptrdiff_t, ptrdiff_t, const int32_t *, const int32_t *, int, int, int,
                            const float *, ptrdiff_t, float *, ptrdiff_t, ptrdiff_t, int, int);

void fs_conv_narrow(const float *input, ptrdiff_t pitch, ptrdiff_t channelStride, const int32_t *offsets, int taps,
                    const int32_t *live, int liveCount, int channels, const float *weights, int blockBegin, int blockEnd,
                    float *output, ptrdiff_t positionStride, int outRows, int outCols, int level) {
    // Tiles by the rows they cover (index: rows − 1, the widest last).
    static const narrow_tile avx512[4] = {narrow1x4_avx512, narrow2x4_avx512, narrow3x4_avx512, narrow4x4_avx512};
    static const narrow_tile avx2[2] = {narrow1x3_avx2, narrow2x3_avx2};
    const ptrdiff_t blockFloats = (ptrdiff_t)channels * taps * FS_CONV_NARROW_FILTERS;
    int block = blockBegin;
    if (outRows == 1 && outCols == 1) {
        // One position: four blocks a tile, so that four independent sums hide the multiply-add latency.
        const narrow_tile single = level >= 2 ? narrow1x1_avx512 : narrow1x1_avx2;
        for (; block + 4 <= blockEnd; block += 4)
            single(input, pitch, channelStride, offsets, live, liveCount, taps, channels, weights + block * blockFloats,
                   blockFloats, output + block * FS_CONV_NARROW_FILTERS, outCols, positionStride, 1, 1);
    }
    const narrow_tile *tiles = level >= 2 ? avx512 : avx2;
    const int tileRows = level >= 2 ? 4 : 2, tileCols = level >= 2 ? 4 : 3;
    for (; block < blockEnd; block++) {
        const float *w = weights + block * blockFloats;
        float *out = output + block * FS_CONV_NARROW_FILTERS;
        for (int y = 0; y < outRows; y += tileRows) {
            const int rows = outRows - y < tileRows ? outRows - y : tileRows;
            for (int x = 0; x < outCols; x += tileCols) {
                tiles[rows - 1](input + y * pitch + x, pitch, channelStride, offsets, live, liveCount, taps, channels, w,
                                blockFloats, out + ((ptrdiff_t)y * outCols + x) * positionStride, outCols, positionStride,
                                rows, outCols - x);
            }
        }
    }
}

#else

int fs_conv_cpu_level(void) { return 0; }

void fs_conv_narrow(const float *input, ptrdiff_t pitch, ptrdiff_t channelStride, const int32_t *offsets, int taps,
                    const int32_t *live, int liveCount, int channels, const float *weights, int blockBegin, int blockEnd,
                    float *output, ptrdiff_t positionStride, int outRows, int outCols, int level) {
    (void)input; (void)pitch; (void)channelStride; (void)offsets; (void)taps; (void)live; (void)liveCount; (void)channels;
    (void)weights; (void)blockBegin; (void)blockEnd; (void)output; (void)positionStride; (void)outRows; (void)outCols;
    (void)level;
}

void fs_conv_tiles(const float *input, ptrdiff_t channelStride, const int32_t *offsets, int taps, int channels,
                   const float *weights, int blockFilters, int blockBegin, int blockEnd,
                   float *output, ptrdiff_t outputStride, ptrdiff_t positionBegin, ptrdiff_t positionEnd, int level) {
    (void)input; (void)channelStride; (void)offsets; (void)taps; (void)channels; (void)weights; (void)blockFilters;
    (void)blockBegin; (void)blockEnd; (void)output; (void)outputStride; (void)positionBegin; (void)positionEnd; (void)level;
}

void fs_conv_split_row(const float *source, ptrdiff_t count, int stride, float *destination, ptrdiff_t phaseStride,
                       ptrdiff_t pitch, int level) {
    (void)source; (void)count; (void)stride; (void)destination; (void)phaseStride; (void)pitch; (void)level;
}

#endif
