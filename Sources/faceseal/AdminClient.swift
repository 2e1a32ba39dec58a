import FaceSealAuthority
import FaceSealCrypto
import FaceSealHTTP
import Foundation

/// Why a management call failed after the command line was accepted (exit 1).
enum AdminFailure: Error, CustomStringConvertible {
    /// The authority answered with an error document.
    case refused(status: Int, code: String, description: String)
    /// The authority could not be reached or answered something unreadable.
    case transport(String)
    /// The API key could not be read.
    case apiKey(String)

    var description: String {
        switch self {
        case .refused(let status, let code, let description): "HTTP \(status) \(code): \(description)"
        case .transport(let reason): reason
        case .apiKey(let reason): reason
        }
    }
}

/// The management API over `HTTPClient`: one bearer key, one base URL.
struct AdminClient {
    let baseURL: String
    let apiKey: String
    let client: HTTPClient

    /// Sends a request under `/manage/v1` and returns the body of a 2xx answer; anything else throws.
    func call(_ method: HTTPMethod, _ path: String, body: JSONValue? = nil) async throws(AdminFailure) -> [UInt8] {
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

    /// Decodes a management document.
    func decode<T: Decodable>(_ type: T.Type, _ body: [UInt8]) throws(AdminFailure) -> T {
        do {
            return try ManagementJSON.makeDecoder().decode(T.self, from: Data(body))
        } catch {
            throw .transport("unexpected answer from the authority (\(T.self))")
        }
    }
}

/// Percent-encodes a path segment or query value.
func escaped(_ value: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
}
