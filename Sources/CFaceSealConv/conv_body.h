// The body of fs_conv_tiles for one instruction set and block size, included by conv.c with FS_CONV_NAME,
// FS_CONV_TARGET, the vector type and operations, FS_LANES (floats a vector), FS_VECTORS (vectors of positions a
// register tile), FS_BLOCK (filters a packed block) and FS_FILTERS (filters a register tile, a divisor of FS_BLOCK)
// defined. A register tile is
// FS_FILTERS × FS_VECTORS accumulators; each tap loads FS_VECTORS input vectors and broadcasts FS_FILTERS weights.

FS_CONV_TARGET
static void FS_CONV_NAME(const float *input, ptrdiff_t channelStride, const int32_t *offsets, int taps, int channels,
                         const float *weights, int blockBegin, int blockEnd,
                         float *output, ptrdiff_t outputStride, ptrdiff_t positionBegin, ptrdiff_t positionEnd) {
    const ptrdiff_t blockFloats = (ptrdiff_t)channels * taps * FS_BLOCK;
    for (int block = blockBegin; block < blockEnd; block++) {
        for (int part = 0; part < FS_BLOCK; part += FS_FILTERS) {
            const float *blockWeights = weights + block * blockFloats + part;
            float *out = output + (ptrdiff_t)(block * FS_BLOCK + part) * outputStride;
            for (ptrdiff_t p = positionBegin; p < positionEnd; p += FS_LANES * FS_VECTORS) {
                FS_VEC acc[FS_FILTERS][FS_VECTORS];
                for (int f = 0; f < FS_FILTERS; f++)
                    for (int v = 0; v < FS_VECTORS; v++) acc[f][v] = FS_ZERO();
                const float *w = blockWeights;
                for (int c = 0; c < channels; c++) {
                    const float *source = input + c * channelStride + p;
                    for (int t = 0; t < taps; t++, w += FS_BLOCK) {
                        const float *s = source + offsets[t];
                        FS_VEC x[FS_VECTORS];
                        for (int v = 0; v < FS_VECTORS; v++) x[v] = FS_LOAD(s + v * FS_LANES);
                        for (int f = 0; f < FS_FILTERS; f++) {
                            const FS_VEC k = FS_SPLAT(w[f]);
                            for (int v = 0; v < FS_VECTORS; v++) acc[f][v] = FS_FMA(k, x[v], acc[f][v]);
                        }
                    }
                }
                for (int f = 0; f < FS_FILTERS; f++)
                    for (int v = 0; v < FS_VECTORS; v++) FS_STORE(out + f * outputStride + p + v * FS_LANES, acc[f][v]);
            }
        }
    }
}
