import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealAuthority

/// Calls the management API of a test authority over real HTTP with one API key.
struct AdminSession: Sendable {
    let harness: AuthorityHarness
    /// The bearer key; nil sends no `Authorization`.
    let key: String?

    /// Sends `method path` with `body` (raw JSON text) and returns the response.
    func send(_ method: HTTPMethod, _ path: String, body: String? = nil, contentType: String = "application/json",
              headers extra: HTTPHeaders = [:]) async throws -> HTTPClientResponse {
        var headers = extra
        if let key, !headers.contains("Authorization") { headers["Authorization"] = "Bearer \(key)" }
        if body != nil { headers["Content-Type"] = contentType }
        return try await harness.client.send(HTTPClientRequest(
            method: method, url: harness.url("/manage/v1" + path), headers: headers, body: body.map { Array($0.utf8) } ?? []))
    }

    /// Sends and expects `status`; returns the parsed JSON body.
    @discardableResult
    func expect(_ status: Int, _ method: HTTPMethod, _ path: String, body: String? = nil, contentType: String = "application/json",
                sourceLocation: SourceLocation = #_sourceLocation) async throws -> JSONValue {
        let response = try await send(method, path, body: body, contentType: contentType)
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(response.status.code == status, "\(method) \(path): \(text)", sourceLocation: sourceLocation)
        guard !response.body.isEmpty else { return .null }
        return try JSONValue.parse(response.body)
    }

    /// Expects a refusal with `status` and error code `code`; returns the description.
    @discardableResult
    func expectError(_ status: Int, _ code: String, _ method: HTTPMethod, _ path: String, body: String? = nil,
                     contentType: String = "application/json", sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let json = try await expect(status, method, path, body: body, contentType: contentType, sourceLocation: sourceLocation)
        #expect(json["error"]?.stringValue == code, "\(json.serializedString)", sourceLocation: sourceLocation)
        return json["error_description"]?.stringValue ?? ""
    }

    /// The same harness with another key.
    func with(key: String?) -> AdminSession { AdminSession(harness: harness, key: key) }
}

extension JSONValue {
    /// The member `key` of an object.
    subscript(key: String) -> JSONValue? { objectValue?[key] }
    /// The element `index` of an array.
    subscript(index: Int) -> JSONValue? { arrayValue.flatMap { index < $0.count ? $0[index] : nil } }
}

/// Runs `body` with a started authority and its bootstrap administrator key.
func withManagement(_ backend: StoreBackend, configure: (inout AuthorityConfiguration) -> Void = { _ in },
                    _ body: (AdminSession) async throws -> Void) async throws {
    try await withAuthority(backend, configure: configure) { harness in
        let key = try #require(try await harness.authority.bootstrapAdminKey())
        try await body(AdminSession(harness: harness, key: key))
    }
}

extension AdminSession {
    /// Creates tenant `id`; returns its JSON.
    @discardableResult
    func createTenant(_ id: String, policy: String? = nil) async throws -> JSONValue {
        let policyMember = policy.map { #","policy":\#($0)"# } ?? ""
        return try await expect(201, .post, "/tenants", body: #"{"id":"\#(id)","name":"Tenant \#(id)"\#(policyMember)}"#)
    }

    /// Creates an application in `tenant`; returns its JSON (with the client secret).
    @discardableResult
    func createApplication(_ tenant: String, label: String = "Shop", extra: String = "") async throws -> JSONValue {
        try await expect(201, .post, "/tenants/\(tenant)/applications",
                         body: #"{"label":"\#(label)","delivery_endpoint":"https://rp.example/deliver"\#(extra)}"#)
    }

    /// Creates a user in `tenant`; returns its JSON.
    @discardableResult
    func createUser(_ tenant: String, email: String) async throws -> JSONValue {
        try await expect(201, .post, "/tenants/\(tenant)/users", body: #"{"email":"\#(email)"}"#)
    }

    /// Creates a tenant key; returns `(id, secret)`.
    func createTenantKey(_ tenant: String) async throws -> (id: String, key: String) {
        let json = try await expect(201, .post, "/tenants/\(tenant)/api-keys", body: #"{"label":"ops"}"#)
        return (try #require(json["id"]?.stringValue), try #require(json["key"]?.stringValue))
    }
}
