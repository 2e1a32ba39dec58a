import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

// The tenant's webhook push endpoint (SPEC §4.6).
extension Authority {
    /// The prefix of a webhook signing secret.
    static let webhookSecretPrefix = "whsec_"

    /// `PUT /tenants/{tenant}/webhook` `{url}`: registers (or replaces) the endpoint with a new signing secret,
    /// generated here and answered once.
    @Sendable func registerWebhook(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        let url = try ManagementValidation.callbackEndpoint(request.managementBody(WebhookRegistration.self).url, field: "url",
                                                            destinations: configuration.callbackDestinations)
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
