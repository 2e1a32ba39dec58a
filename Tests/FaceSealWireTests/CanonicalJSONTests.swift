import FaceSealCrypto
import Foundation
import Testing
@testable import FaceSealWire

/// `WireJSON.encode` writes with FaceSeal's own encoder; every byte must be what Foundation's `JSONEncoder` (sorted
/// keys, unescaped slashes) gave before, for every type of the package and for values at every edge.
@Suite struct CanonicalJSONTests {
    /// Both encoders on `value`: equal bytes, and FaceSeal's encoder did the work itself (no fallback).
    private func expectSame<T: Encodable>(_ value: T, fast: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) {
        let reference = WireJSON.foundationEncode(value)
        let ours = CanonicalJSONEncoder.encode(value)
        if fast {
            #expect(ours == reference, "\(T.self): \(String(decoding: ours ?? [], as: UTF8.self)) != \(String(decoding: reference, as: UTF8.self))",
                    sourceLocation: sourceLocation)
        } else {
            #expect(ours == nil, "\(T.self) should fall back to JSONEncoder", sourceLocation: sourceLocation)
        }
        #expect(WireJSON.encode(value) == reference, sourceLocation: sourceLocation)
    }

    /// `count` arbitrary values of `type` (from ``ArbitraryDecoder``), each encoded both ways. Returns how many of the
    /// attempts decoded (a type that validates in `init(from:)` refuses some).
    @discardableResult
    private func sweep<T: Codable>(_ type: T.Type, count: Int = 60, required: Bool = true,
                                   sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        var made = 0
        for seed in 0..<UInt64(count * 4) where made < count {
            guard let value = try? T(from: ArbitraryDecoder(Arbitrary(seed: seed &* 7919 &+ UInt64(made)))) else { continue }
            made += 1
            expectSame(value, sourceLocation: sourceLocation)
        }
        #expect(made > 0 || !required, "no arbitrary \(T.self) could be made", sourceLocation: sourceLocation)
        return made
    }

    @Test func everyMessageTypeEncodesAsJSONEncoderDid() {
        sweep(DeviceRequestClaims.self)
        sweep(AuthorityResponseClaims.self)
        sweep(LinkClaims.self)
        sweep(DeviceNoticeClaims.self)
        sweep(AuthorityKeyRolloverClaims.self)
        sweep(AuthorityKeyChain.self)
        sweep(RequestDetails.self)
        sweep(OutboxResponse.self)
        sweep(CompletionRequest.self)
        sweep(CompletionResponse.self)
        sweep(AbortRequest.self)
        sweep(AttemptReport.self)
        sweep(AttemptsRemaining.self)
        sweep(DeliveryBody.self)
        sweep(DeviceErrorResponse.self)
        sweep(OAuthErrorResponse.self)
        sweep(BackchannelAuthenticationResponse.self)
        sweep(TokenResponse.self)
        sweep(PingCallback.self)
        sweep(EnrolmentDetails.self)
        sweep(EnrolmentRequest.self)
        sweep(EnrolmentResponse.self)
        sweep(EnrolmentApproval.self)
        sweep(PasswordProof.self)
        sweep(PasswordProofResult.self)
        sweep(FaceTokenHeader.self)
        sweep(FaceTokenEnvelope.self)
        sweep(FaceTokenDownload.self)
        sweep(KeyRotationRequest.self)
        sweep(KeyRotationResponse.self)
        sweep(KeyRevocationRequest.self)
        sweep(BrandingSyncResponse.self)
        sweep(BrandingInfo.self)
        sweep(KeyPolicy.self)
        sweep(DevicePublicKey.self)
        sweep(ScryptParameters.self)
        sweep(DeadKey.self)
        sweep(KeyRotationEntry.self)
        sweep(BrandingEntry.self)
    }

    @Test func everyManagementTypeEncodesAsJSONEncoderDid() {
        sweep(TenantCreation.self)
        sweep(PolicyChange.self, required: false)  // its ranges refuse arbitrary numbers: made by hand below
        expectSame(PolicyChange())
        expectSame(PolicyChange(keyAlgorithms: ["ML-DSA-65", "ML-KEM-768"], attemptsMax: 3, captureRetriesMax: 100,
                                livenessRequired: true, matchThreshold: 0.45, passwordPolicy: PasswordPolicyChange(mode: .required, minimumLength: 12),
                                oneDevicePerUser: false, requestLifetimeSeconds: 3600, furtherDeviceApproval: .password))
        sweep(PasswordPolicyChange.self)
        sweep(ApplicationFields.self)
        sweep(BrandingChange.self)
        sweep(UserCreation.self)
        sweep(InvitationCreation.self)
        sweep(APIKeyCreation.self)
        sweep(WebhookRegistration.self)
        sweep(AuthorityKeyRotation.self)
        sweep(EmptyBody.self)
        sweep(SchemaInteger.self)
        sweep(JSONDocument.self, count: 200)
        sweep(ManagedPolicy.self)
        sweep(ManagedTenant.self)
        sweep(ManagedAPIKey.self)
        sweep(ManagedApplication.self)
        sweep(ManagedUser.self)
        sweep(ManagedInvitation.self)
        sweep(ManagedDeletion.self)
        sweep(ManagedDeviceKey.self)
        sweep(ManagedDevice.self)
        sweep(ManagedAuditEvent.self)
        sweep(ManagedAuditPage.self)
        sweep(ManagedList<ManagedUser>.self)
        sweep(ManagedWebhook.self)
        sweep(ManagedAuthorityKey.self)
        sweep(ManagedAuthorityKeys.self)
    }

    @Test func aCeremonysMessagesEncodeAsJSONEncoderDid() throws {
        let share = SecretBytes(randomCount: 32)
        let envelope = FaceTokenEnvelope(header: Array("{\"v\":2}".utf8), nonce: SecureRandom.bytes(count: 12),
                                         sealed: SecureRandom.bytes(count: 700), keysNonce: SecureRandom.bytes(count: 12),
                                         keysSealed: SecureRandom.bytes(count: 6000))
        expectSame(DeviceRequestClaims(method: "POST", path: "/device/v1/requests/r_1/complete?x=a/b", bsha: "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU",
                                       iat: 1_800_000_000, jti: DeviceRequestSignature.newJTI(), kid: "up_abc"))
        expectSame(AuthorityResponseClaims(bsha: "x", jti: "j", status: 200, iat: 1_800_000_000, hint: true))
        expectSame(AuthorityResponseClaims(bsha: "x", jti: "j", status: 409, iat: 1_800_000_000))
        expectSame(LinkClaims(iss: "https://auth.example/base", rid: "req_1", kind: .login, exp: 1_800_000_300, nonce: "n",
                              akey: SecureRandom.bytes(count: 32)))
        expectSame(RequestDetails(rid: "req_1", kind: .ceremony, pkiKind: .sign, bindingMessage: "Pay 10 € to \"Bob\"\n",
                                  clientId: "app", rpLabel: "Shop", branding: BrandingInfo(name: "Shop", logoURL: "https://x/y.png"),
                                  expiresAt: 1_800_000_300, keyPolicy: .standard, attemptsMax: 3, attemptsLeft: 2,
                                  captureRetriesMax: 5, captureRetriesLeft: 5, livenessRequired: true, matchThreshold: 0.363,
                                  minProtocol: 1, deliveryEndpoint: "https://rp/deliver", clientNotificationToken: "tok",
                                  pkiContext: [1, 2, 3], pkiData: SecureRandom.bytes(count: 100), nonce: "nonce"))
        expectSame(OutboxResponse(links: ["a.b.c", "d.e.f"]))
        expectSame(OutboxResponse(links: []))
        expectSame(FaceTokenDownload(token: envelope, serverShare: share))
        expectSame(CompletionRequest(rid: "r", resultSHA256: nil, baseGeneration: 4, token: envelope, serverShare: share, passwordUsed: false))
        expectSame(CompletionResponse(rid: "r", generation: 5, resultSHA256: "abc"))
        expectSame(TokenResponse(accessToken: "at", expiresIn: 3600, idToken: "a.b.c"))
        expectSame(BackchannelAuthenticationResponse(authReqId: "r", expiresIn: 120, interval: nil))
        expectSame(["inv": "inv_1", "jti": "j/1"])
        expectSame(["error": "access_denied", "error_description": "The user said \"no\" / cancelled"])
    }

    @Test func stringsEscapeExactlyAsJSONEncoderDid() {
        // Every ASCII byte alone and between letters, and every escape class together.
        for byte in UInt8(0)...UInt8(0x7F) {
            let text = String(decoding: [byte], as: UTF8.self)
            expectSame(Scalars(string: text))
            expectSame(Scalars(string: "a" + text + "b"))
            expectSame(["k" + text: text])
        }
        expectSame(Scalars(string: "\"\\/\u{8}\u{c}\n\r\t\u{0}\u{1f}\u{7f}é€😀\u{2028}\u{FEFF}"))
        var arbitrary = Arbitrary(seed: 42)
        for _ in 0..<500 { expectSame(Scalars(string: arbitrary.string())) }
        expectSame("a top-level string / with \"quotes\"")
        expectSame([String]())
        expectSame([[String]]([["a"], [], ["b", "c"]]))
    }

    @Test func numbersAtTheirLimitsFormatAsJSONEncoderDid() {
        expectSame(Scalars(int: .min, int8: .min, int16: .min, int32: .min, int64: .min))
        expectSame(Scalars(int: .max, int8: .max, int16: .max, int32: .max, int64: .max, uint: .max, uint8: .max, uint16: .max,
                           uint32: .max, uint64: .max))
        let doubles: [Double] = [0, -0.0, 1, -1, 0.1, 0.5, 1.0 / 3, 100, 1e15, 1e16, 1e17, 1e21, 1e22, 1e-5, 1e-7, 123456.789,
                                 .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude, .leastNormalMagnitude,
                                 .ulpOfOne, 9_007_199_254_740_992, 0.363, 2.5e-308]
        let floats: [Float] = [0, -0.0, 0.1, 1e-7, 3.4e38, .greatestFiniteMagnitude, .leastNonzeroMagnitude, 16_777_216, 0.363]
        for value in doubles { expectSame(Scalars(double: value)) }
        for value in floats { expectSame(Scalars(float: value)) }
        expectSame(doubles)
        expectSame(floats)
        var arbitrary = Arbitrary(seed: 7)
        for _ in 0..<2000 {
            expectSame(Scalars(int: Int(truncatingIfNeeded: arbitrary.next()), double: arbitrary.double(),
                               float: arbitrary.float(), int64: Int64(bitPattern: arbitrary.next()), uint64: arbitrary.next()))
        }
        expectSame([Int64.min, 0, Int64.max])
        expectSame([UInt8](0...255))
    }

    @Test func containersNestAndSortAsJSONEncoderDid() {
        expectSame(Nested(inner: [Scalars(string: "x"), Scalars(double: 2)], grid: [[1, 2], [], [3]], maybe: nil, map: ["b": 1, "a": 2, "aa": 3, "": 4]))
        expectSame(Nested(inner: [], grid: [], maybe: [[nil, 1], []], map: [:]))
        expectSame(["z": ["y": ["x": [1]]], "a": [:]])
        expectSame([10: "ten", 2: "two", -1: "minus"])
        expectSame(HandWritten())
        expectSame(Optional<Int>.none)
        expectSame([Optional<String>.none, "a"])
        expectSame(Nothing(), fast: false)  // nothing at the top level: JSONEncoder throws, WireJSON writes null
        expectSame([Nothing(), Nothing()])
        expectSame(Date(timeIntervalSinceReferenceDate: 123.5))
        // Keys that sort differently as bytes than as Unicode text or case-insensitively.
        expectSame(["é": 1, "z": 2, "Z": 3, "a10": 4, "a9": 5, "\u{1}": 6, "😀": 7, "\u{FFFF}": 8])
    }

    @Test func whatOnlyJSONEncoderWritesFallsBackToIt() {
        expectSame(["data": Data([1, 2, 3])], fast: false)
        expectSame(["url": URL(string: "https://example.com/a b")!], fast: false)
        expectSame(["decimal": Decimal(string: "1.50")!], fast: false)
        expectSame(Scalars(double: .nan), fast: false)
        expectSame(Scalars(float: .infinity), fast: false)
        expectSame(Twice(), fast: false)
        expectSame(Super(), fast: false)
        expectSame(OutOfOrder(), fast: false)
        expectSame(Silent(), fast: false)
        #expect(WireJSON.encode(Silent()) == Array("null".utf8))
    }
}

// MARK: - Types for the edges

private struct Scalars: Codable {
    var string = "s"
    var int = 0
    var int8: Int8 = 0
    var int16: Int16 = 0
    var int32: Int32 = 0
    var int64: Int64 = 0
    var uint: UInt = 0
    var uint8: UInt8 = 0
    var uint16: UInt16 = 0
    var uint32: UInt32 = 0
    var uint64: UInt64 = 0
    var double: Double = 0
    var float: Float = 0
    var bool = true
    var absent: String?

    init(string: String = "s", int: Int = 0, double: Double = 0, float: Float = 0, int8: Int8 = 0, int16: Int16 = 0,
         int32: Int32 = 0, int64: Int64 = 0, uint: UInt = 0, uint8: UInt8 = 0, uint16: UInt16 = 0, uint32: UInt32 = 0,
         uint64: UInt64 = 0) {
        self.string = string
        self.int = int
        self.double = double
        self.float = float
        self.int8 = int8
        self.int16 = int16
        self.int32 = int32
        self.int64 = int64
        self.uint = uint
        self.uint8 = uint8
        self.uint16 = uint16
        self.uint32 = uint32
        self.uint64 = uint64
    }
}

private struct Nested: Codable {
    var inner: [Scalars]
    var grid: [[Int]]
    var maybe: [[Int?]]?
    var map: [String: Int]
}

/// Nested containers by hand, a member written after a nested container, `encodeNil`, single values.
private struct HandWritten: Encodable {
    enum Keys: String, CodingKey { case b, a, c, d, e }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .b)
        try nested.encode(1, forKey: .e)
        try nested.encode("x", forKey: .a)
        var list = container.nestedUnkeyedContainer(forKey: .a)
        try list.encode(true)
        var deeper = list.nestedUnkeyedContainer()
        try deeper.encodeNil()
        try deeper.encode(2.5)
        var object = list.nestedContainer(keyedBy: Keys.self)
        try object.encode([1, 2], forKey: .c)
        try container.encodeNil(forKey: .d)
        try container.encode(Nothing(), forKey: .c)
        // The same keyed container asked for again writes into the same object.
        var again = encoder.container(keyedBy: Keys.self)
        try again.encode("late", forKey: .e)
    }
}

/// Encodes nothing where it stands: `{}`.
private struct Nothing: Codable {
    init() {}
    init(from decoder: any Decoder) throws {}
    func encode(to encoder: any Encoder) throws {}
}

/// Encodes nothing at all at the top level: JSONEncoder throws, `WireJSON` writes `null`.
private struct Silent: Encodable {
    func encode(to encoder: any Encoder) throws {}
}

private struct Twice: Encodable {
    enum Keys: String, CodingKey { case a }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(1, forKey: .a)
        try container.encode(2, forKey: .a)
    }
}

private struct Super: Encodable {
    enum Keys: String, CodingKey { case a }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try Scalars().encode(to: container.superEncoder())
    }
}

/// Writes into a nested container after its parent wrote again: JSONEncoder still places it in the nested object.
private struct OutOfOrder: Encodable {
    enum Keys: String, CodingKey { case a, b, c }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .a)
        try container.encode(1, forKey: .b)
        try nested.encode(2, forKey: .c)
    }
}

// MARK: - Arbitrary values of any Decodable type

/// SplitMix64, with draws of the shapes the encoder must get right.
private struct Arbitrary {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    /// Text mixing plain ASCII, every escape class, DEL, and two-, three- and four-byte UTF-8.
    mutating func string() -> String {
        let pool: [Unicode.Scalar] = ["a", "Z", "0", " ", "/", "\"", "\\", "\u{0}", "\u{8}", "\u{9}", "\u{a}", "\u{c}", "\u{d}",
                                      "\u{1f}", "\u{7f}", "é", "\u{80}", "€", "\u{2028}", "\u{FFFF}", "😀", "\u{10FFFF}", "-", "_"]
        var scalars = String.UnicodeScalarView()
        for _ in 0..<below(12) {
            scalars.append(chance(30) ? pool[below(pool.count)] : Unicode.Scalar(UInt8(0x20 + below(0x5F))))
        }
        return String(scalars)
    }

    mutating func integer<T: FixedWidthInteger>(_ type: T.Type) -> T {
        switch below(6) {
        case 0: return .min
        case 1: return .max
        case 2: return 0
        case 3: return T(truncatingIfNeeded: below(200)) &- 100
        default: return T(truncatingIfNeeded: next())
        }
    }

    mutating func double() -> Double {
        let specials: [Double] = [0, -0.0, 0.5, 1, 1e16, 1e-7, .greatestFiniteMagnitude, .leastNonzeroMagnitude, 0.363]
        if chance(30) { return specials[below(specials.count)] }
        if chance(50) { return Double(Int64(bitPattern: next()) >> Int64(below(60))) / 1000 }
        var value: Double
        repeat { value = Double(bitPattern: next()) } while !value.isFinite
        return value
    }

    mutating func float() -> Float {
        var value: Float
        repeat { value = Float(bitPattern: UInt32(truncatingIfNeeded: next())) } while !value.isFinite
        return chance(50) ? value : Float(below(100_000)) / 997
    }

    mutating func bytes() -> [UInt8] { (0..<below(40)).map { _ in UInt8(truncatingIfNeeded: next()) } }

    mutating func json(depth: Int = 0) -> JSONValue {
        switch below(depth > 2 ? 5 : 7) {
        case 0: return .null
        case 1: return .bool(chance(50))
        case 2: return .integer(integer(Int64.self))
        case 3: return .double(double())
        case 4: return .string(string())
        case 5: return .array((0..<below(4)).map { _ in json(depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<below(4) { members[string()] = json(depth: depth + 1) }
            return .object(members)
        }
    }
}

/// A `Decoder` answering every question at random: each member present or absent, each array 0–3 long, each scalar
/// from ``Arbitrary``; enumerations pick one of their cases, and the package's byte wrappers random bytes.
private final class ArbitrarySource {
    var arbitrary: Arbitrary
    var depth = 0
    init(_ arbitrary: Arbitrary) { self.arbitrary = arbitrary }

    func value<T: Decodable>(_ type: T.Type) throws -> T {
        if let iterable = T.self as? any CaseIterable.Type, let picked = pick(iterable) as? T { return picked }
        if T.self == Base64URLBytes.self { return Base64URLBytes(arbitrary.bytes()) as! T }
        if T.self == Base64URLSecret.self { return Base64URLSecret(SecretBytes(arbitrary.bytes())) as! T }
        if T.self == JSONDocument.self { return JSONDocument(arbitrary.json()) as! T }
        if T.self == Date.self { return Date(timeIntervalSince1970: Double(arbitrary.below(2_000_000_000)) + 0.25) as! T }
        depth += 1
        defer { depth -= 1 }
        guard depth < 8 else { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "too deep")) }
        return try T(from: ArbitraryDecoder(self))
    }

    private func pick<C: CaseIterable>(_ type: C.Type) -> Any {
        let all = Array(C.allCases)
        return all[arbitrary.below(all.count)]
    }

    func scalar<T>(_ type: T.Type) throws -> T {
        let value: Any = switch type {
        case is Bool.Type: arbitrary.chance(50)
        case is String.Type: arbitrary.string()
        case is Double.Type: arbitrary.double()
        case is Float.Type: arbitrary.float()
        case is Int.Type: arbitrary.integer(Int.self)
        case is Int8.Type: arbitrary.integer(Int8.self)
        case is Int16.Type: arbitrary.integer(Int16.self)
        case is Int32.Type: arbitrary.integer(Int32.self)
        case is Int64.Type: arbitrary.integer(Int64.self)
        case is UInt.Type: arbitrary.integer(UInt.self)
        case is UInt8.Type: arbitrary.integer(UInt8.self)
        case is UInt16.Type: arbitrary.integer(UInt16.self)
        case is UInt32.Type: arbitrary.integer(UInt32.self)
        case is UInt64.Type: arbitrary.integer(UInt64.self)
        default: throw DecodingError.typeMismatch(T.self, .init(codingPath: [], debugDescription: "not a scalar"))
        }
        return value as! T
    }
}

private struct ArbitraryDecoder: Decoder {
    let source: ArbitrarySource
    init(_ arbitrary: Arbitrary) { source = ArbitrarySource(arbitrary) }
    init(_ source: ArbitrarySource) { self.source = source }
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ArbitraryKeyed<Key>(source: source))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        ArbitraryUnkeyed(source: source, count: source.arbitrary.below(4))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { ArbitrarySingle(source: source) }
}

private struct ArbitraryKeyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let source: ArbitrarySource
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { (0..<source.arbitrary.below(4)).compactMap { _ in Key(stringValue: source.arbitrary.string()) } }
    func contains(_ key: Key) -> Bool { source.arbitrary.chance(70) }
    func decodeNil(forKey key: Key) throws -> Bool { source.arbitrary.chance(10) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try (try? source.scalar(T.self)) ?? source.value(T.self)
    }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(ArbitraryKeyed<NestedKey>(source: source))
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        ArbitraryUnkeyed(source: source, count: source.arbitrary.below(4))
    }
    func superDecoder() throws -> any Decoder { ArbitraryDecoder(source) }
    func superDecoder(forKey key: Key) throws -> any Decoder { ArbitraryDecoder(source) }
}

private struct ArbitraryUnkeyed: UnkeyedDecodingContainer {
    let source: ArbitrarySource
    let total: Int
    var currentIndex = 0
    init(source: ArbitrarySource, count: Int) {
        self.source = source
        total = count
    }
    var codingPath: [any CodingKey] { [] }
    var count: Int? { total }
    var isAtEnd: Bool { currentIndex >= total }
    mutating func decodeNil() throws -> Bool {
        let isNil = source.arbitrary.chance(10)
        if isNil { currentIndex += 1 }
        return isNil
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        currentIndex += 1
        return try (try? source.scalar(T.self)) ?? source.value(T.self)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        currentIndex += 1
        return KeyedDecodingContainer(ArbitraryKeyed<NestedKey>(source: source))
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        currentIndex += 1
        return ArbitraryUnkeyed(source: source, count: source.arbitrary.below(4))
    }
    mutating func superDecoder() throws -> any Decoder { ArbitraryDecoder(source) }
}

private struct ArbitrarySingle: SingleValueDecodingContainer {
    let source: ArbitrarySource
    var codingPath: [any CodingKey] { [] }
    func decodeNil() -> Bool { source.arbitrary.chance(10) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try (try? source.scalar(T.self)) ?? source.value(T.self)
    }
}
