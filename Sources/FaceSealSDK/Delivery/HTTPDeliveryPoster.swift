public import FaceSealHTTPClient
import FaceSealWire
import Foundation

/// The real ``DeliveryPoster`` (SPEC §4.4): POSTs the exact body bytes with `Authorization: Bearer` and
/// `X-FaceSeal-Signature`, never follows a redirect (FaceSealHTTP's client refuses them), within a bounded
/// time. A 2xx is `accepted`; any other status `refused(httpStatus:)`; no answer `unreachable`.
public struct HTTPDeliveryPoster: DeliveryPoster {
    private let client: HTTPClient
    private let timeout: Duration

    /// Creates the poster. The application's answer is read with a 64 KiB limit: only its status matters.
    public init(client: HTTPClient = HTTPClient(), timeout: Duration = .seconds(15)) {
        self.client = client
        self.timeout = timeout
    }

    /// Sends the delivery once.
    public func deliver(_ delivery: DeliveryRequest) async -> DeliveryOutcome {
        var headers = HTTPHeaders()
        headers["Content-Type"] = "application/json"
        headers["Authorization"] = "Bearer \(delivery.bearer)"
        headers[DeliveryNames.signatureHeader] = delivery.signature
        let request = HTTPClientRequest(method: .post, url: delivery.endpoint, headers: headers, body: delivery.body,
                                        timeout: timeout, maxResponseBodySize: 64 * 1024)
        do {
            let response = try await client.send(request)
            let code = response.status.code
            // A 3xx is a refusal: following it could hand the bearer and the result to another host.
            return (200..<300).contains(code) ? .accepted : .refused(httpStatus: code)
        } catch {
            return .unreachable(error.description)
        }
    }
}
