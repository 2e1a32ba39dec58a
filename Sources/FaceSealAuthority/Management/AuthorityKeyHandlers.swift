import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

// The authority's own keys (administrator): the ID-token keys and the device-response key, listed and rotated.
extension Authority {
    /// `GET /keys` (administrator).
    @Sendable func listAuthorityKeys(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        try caller.requireAdministrator()
        return try ManagementJSON.response(try await managedAuthorityKeys())
    }

    /// `POST /keys/rotate` (administrator): `{id_token?, device?, rollover_days?}`, at least one of the two true.
    @Sendable func rotateAuthorityKeys(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        try caller.requireAdministrator()
        let body = try request.managementBody(AuthorityKeyRotation.self)
        let idToken = body.idToken ?? false
        let device = body.device ?? false
        guard idToken || device else {
            throw ManagementError.invalidRequest(status: 400, "name what to rotate: 'id_token': true, 'device': true, or both")
        }
        let days = body.rolloverDays ?? AuthorityKeyRotation.defaultRolloverDays
        var detail: [String: JSONValue] = [:]
        if idToken {
            detail["id_token_keys"] = .array(try await rotateIDTokenKeys().map { .string($0.keyID) })
        }
        if device {
            let key = try await rotateDeviceResponseKey(window: Int64(days) * 86_400)
            detail["device_key"] = .string(key.keyID)
            detail["rollover_expires_at"] = key.rolloverExpiresAt.map { .string(SQLAuthorityStore.rfc3339($0)) } ?? .null
        }
        try await audit(caller, tenant: nil, kind: "keys.rotated", target: nil, detail: detail)
        return try ManagementJSON.response(try await managedAuthorityKeys())
    }

    func managedAuthorityKeys() async throws -> ManagedAuthorityKeys {
        try await refreshDeviceResponseKey(force: true)
        let now = clock.now()
        let keys = try await store.signingKeys().map { record in
            ManagedAuthorityKey(record, published: record.algorithm != DeviceResponseKeyRing.algorithm && IDTokenKeyRing.isPublished(record, at: now))
        }
        return ManagedAuthorityKeys(keys: keys, devicePublicKey: Base64URL.encode(Array(deviceKey.publicKey.rawRepresentation)))
    }
}
