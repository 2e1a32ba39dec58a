import FaceSealCrypto
import FaceSealHTTP
import Foundation

/// The secrets the management API hands out and how they are kept: only SHA-256 hashes are stored.
/// The secrets are 256-bit random values, so a plain hash (no salt, no stretching) cannot be reversed and a
/// lookup by hash is the comparison.
public enum ManagementCredentials {
    /// The prefix of a management API key (lets secret scanners and humans recognise one).
    public static let apiKeyPrefix = "fsk_"

    /// A new API key: `fsk_` + base64url of 32 random bytes.
    public static func makeAPIKey() -> String { apiKeyPrefix + Base64URL.encode(SecureRandom.bytes(count: 32)) }

    /// The stored hash of an API key: SHA-256 of its UTF-8 bytes.
    public static func hash(_ secret: String) -> [UInt8] { SHA256.hash(data: Array(secret.utf8)).bytes }

    /// A random identifier `<prefix>_<base64url of byteCount random bytes>`.
    static func identifier(_ prefix: String, byteCount: Int = 12) -> String {
        prefix + "_" + Base64URL.encode(SecureRandom.bytes(count: byteCount))
    }
}

/// Who is calling: the API key that authenticated the request.
struct ManagementCaller: Sendable {
    /// The key's id (recorded as the actor of audit events).
    let keyID: String
    /// The tenant the key administers; nil for an administrator key.
    let tenantID: String?

    /// Administrator keys may act on every tenant; a tenant key only on its own.
    func authorize(tenant: String) throws(ManagementError) {
        if let tenantID, tenantID != tenant { throw .forbidden("this API key administers another tenant") }
    }

    /// Actions on the authority itself (tenants, administrator keys) need an administrator key.
    func requireAdministrator() throws(ManagementError) {
        guard tenantID == nil else { throw .forbidden("this action needs an administrator API key") }
    }
}

extension Authority {
    /// Authenticates a management request by its bearer API key (RFC 6750 §2.1).
    func authenticateManagement(_ request: HTTPRequest) async throws -> ManagementCaller {
        let values = request.headers.values(for: "Authorization")
        guard let header = values.first else { throw ManagementError.missingCredentials }
        guard values.count == 1, header.utf8.count <= 512 else { throw ManagementError.invalidCredentials }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw ManagementError.invalidCredentials }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        guard token.hasPrefix(ManagementCredentials.apiKeyPrefix), token.utf8.count <= 128,
              token.utf8.allSatisfy(isBase64URLAlphabet) else {
            throw ManagementError.invalidCredentials
        }
        guard let key = try await store.apiKey(hash: ManagementCredentials.hash(token)), key.revokedAt == nil else {
            throw ManagementError.invalidCredentials
        }
        return ManagementCaller(keyID: key.id, tenantID: key.tenantID)
    }
}

/// Whether `byte` is in the base64url alphabet (`A-Z a-z 0-9 - _`).
private func isBase64URLAlphabet(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
         UInt8(ascii: "-"), UInt8(ascii: "_"):
        true
    default:
        false
    }
}
