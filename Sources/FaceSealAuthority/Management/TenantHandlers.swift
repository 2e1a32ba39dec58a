import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

// Tenants and their policy.
extension Authority {
    static let policyFields: Set<String> = Set(ManagedPolicy.CodingKeys.allCases.map(\.stringValue))
    static let passwordFields: Set<String> = ["mode", "minimum_length"]

    /// `POST /tenants` (administrator): `{id, name, policy?}`.
    @Sendable func createTenant(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        try caller.requireAdministrator()
        let body = try JSONObjectReader.body(of: request, maxBytes: 16 * 1024, allowed: ["id", "name", "policy"])
        let id = try ManagementValidation.tenantID(body.requiredString("id", maxBytes: 256))
        let name = try ManagementValidation.text(body.requiredString("name", maxBytes: 1024), field: "name")
        var policy = TenantPolicy()
        if let object = try body.object("policy", allowed: Self.policyFields) {
            policy = try Self.policy(object, base: policy)
        }
        let tenant = try await store.createTenant(TenantRecord(id: id, name: name, policy: policy))
        try await audit(caller, tenant: tenant.id, kind: "tenant.created", target: tenant.id, detail: ["name": .string(name)])
        return try ManagementJSON.response(ManagedTenant(tenant), status: .created)
    }

    /// `GET /tenants`: every tenant for an administrator key, the own tenant for a tenant key.
    @Sendable func listTenants(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenants: [TenantRecord]
        if let tenantID = caller.tenantID {
            tenants = [try await store.tenant(id: tenantID)]
        } else {
            tenants = try await store.tenants()
        }
        return try ManagementJSON.response(ManagedList(tenants.map(ManagedTenant.init)))
    }

    /// `GET /tenants/{tenant}`.
    @Sendable func showTenant(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        try ManagementJSON.response(ManagedTenant(try await pathTenant(request, caller)))
    }

    /// `PATCH /tenants/{tenant}/policy`: the fields given replace the current ones.
    @Sendable func updatePolicy(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        let body = try JSONObjectReader.body(of: request, maxBytes: 16 * 1024, allowed: Self.policyFields)
        let policy = try Self.policy(body, base: tenant.policy)
        let updated = try await store.updateTenantPolicy(tenantID: tenant.id, policy: policy)
        try await audit(caller, tenant: tenant.id, kind: "tenant.policy_updated", target: tenant.id,
                        detail: ["fields": .array(body.members.keys.sorted().map(JSONValue.string))])
        return try ManagementJSON.response(ManagedTenant(updated))
    }

    /// `base` with the policy fields present in `object` replaced, each validated.
    static func policy(_ object: JSONObjectReader, base: TenantPolicy) throws(ManagementError) -> TenantPolicy {
        var policy = base
        if let algorithms = try object.strings("key_algorithms", maxCount: KeyAlgorithm.allCases.count, maxBytes: 32) {
            let field = object.path + "key_algorithms"
            let allowed = KeyAlgorithm.allCases.map(\.rawValue)
            guard !algorithms.isEmpty else { throw .invalidField(field: field, reason: "must name at least one algorithm") }
            for algorithm in algorithms where KeyAlgorithm(rawValue: algorithm) == nil {
                throw .invalidField(field: field, reason: "unknown algorithm '\(algorithm)' (known: \(allowed.joined(separator: ", ")))")
            }
            guard Set(algorithms).count == algorithms.count else { throw .invalidField(field: field, reason: "lists an algorithm twice") }
            // Every delivery is signed with the user's ML-DSA key (SPEC §4.4), so a policy needs one.
            guard algorithms.contains(where: { KeyAlgorithm(rawValue: $0)?.signs == true }) else {
                throw .invalidField(field: field, reason: "must include an ML-DSA algorithm (deliveries are signed with it)")
            }
            policy.keyAlgorithms = algorithms
        }
        if let attempts = try object.integer("attempts_max", in: 1...10) { policy.attemptsMax = attempts }
        if let retries = try object.integer("capture_retries_max", in: 1...100) { policy.captureRetriesMax = retries }
        if let liveness = try object.bool("liveness_required") { policy.livenessRequired = liveness }
        if let threshold = try object.number("match_threshold", in: MatchPolicy.thresholdRange) {
            // Kept to millionths, as stored.
            policy.matchThreshold = (threshold * 1_000_000).rounded() / 1_000_000
        }
        if let oneDevice = try object.bool("one_device_per_user") { policy.oneDevicePerUser = oneDevice }
        if let lifetime = try object.integer("request_lifetime_seconds", in: 30...3600) { policy.requestLifetimeSeconds = lifetime }
        if let approval = try object.string("further_device_approval", maxBytes: 32) {
            guard let parsed = FurtherDeviceApproval(rawValue: approval) else {
                throw .invalidField(field: object.path + "further_device_approval", reason: "must be enrolled_device, password or none")
            }
            policy.furtherDeviceApproval = parsed
        }
        if let password = try object.object("password_policy", allowed: passwordFields) {
            if let mode = try password.string("mode", maxBytes: 32) {
                guard let parsed = PasswordMode(rawValue: mode) else {
                    throw .invalidField(field: password.path + "mode", reason: "must be none, optional or required")
                }
                policy.passwordPolicy.mode = parsed
            }
            if let length = try password.integer("minimum_length", in: 4...128) { policy.passwordPolicy.minimumLength = length }
        }
        return policy
    }
}
