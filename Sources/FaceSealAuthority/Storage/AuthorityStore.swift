public import FaceSealWire
public import Foundation

/// Everything the authority keeps, behind one interface (SPEC §9). Each method is one transaction:
/// it either stores all it describes or throws an `AuthorityStoreError` and changes nothing.
/// Timestamps (`createdAt`, `updatedAt`, `at`…) are set from the store's injected clock, never taken
/// from the records passed in.
public protocol AuthorityStore: Sendable {
    // MARK: Tenants and management API keys

    /// Creates a tenant. Throws `.conflict(.tenant)` if the id exists.
    func createTenant(_ tenant: TenantRecord) async throws -> TenantRecord
    /// The tenant with `id`, or `.notFound(.tenant)`.
    func tenant(id: String) async throws -> TenantRecord
    /// Every tenant, ordered by id.
    func tenants() async throws -> [TenantRecord]
    /// Replaces a tenant's policy.
    func updateTenantPolicy(tenantID: String, policy: TenantPolicy) async throws -> TenantRecord
    /// Stores a management API key (hash only). Throws `.conflict(.apiKey)` for a duplicate id or hash.
    func createAPIKey(_ key: APIKeyRecord) async throws -> APIKeyRecord
    /// The key whose hash is `keyHash` (revoked keys included: check `revokedAt`), or `nil`.
    func apiKey(hash keyHash: [UInt8]) async throws -> APIKeyRecord?
    /// A tenant's API keys (`nil`: the operator keys), oldest first.
    func apiKeys(tenantID: String?) async throws -> [APIKeyRecord]
    /// Revokes a key (idempotent; keeps the first revocation time).
    func revokeAPIKey(id: String) async throws -> APIKeyRecord

    // MARK: Applications and users

    /// Registers an application. `.conflict(.application)` for a duplicate client id, `.notFound(.tenant)`.
    func createApplication(_ application: ApplicationRecord) async throws -> ApplicationRecord
    /// The application with `clientID`, or `.notFound(.application)`.
    func application(clientID: String) async throws -> ApplicationRecord
    /// A tenant's applications, ordered by client id.
    func applications(tenantID: String) async throws -> [ApplicationRecord]
    /// Replaces an application's mutable fields (everything but client id, tenant and creation time).
    func updateApplication(_ application: ApplicationRecord) async throws -> ApplicationRecord
    /// Creates a user. `.conflict(.user)` for a duplicate subject or an email already used in the tenant.
    func createUser(_ user: UserRecord) async throws -> UserRecord
    /// The user with `subject`, or `.notFound(.user)`.
    func user(subject: String) async throws -> UserRecord
    /// The user of `tenantID` with `email` (exact match), or `.notFound(.user)`.
    func user(tenantID: String, email: String) async throws -> UserRecord
    /// A tenant's users, ordered by email.
    func users(tenantID: String) async throws -> [UserRecord]

    // MARK: Enrolment, devices and device keys

    /// Stores an enrolment invitation. The user and application must be of the invitation's tenant.
    func createInvitation(_ invitation: InvitationRecord) async throws -> InvitationRecord
    /// The invitation with `id`, or `.notFound(.invitation)`.
    func invitation(id: String) async throws -> InvitationRecord
    /// Enrols a device, all or nothing: consumes the invitation, creates the device if new, the enrolment,
    /// both keys, the face token when given (first device), and — when the tenant allows one device per
    /// user — sets the user's keys for the same application on other devices to `replaced`.
    func enrol(_ request: EnrolmentInsert) async throws -> EnrolmentOutcome
    /// Releases a further device's token (docs/PROTOCOL.md §8.1), once, in one transaction: the enrolment must be
    /// `pending`, approved, unreleased and within its window (else `.invitationUnusable`; not yet approved:
    /// `.enrolmentNotActive(status: .pending)`). It and its keys become active, other devices' keys are replaced under
    /// one device per user, and the enrolment's other approval requests expire.
    func releaseEnrolmentToken(enrolmentID: String) async throws -> EnrolmentRelease
    /// Counts a further device's password proof of a pending `password` enrolment: a right one approves it, a wrong one
    /// counts, and the `budget`-th wrong one ends the enrolment (`revoked`). Answers the wrong proofs left.
    func recordPasswordProof(enrolmentID: String, accepted: Bool, budget: Int) async throws -> Int
    /// While an `enrolled_device` enrolment waits, unapproved, inside its window: for every application the user has an
    /// active enrolment at and no pending approval request of this enrolment (it went stale or expired), a fresh one
    /// (ids from `newID`, the earlier binding message, expiring with the window). With a `pendingLimit`, an application
    /// whose pending requests of the user are at the limit is skipped. Answers the requests stored (often none).
    func reissueApprovalRequests(enrolmentID: String, intervalSeconds: Int, pendingLimit: Int?,
                                 newID: @escaping @Sendable () -> String) async throws -> [CIBARequestRecord]
    /// The device with `id`, or `.notFound(.device)`.
    func device(id: String) async throws -> DeviceRecord
    /// The enrolment with `id`, or `.notFound(.enrolment)`.
    func enrolment(id: String) async throws -> EnrolmentRecord
    /// A user's enrolments (all statuses), oldest first.
    func enrolments(subject: String) async throws -> [EnrolmentRecord]
    /// A tenant's enrolments (all statuses), oldest first: the management API's device listing.
    func enrolments(tenantID: String) async throws -> [EnrolmentRecord]
    /// A device's enrolments (all statuses), oldest first.
    func enrolments(deviceID: String) async throws -> [EnrolmentRecord]
    /// The device key `keyID` (any status), or `.notFound(.deviceKey)`.
    func deviceKey(keyID: String) async throws -> DeviceKeyRecord
    /// The device key `keyID` (any status) and the running failure windows of `failureKeys`, in one read: the device
    /// edge's lookup before it checks a signature. `.notFound(.deviceKey)`.
    func deviceKey(keyID: String, failureKeys: [String]) async throws -> (key: DeviceKeyRecord, windows: [String: FailureWindow])
    /// An enrolment's keys: current and superseded, oldest first.
    func deviceKeys(enrolmentID: String) async throws -> [DeviceKeyRecord]
    /// Rotates an active enrolment's keys, make-before-break: the current active keys become `superseded`
    /// (accepted until `overlapUntil`, pointing at their successor), the new keys become active; keys of
    /// an earlier rotation stop being accepted. `replacing` is the key that signed the rotation: it must still be
    /// active inside the transaction (`.deviceKeyNotActive` otherwise), so of two rotations it signed at once one wins.
    func rotateKeys(enrolmentID: String, replacing: String, ambient: NewDeviceKey, userPresent: NewDeviceKey, overlapUntil: Date) async throws -> [DeviceKeyRecord]
    /// Ends an enrolment: it and every key of it get `status` (`revoked`, `terminated` or `replaced`).
    /// Idempotent for an enrolment already in that status.
    func endEnrolment(id: String, status: DeviceKeyStatus) async throws -> EnrolmentRecord
    /// Ends every active enrolment of a device with `status`; returns the enrolments changed.
    func endDevice(id: String, status: DeviceKeyStatus) async throws -> [EnrolmentRecord]

    // MARK: Face tokens

    /// The user's face token, or `.notFound(.faceToken)`.
    func faceToken(subject: String) async throws -> FaceTokenRecord

    // MARK: CIBA requests

    /// Stores a new pending request. `.conflict(.cibaRequest)` for a duplicate id; the client and user
    /// must exist and belong to the request's tenant. With a `pendingLimit`, throws `PendingRequestLimitReached`
    /// when the user already has that many unexpired pending requests of this client (checked and inserted in
    /// one transaction that locks the user, so concurrent requests cannot overshoot it).
    func createRequest(_ request: CIBARequestRecord, pendingLimit: Int?) async throws -> CIBARequestRecord
    /// The request `authReqID`, or `.notFound(.cibaRequest)`.
    func request(authReqID: String) async throws -> CIBARequestRecord
    /// The request `authReqID` with its application and tenant (and the user's face token with `faceToken`), in one
    /// read; `.notFound(.cibaRequest)`.
    func requestContext(authReqID: String, faceToken: Bool) async throws -> RequestContext
    /// Stores a new pending request as `createRequest(_:pendingLimit:)` does and, in the same transaction, queues `link`
    /// for every device with an active enrolment of its user and application (announced to every process at commit).
    func createRequest(_ request: CIBARequestRecord, pendingLimit: Int?, announcing link: String) async throws -> AnnouncedRequest
    /// The user `hint` names in `tenantID`, the tenant, and whether the user has a device with an active enrolment for
    /// `clientID`, in one read (`.notFound(.tenant)`; `.notFound(.user)` when the hint names no user of the tenant).
    func requestAudience(_ hint: UserHint, clientID: String, tenantID: String) async throws -> RequestAudience
    /// Face-token download (SPEC §5.1), in one transaction: the request must be pending and unexpired, and
    /// `keyID` a key of the request's user and application that is active (or the previous key within its rotation
    /// overlap). Returns the token (with the encrypted server share) and records the download against the request
    /// and `keyID` (replacing that key's earlier download for the request). A key of another user or application
    /// gets `.notFound(.cibaRequest)`; an ended key `.deviceKeyNotActive`.
    func downloadFaceToken(authReqID: String, keyID: String, registering replay: JTIRegistration?) async throws -> FaceTokenRecord
    /// The downloads recorded for a request, by key id.
    func tokenDownloads(authReqID: String) async throws -> [TokenDownloadRecord]
    /// Counts a failed face check of a pending, unexpired request (`face_mismatch` against `attemptsMax`,
    /// `capture_retry` against `captureRetriesMax`), reported by `keyID`, which must have downloaded the token for it
    /// (else `.invalidInput`). When a count reaches the tenant's current budget the request is denied
    /// (`attempts_exhausted` / `capture_retries_exhausted`) in the same transaction. Returns what is left.
    func recordFaceCheckFailure(authReqID: String, keyID: String, _ failure: AttemptKind) async throws -> AttemptBudget
    /// Denies a pending request (abort, refusal) with a reason. A repeat with the same reason returns the
    /// stored request; any other non-pending state throws `.requestNotPending`.
    func denyRequest(authReqID: String, reason: String) async throws -> CIBARequestRecord
    /// The completion compare-and-swap (SPEC §5.3): in one transaction, refuses (`.invalidInput`) unless
    /// `keyID` downloaded exactly `expectedGeneration` for the request, then stores the rotated token only if
    /// the current generation equals `expectedGeneration` and marks the request `completed` with its
    /// receipt; otherwise marks the request `stale`. A retry with the same receipt returns the stored
    /// outcome without a second rotation; a different receipt throws `.completionMismatch`.
    func complete(_ completion: CompletionCommit) async throws -> CompletionOutcome
    /// Token-endpoint bookkeeping for `clientID`'s poll: `slowDown` (interval + 5 s) when it came sooner
    /// than the interval after the previous poll, else records the poll (expiring an overdue pending
    /// request). A finished request's poll is answered without a write (nothing reads a finished request's
    /// poll time). A request of another client, an approval request and a browser sign-in's completed request
    /// not yet redeemed (only its code redeems it) are `.notFound(.cibaRequest)`.
    func recordPoll(authReqID: String, clientID: String) async throws -> PollOutcome
    /// Stores the ID token issued for a completed request (first one wins; returns the stored request).
    func storeIDToken(authReqID: String, idToken: String) async throws -> CIBARequestRecord
    /// Moves every pending request past its expiry to `expired` (each audited); returns them as stored.
    func expireOverdueRequests() async throws -> [CIBARequestRecord]
    /// Deletes up to `limit` (1…1,000) finished requests — any state but `pending` — whose expiry passed `retention`
    /// seconds ago or more, oldest expiry first, with their token downloads, queued links and browser sign-in; returns
    /// how many requests it deleted. Their audit events stay. (The retention sweep: `Authority.sweepRequests`.)
    func purgeFinishedRequests(expiredFor retention: TimeInterval, limit: Int) async throws -> Int

    // MARK: Browser sign-ins (authorization code flow)

    /// Stores a new browser sign-in. First removes the caller's application's sign-ins that expired unclaimed (no
    /// request has their id), so unauthenticated pages cannot pile up; then, with a `liveLimit`, throws
    /// `BrowserSignInLimitReached` when the application already has that many unexpired sign-ins.
    func createBrowserSignIn(_ signIn: BrowserSignInRecord, liveLimit: Int?) async throws -> BrowserSignInRecord
    /// The browser sign-in `id`, or `.notFound(.browserSignIn)`.
    func browserSignIn(id: String) async throws -> BrowserSignInRecord
    /// Records the sign-in's one authorization code (its hash) in one transaction; `.conflict(.browserSignIn)` when a
    /// code was issued before.
    func issueBrowserSignInCode(id: String, codeHash: [UInt8], expiresAt: Date) async throws -> BrowserSignInRecord
    /// Spends the code whose hash is `codeHash` (`.notFound(.browserSignIn)` for none): the first call marks it used
    /// and answers `.redeemed`, every later one `.alreadyRedeemed`.
    func redeemBrowserSignInCode(codeHash: [UInt8]) async throws -> CodeRedemption

    // MARK: Device-request replay cache

    /// Remembers a device request's `jti` until `expiresAt`. Returns `true` if it was new, `false` for a
    /// replay. Entries whose time has passed are purged in the same transaction. The operations that take a
    /// `registering` `JTIRegistration` (and `CompletionCommit.replay`) do the same first thing in their own transaction,
    /// and throw `ReplayedRequest`, changing nothing, for a replay.
    func registerJTI(_ jti: String, expiresAt: Date) async throws -> Bool

    // MARK: Rate limits

    /// Counts one failure under each of `keys`, in one transaction, in fixed windows of `window` seconds (a new
    /// window starts with the first failure after the last one ended); returns the windows as counted.
    func countFailures(keys: [String], window: TimeInterval) async throws -> [String: FailureWindow]
    /// The current windows of `keys`, read in one transaction; a key without one, or whose window ended, is absent.
    func failureWindows(keys: [String]) async throws -> [String: FailureWindow]

    // MARK: Link outbox

    /// Queues a link for a device; returns it with its sequence number. Every process observing the store
    /// (`observeQueuedLinks`) hears of it once it is stored.
    func enqueueLink(_ link: OutboxLink) async throws -> OutboxLink
    /// Calls `handler` with the device id of every link queued from now on by any process on this store's database
    /// (PostgreSQL `LISTEN/NOTIFY`; on SQLite, which one process serves, never); returns once it listens. A hint to
    /// read the outbox again, never the link itself; one missed (a lost connection) only delays a long poll to its
    /// deadline.
    func observeQueuedLinks(_ handler: @escaping @Sendable (_ deviceID: String) -> Void) async
    /// A device's unexpired links with a sequence above `afterSequence`, oldest first, at most `limit`.
    func links(deviceID: String, afterSequence: Int64, limit: Int) async throws -> [OutboxLink]
    /// Removes a device's links up to and including `throughSequence` and any expired ones; returns how many.
    func acknowledgeLinks(deviceID: String, throughSequence: Int64) async throws -> Int
    /// A device's unexpired links, oldest first, at most `limit`, removed (with any expired ones) in the same
    /// transaction: a poll's read and acknowledgement together.
    func takeLinks(deviceID: String, limit: Int, registering replay: JTIRegistration?) async throws -> [OutboxLink]

    // MARK: Audit

    /// Appends an audit event; returns it with its sequence number and time.
    func appendAudit(_ event: AuditEvent) async throws -> AuditEvent
    /// A tenant's events (or the operator's, for `nil`), newest first, below `beforeSequence` if given.
    func auditEvents(tenantID: String?, beforeSequence: Int64?, limit: Int) async throws -> [AuditEvent]
    /// Deletes the oldest events, of every tenant, up to `limit` (1…1,000) of them, as long as each was recorded
    /// `retention` seconds ago or more; returns how many it deleted. (The audit retention: `Authority.sweepAuditEvents`.)
    func purgeAuditEvents(olderThan retention: TimeInterval, limit: Int) async throws -> Int

    // MARK: Authority signing keys

    /// Stores a signing key. `.conflict(.signingKey)` for a duplicate key id.
    func addSigningKey(_ key: SigningKeyRecord) async throws -> SigningKeyRecord
    /// Every signing key, oldest first (retired ones included, for `/jwks`).
    func signingKeys() async throws -> [SigningKeyRecord]
    /// Marks a signing key retired (idempotent).
    func retireSigningKey(keyID: String) async throws -> SigningKeyRecord
    /// Stores a new device-response key with its rollover statement, in one transaction that retires the active one and
    /// erases its private half. `current` must be the active device-response key's id (nil: none stored yet, the
    /// master-derived key signs), else another rotation came first: `.conflict(.signingKey)`.
    func rotateDeviceResponseKey(_ key: SigningKeyRecord, replacing current: String?) async throws -> SigningKeyRecord

    // MARK: Wrapped secrets

    /// Re-wraps every secret still wrapped the old way (`wrap_version` 0): each face token's encrypted server share
    /// through `share`, each signing key's encrypted private key through `signingKey`, and marks them version 1, in
    /// one transaction (a second process finds nothing left). Returns how many were re-wrapped.
    func rewrapLegacySecrets(share: @escaping @Sendable (FaceTokenRecord) throws -> [UInt8],
                             signingKey: @escaping @Sendable (SigningKeyRecord) throws -> [UInt8]) async throws -> Int

    // MARK: Deletion and invitation life cycle (docs/PROTOCOL.md §11)

    /// Deletes a user, in one transaction: erases the face token (token, server share), revokes every enrolment and
    /// its keys, denies the user's pending requests (`user_deleted`), cancels unused invitations, drops the user's
    /// queued links, clears the requests' messages and ID tokens, frees the email, strips the email from earlier audit
    /// events, and appends the `user.deleted` tombstone (`actor`). The subject stays, unusable, for the records naming it.
    func deleteUser(subject: String, actor: String?) async throws -> DeletionSummary
    /// Deletes an application: terminates its enrolments, denies its pending requests (`application_deleted`), cancels
    /// its unused invitations; the client id never authenticates again and is not reused. Appends `application.deleted`.
    func deleteApplication(clientID: String, actor: String?) async throws -> DeletionSummary
    /// Deletes a tenant that has no users and no applications left (else `.conflict(.tenant)`): revokes its API keys
    /// and appends `tenant.deleted`. The id is not reused.
    func deleteTenant(id: String, actor: String?) async throws -> DeletionSummary
    /// A tenant's invitations (of `subject`, of `clientID`, in `status` when given), newest first, at most `limit`.
    func invitations(tenantID: String, subject: String?, clientID: String?, status: InvitationStatus?, limit: Int) async throws -> [InvitationRecord]
    /// Cancels an unused invitation (idempotent for a cancelled one); a used one is `.invitationUnusable`.
    func cancelInvitation(id: String) async throws -> InvitationRecord
    /// Records that a device of the request's user opened a pending request (`request.delivered` in the audit, once,
    /// with `deviceID`). Returns whether this was the first time. A request that is no longer pending, or past its
    /// expiry, throws `.requestNotPending` (with `.expired` for the latter).
    func markDelivered(authReqID: String, deviceID: String, registering replay: JTIRegistration?) async throws -> Bool

    // MARK: Webhooks

    /// Registers (or replaces) the tenant's push endpoint; the tenant must exist.
    func setWebhook(_ webhook: WebhookRecord) async throws -> WebhookRecord
    /// The tenant's push endpoint, if it registered one.
    func webhook(tenantID: String) async throws -> WebhookRecord?
    /// Removes the tenant's push endpoint; false when it had none.
    func deleteWebhook(tenantID: String) async throws -> Bool

    // MARK: Operations

    /// The newest schema version applied to the database (a query that also proves it is reachable).
    func schemaVersion() async throws -> Int
    /// Pending requests not past their expiry, over every process sharing the database.
    func pendingRequestCount() async throws -> Int
    /// Store operations that failed with a database error (unreachable, refused, malformed rows) since it opened.
    var databaseErrorCount: UInt64 { get }

    // MARK: Life cycle

    /// Closes the store's connections; later calls fail with `.unavailable`.
    func close() async
}

extension AuthorityStore {
    /// `downloadFaceToken(authReqID:keyID:registering:)` for a request whose `jti` the caller registered.
    public func downloadFaceToken(authReqID: String, keyID: String) async throws -> FaceTokenRecord {
        try await downloadFaceToken(authReqID: authReqID, keyID: keyID, registering: nil)
    }

    /// `markDelivered(authReqID:deviceID:registering:)` for a request whose `jti` the caller registered.
    public func markDelivered(authReqID: String, deviceID: String) async throws -> Bool {
        try await markDelivered(authReqID: authReqID, deviceID: deviceID, registering: nil)
    }

    /// Stores a new pending request without a limit on the user's pending requests.
    public func createRequest(_ request: CIBARequestRecord) async throws -> CIBARequestRecord {
        try await createRequest(request, pendingLimit: nil)
    }
}
