public import FaceSealCrypto

/// What a notice tells a user's devices (docs/PROTOCOL.md §8.1).
public enum DeviceNoticeKind: String, Codable, Sendable, CaseIterable {
    /// A further device registered for the user, released by the token's password or without approval.
    case newDevice = "new_device"
}

/// The claims of a notice: a compact JWS (EdDSA, `typ: faceseal-notice+jwt`) signed by the authority with the key that
/// signs links, queued in the outbox beside them. Information for the user, never a request: nothing answers it.
public struct DeviceNoticeClaims: WireMessage {
    /// The protocol version of the notice format.
    public var v: Int
    /// The authority's issuer URL.
    public var iss: String
    /// What happened.
    public var kind: DeviceNoticeKind
    /// The new enrolment's id (as the tenant's audit log names it).
    public var enrolment: String
    /// The new device's name, printable ASCII, at most 20 characters.
    public var device: String
    /// The application the device enrols for (its label, at most 16 characters).
    public var app: String
    /// The six digits the new device shows (``EnrolmentApproval/code(userPresentKey:)``).
    public var code: String
    /// What releases the token to it: `password` or `none`.
    public var method: FurtherDeviceApproval
    /// When the device registered, Unix seconds.
    public var iat: Int64
    /// Until when the notice waits in the outbox, Unix seconds.
    public var exp: Int64

    public enum CodingKeys: String, CodingKey, CaseIterable { case v, iss, kind, enrolment, device, app, code, method, iat, exp }

    public static var maxBytes: Int { 2048 }

    /// Builds notice claims.
    public init(v: Int = 1, iss: String, kind: DeviceNoticeKind = .newDevice, enrolment: String, device: String, app: String,
                code: String, method: FurtherDeviceApproval, iat: Int64, exp: Int64) {
        self.v = v
        self.iss = iss
        self.kind = kind
        self.enrolment = enrolment
        self.device = device
        self.app = app
        self.code = code
        self.method = method
        self.iat = iat
        self.exp = exp
    }

    public func checkRanges() throws(WireError) {
        try WireRange.check(v, WireRange.version, "v")
        try WireRange.check(iat, WireRange.unixTime, "iat")
        try WireRange.check(exp, WireRange.unixTime, "exp")
    }
}

/// Signs and parses notices: compact JWS (EdDSA) over ``DeviceNoticeClaims``.
public enum NoticeSignature {
    /// The JWS `typ` of a notice; a link parser refuses it (`faceseal-link+jwt` only).
    public static let type = "faceseal-notice+jwt"

    /// Signs `claims` with the authority's key.
    public static func make(_ claims: DeviceNoticeClaims, key: Curve25519.Signing.PrivateKey) throws(JOSEError) -> String {
        try JWS.sign(payload: claims.encoded(), signer: key, type: type)
    }

    /// Whether `entry` (an outbox entry) is a notice rather than a link: its JWS header names the notice type.
    public static func isNotice(_ entry: [UInt8]) -> Bool { (try? parse(entry)) != nil }

    /// Parses a notice without checking the signature, so the caller can pick the pinned key by issuer.
    public static func parse(_ entry: [UInt8]) throws(LinkError) -> UnverifiedNotice {
        guard entry.count <= LinkLimits.maxBytes, let text = String(validating: entry, as: UTF8.self) else { throw .malformed }
        do {
            let jws = try JWS.parse(Substring(text), options: JWSParsingOptions(maximumSize: LinkLimits.maxBytes, allowedAlgorithms: [.edDSA]))
            guard jws.header.type == type else { throw LinkError.malformed }
            return UnverifiedNotice(claims: try DeviceNoticeClaims.decode(jws.payload), jws: jws)
        } catch {
            throw .malformed
        }
    }
}

/// A parsed notice whose signature is not checked yet. Never show `claims` before `verify` succeeds.
public struct UnverifiedNotice: Sendable {
    /// The claims as sent.
    public let claims: DeviceNoticeClaims
    let jws: UnverifiedJWS

    /// Checks the signature with `key` and the expiry against `now` (Unix seconds).
    public func verify(with key: Curve25519.Signing.PublicKey, now: Int64) throws(LinkError) -> DeviceNoticeClaims {
        try jws.check(key: key, exp: claims.exp, now: now)
        return claims
    }
}
