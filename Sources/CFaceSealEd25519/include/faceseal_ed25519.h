#ifndef FACESEAL_ED25519_H
#define FACESEAL_ED25519_H
// FaceSeal's own Ed25519 verification for a public key that verifies many signatures (the authority key a device
// pinned), called only by FaceSealCrypto.
//
// Verification computes R' = [S]B - [h]A and compares its encoding with R. libsodium's generic verifier decompresses
// A and runs a sliding-window double scalar multiplication for every signature; here A's multiples are precomputed
// once per key, as libsodium precomputes B's, so a verification is two fixed-base combs: about a third of the time.
// Everything here handles public data only (keys, signatures, hashes): nothing needs to be constant time.
//
// The caller decides what libsodium decides before the point arithmetic (the hash h = SHA-512(R || A || M) mod L, the
// key's validity at table time); this code checks S < L and R's small order exactly as libsodium 1.0.18's
// crypto_sign_verify_detached does, so both accept exactly the same signatures (tested against each other).
#include <stddef.h>
#include <stdint.h>

/// Bytes of one key's table (32 rows of 8 affine multiples).
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

#endif
