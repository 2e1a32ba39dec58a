#ifndef FS_OPENSSL_H
#define FS_OPENSSL_H
// OpenSSL shims: macros Swift cannot import, and the OSSL_PARAM key imports whose parameter names
// must be static C strings (a Swift String bridged into OSSL_PARAM dangles; see notes/platform.md).
#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>

/// Zeroes `len` bytes at `p` in a way the optimiser may not remove (OPENSSL_cleanse).
void fs_secure_zero(void *p, size_t len);

/// OPENSSL_free (a macro in C).
void fs_openssl_free(void *p);

/// A P-256 public key from an uncompressed SEC1 point (65 bytes, 0x04 || X || Y).
/// Returns NULL if the encoding is wrong or the point is not on the curve. With `check` 1, OpenSSL's full
/// public-key check runs too (it costs a scalar multiplication: do it once per imported key).
EVP_PKEY *fs_p256_public_key(const uint8_t *point, size_t point_len, int check);

/// A P-256 key pair from the 32-byte private scalar `d` (big endian, 0 < d < n).
/// Writes the uncompressed public point (65 bytes) to `point_out`. Returns NULL on a bad scalar.
EVP_PKEY *fs_p256_private_key(const uint8_t *d, size_t d_len, uint8_t point_out[65]);

/// Whether `pkey` is an EC key on P-256 (prime256v1). 1 yes, 0 no.
int fs_pkey_is_p256(const EVP_PKEY *pkey);

/// An RSA public key from big-endian modulus and public exponent. NULL on failure.
/// With `check` 1, OpenSSL's SP 800-56B public-key check runs too (slow: do it once per imported key).
EVP_PKEY *fs_rsa_public_key(const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len, int check);

/// Writes a big-integer parameter of `pkey` ("n", "e", "priv") big endian, left padded with zeros to `out_len`
/// when `pad` is 1, minimal length otherwise. Returns the number of bytes written, or -1.
int fs_pkey_get_bn(const EVP_PKEY *pkey, const char *name, uint8_t *out, size_t out_len, int pad);

/// The algorithms FaceSeal uses, fetched from the default provider once per process (each fetch is a locked name
/// lookup, and an algorithm given as `EVP_sha256()` & co. is fetched again at every init). A fetched object is
/// immutable and shared by every thread; it is never freed.
enum fs_algorithm {
    FS_SHA256 = 0, FS_SHA384, FS_SHA512, FS_SHA3_256, FS_SHA3_512, FS_SHAKE128, FS_SHAKE256,
    FS_AES_128_GCM, FS_AES_192_GCM, FS_AES_256_GCM,
    FS_ALGORITHM_COUNT
};

/// The digest `which` (FS_SHA256…FS_SHAKE256), or NULL if the provider lacks it or `which` is not a digest.
const EVP_MD *fs_md(enum fs_algorithm which);

/// The cipher `which` (FS_AES_128_GCM…FS_AES_256_GCM), or NULL.
const EVP_CIPHER *fs_cipher(enum fs_algorithm which);

/// One-shot digest of `len` bytes at `data` with digest `which` into `out` (EVP_MAX_MD_SIZE bytes). Returns the
/// digest length, or 0 on failure.
unsigned int fs_digest(enum fs_algorithm which, const void *data, size_t len, uint8_t *out);

/// HMAC (RFC 2104) of `data_len` bytes at `data` under a `key_len`-byte key, with the digest named `digest`
/// ("SHA256", …, a SHA-2 or SHA3 digest; read during the call only), built on the digest fetched once, into `out`
/// (EVP_MAX_MD_SIZE bytes). Returns the MAC length, or 0 on failure.
size_t fs_hmac(const char *digest, const uint8_t *key, size_t key_len, const uint8_t *data, size_t data_len, uint8_t *out);

/// HKDF (RFC 5869) with the digest named `digest` ("SHA256", …; read during the call only), on fs_hmac's HMAC.
/// `mode` 0: extract-and-expand, 1: expand only (ikm is then the PRK). Returns 1 on success.
int fs_hkdf(const char *digest, int mode, const uint8_t *ikm, size_t ikm_len, const uint8_t *salt, size_t salt_len,
                   const uint8_t *info, size_t info_len, uint8_t *out, size_t out_len);

#endif
