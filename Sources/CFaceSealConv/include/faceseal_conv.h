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
    /// Filters per packed weight block of the narrow kernel (fs_conv_narrow).
    FS_CONV_NARROW_FILTERS = 16,
    /// Floats the narrow kernel may read past the last output it computes (its widest tile's columns, less one).
    FS_CONV_NARROW_SLACK = 3,
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

/// The kernel for layers with few output positions (the ResNet's deep levels), vectorised over filters. Its input
/// is laid out as fs_conv_tiles's (output row pitch `pitch`); output (y, x) of filter f is
///
///     output[(y·outCols + x)·positionStride + f] = Σ_c Σ_k weights(f, c, live[k]) · input[c·channelStride + offsets[live[k]] + y·pitch + x]
///
/// for filter blocks blockBegin..<blockEnd, summed in the same order as fs_conv_tiles over the live taps only (a
/// tap that reads only zero padding for every output adds nothing). `weights` holds the blocks packed as
/// [block][channel][tap][FS_CONV_NARROW_FILTERS]; a tile may read up to FS_CONV_NARROW_SLACK floats past the last
/// output it computes.
void fs_conv_narrow(const float *input, ptrdiff_t pitch, ptrdiff_t channelStride, const int32_t *offsets, int taps,
                    const int32_t *live, int liveCount, int channels, const float *weights, int blockBegin, int blockEnd,
                    float *output, ptrdiff_t positionStride, int outRows, int outCols, int level);

/// Splits the `count` floats at `source` (one input row) into its `stride` column phases: phase b, at
/// destination + b·phaseStride, gets source[b], source[b + stride], … and zeros up to `pitch` floats.
void fs_conv_split_row(const float *source, ptrdiff_t count, int stride, float *destination, ptrdiff_t phaseStride,
                       ptrdiff_t pitch, int level);

#endif
