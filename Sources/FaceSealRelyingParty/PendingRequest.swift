public import Foundation
public import FaceSealCrypto
public import FaceSealWire
import Synchronization

/// What an application asks the user for.
public enum RequestKind: Sendable, Equatable, CustomStringConvertible {
    /// A sign-in (no face-PKI operation): the result is the ID token.
    case signIn
    /// The user's public keys for the context (pinned on delivery).
    case publicKeys
    /// An ML-DSA-65 signature over `data` by the user's key for the context.
    case sign(data: [UInt8])
    /// The shared secret of a ciphertext the relying party encapsulates to the user's pinned ML-KEM-768 key.
    case decapsulate

    /// The wire `pki_kind`, nil for a sign-in.
    public var pkiKind: PKIKind? {
        switch self {
        case .signIn: nil
        case .publicKeys: .publicKeys
        case .sign: .sign
        case .decapsulate: .decapsulate
        }
    }

    /// The wire kind, or `login`.
    public var description: String { pkiKind?.rawValue ?? "login" }
}

/// What the relying party expects a delivery to prove, remembered with the pending request.
public enum ExpectedResult: Sendable {
    /// A sign-in: no delivery is expected.
    case signIn
    /// Public keys, signed with the delivered ML-DSA-65 key.
    case publicKeys
    /// A signature over `data` (empty ML-DSA context) by the pinned key.
    case signature(data: [UInt8])
    /// The shared secret the relying party encapsulated (compared in constant time).
    case sharedSecret(SecretBytes)

    /// The wire `pki_kind`, nil for a sign-in.
    public var pkiKind: PKIKind? {
        switch self {
        case .signIn: nil
        case .publicKeys: .publicKeys
        case .signature: .sign
        case .sharedSecret: .decapsulate
        }
    }
}

/// A request the relying party started and has not finished: everything needed to check its delivery,
/// its ping and its ID token.
public struct PendingRequest: Sendable {
    /// The authority's request id.
    public var authReqId: String
    /// The user as sent in `login_hint`.
    public var user: String
    /// The key context (`pki_context`), empty for a sign-in.
    public var context: String
    /// The binding message shown to the user.
    public var bindingMessage: String
    /// The `client_notification_token` sent with the request: the bearer of its delivery and ping.
    public var bearer: SecretBytes
    /// What a delivery must prove.
    public var expected: ExpectedResult
    /// When the authority forgets the request.
    public var expiresAt: Date
    /// The polling interval the authority asked for, seconds.
    public var interval: Int

    /// Builds a pending request.
    public init(authReqId: String, user: String, context: String, bindingMessage: String, bearer: SecretBytes,
                expected: ExpectedResult, expiresAt: Date, interval: Int) {
        self.authReqId = authReqId
        self.user = user
        self.context = context
        self.bindingMessage = bindingMessage
        self.bearer = bearer
        self.expected = expected
        self.expiresAt = expiresAt
        self.interval = interval
    }

    /// The pin this request's keys live under.
    public var pinKey: PinKey { PinKey(user: user, context: context) }
}

/// The result a delivery proved, as accepted.
public enum DeliveredResult: Sendable {
    /// The delivered public keys (now pinned).
    case publicKeys(PinnedKeys)
    /// A signature over the requested data that verified with the pinned key.
    case signature([UInt8])
    /// The shared secret, equal to the one the relying party encapsulated.
    case sharedSecret(SecretBytes)
}

/// A delivery the relying party accepted: its result and the SHA-256 of the exact body (for the receipt check).
public struct AcceptedDelivery: Sendable {
    /// SHA-256 of the body bytes.
    public var bodySHA256: [UInt8]
    /// The result.
    public var result: DeliveredResult
    /// The `key_id` of the key that signed the delivery.
    public var keyID: String
    /// Whether this delivery created the pin (so a failed receipt check can take it back).
    public var createdPin: Bool
    /// What was checked, one line each, in order.
    public var checks: [String]

    /// Builds an accepted delivery.
    public init(bodySHA256: [UInt8], result: DeliveredResult, keyID: String, createdPin: Bool, checks: [String]) {
        self.bodySHA256 = bodySHA256
        self.result = result
        self.keyID = keyID
        self.createdPin = createdPin
        self.checks = checks
    }
}

/// Where the relying party keeps its pending requests. `recordDelivery` must be atomic: exactly one
/// delivery is ever accepted per request.
public protocol PendingRequestStore: Sendable {
    /// Remembers a new request.
    func insert(_ request: PendingRequest) async throws
    /// The request with this id, and its accepted delivery if any.
    func request(_ authReqId: String) async throws -> (request: PendingRequest, delivery: AcceptedDelivery?)?
    /// Records `delivery` if the request exists and has none yet; false otherwise.
    func recordDelivery(_ delivery: AcceptedDelivery, for authReqId: String) async throws -> Bool
    /// Forgets the request (finished, expired or abandoned).
    func remove(_ authReqId: String) async throws
}

/// Pending requests kept in memory.
public final class InMemoryPendingRequestStore: PendingRequestStore {
    private struct Entry {
        var request: PendingRequest
        var delivery: AcceptedDelivery?
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let clock: any WallClock

    /// How long after its expiry an abandoned request (one nobody awaited) is kept.
    public static let retentionAfterExpiry: TimeInterval = 3600

    /// An empty store; `clock` decides when abandoned requests are dropped.
    public init(clock: any WallClock = SystemWallClock()) {
        self.clock = clock
    }

    /// Remembers a new request (and forgets requests expired for more than an hour).
    public func insert(_ request: PendingRequest) async throws {
        let cutoff = clock.now().addingTimeInterval(-Self.retentionAfterExpiry)
        entries.withLock { entries in
            entries = entries.filter { $0.value.request.expiresAt > cutoff }
            entries[request.authReqId] = Entry(request: request)
        }
    }

    /// The request with this id, and its accepted delivery if any.
    public func request(_ authReqId: String) async throws -> (request: PendingRequest, delivery: AcceptedDelivery?)? {
        entries.withLock { entries in entries[authReqId].map { ($0.request, $0.delivery) } }
    }

    /// Records `delivery` if the request exists and has none yet (atomically); false otherwise.
    public func recordDelivery(_ delivery: AcceptedDelivery, for authReqId: String) async throws -> Bool {
        entries.withLock { entries in
            guard var entry = entries[authReqId], entry.delivery == nil else { return false }
            entry.delivery = delivery
            entries[authReqId] = entry
            return true
        }
    }

    /// Forgets the request.
    public func remove(_ authReqId: String) async throws {
        // Dropping the entry releases its SecretBytes, which zero themselves.
        _ = entries.withLock { $0.removeValue(forKey: authReqId) }
    }

    /// Number of pending requests.
    public var count: Int { entries.withLock { $0.count } }
    /// Number of requests with an accepted delivery.
    public var deliveredCount: Int { entries.withLock { $0.values.filter { $0.delivery != nil }.count } }
}
