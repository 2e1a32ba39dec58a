import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation
import Synchronization

/// Which device key an endpoint needs (SPEC §4.2).
enum DeviceKeyRequirement: Sendable {
    /// Reads and background sync: the ambient key (a user-present key is accepted too).
    case ambient
    /// Token download, completion, abort, rotation, revocation, enrolment: only the user-present key.
    case userPresent
    /// A further device's approval steps (docs/PROTOCOL.md §8.1): the user-present key of a pending enrolment, the only
    /// requirement a pending key passes; the handler checks that the enrolment is the invitation's.
    case pendingEnrolment
}

/// A device request that passed every check of the edge: its signature, key status, replay, role and protocol.
struct AuthenticatedDevice: Sendable {
    /// The key that signed (active, or the previous key within its rotation overlap).
    let key: DeviceKeyRecord
    /// The verified claims.
    let claims: DeviceRequestClaims
    /// The request was signed with the previous key of a rotation overlap: the signed response carries the hint.
    let rotationHint: Bool
    /// The protocol version the device announced in `FaceSeal-Protocol`.
    let protocolVersion: Int
    /// The request's `jti`, when the route lets its handler remember it in the handler's own write
    /// (`signedDeviceRoute(_:registersJTIInHandler:_:)`); nil when the edge registered it before the handler ran.
    let replay: DeviceReplayGuard?
}

/// A verified device request's `jti`, for the one store write of its handler to remember (`claim()` hands it out once);
/// the edge remembers it itself when no write claimed it.
final class DeviceReplayGuard: Sendable {
    let registration: JTIRegistration
    private let claimed = Atomic<Bool>(false)

    init(_ registration: JTIRegistration) { self.registration = registration }

    /// The registration for the first caller, nil after.
    func claim() -> JTIRegistration? { claimed.exchange(true, ordering: .relaxed) ? nil : registration }

    var isClaimed: Bool { claimed.load(ordering: .relaxed) }
}

/// What a signed device handler answers: a status and the exact body bytes the response signature covers.
struct DeviceReply: Sendable {
    let status: Int
    let body: [UInt8]

    /// 200 with a wire message.
    static func ok(_ message: some WireMessage) -> DeviceReply { DeviceReply(status: 200, body: message.encoded()) }
    /// 204, no body.
    static let noContent = DeviceReply(status: 204, body: [])
}

/// A handler behind the signed edge: a plain async function over the authenticated device and the request.
typealias SignedDeviceHandler = @Sendable (AuthenticatedDevice, HTTPRequest) async throws -> DeviceReply

extension Authority {
    /// Wraps a handler in the device-request edge: parse the signature header, find the key (refused with
    /// `rate_limited`, before the signature is checked, while the key id's failure budget for the request's source
    /// is spent; a failed signature counts, docs/PROTOCOL.md §10), verify the
    /// signature (method, path with query, body hash, `iat` ±120 s) with the stored key, judge the key's status,
    /// refuse a seen `jti`, check the key's role and the announced protocol, then run `handler`. Every answer —
    /// success or error — is signed for the request's `jti`, with the rotation hint when it applies.
    ///
    /// The signature is checked before the key's status so that a key-removing answer (`deviceKeyRevoked`, …)
    /// is only ever signed for a genuine request of that key: a man in the middle cannot obtain a signed
    /// removal for a `jti` of its choosing.
    ///
    /// With `registersJTIInHandler`, the handler's one store write remembers the `jti` in its own transaction
    /// (`AuthenticatedDevice.replay`; a replay then changes nothing and is answered `replayed_request`), saving a commit;
    /// only for handlers that write at most once and do nothing before that write but read. The edge remembers the
    /// `jti` itself after a handler that did not (a read, or a failure).
    func signedDeviceRoute(_ requirement: DeviceKeyRequirement, registersJTIInHandler: Bool = false,
                           _ handler: @escaping SignedDeviceHandler) -> HTTPHandler {
        { [self] request in
            var jti: String?
            var hint = false
            do {
                try? await refreshDeviceResponseKey()
                let unverified = try DeviceRequestSignature.parse(request.headers[DeviceSigning.requestHeader])
                jti = unverified.claims.jti
                let device = try await authenticateDevice(unverified, request: request, requirement: requirement,
                                                          registersJTI: !registersJTIInHandler, hint: &hint)
                let reply: DeviceReply
                do {
                    reply = try await handler(device, request)
                } catch let error where !(error is ReplayedRequest) {
                    // A failed request's jti is remembered all the same; its answer stays the failure.
                    if let replay = device.replay { try? await registerDeviceJTI(replay.registration) }
                    throw error
                }
                if let replay = device.replay, !replay.isClaimed { try await registerDeviceJTI(replay.registration) }
                return signedDeviceResponse(reply, jti: unverified.claims.jti, hint: hint)
            } catch {
                return deviceErrorResponse(error, jti: jti, hint: hint)
            }
        }
    }

    /// The checks of the edge after parsing (see `signedDeviceRoute`). `hint` is set as soon as the key's status is
    /// judged, so the errors of the later checks carry it too.
    func authenticateDevice(_ unverified: UnverifiedDeviceRequest, request: HTTPRequest, requirement: DeviceKeyRequirement,
                            registersJTI: Bool, hint: inout Bool) async throws -> AuthenticatedDevice {
        let claims = unverified.claims
        // The key and its failure budgets in one read.
        let subject = RateSubject.deviceSignature(keyID: claims.kid)
        let key: DeviceKeyRecord
        let windows: [String: FailureWindow]
        let keys = failureKeys(subject, request: request)
        do {
            (key, windows) = try await store.deviceKey(keyID: claims.kid, failureKeys: keys?.all ?? [])
        } catch AuthorityStoreError.notFound {
            throw DeviceFailure(.invalidSignature, "unknown device key")
        }
        let budget = failureBudget(subject, keys: keys, windows: windows)
        try refuseUncheckable(budget, as: DeviceFailure.rateLimited)
        let publicKey = try devicePublicKeys.key(keyID: key.keyID, storedJWK: key.publicKeyJWK)
        do {
            _ = try unverified.verify(with: publicKey, method: request.method.rawValue, path: Self.signedPath(of: request),
                                      body: request.body, now: now)
        } catch .invalidSignature {
            try await countFailure(budget, as: DeviceFailure.rateLimited)
            throw DeviceErrorCode.invalidSignature
        }
        switch key.acceptance(at: clock.now()) {
        case .accepted:
            hint = false
        case .acceptedWithRotationHint:
            hint = true
        case .overlapEnded, .revoked:
            // A superseded key past its overlap is as dead as a revoked one: the device must drop it.
            throw DeviceFailure(.deviceKeyRevoked, "the key is no longer registered")
        case .terminated:
            throw DeviceFailure(.deviceKeyTerminated, "the user has no application left to enrol through")
        case .replaced:
            throw DeviceFailure(.deviceKeyReplaced, "the application was enrolled on another device")
        case .pending:
            guard requirement == .pendingEnrolment else {
                throw DeviceFailure(.approvalPending, "this key's enrolment waits for its approval")
            }
            hint = false
        }
        let registration = Self.jtiRegistration(claims, now: now)
        var replay: DeviceReplayGuard?
        if registersJTI {
            try await registerDeviceJTI(registration)
        } else {
            replay = DeviceReplayGuard(registration)
        }
        do {
            if requirement != .ambient && key.role != .userPresent {
                throw DeviceFailure(.userPresenceRequired, "this endpoint needs the user-present key")
            }
            let version = try Self.announcedProtocol(request)
            return AuthenticatedDevice(key: key, claims: claims, rotationHint: hint, protocolVersion: version, replay: replay)
        } catch {
            if !registersJTI { try await registerDeviceJTI(registration) }
            throw error
        }
    }

    /// Remembers a verified request's `jti`; a second use is `replayed_request`. The entry is kept until
    /// `max(now, iat) + skew + 1` s: the first second at which its `iat` is refused as stale, so the `jti` can
    /// never come back while the request would still be accepted (`iat` was checked to be within the skew).
    func registerDeviceJTI(_ registration: JTIRegistration) async throws {
        let fresh = try await store.registerJTI(registration.jti, expiresAt: registration.expiresAt)
        guard fresh else { throw DeviceFailure(.replayedRequest, "this request was already received") }
    }

    /// How long a verified request's `jti` is remembered (see `registerDeviceJTI`).
    static func jtiRegistration(_ claims: DeviceRequestClaims, now: Int64) -> JTIRegistration {
        let latest = max(now, claims.iat)
        return JTIRegistration(jti: claims.jti, expiresAt: Date(timeIntervalSince1970: TimeInterval(latest + DeviceSigning.clockSkew + 1)))
    }

    /// The device protocol in `FaceSeal-Protocol`; missing, unreadable or below the minimum is `upgrade_required`.
    static func announcedProtocol(_ request: HTTPRequest) throws -> Int {
        guard let text = request.headers[DeviceSigning.protocolHeader], text.utf8.count <= 4, let version = Int(text),
              version >= ProtocolVersion.minimum else {
            throw DeviceFailure(.upgradeRequired, "device protocol \(ProtocolVersion.minimum) or newer required")
        }
        return version
    }

    /// What the device signed as `path`: the path as sent, with its query string.
    static func signedPath(of request: HTTPRequest) -> String {
        request.rawQuery.map { request.path + "?" + $0 } ?? request.path
    }

    /// The signed answer to a device request.
    func signedDeviceResponse(_ reply: DeviceReply, jti: String, hint: Bool) -> HTTPResponse {
        var headers: HTTPHeaders = ["Cache-Control": "no-store"]
        if !reply.body.isEmpty { headers["Content-Type"] = "application/json" }
        do {
            headers[DeviceSigning.responseHeader] = try AuthorityResponseSignature.make(
                body: reply.body, requestJTI: jti, status: reply.status, hint: hint, key: deviceKey, now: now)
        } catch {
            // Ed25519 signing does not fail on a valid key; an unsigned answer would be refused by the device anyway.
            return DeviceFailure(.serverError, "response signing failed").httpResponse
        }
        return HTTPResponse(status: HTTPStatus(code: reply.status), headers: headers, body: reply.body)
    }

    /// An error as a `DeviceErrorResponse`, signed when the request's `jti` is known.
    func deviceErrorResponse(_ error: any Error, jti: String?, hint: Bool) -> HTTPResponse {
        let failure = Self.deviceFailure(error)
        guard let jti else { return failure.httpResponse }
        var response = signedDeviceResponse(DeviceReply(status: failure.code.httpStatus, body: failure.body), jti: jti, hint: hint)
        for field in failure.headers { response.headers[field.name] = field.value }
        return response
    }

    /// Any error of a device handler as the failure the device sees; unknown errors reveal nothing.
    static func deviceFailure(_ error: any Error) -> DeviceFailure {
        switch error {
        case let failure as DeviceFailure: failure
        case is ReplayedRequest: DeviceFailure(.replayedRequest, "this request was already received")
        case let code as DeviceErrorCode: DeviceFailure(code, Self.describe(code))
        case let wire as WireError: DeviceFailure.malformed(wire)
        case let stored as AuthorityStoreError: DeviceFailure.store(stored)
        default: DeviceFailure(.serverError, "internal error")
        }
    }

    private static func describe(_ code: DeviceErrorCode) -> String {
        switch code {
        case .invalidSignature: "the device signature is missing, malformed or does not verify"
        case .clockSkew: "iat is more than \(DeviceSigning.clockSkew) s from the authority's clock"
        default: code.rawValue
        }
    }

    /// Wraps an unsigned device route (the enrolment reads, made before the device has a key).
    func unsignedDeviceRoute(_ handler: @escaping @Sendable (HTTPRequest) async throws -> DeviceReply) -> HTTPHandler {
        { request in
            do {
                let reply = try await handler(request)
                var headers: HTTPHeaders = ["Cache-Control": "no-store"]
                if !reply.body.isEmpty { headers["Content-Type"] = "application/json" }
                return HTTPResponse(status: HTTPStatus(code: reply.status), headers: headers, body: reply.body)
            } catch {
                return Self.deviceFailure(error).httpResponse
            }
        }
    }
}

// MARK: - Body and key parsing shared by the handlers

extension Authority {
    /// Decodes a JSON body as `Message` after checking its content type; every failure is `invalid_request`.
    static func decodeBody<Message: WireMessage>(_ type: Message.Type, _ request: HTTPRequest) throws -> Message {
        let contentType = request.headers["Content-Type"]?.split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard contentType == "application/json" else {
            throw DeviceFailure.invalidRequest("Content-Type must be application/json")
        }
        do {
            return try Message.decode(request.body)
        } catch {
            throw DeviceFailure.malformed(error)
        }
    }

    /// Checks a device key id: 1–128 characters of `A–Z a–z 0–9 - _ .` (ids travel in paths and `kids=` lists).
    static func checkKeyID(_ kid: String) throws {
        let allowed = kid.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
        guard !kid.isEmpty, kid.utf8.count <= 128, allowed else {
            throw DeviceFailure.invalidRequest("a key id must be 1–128 characters of A–Z a–z 0–9 - _ .")
        }
    }

    /// The P-256 key of a wire `DevicePublicKey` (x963), with its id checked; stored as a JWK.
    static func newDeviceKey(_ key: DevicePublicKey, field: String) throws -> (public: P256.Signing.PublicKey, record: NewDeviceKey) {
        try checkKeyID(key.kid)
        guard key.x963.bytes.count == 65, let publicKey = try? P256.Signing.PublicKey(x963Representation: key.x963.bytes) else {
            throw DeviceFailure.invalidRequest("\(field) is not an uncompressed P-256 point")
        }
        let jwk = String(decoding: JWK(publicKey: publicKey, keyID: key.kid).jsonData, as: UTF8.self)
        return (publicKey, NewDeviceKey(keyID: key.kid, publicKeyJWK: jwk))
    }

    /// Checks a proof of possession: a compact ES256 JWS by `key` whose payload is exactly `claims`
    /// (a JSON object of strings, no other member).
    static func verifyProof(_ compact: String, key: P256.Signing.PublicKey, claims: [String: String], name: String) throws {
        guard proofVerifies(compact, verifier: key, algorithm: .es256, claims: claims) else {
            throw DeviceFailure.invalidRequest("\(name) does not verify")
        }
    }

    /// Whether `compact` is a JWS of `algorithm` by `verifier` whose payload is exactly `claims`.
    static func proofVerifies(_ compact: String, verifier: any JWSVerifier, algorithm: JWSAlgorithm, claims: [String: String]) -> Bool {
        guard let verified = try? JWS.verify(compact, verifier: verifier,
                                             options: JWSParsingOptions(maximumSize: 4096, allowedAlgorithms: [algorithm])),
              let payload = try? JSONDecoder().decode([String: String].self, from: Data(verified.payload)) else {
            return false
        }
        return payload == claims
    }
}
