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
        do {
            let request = try await store.request(authReqID: authReqID)
            requestFinished(request, application: try await store.application(clientID: request.clientID))
        } catch {
            Self.log("ping: request or client not found: \(error)")
        }
    }

    /// `requestFinished(authReqID:)` for a request as its finishing transaction stored it, with its application.
    func requestFinished(_ request: CIBARequestRecord, application: ApplicationRecord) {
        let authReqID = request.authReqID
        guard request.state != .pending, request.approvesEnrolment == nil, application.deliveryMode == .ping,
              let endpoint = application.notificationEndpoint, let token = request.clientNotificationToken else { return }
        guard let url = URL(string: endpoint), url.scheme == "https" || url.scheme == "http" else {
            Self.log("ping: client \(application.clientID) has an unusable notification endpoint")
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
                Self.log("ping: client \(clientID) answered HTTP \(response.status.code)")
            }
        } catch {
            Self.log("ping: client \(clientID) unreachable: \(error)")
        }
    }

    /// One line on standard error (operational events; never secrets or bodies).
    static func log(_ message: String) {
        FileHandle.standardError.write(Data("faceseal: \(message)\n".utf8))
    }
}
