import FaceSealCrypto
import FaceSealHTTPClient
import FaceSealWire
import Foundation

/// The value rules of the management API, applied before anything is stored.
enum ManagementValidation {
    /// A tenant id: 1…64 of `A-Z a-z 0-9 . _ -`, starting with a letter or digit (it appears in URLs).
    static func tenantID(_ value: String, field: String = "id") throws(ManagementError) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        guard (1...64).contains(value.count), value.allSatisfy(allowed.contains),
              let first = value.first, first.isLetter || first.isNumber else {
            throw .invalidField(field: field, reason: "must be 1…64 characters of A-Z a-z 0-9 . _ - starting with a letter or digit")
        }
        return value
    }

    /// Display text (names, labels): trimmed, 1…`maxCharacters` characters, no control characters.
    static func text(_ value: String, field: String, maxCharacters: Int = 128) throws(ManagementError) -> String {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw .invalidField(field: field, reason: "must not be empty") }
        guard trimmed.count <= maxCharacters else { throw .invalidField(field: field, reason: "longer than \(maxCharacters) characters") }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidField(field: field, reason: "contains control characters")
        }
        return trimmed
    }

    /// An e-mail address, lower-cased: one `@`, a non-empty local part, a dotted domain, no spaces, ≤ 254 bytes.
    static func email(_ value: String, field: String = "email") throws(ManagementError) -> String {
        let email = value.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard email.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64,
              parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), !parts[1].contains(".."),
              !email.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) else {
            throw .invalidField(field: field, reason: "not an e-mail address")
        }
        return email
    }

    /// A callback URL the authority or a device will call: `https`, or `http` only for a loopback host;
    /// an absolute URL with a host, no user info, no fragment, ≤ 2048 bytes.
    static func endpoint(_ value: String, field: String) throws(ManagementError) -> String {
        guard value.utf8.count <= 2048, let components = URLComponents(string: value),
              let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty,
              components.user == nil, components.password == nil, components.fragment == nil,
              !value.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw .invalidField(field: field, reason: "must be an absolute http(s) URL without user info or fragment")
        }
        switch scheme {
        case "https":
            return value
        case "http":
            guard isLoopback(host: host) else {
                throw .invalidField(field: field, reason: "http is allowed only for loopback hosts; use https")
            }
            return value
        default:
            throw .invalidField(field: field, reason: "scheme must be https (or http on loopback)")
        }
    }

    /// An endpoint the authority itself calls (a ping `notification_endpoint`, the tenant's webhook), judged by
    /// the authority's `callbackDestinations` as its egress guard will judge each send: `https`; under `.any` also
    /// `http` on a loopback host; under `.publicOnly` never a loopback name or a non-public IP literal (so never
    /// `http`, which `endpoint` allows on loopback only), so a
    /// registration is refused at once rather than every later call failing. The syntax rules of `endpoint`.
    static func callbackEndpoint(_ value: String, field: String, destinations: HTTPClient.Destinations) throws(ManagementError) -> String {
        let endpoint = try endpoint(value, field: field)
        guard destinations.mayAdmit(host: URLComponents(string: endpoint)?.host ?? "") else {
            throw .invalidField(field: field, reason: "names a loopback or private address, which this authority does not call (callback destinations: public)")
        }
        return endpoint
    }

    /// A redirect URI of the authorization code flow: the rules of `endpoint` (https, or http on loopback; no
    /// fragment, RFC 6749 §3.1.2), so never a script or data URL. `/authorize` compares it as an exact string.
    static func redirectURI(_ value: String) throws(ManagementError) -> String {
        try endpoint(value, field: "redirect_uris")
    }

    /// `localhost`, `127.0.0.0/8` or `::1`.
    static func isLoopback(host: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if host == "localhost" || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { UInt8($0) != nil }
    }

    /// `#RRGGBB`.
    static func colour(_ value: String, field: String) throws(ManagementError) -> String {
        let hex = Set("0123456789abcdefABCDEF")
        guard value.count == 7, value.first == "#", value.dropFirst().allSatisfy(hex.contains) else {
            throw .invalidField(field: field, reason: "must be #RRGGBB")
        }
        return value
    }

    /// Image types a logo data URL may carry (no SVG: it can hold scripts).
    static let logoImageTypes: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp"]

    /// A logo: an `https` URL (≤ 2048 bytes) or a `data:image/…;base64,…` URL (≤ 48 KiB) whose payload decodes.
    static func logoURL(_ value: String, field: String) throws(ManagementError) -> String {
        if value.hasPrefix("data:") {
            guard value.utf8.count <= 48 * 1024 else { throw .invalidField(field: field, reason: "data URL longer than 48 KiB") }
            let rest = value.dropFirst("data:".count)
            guard let comma = rest.firstIndex(of: ",") else { throw .invalidField(field: field, reason: "malformed data URL") }
            let header = rest[..<comma].lowercased()
            let payload = rest[rest.index(after: comma)...]
            guard header.hasSuffix(";base64"), logoImageTypes.contains(String(header.dropLast(";base64".count))),
                  Data(base64Encoded: String(payload)) != nil, !payload.isEmpty else {
                throw .invalidField(field: field, reason: "data URL must be data:image/(png|jpeg|gif|webp);base64,…")
            }
            return value
        }
        guard value.utf8.count <= 2048, let components = URLComponents(string: value), components.scheme?.lowercased() == "https",
              let host = components.host, !host.isEmpty, components.user == nil,
              !value.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw .invalidField(field: field, reason: "must be an https URL or a data:image URL")
        }
        return value
    }

    /// A body's branding, each value checked; `name` defaults to `defaultName`.
    static func branding(_ change: BrandingChange, defaultName: String) throws(ManagementError) -> BrandingInfo {
        let name = try change.name.map { name throws(ManagementError) in
            try text(name, field: "branding.name", maxCharacters: 64)
        } ?? defaultName
        var branding = BrandingInfo(name: name)
        if let logo = change.logoURL { branding.logoURL = try logoURL(logo, field: "branding.logo_url") }
        if let primary = change.primaryColor { branding.primaryColor = try colour(primary, field: "branding.primary_color") }
        if let secondary = change.secondaryColor { branding.secondaryColor = try colour(secondary, field: "branding.secondary_color") }
        return branding
    }

    /// The ID-token algorithms an application may choose (SPEC §4.3).
    static func idTokenAlgorithm(_ value: String) throws(ManagementError) -> String {
        guard JWSAlgorithm(rawValue: value) != nil else {
            throw .invalidField(field: "id_token_signed_response_alg",
                                reason: "must be one of " + JWSAlgorithm.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return value
    }

    /// A client JWKS for `private_key_jwt`: a JSON object `{"keys": […]}` of at most 16 keys, at least one public key
    /// of a supported type (RSA of 2048…4096 bits), no private members. Every key gets its full check here, once
    /// (`JWK.checkPublicKey`); token requests later only look keys up. Returned in canonical form (unsupported keys
    /// dropped).
    /// A JWKS refusal as a phrase of the `error_description` (never a Swift value).
    private static func jwksProblem(_ error: any Error) -> String {
        switch error as? JOSEError {
        case .missingField(let name)?: "a key lacks '\(name)'"
        case .invalidField(let name)?: "'\(name)' is not valid"
        case .invalidBase64URL(let part)?: "'\(part)' is not unpadded base64url"
        case .invalidKey?: "a key's material is not a valid public key"
        case .algorithmMismatch?: "a key's alg does not fit its type"
        case .algorithmNone?: "alg none is never accepted"
        case .inputTooLarge(let limit)?: "more than \(limit) keys or bytes"
        default: "not a JWK set"
        }
    }

    static func jwks(_ value: JSONValue) throws(ManagementError) -> String {
        guard case .object = value else { throw .invalidField(field: "jwks", reason: "must be a JWKS object") }
        let set: JWKSet
        do {
            set = try JWKSet(json: value.serialized, maximumSize: Authority.maxClientJWKSBytes, maximumKeyCount: Authority.maxClientKeys)
            for key in set.keys { try key.checkPublicKey() }
        } catch {
            throw .invalidField(field: "jwks", reason: "not a valid public JWKS: \(jwksProblem(error))")
        }
        guard !set.keys.isEmpty else {
            throw .invalidField(field: "jwks", reason: "holds no key of a supported type (RSA, EC P-256, OKP Ed25519, AKP ML-DSA-65)")
        }
        return String(decoding: set.jsonData, as: UTF8.self)
    }
}
