import Testing
@testable import FaceSealWire

@Suite struct WireMessageTests {
    private let sampleHeader = FaceTokenHeader(tid: "t1", sub: "u1", tenant: "acme", gen: 3, passwordRequired: false,
                                               livenessRequired: true, threshold: 0.5, scrypt: nil, createdAt: 1_700_000_000)

    @Test func roundTripsAreExactAndCanonical() throws {
        let claims = LinkClaims(iss: "http://127.0.0.1:8080", rid: "r1", kind: .ceremony, exp: 1_700_000_300, nonce: "n1")
        let bytes = claims.encoded()
        #expect(try LinkClaims.decode(bytes) == claims)
        #expect(String(decoding: bytes, as: UTF8.self)
            == #"{"exp":1700000300,"iss":"http://127.0.0.1:8080","kind":"ceremony","nonce":"n1","rid":"r1","v":1}"#)
        let header = sampleHeader.encoded()
        #expect(try FaceTokenHeader.decode(header) == sampleHeader)
        let envelope = FaceTokenEnvelope(header: header, nonce: Array(repeating: 7, count: 12), sealed: [1, 2, 3])
        #expect(try envelope.parsedHeader() == sampleHeader)
        #expect(try FaceTokenEnvelope.decode(envelope.encoded()) == envelope)
    }

    @Test func unknownFieldIsRefused() {
        let json = Array(#"{"v":7,"rid":"r","reason":"user_cancelled","extra":1}"#.utf8)
        #expect(throws: WireError.unknownField("extra")) { try AbortRequest.decode(json) }
    }

    @Test func missingFieldIsNamed() {
        let json = Array(#"{"v":7,"rid":"r"}"#.utf8)
        #expect(throws: WireError.missingField("reason")) { try AbortRequest.decode(json) }
    }

    @Test func wrongTypesAndBadEnumsAreRefused() {
        #expect(throws: WireError.self) { try AbortRequest.decode(Array(#"{"v":"7","rid":"r","reason":"user_cancelled"}"#.utf8)) }
        #expect(throws: WireError.self) { try AbortRequest.decode(Array(#"{"v":7,"rid":"r","reason":"bored"}"#.utf8)) }
    }

    @Test func malformedJSONAndNonObjectsAreRefused() {
        #expect(throws: WireError.malformed("expected a JSON object")) { try AbortRequest.decode(Array("{".utf8)) }
        #expect(throws: WireError.malformed("expected a JSON object")) { try AbortRequest.decode(Array("[1]".utf8)) }
        #expect(throws: WireError.malformed("expected a JSON object")) { try AbortRequest.decode([0xFF, 0xFE]) }
    }

    @Test func oversizedInputIsRefusedBeforeParsing() {
        let big = [UInt8](repeating: 0x20, count: AbortRequest.maxBytes + 1)
        #expect(throws: WireError.tooLarge(limit: AbortRequest.maxBytes)) { try AbortRequest.decode(big) }
    }

    @Test func badBase64URLIsRefused() {
        for bad in ["AAA=", "A+/B", "A", "AB CD"] {
            let json = Array(#"{"header":"\#(bad)","nonce":"AAAA","sealed":"AAAA"}"#.utf8)
            #expect(throws: WireError.self) { try FaceTokenEnvelope.decode(json) }
        }
    }

    @Test func deliveryBodyConsistency() {
        let sign = DeliveryBody(authReqId: "a", kind: .sign, iat: 1, keyId: "k", signature: [1])
        #expect(sign.isConsistent)
        let mixed = DeliveryBody(authReqId: "a", kind: .sign, iat: 1, keyId: "k", signature: [1], sharedSecret: [2])
        #expect(!mixed.isConsistent)
        let keys = DeliveryBody(authReqId: "a", kind: .publicKeys, iat: 1, keyId: "k", publicKeys: [.mlDSA65: [1]])
        #expect(keys.isConsistent)
        #expect(!DeliveryBody(authReqId: "a", kind: .decapsulate, iat: 1, keyId: "k").isConsistent)
    }

    @Test func errorStatusesFollowCIBACore() {
        #expect(CIBAErrorCode.invalidClient.httpStatus == 401)
        #expect(CIBAErrorCode.accessDenied.httpStatus == 403)
        for code in CIBAErrorCode.allCases where code != .invalidClient && code != .accessDenied {
            #expect(code.httpStatus == 400, "\(code)")
        }
        #expect(DeviceErrorCode.deviceKeyRevoked.rawValue == "deviceKeyRevoked")
        #expect(DeviceErrorCode.deviceKeyRevoked.removesKey && !DeviceErrorCode.staleToken.removesKey)
    }
}

/// Messages are parsed once, strictly: what one reader accepts, every reader reads the same way.
@Suite struct StrictWireParsingTests {
    @Test func aRepeatedMemberIsRefusedWhereverItIs() {
        #expect(throws: WireError.malformed("expected a JSON object")) {
            try AbortRequest.decode(Array(#"{"reason":"user_cancelled","reason":"attempts_exhausted"}"#.utf8))
        }
        #expect(throws: WireError.malformed("not valid JSON")) {
            try WireJSON.decode([String: [String: Int]].self, from: Array(#"{"a":{"b":1,"b":2}}"#.utf8), limit: 100)
        }
    }

    @Test func integersComeOnlyFromIntegerLiteralsThatFit() throws {
        #expect(try WireJSON.decode([Int].self, from: Array("[1,-2,9223372036854775807]".utf8), limit: 100) == [1, -2, .max])
        for text in ["[1.0]", "[1e2]", "[9223372036854775808]", "[true]", "[\"1\"]"] {
            #expect(throws: WireError.self) { try WireJSON.decode([Int].self, from: Array(text.utf8), limit: 100) }
        }
        #expect(throws: WireError.self) { try WireJSON.decode([UInt8].self, from: Array("[256]".utf8), limit: 100) }
        #expect(try WireJSON.decode([Double].self, from: Array("[1, 0.5, -2e3]".utf8), limit: 100) == [1, 0.5, -2000])
    }

    @Test func pathsNameTheFieldThatFailed() {
        struct Inner: Decodable { let count: Int }
        struct Outer: Decodable { let items: [Inner]; let label: String? }
        #expect(throws: WireError.invalidValue(field: "items.1.count", reason: "wrong type")) {
            try WireJSON.decode(Outer.self, from: Array(#"{"items":[{"count":1},{"count":"x"}]}"#.utf8), limit: 100)
        }
        #expect(throws: WireError.missingField("items.0.count")) {
            try WireJSON.decode(Outer.self, from: Array(#"{"items":[{}]}"#.utf8), limit: 100)
        }
        #expect((try? WireJSON.decode(Outer.self, from: Array(#"{"items":[],"label":null}"#.utf8), limit: 100))?.label == nil)
    }
}
