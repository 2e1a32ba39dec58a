#ifndef FACESEAL_PQ_H
#define FACESEAL_PQ_H
// FaceSeal's own vector kernels for ML-KEM and ML-DSA (x86-64 AVX2), called only by FaceSealCrypto.
//
// Each kernel computes exactly what the portable Swift code it replaces computes, bit for bit, so the
// two paths are interchangeable and tested against each other. None branches on or indexes memory by
// its (possibly secret) data. On a machine or build without AVX2, fs_pq_cpu_level() returns 0 and no
// kernel may be called.
#include <stddef.h>
#include <stdint.h>

/// Zeroes n bytes at p; a compiler barrier keeps the stores although the memory is about to die.
void fs_pq_wipe(void *p, size_t n);

/// 0: portable only; 1: AVX2 kernels usable; 2: AVX2 kernels plus AVX-512VL Keccak.
int fs_pq_cpu_level(void);

/// Four Keccak-f[1600] permutations side by side. `state` holds 100 lanes, lane i of instance j at
/// state[4*i + j] (32-byte aligned). `level` is 1 or 2 (see fs_pq_cpu_level).
void fs_keccakf1600x4(uint64_t *state, int level);
/// One Keccak-f[1600] on 25 lanes, on the AVX-512VL four-way kernel (level 2 only).
void fs_keccakf1600x1(uint64_t *state);

// ML-KEM (FIPS 203), 256 int16 coefficients per polynomial, same value bounds as MLKEMArithmetic.swift.

/// Forward NTT in place, output Barrett-reduced (MLKEMPoly.ntt).
void fs_mlkem_ntt(int16_t *r);
/// Inverse NTT in place with the Montgomery factor folded in (MLKEMPoly.inverseNTT).
void fs_mlkem_invntt(int16_t *r);
/// r = Montgomery-reduced sum over j < k of a_j ∘ b_j in the NTT domain, with cache_j from
/// MLKEMPoly.mulCache(b_j): MLKEMPoly.basemulAccumulate over j, then reduceAccumulator.
void fs_mlkem_basemul_sum(int16_t *r, const int16_t *a, const int16_t *b, const int16_t *cache, int k);

/// SampleNTT's rejection step over public XOF output: appends the 12-bit candidates < q of `bytes`
/// (`length` a multiple of 3) to r from index `count`, up to 256; returns the new count
/// (MLKEMPoly.rejectionSample).
int fs_mlkem_rej_uniform(int16_t *r, int count, const uint8_t *bytes, int length);

// ML-DSA (FIPS 204), 256 int32 coefficients, same bounds as MLDSAField.swift.

/// RejNTTPoly's rejection step over public XOF output: appends the 23-bit candidates < q
/// (MLDSASampling.rejectUniform).
int fs_mldsa_rej_uniform(int32_t *r, int count, const uint8_t *bytes, int length);

/// Forward NTT in place (MLDSAField.ntt).
void fs_mldsa_ntt(int32_t *a);
/// Inverse NTT in place, times 2^32 (MLDSAField.inverseNTTToMontgomery).
void fs_mldsa_invntt(int32_t *a);
/// w_r = Σ_s matrix[r·l + s] ∘ vector[s] · 2^-32 for r < k (MLDSAPoly.matrixVectorMontgomery;
/// pointwise when k = l = 1).
void fs_mldsa_matvec(int32_t *w, const int32_t *matrix, const int32_t *vector, int k, int l);

#endif
