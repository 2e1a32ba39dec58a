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

    /// Makes links queued by other authority processes on the same database wake this process's long polls too
    /// (PostgreSQL `LISTEN/NOTIFY`; nothing to do on SQLite). Returns once it listens: `faceseal serve` calls it
    /// before it announces its URL.
    public func wakeOnLinksQueuedElsewhere() async {
        await store.observeQueuedLinks { OutboxNotifier.shared.wake(deviceID: $0) }
    }

    /// The longest long poll, seconds.
    static let outboxMaximumWait = 30
    /// The most links one poll returns.
    static let outboxBatch = 100

    /// The long poll's `wait=N` (0…30 s; absent: 0), the only query parameter of a waiting read.
    static func waitSeconds(_ request: HTTPRequest) throws -> Int {
        guard request.query.items.allSatisfy({ $0.name == "wait" }), request.query.values(for: "wait").count <= 1 else {
            throw DeviceFailure.invalidRequest("the query is at most wait=<seconds>")
        }
        guard let text = request.query["wait"] else { return 0 }
        guard text.utf8.count <= 2, let seconds = Int(text), (0...Self.outboxMaximumWait).contains(seconds) else {
            throw DeviceFailure.invalidRequest("wait is 0…\(Self.outboxMaximumWait) seconds")
        }
        return seconds
    }

    /// `GET /device/v1/outbox?wait=N`: the links queued for the signing key's device. Answers at once when
    /// there are some, else waits up to N seconds (0–30) for one to be announced; the links returned are
    /// acknowledged (removed). Once the process drains it answers at once (no links: ask again).
    func pollOutbox(device: AuthenticatedDevice, request: HTTPRequest) async throws -> OutboxResponse {
        let wait = try Self.waitSeconds(request)
        let deviceID = device.key.deviceID
        let subscription = OutboxNotifier.shared.subscribe(deviceID: deviceID, lifecycle: lifecycle)
        defer { subscription.cancel() }
        var links = try await store.links(deviceID: deviceID, afterSequence: 0, limit: Self.outboxBatch)
        if links.isEmpty && wait > 0 {
            if await subscription.wait(upTo: .seconds(wait)) {
                links = try await store.links(deviceID: deviceID, afterSequence: 0, limit: Self.outboxBatch)
            }
        }
        if let last = links.last {
            _ = try await store.acknowledgeLinks(deviceID: deviceID, throughSequence: last.sequence)
        }
        return OutboxResponse(links: links.map(\.link))
    }
}
