#ifndef FACESEAL_CONV_H
#define FACESEAL_CONV_H
// FaceSeal's own convolution kernel for the face networks (x86-64 AVX2+FMA or AVX-512F), called only by
// FaceSealFace. It reads its input in place, with no im2col matrix: every output position p of filter f is
//
//     output[f·outputStride + p] = Σ_c Σ_t weights(f, c, t) · input[c·channelStride + offsets[t] + p]
//
// summed over channels c (outer) and taps t (inner) in that order, whatever the tiling, so the result of a
// position never depends on how the work was split. A stride-1 convolution reads a zero-padded copy of its
// input, a stride-s one its s×s stride phases; both put the output row pitch equal to the input's, so a tap is
// one offset (the output then holds a few unused columns per row, which the caller drops).
//
// On a machine or build without AVX2 and FMA, fs_conv_cpu_level() returns 0 and the kernel may not be called.
#include <stddef.h>
#include <stdint.h>

enum {
    /// Filters per packed weight block of a layer with more than one filter (a one-filter layer's block is that
    /// filter); the output holds whole blocks.
    FS_CONV_BLOCK_FILTERS = 8,
    /// Positions per tile: position ranges are multiples of this.
    FS_CONV_TILE_POSITIONS = 48,
};

/// 0: no kernel; 1: AVX2 + FMA; 2: AVX-512F.
int fs_conv_cpu_level(void);

/// Computes filter blocks blockBegin..<blockEnd over positions positionBegin..<positionEnd (multiples of
/// FS_CONV_TILE_POSITIONS). `weights` holds the blocks packed as [block][channel][tap][blockFilters], blockFilters
/// FS_CONV_BLOCK_FILTERS or 1. Every address input + c·channelStride + offsets[t] + p for p < positionEnd must be
/// readable; `level` is 1 or 2.
void fs_conv_tiles(const float *input, ptrdiff_t channelStride, const int32_t *offsets, int taps, int channels,
                   const float *weights, int blockFilters, int blockBegin, int blockEnd,
                   float *output, ptrdiff_t outputStride, ptrdiff_t positionBegin, ptrdiff_t positionEnd, int level);

/// Splits the `count` floats at `source` (one input row) into its `stride` column phases: phase b, at
/// destination + b·phaseStride, gets source[b], source[b + stride], … and zeros up to `pitch` floats.
void fs_conv_split_row(const float *source, ptrdiff_t count, int stride, float *destination, ptrdiff_t phaseStride,
                       ptrdiff_t pitch, int level);

#endif
