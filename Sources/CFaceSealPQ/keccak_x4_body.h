// The body of a four-way Keccak-f[1600] over AVX2 registers, included once per target by keccak_x4.c
// with FS_KECCAK_X4_NAME and FS_KECCAK_X4_TARGET defined. Same round structure as KeccakF1600.swift;
// with AVX-512VL the compiler turns the shift pairs into rotates and the logic into ternary ops.

FS_KECCAK_X4_TARGET static void FS_KECCAK_X4_NAME(uint64_t *state) {
    __m256i *s = (__m256i *)state;
    __m256i a00 = s[0], a10 = s[1], a20 = s[2], a30 = s[3], a40 = s[4];
    __m256i a01 = s[5], a11 = s[6], a21 = s[7], a31 = s[8], a41 = s[9];
    __m256i a02 = s[10], a12 = s[11], a22 = s[12], a32 = s[13], a42 = s[14];
    __m256i a03 = s[15], a13 = s[16], a23 = s[17], a33 = s[18], a43 = s[19];
    __m256i a04 = s[20], a14 = s[21], a24 = s[22], a34 = s[23], a44 = s[24];
    for (int round = 0; round < 24; round++) {
        __m256i c0 = XOR(XOR(XOR(a00, a01), XOR(a02, a03)), a04);
        __m256i c1 = XOR(XOR(XOR(a10, a11), XOR(a12, a13)), a14);
        __m256i c2 = XOR(XOR(XOR(a20, a21), XOR(a22, a23)), a24);
        __m256i c3 = XOR(XOR(XOR(a30, a31), XOR(a32, a33)), a34);
        __m256i c4 = XOR(XOR(XOR(a40, a41), XOR(a42, a43)), a44);
        __m256i d0 = XOR(c4, ROL(c1, 1));
        __m256i d1 = XOR(c0, ROL(c2, 1));
        __m256i d2 = XOR(c1, ROL(c3, 1));
        __m256i d3 = XOR(c2, ROL(c4, 1));
        __m256i d4 = XOR(c3, ROL(c0, 1));
        __m256i b00 = XOR(a00, d0);
        __m256i b10 = ROL(XOR(a11, d1), 44);
        __m256i b20 = ROL(XOR(a22, d2), 43);
        __m256i b30 = ROL(XOR(a33, d3), 21);
        __m256i b40 = ROL(XOR(a44, d4), 14);
        __m256i b01 = ROL(XOR(a30, d3), 28);
        __m256i b11 = ROL(XOR(a41, d4), 20);
        __m256i b21 = ROL(XOR(a02, d0), 3);
        __m256i b31 = ROL(XOR(a13, d1), 45);
        __m256i b41 = ROL(XOR(a24, d2), 61);
        __m256i b02 = ROL(XOR(a10, d1), 1);
        __m256i b12 = ROL(XOR(a21, d2), 6);
        __m256i b22 = ROL(XOR(a32, d3), 25);
        __m256i b32 = ROL8(XOR(a43, d4));
        __m256i b42 = ROL(XOR(a04, d0), 18);
        __m256i b03 = ROL(XOR(a40, d4), 27);
        __m256i b13 = ROL(XOR(a01, d0), 36);
        __m256i b23 = ROL(XOR(a12, d1), 10);
        __m256i b33 = ROL(XOR(a23, d2), 15);
        __m256i b43 = ROL56(XOR(a34, d3));
        __m256i b04 = ROL(XOR(a20, d2), 62);
        __m256i b14 = ROL(XOR(a31, d3), 55);
        __m256i b24 = ROL(XOR(a42, d4), 39);
        __m256i b34 = ROL(XOR(a03, d0), 41);
        __m256i b44 = ROL(XOR(a14, d1), 2);
        a00 = XOR(XOR(b00, ANDNOT(b10, b20)), _mm256_set1_epi64x((long long)fs_keccak_rc[round]));
        a10 = XOR(b10, ANDNOT(b20, b30));
        a20 = XOR(b20, ANDNOT(b30, b40));
        a30 = XOR(b30, ANDNOT(b40, b00));
        a40 = XOR(b40, ANDNOT(b00, b10));
        a01 = XOR(b01, ANDNOT(b11, b21));
        a11 = XOR(b11, ANDNOT(b21, b31));
        a21 = XOR(b21, ANDNOT(b31, b41));
        a31 = XOR(b31, ANDNOT(b41, b01));
        a41 = XOR(b41, ANDNOT(b01, b11));
        a02 = XOR(b02, ANDNOT(b12, b22));
        a12 = XOR(b12, ANDNOT(b22, b32));
        a22 = XOR(b22, ANDNOT(b32, b42));
        a32 = XOR(b32, ANDNOT(b42, b02));
        a42 = XOR(b42, ANDNOT(b02, b12));
        a03 = XOR(b03, ANDNOT(b13, b23));
        a13 = XOR(b13, ANDNOT(b23, b33));
        a23 = XOR(b23, ANDNOT(b33, b43));
        a33 = XOR(b33, ANDNOT(b43, b03));
        a43 = XOR(b43, ANDNOT(b03, b13));
        a04 = XOR(b04, ANDNOT(b14, b24));
        a14 = XOR(b14, ANDNOT(b24, b34));
        a24 = XOR(b24, ANDNOT(b34, b44));
        a34 = XOR(b34, ANDNOT(b44, b04));
        a44 = XOR(b44, ANDNOT(b04, b14));
    }
    s[0] = a00; s[1] = a10; s[2] = a20; s[3] = a30; s[4] = a40;
    s[5] = a01; s[6] = a11; s[7] = a21; s[8] = a31; s[9] = a41;
    s[10] = a02; s[11] = a12; s[12] = a22; s[13] = a32; s[14] = a42;
    s[15] = a03; s[16] = a13; s[17] = a23; s[18] = a33; s[19] = a43;
    s[20] = a04; s[21] = a14; s[22] = a24; s[23] = a34; s[24] = a44;
}
