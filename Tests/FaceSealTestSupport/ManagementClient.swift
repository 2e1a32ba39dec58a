import FaceSealHTTPClient
package import FaceSealHTTPTypes
import Foundation

/// The management API over HTTP with an administrator key (the bootstrap key of a live authority).
package struct ManagementClient: Sendable {
    /// The authority's base URL (its issuer), without a trailing slash.
    package let baseURL: String
    /// The administrator API key, sent as a bearer.
    package let apiKey: String
    private let http = HTTPClient()

    /// A client of the authority at `baseURL` with `apiKey`.
    package init(baseURL: String, apiKey: String) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.apiKey = apiKey
    }

    /// Calls `/manage/v1` + `path` with `body` as JSON (none when nil); answers the JSON object (empty for `204`), and
    /// throws for any status outside 2xx.
    @discardableResult
    package func send(_ method: HTTPMethod, _ path: String, _ body: [String: Any]? = nil) async throws -> [String: Any] {
        var headers = HTTPHeaders()
        headers["Authorization"] = "Bearer \(apiKey)"
        var bytes: [UInt8] = []
        if let body {
            headers["Content-Type"] = "application/json"
            bytes = Array(try JSONSerialization.data(withJSONObject: body))
        }
        guard let url = URL(string: baseURL + "/manage/v1" + path) else { throw SetupError("bad management path \(path)") }
        let response = try await http.send(HTTPClientRequest(method: method, url: url, headers: headers, body: bytes))
        guard (200..<300).contains(response.status.code) else {
            throw SetupError("\(method) \(path) → \(response.status.code) \(String(decoding: response.body, as: UTF8.self))")
        }
        if response.body.isEmpty { return [:] }
        guard let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else {
            throw SetupError("\(method) \(path) answered no JSON object")
        }
        return object
    }
}
