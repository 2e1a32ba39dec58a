#ifndef FACESEAL_CURVES_H
#define FACESEAL_CURVES_H
// FaceSeal's own signature verification for public keys that verify many signatures (the authority key a device
// pinned, a device key the authority sees at every request), called only by FaceSealCrypto. Everything here handles
// public data only (keys, signatures, hashes): nothing needs to be constant time.
//
// Ed25519: verification computes R' = [S]B - [h]A and compares its encoding with R. libsodium's generic verifier decompresses
// A and runs a sliding-window double scalar multiplication for every signature; here A's multiples are precomputed
// once per key, as libsodium precomputes B's, so a verification is two fixed-base combs: well under half the time.
//
// The caller decides what libsodium decides before the point arithmetic (the hash h = SHA-512(R || A || M) mod L, the
// key's validity at table time); this code checks S < L and R's small order exactly as libsodium 1.0.18's
// crypto_sign_verify_detached does, so both accept exactly the same signatures (tested against each other).
#include <stddef.h>
#include <stdint.h>

/// Bytes of one Ed25519 table (32 rows of 8 affine multiples, 30 KB).
size_t fs_ed25519_table_size(void);

/// Fills `table` (fs_ed25519_table_size() bytes, 8-byte aligned) with the multiples of the point encoded in `pk`.
/// Returns 0, or -1 when `pk` is not the canonical encoding of a curve point (the table is then unusable). The caller
/// only builds tables for keys libsodium calls valid points (crypto_core_ed25519_is_valid_point).
int fs_ed25519_table_init(uint64_t *table, const unsigned char pk[32]);

/// 0 when `sig` (R || S, 64 bytes) is a valid signature for the key of `key_table`, whose challenge scalar
/// h = SHA-512(R || A || M) mod L (32 bytes, little-endian, < L) the caller computed; -1 otherwise. `base_table` is the
/// table of the base point B (fs_ed25519_table_init with B's encoding).
int fs_ed25519_verify_with_tables(const uint64_t *base_table, const uint64_t *key_table, const unsigned char sig[64],
                                  const unsigned char h[32]);

/// Bytes of one P-256 table (17 rows of 8 affine multiples, 8.5 KB, and 64 bytes to align them to cache lines).
size_t fs_p256_table_size(void);

/// Fills `table` (fs_p256_table_size() bytes, 8-byte aligned) with the multiples of the point (x, y), big-endian
/// coordinates. Returns 0, or -1 when (x, y) is not a point of the curve. The entries start at a 64-byte boundary
/// inside the buffer, so the buffer must stay where it was filled (a copy elsewhere verifies nothing: -1).
int fs_p256_table_init(uint64_t *table, const unsigned char x[32], const unsigned char y[32]);

/// Bytes of the generator's table (17 rows of 128 affine multiples, 136 KB, and the 64 bytes of alignment).
size_t fs_p256_generator_table_size(void);

/// Fills `table` (fs_p256_generator_table_size() bytes, 8-byte aligned) with the multiples of the generator G.
int fs_p256_generator_table_init(uint64_t *table);

/// 0 when `signature` (r || s, 32 bytes each, big-endian) is a valid ECDSA signature of the 32-byte `digest`
/// (SHA-256 of the message) under the key of `key_table`, -1 otherwise: FIPS 186-5's verification (r and s in 1..<n,
/// R = [e/s]G + [r/s]Q not the point at infinity, x(R) mod n == r), as OpenSSL's ECDSA_do_verify decides it.
int fs_p256_verify_with_tables(const uint64_t *generator_table, const uint64_t *key_table, const unsigned char digest[32],
                               const unsigned char signature[64]);

#endif
