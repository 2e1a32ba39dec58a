public import FaceSealWire
public import Foundation

/// A user's face token as the authority stores it (SPEC §5.1): one per user.
public struct FaceTokenRecord: Sendable, Hashable {
    /// The user the token belongs to.
    public var subject: String
    /// The token id (part of the sealing salt).
    public var tokenID: String
    /// The generation; every completion stores generation + 1 (SPEC §5.3).
    public var generation: Int64
    /// The cleartext header, exact bytes (authenticated as AAD, so never re-encoded).
    public var headerJSON: [UInt8]
    /// The AES-256-GCM sealed body.
    public var sealedBody: [UInt8]
    /// The server share, encrypted under the authority's master key (its own column).
    public var encryptedServerShare: [UInt8]
    /// When this generation was stored.
    public var updatedAt: Date
    /// The public key of the token's password verifier, encrypted like the share (docs/PROTOCOL.md §8.1); nil for a
    /// token without a password or one whose verifier no device has uploaded yet. A rotation without one keeps it.
    public var encryptedPasswordVerifier: [UInt8]?

    /// Creates a face token record; `updatedAt` is set by the store.
    public init(subject: String, tokenID: String, generation: Int64, headerJSON: [UInt8], sealedBody: [UInt8], encryptedServerShare: [UInt8],
                updatedAt: Date = Date(timeIntervalSince1970: 0), encryptedPasswordVerifier: [UInt8]? = nil) {
        self.encryptedPasswordVerifier = encryptedPasswordVerifier
        self.subject = subject
        self.tokenID = tokenID
        self.generation = generation
        self.headerJSON = headerJSON
        self.sealedBody = sealedBody
        self.encryptedServerShare = encryptedServerShare
        self.updatedAt = updatedAt
    }
}

/// A sign-in or a face-PKI ceremony.
public enum CIBARequestKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// No `pki_kind`: a sign-in.
    case login
    /// A face-PKI ceremony (`public_keys`, `sign`, `decapsulate`).
    case ceremony
}

/// Where a CIBA request stands.
public enum CIBARequestState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Waiting for the device.
    case pending
    /// The device completed it; the rotated token is stored; the ID token can be issued.
    case completed
    /// The device aborted it or the user refused (`access_denied`).
    case denied
    /// It outlived `expiresAt` (`expired_token`).
    case expired
    /// Its completion lost the token rotation race (`stale_token`).
    case stale
}

/// A CIBA backchannel authentication request.
public struct CIBARequestRecord: Sendable, Hashable {
    /// The `auth_req_id` (≥ 128 bits of entropy, chosen by the caller).
    public var authReqID: String
    /// Tenant of the application and user.
    public var tenantID: String
    /// The requesting application.
    public var clientID: String
    /// The user asked.
    public var subject: String
    /// Sign-in or ceremony.
    public var kind: CIBARequestKind
    /// `public_keys` | `sign` | `decapsulate` for a ceremony.
    public var pkiKind: String?
    /// Opaque context (≤ 256 bytes).
    public var pkiContext: [UInt8]?
    /// The message to sign or the ML-KEM ciphertext.
    public var pkiData: [UInt8]?
    /// The binding message shown on both screens.
    public var bindingMessage: String?
    /// The bearer the device presents to the delivery endpoint and the authority to the ping endpoint.
    public var clientNotificationToken: String?
    /// The `scope` requested.
    public var scope: String
    /// Where it stands.
    public var state: CIBARequestState
    /// When it was created.
    public var createdAt: Date
    /// When it expires.
    public var expiresAt: Date
    /// The minimum polling interval in seconds (raised by 5 on every `slow_down`).
    public var intervalSeconds: Int
    /// When the application last polled the token endpoint.
    public var lastPolledAt: Date?
    /// Face mismatches reported so far.
    public var attempts: Int
    /// Liveness and capture-quality failures reported so far.
    public var captureRetries: Int
    /// The token generation the completion stored (completed) or tried to store (stale).
    public var stagedGeneration: Int64?
    /// SHA-256 of the exact delivery body (the receipt), set at completion of a ceremony.
    public var receiptSHA256: [UInt8]?
    /// Whether the completed token needs a password (from its stored header, never the device's word).
    public var passwordUsed: Bool
    /// The ID token issued for it, once issued.
    public var idToken: String?
    /// Why it was denied (`attempts_exhausted`, `user_cancelled`, …).
    public var denyReason: String?
    /// When it was completed, denied, expired or went stale.
    public var finishedAt: Date?
    /// An approval request (docs/PROTOCOL.md §8.1): the pending further-device enrolment its completion approves and
    /// its denial ends. No application ever gets an answer for it.
    public var approvesEnrolment: String?

    /// Creates a pending request; `createdAt` is set by the store on insert.
    public init(
        authReqID: String, tenantID: String, clientID: String, subject: String, kind: CIBARequestKind,
        pkiKind: String? = nil, pkiContext: [UInt8]? = nil, pkiData: [UInt8]? = nil,
        bindingMessage: String? = nil, clientNotificationToken: String? = nil, scope: String = "openid",
        expiresAt: Date, intervalSeconds: Int = 5,
        state: CIBARequestState = .pending, createdAt: Date = Date(timeIntervalSince1970: 0),
        lastPolledAt: Date? = nil, attempts: Int = 0, captureRetries: Int = 0, stagedGeneration: Int64? = nil, receiptSHA256: [UInt8]? = nil, passwordUsed: Bool = false, idToken: String? = nil,
        denyReason: String? = nil, finishedAt: Date? = nil, approvesEnrolment: String? = nil
    ) {
        self.approvesEnrolment = approvesEnrolment
        self.authReqID = authReqID
        self.tenantID = tenantID
        self.clientID = clientID
        self.subject = subject
        self.kind = kind
        self.pkiKind = pkiKind
        self.pkiContext = pkiContext
        self.pkiData = pkiData
        self.bindingMessage = bindingMessage
        self.clientNotificationToken = clientNotificationToken
        self.scope = scope
        self.state = state
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.intervalSeconds = intervalSeconds
        self.lastPolledAt = lastPolledAt
        self.attempts = attempts
        self.captureRetries = captureRetries
        self.stagedGeneration = stagedGeneration
        self.receiptSHA256 = receiptSHA256
        self.passwordUsed = passwordUsed
        self.idToken = idToken
        self.denyReason = denyReason
        self.finishedAt = finishedAt
    }
}

/// One face-token download: which key downloaded which generation for a request (SPEC §4.2). A key's later
/// download for the same request replaces its earlier one.
public struct TokenDownloadRecord: Sendable, Hashable {
    /// The request.
    public var authReqID: String
    /// The device key that downloaded (the user-present key).
    public var keyID: String
    /// The generation it received: the only one its completion may name as `expectedGeneration`.
    public var generation: Int64
    /// When.
    public var downloadedAt: Date

    /// Creates a download record.
    public init(authReqID: String, keyID: String, generation: Int64, downloadedAt: Date) {
        self.authReqID = authReqID
        self.keyID = keyID
        self.generation = generation
        self.downloadedAt = downloadedAt
    }
}

/// A completion as the store commits it (SPEC §4.4 step 2, §5.3). (Named apart from FaceSealWire's
/// `CompletionRequest`, the message the device posts, from which the device API builds this.)
public struct CompletionCommit: Sendable, Hashable {
    /// The request being completed.
    public var authReqID: String
    /// The device key that signed the completion: it must have downloaded `expectedGeneration` for this request.
    public var keyID: String
    /// The generation the device downloaded; the rotation is stored only if it is still current.
    public var expectedGeneration: Int64
    /// The re-sealed token: generation `expectedGeneration + 1`, same subject and token id.
    public var rotatedToken: FaceTokenRecord
    /// SHA-256 of the exact delivery body: required for a ceremony; a sign-in has no delivery and may carry none.
    public var receiptSHA256: [UInt8]?
    /// Whether the stored token needs a password (the ID token's `amr` then carries `pwd`).
    public var passwordUsed: Bool
    /// The signed device request's `jti`, remembered in the completion's transaction (nil: the caller registered it).
    public var replay: JTIRegistration?

    /// Creates a completion.
    public init(authReqID: String, keyID: String, expectedGeneration: Int64, rotatedToken: FaceTokenRecord, receiptSHA256: [UInt8]?,
                passwordUsed: Bool = false) {
        self.authReqID = authReqID
        self.keyID = keyID
        self.expectedGeneration = expectedGeneration
        self.rotatedToken = rotatedToken
        self.receiptSHA256 = receiptSHA256
        self.passwordUsed = passwordUsed
    }
}

/// The stored outcome of a completion. A retry with the same receipt returns the same outcome.
public enum CompletionOutcome: Sendable, Hashable {
    /// The rotation was stored and the request is `completed`.
    case completed(CIBARequestRecord)
    /// The token's generation had moved on: nothing stored but the request's `stale` state (`stale_token`).
    case stale(CIBARequestRecord)

    /// The request as stored after the completion.
    public var request: CIBARequestRecord {
        switch self {
        case .completed(let request), .stale(let request):
            return request
        }
    }
}

extension AttemptBudget {
    /// The budget of `request` under `policy` (never below 0, also after the policy was lowered).
    public init(_ request: CIBARequestRecord, policy: TenantPolicy) {
        self.init(attemptsLeft: max(0, policy.attemptsMax - request.attempts),
                  captureRetriesLeft: max(0, policy.captureRetriesMax - request.captureRetries))
    }
}

/// What a token-endpoint poll found (CIBA Core §7.3, §11).
public enum PollOutcome: Sendable, Hashable {
    /// Polled faster than the interval: answer `slow_down`; the interval was raised by 5 s.
    case slowDown(newIntervalSeconds: Int)
    /// The poll was recorded; answer from the request's state (pending → `authorization_pending`, …).
    case recorded(CIBARequestRecord)
    /// The request was pending past its expiry and this poll moved it to `expired` (answer `expired_token`): the one
    /// place its end is counted, whichever other poll or sweep later finds it expired.
    case expired(CIBARequestRecord)
}

/// Whom a new request names (`requestAudience`).
public enum UserHint: Sendable, Hashable {
    /// A `login_hint`: the tenant's user with this email, else the tenant's user with this subject.
    case loginHint(String)
    /// A user already identified (by an `id_token_hint`).
    case subject(String)
}

/// The user a new request names, their tenant, and whether they have a device with an active enrolment for the client.
public struct RequestAudience: Sendable, Hashable {
    /// The user's subject.
    public var subject: String
    /// The tenant.
    public var tenant: TenantRecord
    /// Whether a device of the user has an active enrolment for the client (else nobody could answer the request).
    public var hasActiveDevice: Bool
    /// The tenant's push endpoint, if it registered one (read with the tenant, for the request's link).
    public var webhook: WebhookRecord?
}

/// A request with the records a device step decides on, read in one transaction.
public struct RequestContext: Sendable, Hashable {
    /// The request.
    public var request: CIBARequestRecord
    /// Its application.
    public var application: ApplicationRecord
    /// Its tenant (the policy).
    public var tenant: TenantRecord
    /// The user's face token, when asked for (nil also when the user has none).
    public var faceToken: FaceTokenRecord?
}

/// A new request as stored with its link queued (`createRequest(_:pendingLimit:announcing:)`).
public struct AnnouncedRequest: Sendable, Hashable {
    /// The stored request.
    public var request: CIBARequestRecord
    /// The devices whose outbox holds its link (every device with an active enrolment of the user and application).
    public var deviceIDs: [String]
}

/// A device request's `jti` to remember in the replay cache until `expiresAt`, inside the transaction of the step it
/// signed: the step and its replay check commit together, and a replay (`ReplayedRequest`) changes nothing.
public struct JTIRegistration: Sendable, Hashable {
    /// The request's `jti`.
    public var jti: String
    /// When the entry may be forgotten (the request's `iat` is then refused as stale).
    public var expiresAt: Date

    /// Creates a registration.
    public init(jti: String, expiresAt: Date) {
        self.jti = jti
        self.expiresAt = expiresAt
    }
}

/// The `jti` of a `JTIRegistration` was seen before: the transaction was rolled back.
public struct ReplayedRequest: Error, Sendable, Equatable {
    /// The `jti`.
    public let jti: String
}
