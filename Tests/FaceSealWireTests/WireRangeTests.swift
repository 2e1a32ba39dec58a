import FaceSealCrypto
import Testing
@testable import FaceSealWire

/// Every integer of every wire message is range-checked at decode time: a value from another process that could
/// overflow the reader's arithmetic (`Int64.min`, `Int64.max`, a negative generation) is refused, never decoded.
@Suite struct WireRangeTests {
    /// A valid encoding of one message type and its decoder.
    struct Sample: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let decode: @Sendable ([UInt8]) throws -> Void

        init<Message: WireMessage>(_ message: Message) {
            name = String(describing: Message.self)
            bytes = message.encoded()
            decode = { _ = try Message.decode($0) }
        }

        var testDescription: String { name }
    }

    static let envelope = FaceTokenEnvelope(header: header.encoded(), nonce: Array(repeating: 7, count: 12), sealed: [1, 2, 3])
    static let header = FaceTokenHeader(tid: "t", sub: "u", tenant: "acme", gen: 3, passwordRequired: true, livenessRequired: true,
                                        threshold: 0.5, scrypt: ScryptParameters(salt: Array(repeating: 1, count: 16)),
                                        createdAt: 1_800_000_000)
    static let deviceKey = DevicePublicKey(kid: "k", x963: [4])

    /// Every message with an integer field (the others carry none to check).
    static let samples: [Sample] = [
        Sample(DeviceErrorResponse(.invalidRequest, "x")),
        Sample(RequestDetails(rid: "r", kind: .ceremony, clientId: "c", rpLabel: "l", expiresAt: 1_800_000_000, keyPolicy: .standard,
                              attemptsMax: 3, attemptsLeft: 2, captureRetriesMax: 10, captureRetriesLeft: 9, livenessRequired: true,
                              matchThreshold: 0.52, minProtocol: 7, nonce: "n")),
        Sample(DeliveryBody(authReqId: "a", kind: .sign, iat: 1_800_000_000, keyId: "k", signature: [1])),
        Sample(BackchannelAuthenticationResponse(authReqId: "a", expiresIn: 300, interval: 5)),
        Sample(TokenResponse(accessToken: "at", expiresIn: 600, idToken: "x")),
        Sample(LinkClaims(iss: "http://a", rid: "r", kind: .login, exp: 1_800_000_000, nonce: "n")),
        Sample(DeviceNoticeClaims(iss: "http://a", enrolment: "e", device: "d", app: "a", code: "000001", method: .none, iat: 1_800_000_000,
                                  exp: 1_800_086_400)),
        Sample(CompletionRequest(rid: "r", resultSHA256: nil, baseGeneration: 1, token: envelope, serverShare: SecretBytes([1] as [UInt8]), passwordUsed: false)),
        Sample(CompletionResponse(rid: "r", generation: 2, resultSHA256: nil)),
        Sample(AbortRequest(rid: "r", reason: .userCancelled)),
        Sample(AttemptReport(rid: "r", kind: .faceMismatch)),
        Sample(AttemptsRemaining(rid: "r", budget: AttemptBudget(attemptsLeft: 2, captureRetriesLeft: 9))),
        Sample(EnrolmentDetails(invitation: "i", email: "e", subject: "s", tenant: "t", clientId: "c", appLabel: "a", branding: nil,
                                tokenExists: false, passwordRequired: false, livenessRequired: true, keyPolicy: .standard,
                                expiresAt: 1_800_000_000)),
        Sample(EnrolmentRequest(ambientKey: deviceKey, userPresentKey: deviceKey, ambientProof: "p", token: envelope, serverShare: SecretBytes([1] as [UInt8]),
                                deviceName: "d")),
        Sample(EnrolmentResponse(identityId: "i", email: "e", clientId: "c", appLabel: "a", branding: nil, issuer: "http://a",
                                 authorityKey: [1])),
        Sample(DeviceRequestClaims(method: "GET", path: "/", bsha: "b", iat: 1_800_000_000, jti: "j", kid: "k")),
        Sample(AuthorityResponseClaims(bsha: "b", jti: "j", status: 200, iat: 1_800_000_000, hint: true)),
        Sample(KeyRotationRequest(entry: KeyRotationEntry(oldKid: "o", ambientKey: deviceKey, userPresentKey: deviceKey, proof: "p",
                                                          ambientProof: "q"))),
        Sample(KeyRotationResponse(kid: "k", overlapUntil: 1_800_000_000)),
        Sample(KeyRevocationRequest(kid: "k")),
        Sample(BrandingSyncResponse(entries: [], dead: [])),
        Sample(OutboxResponse(links: [])),
        Sample(header),
        Sample(FaceTokenDownload(token: envelope, serverShare: SecretBytes([1] as [UInt8]))),
    ]

    /// The paths of every integer in a JSON value.
    static func integerPaths(_ value: JSONValue, _ path: [String] = []) -> [[String]] {
        switch value {
        case .integer: [path]
        case .object(let members): members.flatMap { integerPaths($0.value, path + [$0.key]) }
        case .array(let elements): elements.enumerated().flatMap { integerPaths($0.element, path + [String($0.offset)]) }
        default: []
        }
    }

    static func replacing(_ path: ArraySlice<String>, in value: JSONValue, with replacement: JSONValue) -> JSONValue {
        guard let key = path.first else { return replacement }
        switch value {
        case .object(var members):
            members[key] = replacing(path.dropFirst(), in: members[key] ?? .null, with: replacement)
            return .object(members)
        case .array(var elements):
            let index = Int(key)!
            elements[index] = replacing(path.dropFirst(), in: elements[index], with: replacement)
            return .array(elements)
        default:
            return value
        }
    }

    @Test("every integer field refuses Int64.min, Int64.max and -1", arguments: samples)
    func extremesAreRefused(_ sample: Sample) throws {
        try sample.decode(sample.bytes)
        let json = try JSONValue.parse(sample.bytes)
        let paths = Self.integerPaths(json)
        #expect(!paths.isEmpty, "a sample without integers belongs out of this list")
        for path in paths {
            for extreme: Int64 in [.min, .max, -1] {
                let hostile = Self.replacing(path[...], in: json, with: .integer(extreme)).serialized
                #expect(throws: WireError.self, "\(path.joined(separator: ".")) = \(extreme)") { try sample.decode(hostile) }
            }
        }
    }

    @Test("a match threshold outside 0.1…1.0 is refused")
    func matchThresholdRange() throws {
        let details = RequestDetails(rid: "r", kind: .login, clientId: "c", rpLabel: "l", expiresAt: 1_800_000_000, keyPolicy: .standard,
                                     attemptsMax: 3, attemptsLeft: 3, captureRetriesMax: 10, captureRetriesLeft: 10,
                                     livenessRequired: true, matchThreshold: 0.52, minProtocol: 7, nonce: "n")
        let text = String(decoding: details.encoded(), as: UTF8.self)
        #expect(try RequestDetails.decode(Array(text.utf8)).matchThreshold == 0.52)
        for hostile in ["5", "-0.52", "0", "1e308"] {
            let bytes = Array(text.replacingOccurrences(of: "\"match_threshold\":0.52", with: "\"match_threshold\":\(hostile)").utf8)
            #expect(throws: WireError.self, "\(hostile)") { try RequestDetails.decode(bytes) }
        }
    }

    @Test("the skew check needs no arithmetic on iat: any Int64 is answered, never trapped on")
    func skewWithoutOverflow() {
        let now: Int64 = 1_800_000_000
        #expect(DeviceSigning.isWithinSkew(now, of: now))
        #expect(DeviceSigning.isWithinSkew(now - 120, of: now) && DeviceSigning.isWithinSkew(now + 120, of: now))
        #expect(!DeviceSigning.isWithinSkew(now - 121, of: now) && !DeviceSigning.isWithinSkew(now + 121, of: now))
        #expect(!DeviceSigning.isWithinSkew(.min, of: now) && !DeviceSigning.isWithinSkew(.max, of: now))
        #expect(DeviceSigning.isWithinSkew(.max, of: .max) && DeviceSigning.isWithinSkew(.min, of: .min))
    }
}
