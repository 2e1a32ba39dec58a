import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation
import Synchronization

/// What a webhook receives for each new request (docs/PROTOCOL.md, "Webhook push"): enough to route the link to the
/// user's phones, nothing more (no binding message, no PKI data: the device reads those, signed, from the authority).
struct WebhookPayload: Codable, Sendable {
    var v = 1
    /// The same for every attempt of one link: the receiver's idempotency key.
    var deliveryID: String
    var tenantID: String
    var clientID: String
    /// The user, by the subject the management API knows.
    var sub: String
    /// The user's devices enrolled for the application (the outbox's recipients).
    var deviceIDs: [String]
    /// `login`, `ceremony`, or `notice` (a further device added without an enrolled device's approval).
    var kind: LinkPush.Kind
    /// The signed link or notice, as the device takes it.
    var link: String
    /// The same link as `<issuer>/l/<JWS>`; absent for a notice, which is no link.
    var universalLink: String?
    var expiresAt: Int64

    enum CodingKeys: String, CodingKey {
        case v, sub, kind, link
        case deliveryID = "delivery_id"
        case tenantID = "tenant_id"
        case clientID = "client_id"
        case deviceIDs = "device_ids"
        case universalLink = "universal_link"
        case expiresAt = "expires_at"
    }
}

/// The webhook signature: `FaceSeal-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." ‖ body)>`, the
/// key being the secret's ASCII bytes exactly as the management API showed it (`whsec_…`).
enum WebhookSignature {
    /// The header carrying the signature.
    static let header = "FaceSeal-Signature"
    /// The header carrying the delivery id.
    static let deliveryHeader = "FaceSeal-Delivery"

    static func value(body: [UInt8], timestamp: Int64, secret: SymmetricKey) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array("\(timestamp).".utf8) + body, using: secret)
        return "t=\(timestamp),v1=" + mac.bytes.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}

/// Seals webhook secrets for the store: AES-256-GCM under the webhook-secret wrapping key, bound to the tenant by
/// associated data so a sealed secret cannot be moved to another tenant's row.
enum WebhookSecretSeal {
    static func associatedData(tenantID: String) -> [UInt8] { Array("faceseal/webhook-secret/v1\u{0}\(tenantID)".utf8) }

    static func seal(_ secret: SecretBytes, tenantID: String, key: SymmetricKey) throws -> [UInt8] {
        let box = try secret.withUnsafeBytes { try AES.GCM.seal($0, using: key, authenticating: associatedData(tenantID: tenantID)) }
        return [UInt8](box.combined)
    }

    static func open(_ record: WebhookRecord, key: SymmetricKey) throws -> SecretBytes {
        let box = try AES.GCM.SealedBox(combined: record.encryptedSecret)
        return try AES.GCM.openSecret(box, using: key, authenticating: associatedData(tenantID: record.tenantID))
    }
}

/// The second push sender: POSTs each link to the tenant's registered endpoint, signed, retried with backoff
/// (`WebhookPolicy`) in a task of its own until a 2xx, a permanent refusal, the last attempt or the request's expiry.
/// Every attempt is counted in the metrics; the final outcome goes to the tenant's audit log and the event log.
/// Deliveries live in this process: a restart drops the ones still retrying (the outbox still has the link).
final class WebhookPushSender: PushSender {
    let policy: WebhookPolicy
    private let client: HTTPClient
    private let running = Mutex<(next: UInt64, tasks: [UInt64: Task<Void, Never>])>((0, [:]))

    /// A sender connecting to `destinations` (`AuthorityConfiguration.callbackDestinations`).
    init(policy: WebhookPolicy, destinations: HTTPClient.Destinations) {
        self.policy = policy
        client = HTTPClient(configuration: HTTPClient.Configuration(maxResponseBodySize: 4096, maxConnectionsPerHost: 4,
                                                                    destinations: destinations))
    }

    func push(_ push: LinkPush, from authority: Authority) async throws {
        // Never fails the backchannel request: the request is stored and in the outbox already.
        let webhook: WebhookRecord
        let secret: SecretBytes
        do {
            let found: WebhookRecord?
            if let known = push.knownWebhook {
                found = known
            } else {
                found = try await authority.store.webhook(tenantID: push.tenantID)
            }
            guard let registered = found else { return }
            webhook = registered
            secret = try WebhookSecretSeal.open(registered, key: authority.keys.webhookSecretWrappingKey)
        } catch {
            authority.log.event(.error, "webhook.unavailable", ["error": .string(String(reflecting: type(of: error)))])
            return
        }
        guard let url = URL(string: webhook.url) else { return }
        let payload = WebhookPayload(
            deliveryID: Base64URL.encode(SecureRandom.bytes(count: 16)), tenantID: push.tenantID,
            clientID: push.clientID, sub: push.subject, deviceIDs: push.deviceIDs, kind: push.kind, link: push.link,
            universalLink: push.kind == .notice ? nil : authority.issuer + LinkLimits.universalLinkPath + push.link,
            expiresAt: Int64(push.expiresAt.timeIntervalSince1970))
        let body = try JSONBody.encode(payload)
        let delivery = Delivery(url: url, body: body, payload: payload, secret: SymmetricKey(secret: secret), expiresAt: push.expiresAt)
        track { [self] in await deliver(delivery, from: authority) }
    }

    /// One link's delivery: what every attempt sends.
    struct Delivery: Sendable {
        let url: URL
        let body: [UInt8]
        let payload: WebhookPayload
        let secret: SymmetricKey
        let expiresAt: Date
    }

    /// What one attempt came to.
    enum AttemptResult: Equatable {
        case delivered(status: Int)
        case retryable(reason: String)
        case refused(status: Int)
        /// The endpoint resolved to no public address while the authority sends to public ones only.
        case destinationNotPublic
    }

    private func deliver(_ delivery: Delivery, from authority: Authority) async {
        var attempt = 1
        while true {
            if authority.clock.now() >= delivery.expiresAt {
                await finish(delivery, authority, attempts: attempt - 1, outcome: "expired", status: nil)
                return
            }
            let result = await send(delivery, timestamp: authority.now)
            switch result {
            case .delivered(let status):
                authority.metrics.webhookAttempt(.delivered)
                await finish(delivery, authority, attempts: attempt, outcome: "delivered", status: status)
                return
            case .refused(let status):
                authority.metrics.webhookAttempt(.failed)
                await finish(delivery, authority, attempts: attempt, outcome: "refused", status: status)
                return
            case .destinationNotPublic:
                authority.metrics.webhookAttempt(.failed)
                await finish(delivery, authority, attempts: attempt, outcome: "destination_not_public", status: nil)
                return
            case .retryable(let reason):
                guard attempt < policy.maxAttempts else {
                    authority.metrics.webhookAttempt(.failed)
                    await finish(delivery, authority, attempts: attempt, outcome: "attempts_exhausted", status: nil)
                    return
                }
                authority.metrics.webhookAttempt(.retried)
                attempt += 1
                let delay = policy.delay(beforeAttempt: attempt)
                authority.log.event(.debug, "webhook.retry", ["host": .string(delivery.url.host ?? ""), "reason": .string(reason),
                                                              "attempt": .int(attempt)])
                do {
                    try await policy.sleep(delay)
                } catch {
                    await finish(delivery, authority, attempts: attempt - 1, outcome: "cancelled", status: nil)
                    return
                }
            }
        }
    }

    /// One signed POST. 2xx delivers; 408, 425, 429, 5xx and transport failures are retried; any other status is a
    /// refusal (a 3xx is not followed: the signature is for this endpoint only).
    func send(_ delivery: Delivery, timestamp: Int64) async -> AttemptResult {
        let request = HTTPClientRequest(method: .post, url: delivery.url, headers: [
            "Content-Type": "application/json",
            "User-Agent": "FaceSeal-Webhook/1",
            WebhookSignature.header: WebhookSignature.value(body: delivery.body, timestamp: timestamp, secret: delivery.secret),
            WebhookSignature.deliveryHeader: delivery.payload.deliveryID,
        ], body: delivery.body, timeout: policy.attemptTimeout)
        do {
            let status = try await client.send(request).status.code
            switch status {
            case 200..<300: return .delivered(status: status)
            case 408, 425, 429, 500...599: return .retryable(reason: "HTTP \(status)")
            default: return .refused(status: status)
            }
        } catch .destinationNotPublic {
            return .destinationNotPublic
        } catch {
            return .retryable(reason: error.description)
        }
    }

    private func finish(_ delivery: Delivery, _ authority: Authority, attempts: Int, outcome: String, status: Int?) async {
        let delivered = outcome == "delivered"
        var fields: [(String, EventLog.Value)] = [("host", .string(delivery.url.host ?? "")), ("outcome", .string(outcome)), ("attempts", .int(attempts))]
        if let status { fields.append(("status", .int(status))) }
        authority.log.event(delivered ? .info : .warn, delivered ? "webhook.delivered" : "webhook.failed", fields: fields)
        await authority.auditWebhookDelivery(delivery.payload, outcome: outcome, attempts: attempts, status: status)
    }

    /// Runs `work` in a task that `finishDeliveries()` can await.
    private func track(_ work: @escaping @Sendable () async -> Void) {
        running.withLock { running in
            running.next += 1
            let id = running.next
            running.tasks[id] = Task { [weak self] in
                await work()
                _ = self?.running.withLock { $0.tasks.removeValue(forKey: id) }
            }
        }
    }

    /// Waits until every delivery started so far has ended (tests; a stopping server).
    func finishDeliveries() async {
        while let task = running.withLock({ $0.tasks.values.first }) { await task.value }
    }
}

extension Authority {
    /// Records a webhook delivery's final outcome in the tenant's audit log (`webhook.delivered` or `webhook.failed`;
    /// the client id as target, the delivery id, attempts and last status as detail — never the link or the secret).
    func auditWebhookDelivery(_ payload: WebhookPayload, outcome: String, attempts: Int, status: Int?) async {
        var detail: [String: JSONValue] = ["delivery_id": .string(payload.deliveryID), "outcome": .string(outcome),
                                           "attempts": .integer(Int64(attempts))]
        if let status { detail["status"] = .integer(Int64(status)) }
        do {
            _ = try await store.appendAudit(AuditEvent(tenantID: payload.tenantID, kind: outcome == "delivered" ? "webhook.delivered" : "webhook.failed",
                                                       target: payload.clientID, detailJSON: JSONValue.object(detail).serializedString))
        } catch {
            log.event(.error, "audit.failed", ["error": .string(String(reflecting: type(of: error)))])
        }
    }
}
