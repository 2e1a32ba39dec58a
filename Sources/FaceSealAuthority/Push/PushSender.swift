import Foundation

/// A new request's link on its way to the user's phones.
struct LinkPush: Sendable {
    /// The signed link (compact JWS).
    let link: String
    /// The request it is for.
    let request: CIBARequestRecord
    /// The devices with an active enrolment of the request's user and application, sorted.
    let deviceIDs: [String]
}

/// One way of getting links to phones (SPEC §4.6). The authority hands every new request's link to each sender in
/// turn, inside the backchannel request: a sender must return at once and do any network work in a task of its own,
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
            _ = try await authority.store.enqueueLink(OutboxLink(deviceID: deviceID, link: push.link, authReqID: push.request.authReqID,
                                                                 expiresAt: push.request.expiresAt))
            OutboxNotifier.shared.wake(deviceID: deviceID)
        }
    }
}
