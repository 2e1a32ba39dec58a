import Foundation
import FaceSealCrypto
public import FaceSealWire

/// The delivery endpoint's checks (SPEC §4.4), in the order the spec gives them:
/// 1. the bearer equals the `client_notification_token` sent for that request (constant time);
/// 2. the `auth_req_id` is outstanding and not yet delivered;
/// 3. the `kind` matches;
/// 4. the `X-FaceSeal-Signature` (ML-DSA-65, context `faceseal-delivery-v1`) verifies with the key pinned
///    for (user, context) — for `public_keys`, with the delivered key;
/// 5. the body is within the limit, parses strictly and its result fields fit its kind;
/// 6. the result is right (the signature over the data verifies with the pinned key; the shared secret
///    equals the encapsulated one, constant time).
/// Only then is the delivery recorded (and, for `public_keys`, the key pinned); a refusal changes nothing.
///
/// To reach steps 1–4 the `auth_req_id`, `kind` and (for `public_keys`) the delivered key are read from a
/// lenient first parse under `maxEnvelopeBytes`; the strict parse and the 32 KiB limit are step 5.
public struct DeliveryVerifier: Sendable {
    /// Pending requests.
    public let pendingRequests: any PendingRequestStore
    /// Pinned keys.
    public let keyPins: any KeyPinStore
    /// The current time.
    public let clock: any WallClock
    /// Told about every delivery: its `auth_req_id` (when readable) and what was accepted or why it was refused.
    public let observer: (@Sendable (_ authReqId: String?, _ outcome: Result<AcceptedDelivery, DeliveryRefusal>) -> Void)?

    /// The largest body read at all (the strict delivery limit, 32 KiB, is checked at step 5).
    public static let maxEnvelopeBytes = 1 << 20
    /// The longest `X-FaceSeal-Signature` header read (an ML-DSA-65 signature is 4412 base64url characters).
    public static let maxSignatureHeaderCharacters = 8192

    /// A verifier over the given stores.
    public init(pendingRequests: any PendingRequestStore, keyPins: any KeyPinStore, clock: any WallClock = SystemWallClock(),
                observer: (@Sendable (_ authReqId: String?, _ outcome: Result<AcceptedDelivery, DeliveryRefusal>) -> Void)? = nil) {
        self.pendingRequests = pendingRequests
        self.keyPins = keyPins
        self.clock = clock
        self.observer = observer
    }

    /// The fields read before the strict parse.
    private struct Envelope: Decodable {
        var authReqId: String
        var kind: String
        var publicKeys: [String: String]?

        enum CodingKeys: String, CodingKey {
            case authReqId = "auth_req_id"
            case kind
            case publicKeys = "public_keys"
        }
    }

    /// Handles one delivery: answers 204 when accepted, the refusal's 4xx otherwise.
    public func handle(method: String, headers: [String: String], body: [UInt8]) async -> EndpointResponse {
        do {
            let accepted = try await accept(method: method, headers: headers, body: body)
            observer?(Self.peekAuthReqId(body), .success(accepted))
            return EndpointResponse(status: 204)
        } catch {
            observer?(Self.peekAuthReqId(body), .failure(error))
            return Self.response(for: error)
        }
    }

    /// The `auth_req_id` of a body, for the observer only (never trusted).
    private static func peekAuthReqId(_ body: [UInt8]) -> String? {
        guard body.count <= maxEnvelopeBytes else { return nil }
        return (try? JSONDecoder().decode(Envelope.self, from: Data(body)))?.authReqId
    }

    /// The answer for a refusal: `{"error": code, "error_description": …}`.
    static func response(for refusal: DeliveryRefusal) -> EndpointResponse {
        let body = WireJSON.encode(["error": refusal.code, "error_description": refusal.description])
        var headers = [("Content-Type", "application/json"), ("Cache-Control", "no-store")]
        if refusal == .wrongBearer { headers.append(("WWW-Authenticate", "Bearer error=\"invalid_token\"")) }
        return EndpointResponse(status: refusal.status, body: body, headers: headers)
    }

    /// Runs every check and records the delivery; returns what was accepted or throws the refusal.
    public func accept(method: String, headers: [String: String], body: [UInt8]) async throws(DeliveryRefusal) -> AcceptedDelivery {
        guard method.uppercased() == "POST" else { throw .methodNotAllowed }
        guard body.count <= Self.maxEnvelopeBytes else { throw .tooLarge(limit: DeliveryBody.maxBytes) }
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(body)), !envelope.authReqId.isEmpty,
              envelope.authReqId.utf8.count <= 1024 else {
            throw .malformed("expected a JSON object with auth_req_id and kind")
        }
        var checks: [String] = []

        // 1. Bearer. An unknown request has no bearer to compare with, so it is refused as unknown.
        let found: (request: PendingRequest, delivery: AcceptedDelivery?)?
        do {
            found = try await pendingRequests.request(envelope.authReqId)
        } catch {
            throw .unknownRequest
        }
        guard let (request, existing) = found else { throw .unknownRequest }
        guard let presented = Self.bearer(in: headers),
              request.bearer.withUnsafeBytes({ stored in constantTimeEquals(Array(presented.utf8), Array(stored)) }) else {
            throw .wrongBearer
        }
        checks.append("delivery: bearer equals the client_notification_token of this request (constant time)")

        // 2. Outstanding and not yet delivered.
        guard clock.now() < request.expiresAt else { throw .unknownRequest }
        guard existing == nil else { throw .alreadyDelivered }
        checks.append("delivery: auth_req_id \(request.authReqId) is outstanding and not yet delivered")

        // 3. Kind.
        guard let expectedKind = request.expected.pkiKind else { throw .wrongKind(expected: "login", got: envelope.kind) }
        guard envelope.kind == expectedKind.rawValue else { throw .wrongKind(expected: expectedKind.rawValue, got: envelope.kind) }
        checks.append("delivery: kind \(expectedKind.rawValue) is what was asked for")

        // 4. Signature, against the pinned key (public_keys: the delivered key, which must not contradict a pin).
        let pinned: PinnedKeys?
        do {
            pinned = try await keyPins.pinnedKeys(for: request.pinKey)
        } catch {
            throw .noPinnedKey
        }
        let signingKeyBytes: [UInt8]
        if expectedKind == .publicKeys {
            guard let encoded = envelope.publicKeys?[KeyAlgorithm.mlDSA65.rawValue],
                  let bytes = try? Base64URL.decode(encoded, maximumDecodedCount: 4096) else {
                throw .badSignature("public_keys carries no ML-DSA-65 key to verify with")
            }
            signingKeyBytes = bytes
        } else {
            guard let pinnedKey = pinned?.signingKey else { throw .noPinnedKey }
            signingKeyBytes = pinnedKey
        }
        guard let signingKey = try? MLDSA65.PublicKey(rawRepresentation: signingKeyBytes) else {
            throw .badSignature("the ML-DSA-65 key is malformed")
        }
        guard let header = Self.header(DeliveryNames.signatureHeader, in: headers) else {
            throw .badSignature("no \(DeliveryNames.signatureHeader) header")
        }
        guard header.utf8.count <= Self.maxSignatureHeaderCharacters,
              let signature = try? Base64URL.decode(header, maximumDecodedCount: 8192) else {
            throw .badSignature("\(DeliveryNames.signatureHeader) is not base64url")
        }
        guard signingKey.isValidSignature(signature, for: body, context: DeliveryNames.signatureContext) else {
            throw .badSignature("the ML-DSA-65 signature does not verify")
        }
        // Only a delivery that verified can be told that it contradicts the pin.
        if expectedKind == .publicKeys, let pinnedKey = pinned?.signingKey, pinnedKey != signingKeyBytes { throw .pinnedKeyConflict }
        let keyID = PinnedKeys.keyID(of: signingKeyBytes)
        checks.append(expectedKind == .publicKeys
            ? "delivery: ML-DSA-65 signature (context faceseal-delivery-v1) verifies with the delivered key \(keyID)"
            : "delivery: ML-DSA-65 signature (context faceseal-delivery-v1) verifies with the pinned key \(keyID)")

        // 5. Limits and the strict parse.
        guard body.count <= DeliveryBody.maxBytes else { throw .tooLarge(limit: DeliveryBody.maxBytes) }
        let delivery: DeliveryBody
        do {
            delivery = try DeliveryBody.decode(body)
        } catch {
            throw .invalidBody("\(error)")
        }
        guard delivery.isConsistent else { throw .invalidBody("the result fields do not fit kind \(delivery.kind.rawValue)") }
        guard delivery.v >= ProtocolVersion.ceremonyMinimum, delivery.v <= ProtocolVersion.current else {
            throw .invalidBody("protocol version \(delivery.v) is not supported")
        }
        guard delivery.authReqId == request.authReqId, delivery.kind == expectedKind else {
            throw .invalidBody("auth_req_id or kind differs from the first parse")
        }
        guard delivery.keyId == keyID else { throw .invalidBody("key_id is not the id of the signing key") }
        checks.append("delivery: body of \(body.count) bytes within \(DeliveryBody.maxBytes), strictly parsed, result fields consistent")

        // 6. The result.
        let result: DeliveredResult
        switch request.expected {
        case .signIn:
            throw .wrongKind(expected: "login", got: envelope.kind)
        case .publicKeys:
            guard let delivered = delivery.publicKeys else { throw .invalidBody("public_keys missing") }
            var keys: [KeyAlgorithm: [UInt8]] = [:]
            for (name, value) in delivered {
                guard let algorithm = KeyAlgorithm(rawValue: name) else { throw .invalidBody("unknown key algorithm \(name)") }
                guard Self.isWellFormed(value.bytes, algorithm: algorithm) else {
                    throw .wrongResult("the \(name) public key is malformed")
                }
                keys[algorithm] = value.bytes
            }
            result = .publicKeys(PinnedKeys(keys: keys))
            checks.append("result: public keys \(keys.keys.sorted().map(\.rawValue).joined(separator: ", ")) are well-formed")
        case .signature(let data):
            guard let signature = delivery.signature?.bytes else { throw .invalidBody("signature missing") }
            guard signingKey.isValidSignature(signature, for: data, context: DeliveryNames.signContext) else {
                throw .wrongResult("the signature over the requested data does not verify with the pinned key")
            }
            result = .signature(signature)
            checks.append("result: the ML-DSA-65 signature over the \(data.count)-byte message verifies with the pinned key")
        case .sharedSecret(let expected):
            guard let secret = delivery.sharedSecret?.bytes else { throw .invalidBody("shared_secret missing") }
            let delivered = SecretBytes(secret)
            guard delivered == expected else {
                throw .wrongResult("the shared secret is not the one encapsulated")
            }
            result = .sharedSecret(delivered)
            checks.append("result: the shared secret equals the one encapsulated to the pinned ML-KEM-768 key (constant time)")
        }

        // Accept: pin (public_keys), then record exactly once; undo the pin if another delivery won the race.
        var createdPin = false
        if case .publicKeys(let keys) = result {
            do {
                switch try await keyPins.pin(keys, for: request.pinKey) {
                case .pinned: createdPin = true
                case .alreadyPinned: break
                case .conflict: throw DeliveryRefusal.pinnedKeyConflict
                }
            } catch let refusal as DeliveryRefusal {
                throw refusal
            } catch {
                throw .pinnedKeyConflict
            }
            checks.append(createdPin ? "pin: keys pinned for (\(request.user), \(request.context))"
                                     : "pin: the same keys were already pinned for (\(request.user), \(request.context))")
        }
        let accepted = AcceptedDelivery(bodySHA256: SHA256.hash(data: body).bytes, result: result, keyID: keyID,
                                        createdPin: createdPin, checks: checks)
        let recorded = (try? await pendingRequests.recordDelivery(accepted, for: request.authReqId)) ?? false
        guard recorded else {
            if createdPin, case .publicKeys(let keys) = result {
                try? await keyPins.removePin(for: request.pinKey, ifEqualTo: keys)
            }
            throw .alreadyDelivered
        }
        return accepted
    }

    /// Whether `bytes` is a public key of `algorithm` (length, and a full parse where FaceSeal has the algorithm).
    static func isWellFormed(_ bytes: [UInt8], algorithm: KeyAlgorithm) -> Bool {
        switch algorithm {
        case .mlDSA44: (try? MLDSA44.PublicKey(rawRepresentation: bytes)) != nil
        case .mlDSA65: (try? MLDSA65.PublicKey(rawRepresentation: bytes)) != nil
        case .mlDSA87: (try? MLDSA87.PublicKey(rawRepresentation: bytes)) != nil
        case .mlKEM512: (try? MLKEM512.PublicKey(rawRepresentation: bytes)) != nil
        case .mlKEM768: (try? MLKEM768.PublicKey(rawRepresentation: bytes)) != nil
        case .mlKEM1024: (try? MLKEM1024.PublicKey(rawRepresentation: bytes)) != nil
        }
    }

    /// A header by case-insensitive name.
    static func header(_ name: String, in headers: [String: String]) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.key.lowercased() == lowered }?.value
    }

    /// The token of `Authorization: Bearer <token>` (scheme case-insensitive, RFC 6750).
    static func bearer(in headers: [String: String]) -> String? {
        guard let value = header("Authorization", in: headers), value.count > 7,
              value.prefix(7).lowercased() == "bearer " else { return nil }
        let token = value.dropFirst(7).trimmingCharacters(in: .whitespaces)
        return token.isEmpty || token.utf8.count > 1024 ? nil : token
    }
}
