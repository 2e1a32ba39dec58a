#include "fs_openssl.h"
#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#include <openssl/obj_mac.h>
#include <string.h>

static const char *const fs_algorithm_names[FS_ALGORITHM_COUNT] = {
    "SHA256", "SHA384", "SHA512", "SHA3-256", "SHA3-512", "SHAKE128", "SHAKE256",
    "AES-128-GCM", "AES-192-GCM", "AES-256-GCM",
};
static EVP_MD *fs_mds[FS_AES_128_GCM];
static EVP_CIPHER *fs_ciphers[FS_ALGORITHM_COUNT - FS_AES_128_GCM];
static CRYPTO_ONCE fs_fetch_once = CRYPTO_ONCE_STATIC_INIT;

static void fs_fetch_all(void) {
    for (int i = 0; i < FS_AES_128_GCM; i++) fs_mds[i] = EVP_MD_fetch(NULL, fs_algorithm_names[i], NULL);
    for (int i = FS_AES_128_GCM; i < FS_ALGORITHM_COUNT; i++) {
        fs_ciphers[i - FS_AES_128_GCM] = EVP_CIPHER_fetch(NULL, fs_algorithm_names[i], NULL);
    }
}

const EVP_MD *fs_md(enum fs_algorithm which) {
    if ((int)which < 0 || which >= FS_AES_128_GCM || !CRYPTO_THREAD_run_once(&fs_fetch_once, fs_fetch_all)) return NULL;
    return fs_mds[which];
}

const EVP_CIPHER *fs_cipher(enum fs_algorithm which) {
    if (which < FS_AES_128_GCM || which >= FS_ALGORITHM_COUNT || !CRYPTO_THREAD_run_once(&fs_fetch_once, fs_fetch_all)) {
        return NULL;
    }
    return fs_ciphers[which - FS_AES_128_GCM];
}

unsigned int fs_digest(enum fs_algorithm which, const void *data, size_t len, uint8_t *out) {
    static const uint8_t empty = 0;
    const EVP_MD *md = fs_md(which);
    unsigned int out_len = 0;
    if (md == NULL || EVP_Digest(len ? data : &empty, len, out, &out_len, md, NULL) != 1) return 0;
    return out_len;
}

void fs_secure_zero(void *p, size_t len) { OPENSSL_cleanse(p, len); }

void fs_openssl_free(void *p) { OPENSSL_free(p); }

static EVP_PKEY *fs_pkey_fromdata(const char *type, int selection, OSSL_PARAM_BLD *bld) {
    EVP_PKEY *pkey = NULL;
    OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    if (params == NULL || ctx == NULL || EVP_PKEY_fromdata_init(ctx) != 1
        || EVP_PKEY_fromdata(ctx, &pkey, selection, params) != 1) {
        pkey = NULL;
    }
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    return pkey;
}

/// Runs OpenSSL's own key check (point on curve, modulus sanity) on a freshly imported key.
static EVP_PKEY *fs_checked(EVP_PKEY *pkey, int private_part) {
    if (pkey == NULL) return NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    int ok = ctx != NULL && (private_part ? EVP_PKEY_pairwise_check(ctx) : EVP_PKEY_public_check(ctx)) == 1;
    EVP_PKEY_CTX_free(ctx);
    if (!ok) { EVP_PKEY_free(pkey); return NULL; }
    return pkey;
}

EVP_PKEY *fs_p256_public_key(const uint8_t *point, size_t point_len, int check) {
    if (point == NULL || point_len != 65 || point[0] != 0x04) return NULL;
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    EVP_PKEY *pkey = NULL;
    if (bld != NULL
        && OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, SN_X9_62_prime256v1, 0) == 1
        && OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, point_len) == 1) {
        pkey = fs_pkey_fromdata("EC", EVP_PKEY_PUBLIC_KEY, bld);
    }
    OSSL_PARAM_BLD_free(bld);
    return check ? fs_checked(pkey, 0) : pkey;
}

EVP_PKEY *fs_p256_private_key(const uint8_t *d, size_t d_len, uint8_t point_out[65]) {
    if (d == NULL || d_len != 32) return NULL;
    EVP_PKEY *pkey = NULL;
    EC_GROUP *group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    BIGNUM *priv = BN_secure_new();
    EC_POINT *pub = NULL;
    OSSL_PARAM_BLD *bld = NULL;
    if (group == NULL || priv == NULL || BN_bin2bn(d, (int)d_len, priv) == NULL) goto done;
    // 0 < d < n: anything else is not a private key.
    if (BN_is_zero(priv) || BN_cmp(priv, EC_GROUP_get0_order(group)) >= 0) goto done;
    pub = EC_POINT_new(group);
    if (pub == NULL || EC_POINT_mul(group, pub, priv, NULL, NULL, NULL) != 1) goto done;
    if (EC_POINT_point2oct(group, pub, POINT_CONVERSION_UNCOMPRESSED, point_out, 65, NULL) != 65) goto done;
    bld = OSSL_PARAM_BLD_new();
    if (bld != NULL
        && OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, SN_X9_62_prime256v1, 0) == 1
        && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, priv) == 1
        && OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point_out, 65) == 1) {
        pkey = fs_pkey_fromdata("EC", EVP_PKEY_KEYPAIR, bld);
    }
done:
    OSSL_PARAM_BLD_free(bld);
    EC_POINT_free(pub);
    BN_clear_free(priv);
    EC_GROUP_free(group);
    return pkey;
}

int fs_pkey_is_p256(const EVP_PKEY *pkey) {
    if (pkey == NULL || EVP_PKEY_get_base_id(pkey) != EVP_PKEY_EC) return 0;
    char name[64];
    size_t len = 0;
    if (EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, name, sizeof name, &len) != 1) return 0;
    return strcmp(name, SN_X9_62_prime256v1) == 0 || strcmp(name, "P-256") == 0;
}

EVP_PKEY *fs_rsa_public_key(const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len, int check) {
    if (n == NULL || e == NULL || n_len == 0 || e_len == 0) return NULL;
    EVP_PKEY *pkey = NULL;
    BIGNUM *bn_n = BN_bin2bn(n, (int)n_len, NULL);
    BIGNUM *bn_e = BN_bin2bn(e, (int)e_len, NULL);
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    if (bn_n != NULL && bn_e != NULL && bld != NULL
        && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) == 1
        && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) == 1) {
        pkey = fs_pkey_fromdata("RSA", EVP_PKEY_PUBLIC_KEY, bld);
    }
    OSSL_PARAM_BLD_free(bld);
    BN_free(bn_n);
    BN_free(bn_e);
    return check ? fs_checked(pkey, 0) : pkey;
}

int fs_pkey_get_bn(const EVP_PKEY *pkey, const char *name, uint8_t *out, size_t out_len, int pad) {
    BIGNUM *bn = NULL;
    int written = -1;
    if (pkey == NULL || name == NULL || EVP_PKEY_get_bn_param(pkey, name, &bn) != 1 || bn == NULL) return -1;
    if (pad) {
        written = BN_bn2binpad(bn, out, (int)out_len);
    } else if ((size_t)BN_num_bytes(bn) <= out_len) {
        written = BN_bn2bin(bn, out);
    }
    BN_clear_free(bn);
    return written;
}

// The fetched digest named `name` (a SHA-2 or SHA3 name of fs_algorithm_names), or NULL.
static const EVP_MD *fs_md_named(const char *name) {
    if (!CRYPTO_THREAD_run_once(&fs_fetch_once, fs_fetch_all)) return NULL;
    for (int i = 0; i < FS_SHAKE128; i++) {
        if (strcmp(fs_algorithm_names[i], name) == 0) return fs_mds[i];
    }
    return NULL;
}

enum { FS_HMAC_MAX_BLOCK = 144 };  // SHA3-256's rate, the largest block of the digests above

// HMAC (RFC 2104) of the concatenation of `count` parts: H((K ^ opad) || H((K ^ ipad) || parts)), with K the key
// (hashed first when longer than a block) zero-padded to the block. On the fetched digest's own contexts: OpenSSL
// 3.0's HMAC provider (and its HKDF, which calls EVP_Q_mac) looks the digest up by name at every call. The padded key
// and the inner hash are wiped before returning. Returns the MAC length, or 0.
static size_t fs_hmac_parts(const EVP_MD *md, const uint8_t *key, size_t key_len, const uint8_t *const *parts,
                            const size_t *lengths, int count, uint8_t *out) {
    int block = md == NULL ? 0 : EVP_MD_get_block_size(md);
    if (block <= 0 || block > FS_HMAC_MAX_BLOCK) return 0;
    uint8_t padded[FS_HMAC_MAX_BLOCK], inner[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    memset(padded, 0, sizeof padded);
    int ok = 1;
    if (key_len > (size_t)block) {
        ok = EVP_Digest(key, key_len, padded, &length, md, NULL) == 1;
    } else if (key_len > 0) {
        memcpy(padded, key, key_len);
    }
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    ok = ok && ctx != NULL;
    for (int i = 0; i < block; i++) padded[i] ^= 0x36;
    ok = ok && EVP_DigestInit_ex(ctx, md, NULL) == 1 && EVP_DigestUpdate(ctx, padded, (size_t)block) == 1;
    for (int i = 0; ok && i < count; i++) {
        if (lengths[i] > 0) ok = EVP_DigestUpdate(ctx, parts[i], lengths[i]) == 1;
    }
    ok = ok && EVP_DigestFinal_ex(ctx, inner, &length) == 1;
    for (int i = 0; i < block; i++) padded[i] ^= 0x36 ^ 0x5c;
    ok = ok && EVP_DigestInit_ex(ctx, md, NULL) == 1 && EVP_DigestUpdate(ctx, padded, (size_t)block) == 1
        && EVP_DigestUpdate(ctx, inner, length) == 1 && EVP_DigestFinal_ex(ctx, out, &length) == 1;
    EVP_MD_CTX_free(ctx);
    OPENSSL_cleanse(padded, sizeof padded);
    OPENSSL_cleanse(inner, sizeof inner);
    return ok ? length : 0;
}

size_t fs_hmac(const char *digest, const uint8_t *key, size_t key_len, const uint8_t *data, size_t data_len, uint8_t *out) {
    const uint8_t *parts[1] = {data};
    size_t lengths[1] = {data_len};
    return fs_hmac_parts(fs_md_named(digest), key, key_len, parts, lengths, 1, out);
}

int fs_hkdf(const char *digest, int mode, const uint8_t *ikm, size_t ikm_len, const uint8_t *salt, size_t salt_len,
                   const uint8_t *info, size_t info_len, uint8_t *out, size_t out_len) {
    const EVP_MD *md = fs_md_named(digest);
    int size = md == NULL ? 0 : EVP_MD_get_size(md);
    if (size <= 0 || out_len == 0 || out_len > 255 * (size_t)size) return 0;
    uint8_t prk[EVP_MAX_MD_SIZE], block[EVP_MAX_MD_SIZE];
    const uint8_t *key = ikm;
    size_t key_len = ikm_len;
    int ok = 1;
    if (mode != 1) {
        // Extract: PRK = HMAC(salt, IKM); an empty salt is HashLen zero bytes, which HMAC pads to the same key.
        const uint8_t *parts[1] = {ikm};
        size_t lengths[1] = {ikm_len};
        ok = fs_hmac_parts(md, salt, salt_len, parts, lengths, 1, prk) == (size_t)size;
        key = prk;
        key_len = (size_t)size;
    }
    // Expand: T(i) = HMAC(PRK, T(i-1) || info || i), the output their concatenation.
    size_t done = 0;
    for (unsigned int counter = 1; ok && done < out_len; counter++) {
        uint8_t index = (uint8_t)counter;
        const uint8_t *parts[3] = {block, info, &index};
        size_t lengths[3] = {counter == 1 ? 0 : (size_t)size, info_len, 1};
        ok = fs_hmac_parts(md, key, key_len, parts, lengths, 3, block) == (size_t)size;
        size_t take = out_len - done < (size_t)size ? out_len - done : (size_t)size;
        if (ok) memcpy(out + done, block, take);
        done += take;
    }
    OPENSSL_cleanse(prk, sizeof prk);
    OPENSSL_cleanse(block, sizeof block);
    return ok;
}
