// One register tile of fs_conv_narrow for one instruction set, included by conv.c with FS_NARROW_NAME,
// FS_CONV_TARGET, the vector type and operations, FS_LANES (floats a vector), FS_FV (vectors of filters a block:
// FS_FV·FS_LANES = FS_CONV_NARROW_FILTERS), FS_NB (blocks a tile), FS_NR and FS_NC (output rows and columns a
// tile) defined. The tile is FS_NR·FS_NC × FS_NB·FS_FV accumulators; each live tap loads the blocks' weight vectors
// and broadcasts one input value per position, read at fixed distances from one address per row.

FS_CONV_TARGET
static void FS_NARROW_NAME(const float *input, ptrdiff_t pitch, ptrdiff_t channelStride, const int32_t *offsets,
                           const int32_t *live, int liveCount, int taps, int channels, const float *weights,
                           ptrdiff_t blockFloats, float *output, ptrdiff_t outCols, ptrdiff_t positionStride, int rows,
                           int cols) {
    FS_VEC acc[FS_NR][FS_NC][FS_NB * FS_FV];
    for (int r = 0; r < FS_NR; r++)
        for (int q = 0; q < FS_NC; q++)
            for (int v = 0; v < FS_NB * FS_FV; v++) acc[r][q][v] = FS_ZERO();
    for (int c = 0; c < channels; c++) {
        const float *source = input + c * channelStride;
        const float *channelWeights = weights + (ptrdiff_t)c * taps * FS_CONV_NARROW_FILTERS;
        for (int k = 0; k < liveCount; k++) {
            const int t = live[k];
            const float *s = source + offsets[t];
            const float *w = channelWeights + t * FS_CONV_NARROW_FILTERS;
            FS_VEC kv[FS_NB * FS_FV];
            for (int b = 0; b < FS_NB; b++)
                for (int v = 0; v < FS_FV; v++) kv[b * FS_FV + v] = FS_LOAD(w + b * blockFloats + v * FS_LANES);
            for (int r = 0; r < FS_NR; r++) {
                const float *row = s + r * pitch;
                for (int q = 0; q < FS_NC; q++) {
                    const FS_VEC x = FS_SPLAT(row[q]);
                    for (int v = 0; v < FS_NB * FS_FV; v++) acc[r][q][v] = FS_FMA(kv[v], x, acc[r][q][v]);
                }
            }
        }
    }
    for (int r = 0; r < FS_NR && r < rows; r++)
        for (int q = 0; q < FS_NC && q < cols; q++)
            for (int b = 0; b < FS_NB; b++)
                for (int v = 0; v < FS_FV; v++)
                    FS_STORE(output + (r * outCols + q) * positionStride + b * FS_CONV_NARROW_FILTERS + v * FS_LANES,
                             acc[r][q][b * FS_FV + v]);
}
