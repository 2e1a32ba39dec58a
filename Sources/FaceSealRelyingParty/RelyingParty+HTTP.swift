import Foundation
public import FaceSealHTTPClient

extension RelyingParty {
    /// Installs the delivery endpoint (at the path of `configuration.deliveryEndpoint`) and, if configured,
    /// the ping endpoint (at the path of `configuration.notificationEndpoint`) on a FaceSealHTTP router.
    public func mount(on router: inout Router) {
        router.post(Self.path(of: configuration.deliveryEndpoint)) { [self] request in
            Self.httpResponse(await handleDelivery(method: request.method.rawValue, headers: Self.headers(request), body: request.body))
        }
        if let notification = configuration.notificationEndpoint {
            router.post(Self.path(of: notification)) { [self] request in
                Self.httpResponse(await handlePing(method: request.method.rawValue, headers: Self.headers(request), body: request.body))
            }
        }
    }

    static func path(of url: URL) -> String {
        let path = url.path
        return path.isEmpty ? "/" : path
    }

    static func headers(_ request: HTTPRequest) -> [String: String] {
        var headers: [String: String] = [:]
        for field in request.headers {
            // A repeated header (two bearers, two signatures) is refused by making it unusable.
            let key = field.name.lowercased()
            headers[key] = headers[key] == nil ? field.value : ""
        }
        return headers
    }

    static func httpResponse(_ response: EndpointResponse) -> HTTPResponse {
        HTTPResponse(status: HTTPStatus(code: response.status), headers: HTTPHeaders(response.headers), body: response.body)
    }
}
