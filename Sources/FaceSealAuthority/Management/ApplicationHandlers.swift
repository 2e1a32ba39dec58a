import FaceSealCrypto
import FaceSealHTTP
import FaceSealHTTPClient
import FaceSealWire
import Foundation

// Applications (confidential OIDC clients). The client id is generated; a client secret is generated and
// returned once and stored as `ClientSecret.hash` (SHA-256, what client authentication compares), unless the application registers a JWKS for
// `private_key_jwt`.
extension Authority {
    /// `POST /tenants/{tenant}/applications`.
    @Sendable func createApplication(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        let body = try request.managementBody(ApplicationFields.self)
        guard let given = body.label else { throw ManagementError.invalidRequest(status: 400, "missing field 'label'") }
        let label = try ManagementValidation.text(given, field: "label")
        var secret: String?
        let credential: ClientCredential
        if case .set(let jwks) = body.jwks {
            credential = .jwks(try ManagementValidation.jwks(jwks.value))
        } else {
            let generated = ClientSecret.generate()
            secret = generated
            credential = .secretHash(ClientSecret.hash(generated))
        }
        var application = ApplicationRecord(
            clientID: ManagementCredentials.identifier("app", byteCount: 16), tenantID: tenant.id, label: label, credential: credential,
            brandingJSON: ApplicationBranding.encode(BrandingInfo(name: label)))
        try Self.apply(body, to: &application, creating: true, destinations: configuration.callbackDestinations)
        let created = try await store.createApplication(application)
        try await audit(caller, tenant: tenant.id, kind: "application.created", target: created.clientID,
                        detail: ["label": .string(label), "client_auth": .string(secret == nil ? "private_key_jwt" : "client_secret")])
        return try ManagementJSON.response(ManagedApplication(created, clientSecret: secret), status: .created)
    }

    /// `GET /tenants/{tenant}/applications`.
    @Sendable func listApplications(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        return try ManagementJSON.response(ManagedList(try await store.applications(tenantID: tenant.id).map { ManagedApplication($0) }))
    }

    /// `GET /tenants/{tenant}/applications/{client}`.
    @Sendable func showApplication(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let application = try await pathApplication(request, caller)
        return try ManagementJSON.response(ManagedApplication(application))
    }

    /// `PATCH /tenants/{tenant}/applications/{client}`: the fields given replace the current ones; `null`
    /// clears an endpoint or the logo and colours; a `jwks` switches the application to `private_key_jwt`.
    @Sendable func updateApplication(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        var application = try await pathApplication(request, caller)
        let body = try request.managementBody(ApplicationFields.self)
        if let label = body.label {
            application.label = try ManagementValidation.text(label, field: "label")
        }
        switch body.jwks {
        case .keep:
            break
        case .clear:
            throw ManagementError.invalidField(field: "jwks", reason: "cannot be cleared; POST …/secret to switch to a client secret")
        case .set(let jwks):
            application.credential = .jwks(try ManagementValidation.jwks(jwks.value))
        }
        try Self.apply(body, to: &application, creating: false, destinations: configuration.callbackDestinations)
        let updated = try await store.updateApplication(application)
        try await audit(caller, tenant: application.tenantID, kind: "application.updated", target: application.clientID,
                        detail: ["fields": .array(body.memberNames.map(JSONValue.string))])
        return try ManagementJSON.response(ManagedApplication(updated))
    }

    /// `POST /tenants/{tenant}/applications/{client}/secret`: a new client secret, returned once; the old one
    /// (or the JWKS) stops working.
    @Sendable func rotateClientSecret(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        var application = try await pathApplication(request, caller)
        try refuseActionBody(request)
        let secret = ClientSecret.generate()
        application.credential = .secretHash(ClientSecret.hash(secret))
        let updated = try await store.updateApplication(application)
        try await audit(caller, tenant: application.tenantID, kind: "application.secret_rotated", target: application.clientID)
        return try ManagementJSON.response(ManagedApplication(updated, clientSecret: secret))
    }

    /// The application named in the path, which must belong to the path's tenant (else 404).
    func pathApplication(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> ApplicationRecord {
        let tenant = try await pathTenant(request, caller)
        let application = try await store.application(clientID: request.pathParameter("client"))
        guard application.tenantID == tenant.id else { throw ManagementError.notFound("application") }
        return application
    }

    /// Applies the optional fields of a create or update body to `application`, then checks the whole. The ping
    /// endpoint is one the authority calls, so `destinations` (its egress policy) judges it; the delivery endpoint
    /// is called by devices.
    static func apply(_ body: ApplicationFields, to application: inout ApplicationRecord, creating: Bool,
                      destinations: HTTPClient.Destinations) throws(ManagementError) {
        if let branding = body.branding {
            application.brandingJSON = ApplicationBranding.encode(try ManagementValidation.branding(branding, defaultName: application.label))
        }
        if let mode = body.deliveryMode { application.deliveryMode = mode }
        application.notificationEndpoint = try body.notificationEndpoint
            .map { value throws(ManagementError) in try ManagementValidation.callbackEndpoint(value, field: "notification_endpoint", destinations: destinations) }
            .applied(to: application.notificationEndpoint)
        application.deliveryEndpoint = try body.deliveryEndpoint
            .map { value throws(ManagementError) in try ManagementValidation.endpoint(value, field: "delivery_endpoint") }
            .applied(to: application.deliveryEndpoint)
        if let uris = body.redirectURIs {
            var checked: [String] = []
            for uri in uris where !checked.contains(uri) { checked.append(try ManagementValidation.redirectURI(uri)) }
            application.redirectURIs = checked
        }
        if let algorithm = body.idTokenSignedResponseAlg {
            application.idTokenSignedResponseAlg = try ManagementValidation.idTokenAlgorithm(algorithm)
        }
        if application.deliveryMode == .ping, application.notificationEndpoint == nil {
            throw .invalidField(field: "notification_endpoint", reason: "required for ping delivery")
        }
    }
}
