import FaceSealHTTP
import FaceSealWire
import Foundation

extension Authority {
    /// How long a ping callback may take before it is given up.
    static let pingTimeout: Duration = .seconds(5)

    /// Called by the device API once a request has left `pending` (completed, denied or stale): sends the ping
    /// callback to a ping-mode application (CIBA Core §10.2 — also for failures, so the application fetches the error
    /// from the token endpoint). POSTs `{"auth_req_id": …}` with `Authorization: Bearer <client_notification_token>`.
    /// Never fails: an unreachable or refusing endpoint is logged (without the token) and the application can still
    /// poll. Returns once the request is read; the callback itself is sent in a task of its own (bounded by
    /// `pingTimeout`), so a slow application never delays the device's answer. Public for tools that finish
    /// requests outside the device API (`faceseal bench wait` measures the ping client with it).
    public func requestFinished(authReqID: String) async {
        let request: CIBARequestRecord
        let application: ApplicationRecord
        do {
            request = try await store.request(authReqID: authReqID)
            application = try await store.application(clientID: request.clientID)
        } catch {
            log.event(.warn, "ping.request_not_found", ["error": .string(String(reflecting: type(of: error)))])
            return
        }
        countOutcome(request)
        guard request.state != .pending, request.approvesEnrolment == nil, application.deliveryMode == .ping,
              let endpoint = application.notificationEndpoint, let token = request.clientNotificationToken else { return }
        guard let url = URL(string: endpoint), url.scheme == "https" || url.scheme == "http" else {
            log.event(.warn, "ping.unusable_endpoint", ["client_id": .string(application.clientID)])
            return
        }
        let callback = HTTPClientRequest(
            method: .post, url: url,
            headers: ["Content-Type": "application/json", "Authorization": "Bearer \(token)"],
            body: PingCallback(authReqId: authReqID).encoded(), timeout: Self.pingTimeout
        )
        let clientID = application.clientID
        Task { await sendPing(callback, clientID: clientID) }
    }

    private func sendPing(_ callback: HTTPClientRequest, clientID: String) async {
        do {
            let response = try await notificationClient.send(callback)
            if !response.status.isSuccess {
                log.event(.warn, "ping.refused", ["client_id": .string(clientID), "status": .int(response.status.code)])
            }
        } catch {
            log.event(.warn, "ping.unreachable", ["client_id": .string(clientID), "error": .string(error.description)])
        }
    }

    /// Counts a request that left `pending` in `metrics` (kind: `login` or the PKI kind).
    func countOutcome(_ request: CIBARequestRecord) {
        let kind = request.pkiKind ?? request.kind.rawValue
        switch request.state {
        case .pending: break
        case .completed: metrics.requestFinished(kind: kind, outcome: .succeeded)
        case .denied: metrics.requestFinished(kind: kind, outcome: .denied, reason: request.denyReason ?? "")
        case .expired: metrics.requestFinished(kind: kind, outcome: .expired)
        case .stale: metrics.requestFinished(kind: kind, outcome: .stale)
        }
    }
}
