public import FaceSealCrypto

/// The completion a device posts after a successful face match (and, for a ceremony, after the application
/// accepted the delivery): the receipt hash and the rotated token (SPEC §4.4, §5.3). Signed with the
/// user-present key.
public struct CompletionRequest: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The request id.
    public var rid: String
    /// Ceremonies: base64url SHA-256 of the exact delivery body (never the body itself).
    public var resultSHA256: String?
    /// The generation of the token the device downloaded; the rotation is stored only if it is still current.
    public var baseGeneration: Int
    /// The re-sealed token, generation `baseGeneration + 1`.
    public var token: FaceTokenEnvelope
    /// The fresh server share the device chose for the new token.
    public var serverShare: Base64URLSecret
    /// Whether the user typed the token's password (adds `pwd` to the ID token's `amr`).
    public var passwordUsed: Bool
    /// A password-protected token: the public key of its password verifier (`PasswordVerifier`), which the authority
    /// keeps for further-device approval; a token sealed by an older SDK gets one at its next rotation.
    public var passwordVerifier: Base64URLBytes?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case v, rid, token
        case resultSHA256 = "result_sha256"
        case baseGeneration = "base_generation"
        case serverShare = "server_share"
        case passwordUsed = "password_used"
        case passwordVerifier = "password_verifier"
    }

    public static var maxBytes: Int { 512 * 1024 }

    /// Builds a completion.
    public init(v: Int = ProtocolVersion.current, rid: String, resultSHA256: String?, baseGeneration: Int,
                token: FaceTokenEnvelope, serverShare: SecretBytes, passwordUsed: Bool, passwordVerifier: [UInt8]? = nil) {
        self.v = v
        self.passwordVerifier = passwordVerifier.map(Base64URLBytes.init)
        self.rid = rid
        self.resultSHA256 = resultSHA256
        self.baseGeneration = baseGeneration
        self.token = token
        self.serverShare = Base64URLSecret(serverShare)
        self.passwordUsed = passwordUsed
    }
}

/// The authority's answer to a completion. A retried completion gets the same answer.
public struct CompletionResponse: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The request id.
    public var rid: String
    /// The stored token generation.
    public var generation: Int
    /// The receipt the ID token carries (ceremonies).
    public var resultSHA256: String?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case v, rid, generation
        case resultSHA256 = "result_sha256"
    }

    /// Builds the answer.
    public init(v: Int = ProtocolVersion.current, rid: String, generation: Int, resultSHA256: String?) {
        self.v = v
        self.rid = rid
        self.generation = generation
        self.resultSHA256 = resultSHA256
    }
}

/// Why a device abandons a request; the application's token request answers `access_denied` at once, with the
/// reason as its `error_description`.
public enum AbortReason: String, Codable, Sendable, CaseIterable {
    /// The face-mismatch budget is spent.
    case attemptsExhausted = "attempts_exhausted"
    /// The liveness and capture-quality budget is spent.
    case captureRetriesExhausted = "capture_retries_exhausted"
    /// The user typed a wrong password as many times as the request allows attempts.
    case passwordAttemptsExhausted = "password_attempts_exhausted"
    /// The application refused the delivery or could not be reached, and the user gave up.
    case deliveryFailed = "delivery_failed"
    /// The user declined.
    case userCancelled = "user_cancelled"
    /// A refusal known only after the face match (for example a key operation that does not fit the key type).
    case refused
}

/// An abort, signed with the user-present key.
public struct AbortRequest: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The request id.
    public var rid: String
    /// Why.
    public var reason: AbortReason

    public enum CodingKeys: String, CodingKey, CaseIterable { case v, rid, reason }
    public static var maxBytes: Int { 1024 }

    /// Builds an abort.
    public init(v: Int = ProtocolVersion.current, rid: String, reason: AbortReason) {
        self.v = v
        self.rid = rid
        self.reason = reason
    }
}

extension CompletionRequest {
    public func checkRanges() throws(WireError) {
        try WireRange.check(v, WireRange.version, "v")
        try WireRange.check(baseGeneration, WireRange.generation, "base_generation")
    }
}

extension CompletionResponse {
    public func checkRanges() throws(WireError) {
        try WireRange.check(v, WireRange.version, "v")
        try WireRange.check(generation, WireRange.generation, "generation")
    }
}

extension AbortRequest {
    public func checkRanges() throws(WireError) { try WireRange.check(v, WireRange.version, "v") }
}

extension AttemptReport {
    public func checkRanges() throws(WireError) { try WireRange.check(v, WireRange.version, "v") }
}

extension AttemptsRemaining {
    public func checkRanges() throws(WireError) {
        try WireRange.check(v, WireRange.version, "v")
        try WireRange.check(budget.attemptsLeft, 0...WireRange.attempts.upperBound, "attempts_left")
        try WireRange.check(budget.captureRetriesLeft, 0...WireRange.attempts.upperBound, "capture_retries_left")
    }
}

/// What a failed face check was, as the device reports it (SPEC §5.4).
public enum AttemptKind: String, Codable, Sendable, CaseIterable {
    /// A live face that does not match: spends one of `attempts_max`.
    case faceMismatch = "face_mismatch"
    /// A liveness or capture-quality failure: spends one of `capture_retries_max`.
    case captureRetry = "capture_retry"
}

/// A failed face check, reported by the device that downloaded the token (user-present key). The authority counts
/// it and denies the request when a budget is spent.
public struct AttemptReport: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The request id.
    public var rid: String
    /// What failed.
    public var kind: AttemptKind

    public enum CodingKeys: String, CodingKey, CaseIterable { case v, rid, kind }
    public static var maxBytes: Int { 1024 }

    /// Builds a report.
    public init(v: Int = ProtocolVersion.current, rid: String, kind: AttemptKind) {
        self.v = v
        self.rid = rid
        self.kind = kind
    }
}

/// What a request has left after a reported failure, as the authority counts it (the authority's store and the SDK
/// both speak it). When either count is 0 the authority has denied the request (`attempts_exhausted` or
/// `capture_retries_exhausted`).
public struct AttemptBudget: Sendable, Hashable {
    /// Face mismatches left.
    public var attemptsLeft: Int
    /// Liveness and capture-quality failures left.
    public var captureRetriesLeft: Int

    /// Creates a budget.
    public init(attemptsLeft: Int, captureRetriesLeft: Int) {
        self.attemptsLeft = attemptsLeft
        self.captureRetriesLeft = captureRetriesLeft
    }

    /// Whether a budget is spent: the request was denied.
    public var isSpent: Bool { attemptsLeft == 0 || captureRetriesLeft == 0 }
}

/// The authority's answer to an `AttemptReport`: the request's `AttemptBudget`, its counts as top-level fields.
public struct AttemptsRemaining: WireMessage {
    /// Protocol version.
    public var v: Int
    /// The request id.
    public var rid: String
    /// What the request has left.
    public var budget: AttemptBudget

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case v, rid
        case attemptsLeft = "attempts_left"
        case captureRetriesLeft = "capture_retries_left"
    }

    /// Builds the answer.
    public init(v: Int = ProtocolVersion.current, rid: String, budget: AttemptBudget) {
        self.v = v
        self.rid = rid
        self.budget = budget
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        v = try container.decode(Int.self, forKey: .v)
        rid = try container.decode(String.self, forKey: .rid)
        budget = AttemptBudget(attemptsLeft: try container.decode(Int.self, forKey: .attemptsLeft),
                               captureRetriesLeft: try container.decode(Int.self, forKey: .captureRetriesLeft))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(v, forKey: .v)
        try container.encode(rid, forKey: .rid)
        try container.encode(budget.attemptsLeft, forKey: .attemptsLeft)
        try container.encode(budget.captureRetriesLeft, forKey: .captureRetriesLeft)
    }
}
