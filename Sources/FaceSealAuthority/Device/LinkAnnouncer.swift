import FaceSealHTTP
import FaceSealWire
import Foundation

extension Authority {
    /// Hands a new request's link to every push sender (SPEC §4.6) for the devices with an active enrolment of the
    /// request's user and application.
    func announce(link: String, for request: CIBARequestRecord) async throws {
        let devices = Set(try await store.enrolments(subject: request.subject)
            .filter { $0.status == .active && $0.clientID == request.clientID }
            .map(\.deviceID))
        let push = LinkPush(link: link, request: request, deviceIDs: devices.sorted())
        for sender in pushSenders { try await sender.push(push, from: self) }
    }

    /// `announce(link:for:)` for a request stored together with its outbox entries
    /// (`createRequest(_:pendingLimit:announcing:)`): the outbox sender's part is done but waking the polls; every other
    /// sender gets the link, with the tenant's webhook as the request's audience read found it.
    func announceQueued(_ stored: AnnouncedRequest, link: String, webhook: WebhookRecord?) async throws {
        for deviceID in stored.deviceIDs { outbox.wake(deviceID: deviceID) }
        let push = LinkPush(link: link, request: stored.request, deviceIDs: stored.deviceIDs, knownWebhook: .some(webhook))
        for sender in pushSenders where !(sender is OutboxPushSender) { try await sender.push(push, from: self) }
    }

    /// Makes links queued by other authority processes on the same database wake this process's long polls too
    /// (PostgreSQL `LISTEN/NOTIFY`; nothing to do on SQLite). Returns once it listens: `faceseal serve` calls it
    /// before it announces its URL.
    public func wakeOnLinksQueuedElsewhere() async {
        await store.observeQueuedLinks { [outbox] in outbox.wake(deviceID: $0) }
    }

    /// The most links one poll returns.
    static let outboxBatch = 100

    /// The long poll's `wait=N` (0…`outboxMaximumWait` s, 30 by default; absent: 0), the only query parameter of a waiting read.
    func waitSeconds(_ request: HTTPRequest) throws -> Int {
        guard request.query.items.allSatisfy({ $0.name == "wait" }), request.query.values(for: "wait").count <= 1 else {
            throw DeviceFailure.invalidRequest("the query is at most wait=<seconds>")
        }
        guard let text = request.query["wait"] else { return 0 }
        let maximum = configuration.outboxMaximumWait
        guard text.utf8.count <= String(maximum).utf8.count, let seconds = Int(text), (0...maximum).contains(seconds) else {
            throw DeviceFailure.invalidRequest("wait is 0…\(maximum) seconds")
        }
        return seconds
    }

    /// `GET /device/v1/outbox?wait=N`: the links queued for the signing key's device. Answers at once when
    /// there are some, else waits up to N seconds (0–30) for one to be announced; the links returned are
    /// acknowledged (removed). Once the process drains it answers at once (no links: ask again).
    func pollOutbox(device: AuthenticatedDevice, request: HTTPRequest) async throws -> OutboxResponse {
        let wait = try waitSeconds(request)
        let deviceID = device.key.deviceID
        let subscription = outbox.subscribe(deviceID: deviceID, lifecycle: lifecycle)
        defer { subscription.cancel() }
        // A read first (no write for an empty outbox), then the read and its acknowledgement in one transaction.
        var links: [OutboxLink] = []
        if try await !store.links(deviceID: deviceID, afterSequence: 0, limit: 1).isEmpty {
            links = try await store.takeLinks(deviceID: deviceID, limit: Self.outboxBatch, registering: device.replay?.claim())
        } else if wait > 0, await subscription.wait(upTo: .seconds(wait)) {
            links = try await store.takeLinks(deviceID: deviceID, limit: Self.outboxBatch, registering: device.replay?.claim())
        }
        return OutboxResponse(links: links.map(\.link))
    }
}
