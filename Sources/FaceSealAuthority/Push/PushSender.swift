import Foundation

/// A new request's link, or a notice (docs/PROTOCOL.md §8.1), on its way to the user's phones.
struct LinkPush: Sendable {
    /// What is pushed: `login` and `ceremony` are a request's link, `notice` a signed notice that answers nothing.
    enum Kind: String, Codable, Sendable { case login, ceremony, notice }

    /// The signed link or notice (compact JWS).
    let link: String
    let kind: Kind
    let tenantID: String
    /// The application whose devices get it.
    let clientID: String
    /// The user.
    let subject: String
    /// The request a link is for; nil for a notice.
    let authReqID: String?
    /// Until when it waits (the request's expiry, the notice's `exp`).
    let expiresAt: Date
    /// The devices with an active enrolment of the user and application, sorted.
    let deviceIDs: [String]
    /// The tenant's webhook when the request's reads found it already (`.some(nil)`: it has none); nil: not read yet.
    let knownWebhook: WebhookRecord??

    /// A request's link.
    init(link: String, request: CIBARequestRecord, deviceIDs: [String], knownWebhook: WebhookRecord?? = nil) {
        self.init(link: link, kind: request.kind == .ceremony ? .ceremony : .login, tenantID: request.tenantID, clientID: request.clientID,
                  subject: request.subject, authReqID: request.authReqID, expiresAt: request.expiresAt, deviceIDs: deviceIDs,
                  knownWebhook: knownWebhook)
    }

    init(link: String, kind: Kind, tenantID: String, clientID: String, subject: String, authReqID: String?, expiresAt: Date,
         deviceIDs: [String], knownWebhook: WebhookRecord?? = nil) {
        self.link = link
        self.kind = kind
        self.tenantID = tenantID
        self.clientID = clientID
        self.subject = subject
        self.authReqID = authReqID
        self.expiresAt = expiresAt
        self.deviceIDs = deviceIDs
        self.knownWebhook = knownWebhook
    }
}

/// One way of getting links to phones (SPEC §4.6). The authority hands every new request's link (and every notice) to
/// each sender in turn, inside the request that made it: a sender must return at once and do any network work in a task of its own,
/// so no sender can delay or fail the application's request for another reason than the store.
protocol PushSender: Sendable {
    /// Hands `push` on. Throws only what the backchannel request must fail with (a store failure).
    func push(_ push: LinkPush, from authority: Authority) async throws
}

/// The default sender, which works on loopback: the link outbox. One entry per device, kept until the request
/// expires; the device's long poll (`GET /device/v1/outbox`) is woken, here and — through the store's
/// `LISTEN/NOTIFY` — in every other process on the same PostgreSQL database.
struct OutboxPushSender: PushSender {
    func push(_ push: LinkPush, from authority: Authority) async throws {
        for deviceID in push.deviceIDs {
            _ = try await authority.store.enqueueLink(OutboxLink(deviceID: deviceID, link: push.link, authReqID: push.authReqID,
                                                                 expiresAt: push.expiresAt))
            authority.outbox.wake(deviceID: deviceID)
        }
    }
}
