import FaceSealCrypto
import FaceSealHTTP
public import Foundation

/// A tenant's webhook push endpoint — with its signing secret only in the answer to its registration (shown once).
public struct ManagedWebhook: Codable, Sendable, Equatable {
    /// The tenant.
    public var tenantID: String
    /// Where links are POSTed.
    public var url: String
    /// When it was registered (re-registering replaces it and its secret).
    public var createdAt: Date
    /// `whsec_…`: the HMAC-SHA256 key of `FaceSeal-Signature` (its ASCII bytes), only in the registration response.
    public var secret: String?

    enum CodingKeys: String, CodingKey {
        case url, secret
        case tenantID = "tenant_id"
        case createdAt = "created_at"
    }

    init(_ record: WebhookRecord, secret: String? = nil) {
        tenantID = record.tenantID
        url = record.url
        createdAt = record.createdAt
        self.secret = secret
    }
}

// The tenant's webhook push endpoint (SPEC §4.6).
extension Authority {
    /// The prefix of a webhook signing secret.
    static let webhookSecretPrefix = "whsec_"

    /// `PUT /tenants/{tenant}/webhook` `{url}`: registers (or replaces) the endpoint with a new signing secret,
    /// generated here and answered once.
    @Sendable func registerWebhook(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        let body = try JSONObjectReader.body(of: request, maxBytes: 4096, allowed: ["url"])
        let url = try body.requiredString("url", maxBytes: 2048)
        if let refusal = configuration.webhooks.refusal(of: url) { throw ManagementError.invalidField(field: "url", reason: refusal) }
        let secret = Self.webhookSecretPrefix + Base64URL.encode(SecureRandom.bytes(count: 32))
        let sealed = try WebhookSecretSeal.seal(SecretBytes(Array(secret.utf8)), tenantID: tenant.id, key: keys.webhookSecretWrappingKey)
        let record = try await store.setWebhook(WebhookRecord(tenantID: tenant.id, url: url, encryptedSecret: sealed))
        try await audit(caller, tenant: tenant.id, kind: "webhook.registered", target: tenant.id,
                        detail: ["host": .string(URL(string: url)?.host ?? "")])
        return try ManagementJSON.response(ManagedWebhook(record, secret: secret))
    }

    /// `GET /tenants/{tenant}/webhook`: the endpoint, never its secret.
    @Sendable func showWebhook(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        guard let record = try await store.webhook(tenantID: tenant.id) else { throw ManagementError.notFound("webhook") }
        return try ManagementJSON.response(ManagedWebhook(record))
    }

    /// `DELETE /tenants/{tenant}/webhook`: links go to the outbox only from now on.
    @Sendable func removeWebhook(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        try refuseActionBody(request)
        guard try await store.deleteWebhook(tenantID: tenant.id) else { throw ManagementError.notFound("webhook") }
        try await audit(caller, tenant: tenant.id, kind: "webhook.removed", target: tenant.id)
        return .empty()
    }
}
