public import FaceSealCrypto
public import FaceSealHTTPClient
import FaceSealWire
import Foundation

/// Why a management call failed.
public enum AdminFailure: Error, CustomStringConvertible {
    /// The authority answered with an error document.
    case refused(status: Int, code: String, description: String)
    /// The authority could not be reached or answered something unreadable.
    case transport(String)
    /// The API key could not be read.
    case apiKey(String)

    public var description: String {
        switch self {
        case .refused(let status, let code, let description): "HTTP \(status) \(code): \(description)"
        case .transport(let reason): reason
        case .apiKey(let reason): reason
        }
    }
}

/// The management API (`/manage/v1`, docs/openapi.yaml) over `HTTPClient`: one bearer key, one base URL. It needs the
/// messages (FaceSealWire) and an HTTP client only — not the authority, its server or its databases.
public struct AdminClient: Sendable {
    /// The authority, e.g. `http://127.0.0.1:8080`.
    public let baseURL: String
    /// The bearer key `fsk_…`.
    public let apiKey: String
    /// The client the calls go through.
    public let client: HTTPClient

    /// A client of the authority at `baseURL` with `apiKey`.
    public init(baseURL: String, apiKey: String, client: HTTPClient) {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.client = client
    }

    /// Sends a request under `/manage/v1` and returns the body of a 2xx answer; anything else throws.
    public func call(_ method: HTTPMethod, _ path: String, body: JSONValue? = nil) async throws(AdminFailure) -> [UInt8] {
        guard let url = URL(string: baseURL + "/manage/v1" + path) else { throw .transport("invalid URL \(baseURL)") }
        var headers: HTTPHeaders = ["Authorization": "Bearer \(apiKey)", "Accept": "application/json"]
        if body != nil { headers["Content-Type"] = "application/json" }
        let response: HTTPClientResponse
        do {
            response = try await client.send(HTTPClientRequest(method: method, url: url, headers: headers, body: body?.serialized ?? []))
        } catch {
            throw .transport("cannot reach \(baseURL): \(error)")
        }
        guard response.status.isSuccess else {
            let document = try? JSONValue.parse(response.body)
            throw .refused(status: response.status.code,
                           code: document?.objectValue?["error"]?.stringValue ?? "error",
                           description: document?.objectValue?["error_description"]?.stringValue ?? "no description")
        }
        return response.body
    }

    /// Decodes a management document (`ManagementJSON`).
    public func decode<T: Decodable>(_ type: T.Type, _ body: [UInt8]) throws(AdminFailure) -> T {
        do {
            return try ManagementJSON.makeDecoder().decode(T.self, from: Data(body))
        } catch {
            throw .transport("unexpected answer from the authority (\(T.self))")
        }
    }
}
