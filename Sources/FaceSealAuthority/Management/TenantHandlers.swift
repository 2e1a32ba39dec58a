import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

// Tenants and their policy.
extension Authority {
    /// `POST /tenants` (administrator): `{id, name, policy?}`.
    @Sendable func createTenant(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        try caller.requireAdministrator()
        let body = try request.managementBody(TenantCreation.self)
        let id = try ManagementValidation.tenantID(body.id)
        let name = try ManagementValidation.text(body.name, field: "name")
        var policy = TenantPolicy()
        if let change = body.policy {
            policy = try Self.policy(change, base: policy, path: "policy.")
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
        let change = try request.managementBody(PolicyChange.self)
        let policy = try Self.policy(change, base: tenant.policy)
        let updated = try await store.updateTenantPolicy(tenantID: tenant.id, policy: policy)
        try await audit(caller, tenant: tenant.id, kind: "tenant.policy_updated", target: tenant.id,
                        detail: ["fields": .array(change.memberNames.map(JSONValue.string))])
        return try ManagementJSON.response(ManagedTenant(updated))
    }

    /// `base` with the fields `change` gives replaced; the algorithm list is checked here (its limits and every other
    /// field's were checked as the body was decoded). `path` prefixes field names in errors (`policy.` in a creation).
    static func policy(_ change: PolicyChange, base: TenantPolicy, path: String = "") throws(ManagementError) -> TenantPolicy {
        var policy = base
        if let algorithms = change.keyAlgorithms {
            let field = path + "key_algorithms"
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
        if let attempts = change.attemptsMax { policy.attemptsMax = attempts }
        if let retries = change.captureRetriesMax { policy.captureRetriesMax = retries }
        if let liveness = change.livenessRequired { policy.livenessRequired = liveness }
        if let threshold = change.matchThreshold {
            // Kept to millionths, as stored.
            policy.matchThreshold = (threshold * 1_000_000).rounded() / 1_000_000
        }
        if let oneDevice = change.oneDevicePerUser { policy.oneDevicePerUser = oneDevice }
        if let lifetime = change.requestLifetimeSeconds { policy.requestLifetimeSeconds = lifetime }
        if let approval = change.furtherDeviceApproval { policy.furtherDeviceApproval = approval }
        if let mode = change.passwordPolicy?.mode { policy.passwordPolicy.mode = mode }
        if let length = change.passwordPolicy?.minimumLength { policy.passwordPolicy.minimumLength = length }
        return policy
    }
}
