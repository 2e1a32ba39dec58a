import FaceSealCrypto
import FaceSealHTTP
public import FaceSealWire
import Foundation

// The management API's documents (FaceSealWire's `Managed…` types) made from the authority's records.

extension ManagedPolicy {
    init(_ policy: TenantPolicy) {
        self.init(keyAlgorithms: policy.keyAlgorithms, attemptsMax: policy.attemptsMax, captureRetriesMax: policy.captureRetriesMax,
                  livenessRequired: policy.livenessRequired, matchThreshold: policy.matchThreshold,
                  passwordPolicy: Password(mode: policy.passwordPolicy.mode, minimumLength: policy.passwordPolicy.minimumLength),
                  oneDevicePerUser: policy.oneDevicePerUser, requestLifetimeSeconds: policy.requestLifetimeSeconds,
                  furtherDeviceApproval: policy.furtherDeviceApproval)
    }
}

extension ManagedTenant {
    init(_ record: TenantRecord) {
        self.init(id: record.id, name: record.name, policy: ManagedPolicy(record.policy), createdAt: record.createdAt)
    }
}

extension ManagedAPIKey {
    init(_ record: APIKeyRecord, key: String? = nil) {
        self.init(id: record.id, tenantID: record.tenantID, label: record.label, createdAt: record.createdAt,
                  revokedAt: record.revokedAt, key: key)
    }
}

extension ManagedApplication {
    init(_ record: ApplicationRecord, clientSecret: String? = nil) {
        let clientAuth: String
        let jwks: JSONDocument?
        switch record.credential {
        case .secretHash:
            clientAuth = "client_secret"
            jwks = nil
        case .jwks(let text):
            clientAuth = "private_key_jwt"
            jwks = (try? JSONValue.parse(Array(text.utf8))).map(JSONDocument.init)
        }
        self.init(clientID: record.clientID, tenantID: record.tenantID, label: record.label, clientAuth: clientAuth, jwks: jwks,
                  branding: ApplicationBranding.decode(record.brandingJSON, label: record.label), deliveryMode: record.deliveryMode,
                  notificationEndpoint: record.notificationEndpoint, deliveryEndpoint: record.deliveryEndpoint,
                  idTokenSignedResponseAlg: record.idTokenSignedResponseAlg, redirectURIs: record.redirectURIs,
                  createdAt: record.createdAt, clientSecret: clientSecret)
    }
}

/// How an application's branding is kept in `ApplicationRecord.brandingJSON`: the canonical encoding of
/// Wire's `BrandingInfo`, so the device API can hand it to devices unchanged.
public enum ApplicationBranding {
    /// The stored form.
    public static func encode(_ branding: BrandingInfo) -> String { String(decoding: WireJSON.encode(branding), as: UTF8.self) }

    /// The stored branding; a record without one (`{}`) shows the label as its name.
    public static func decode(_ json: String, label: String) -> BrandingInfo {
        (try? WireJSON.decode(BrandingInfo.self, from: Array(json.utf8), limit: 64 * 1024)) ?? BrandingInfo(name: label)
    }
}

extension ManagedUser {
    init(_ record: UserRecord) {
        self.init(subject: record.subject, tenantID: record.tenantID, email: record.email, createdAt: record.createdAt)
    }
}

extension ManagedDeletion {
    init(kind: String, id: String, _ summary: DeletionSummary) {
        self.init(deleted: kind, id: id, enrolmentsEnded: summary.enrolmentsEnded, requestsEnded: summary.requestsEnded,
                  invitationsCancelled: summary.invitationsCancelled, faceTokensErased: summary.faceTokensErased,
                  apiKeysRevoked: summary.apiKeysRevoked)
    }
}

extension ManagedDeviceKey {
    init(_ record: DeviceKeyRecord) {
        self.init(keyID: record.keyID, role: record.role, status: record.status, supersededBy: record.supersededBy,
                  overlapUntil: record.overlapUntil, createdAt: record.createdAt)
    }
}

extension ManagedAuditEvent {
    init(_ event: AuditEvent) {
        self.init(sequence: event.sequence, tenantID: event.tenantID, at: event.at, kind: event.kind, actor: event.actor,
                  target: event.target, detail: JSONDocument((try? JSONValue.parse(Array(event.detailJSON.utf8))) ?? .object([:])))
    }
}

extension ManagedWebhook {
    init(_ record: WebhookRecord, secret: String? = nil) {
        self.init(tenantID: record.tenantID, url: record.url, createdAt: record.createdAt, secret: secret)
    }
}

extension ManagedAuthorityKey {
    init(_ record: SigningKeyRecord, published: Bool) {
        let device = record.algorithm == DeviceResponseKeyRing.algorithm
        self.init(keyID: record.keyID, use: device ? "device" : "id_token", algorithm: device ? JWSAlgorithm.edDSA.rawValue : record.algorithm,
                  createdAt: record.createdAt, retiredAt: record.retiredAt, published: device ? nil : published,
                  rolloverExpiresAt: record.rolloverExpiresAt)
    }
}

extension ManagementJSON {
    /// A JSON response with `Cache-Control: no-store` (some carry secrets shown once).
    static func response(_ value: some Encodable, status: HTTPStatus = .ok) throws -> HTTPResponse {
        try HTTPResponse.json(value, status: status, headers: ["Cache-Control": "no-store"], encoder: makeEncoder())
    }
}
