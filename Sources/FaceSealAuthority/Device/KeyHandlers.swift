import FaceSealHTTP
import FaceSealWire
import Foundation

// Key rotation, device-initiated revocation and branding sync (docs/PROTOCOL.md §9, SPEC §6.2).
extension Authority {
    /// `POST /device/v1/keys/rotation`, signed by the enrolment's current user-present key; both new keys prove
    /// possession over `{"jti", "old"}`. The old keys stay accepted (with the rotation hint) until the overlap ends.
    func rotateKeys(device: AuthenticatedDevice, request: HTTPRequest) async throws -> KeyRotationResponse {
        let entry = try Self.decodeBody(KeyRotationRequest.self, request).entry
        guard entry.oldKid == device.key.keyID else {
            throw DeviceFailure.invalidRequest("old_kid must be the key that signs the rotation")
        }
        let userPresent = try Self.newDeviceKey(entry.userPresentKey, field: "user_present_key")
        let ambient = try Self.newDeviceKey(entry.ambientKey, field: "ambient_key")
        guard ambient.record.keyID != userPresent.record.keyID else { throw DeviceFailure.invalidRequest("the two keys need different ids") }
        let proofClaims = ["jti": device.claims.jti, "old": entry.oldKid]
        try Self.verifyProof(entry.proof, key: userPresent.public, claims: proofClaims, name: "proof")
        try Self.verifyProof(entry.ambientProof, key: ambient.public, claims: proofClaims, name: "ambient_proof")
        guard device.key.status == .active else {
            return try await repeatedRotation(of: device.key, ambient: ambient.record, userPresent: userPresent.record)
        }
        let overlapUntil = clock.now().addingTimeInterval(TimeInterval(configuration.rotationOverlap))
        do {
            _ = try await store.rotateKeys(enrolmentID: device.key.enrolmentID, replacing: device.key.keyID, ambient: ambient.record,
                                           userPresent: userPresent.record, overlapUntil: overlapUntil)
        } catch AuthorityStoreError.deviceKeyNotActive(_, .superseded) {
            // Another rotation signed by this key committed first: this one is its repeat or refused.
            return try await repeatedRotation(of: try await store.deviceKey(keyID: device.key.keyID),
                                              ambient: ambient.record, userPresent: userPresent.record)
        }
        let tenantID = try? await store.enrolment(id: device.key.enrolmentID).tenantID
        await auditDeviceEvent("device.keys_rotated", tenantID: tenantID, key: device.key.keyID, target: userPresent.record.keyID)
        return KeyRotationResponse(kid: userPresent.record.keyID, overlapUntil: Int64(overlapUntil.timeIntervalSince1970))
    }

    /// The answer to a rotation signed by `old`, a key already rotated: a repeat of the rotation that was registered
    /// (its answer lost) succeeds again with the original overlap; any other successor is refused.
    func repeatedRotation(of old: DeviceKeyRecord, ambient: NewDeviceKey, userPresent: NewDeviceKey) async throws -> KeyRotationResponse {
        guard try await isRegisteredSuccessor(of: old, ambient: ambient, userPresent: userPresent), let overlapUntil = old.overlapUntil else {
            throw DeviceFailure.invalidRequest("this key was already rotated; sign with its successor")
        }
        return KeyRotationResponse(kid: userPresent.keyID, overlapUntil: Int64(overlapUntil.timeIntervalSince1970))
    }

    /// Whether `old` (a superseded user-present key) was replaced by exactly these two keys, the enrolment's active ones.
    func isRegisteredSuccessor(of old: DeviceKeyRecord, ambient: NewDeviceKey, userPresent: NewDeviceKey) async throws -> Bool {
        guard old.supersededBy == userPresent.keyID else { return false }
        let current = try await store.deviceKeys(enrolmentID: old.enrolmentID).filter { $0.status == .active }
        let wanted = [(DeviceKeyRole.ambient, ambient), (.userPresent, userPresent)]
        return current.count == 2 && wanted.allSatisfy { role, key in
            current.contains { $0.role == role && $0.keyID == key.keyID && $0.publicKeyJWK == key.publicKeyJWK }
        }
    }

    /// `POST /device/v1/keys/revocation`: ends the signing key's enrolment (both keys) as revoked.
    func revokeKeys(device: AuthenticatedDevice, request: HTTPRequest) async throws {
        let body = try Self.decodeBody(KeyRevocationRequest.self, request)
        try Self.checkKeyID(body.kid)
        let target: DeviceKeyRecord
        do {
            target = try await store.deviceKey(keyID: body.kid)
        } catch AuthorityStoreError.notFound {
            throw DeviceFailure.invalidRequest("unknown key id")
        }
        // A device revokes only the enrolment whose key signs: another enrolment's id reads as unknown.
        guard target.enrolmentID == device.key.enrolmentID else { throw DeviceFailure.invalidRequest("unknown key id") }
        let enrolment = try await store.endEnrolment(id: target.enrolmentID, status: .revoked)
        await auditDeviceEvent("device.revoked_by_device", tenantID: enrolment.tenantID, key: device.key.keyID, target: enrolment.id)
    }

    /// `GET /device/v1/branding?kids=a,b`: branding of the live enrolments among `kids` and the dead ones
    /// (revoked, terminated, replaced). Only the signing key's user's keys are reported; others are left out.
    func syncBranding(device: AuthenticatedDevice, request: HTTPRequest) async throws -> BrandingSyncResponse {
        guard request.query.items.allSatisfy({ $0.name == "kids" }), request.query.values(for: "kids").count == 1,
              let list = request.query["kids"] else {
            throw DeviceFailure.invalidRequest("the query is exactly kids=<id>,<id>,…")
        }
        let kids = list.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard (1...64).contains(kids.count) else { throw DeviceFailure.invalidRequest("kids names 1–64 keys") }
        for kid in kids { try Self.checkKeyID(kid) }

        var entries: [BrandingEntry] = []
        var dead: [DeadKey] = []
        var applications: [String: ApplicationRecord] = [:]
        for kid in Array(Set(kids)).sorted() {
            guard let key = try await knownDeviceKey(kid), key.subject == device.key.subject else { continue }
            let enrolment = try await store.enrolment(id: key.enrolmentID)
            switch enrolment.status {
            case .active, .superseded:
                if applications[key.clientID] == nil { applications[key.clientID] = try await store.application(clientID: key.clientID) }
                if let application = applications[key.clientID] {
                    entries.append(BrandingEntry(kid: kid, clientId: application.clientID, branding: application.deviceBranding))
                }
            case .pending:
                continue
            case .revoked, .terminated, .replaced:
                dead.append(DeadKey(kid: kid, terminated: enrolment.status == .terminated, replaced: enrolment.status == .replaced))
            }
        }
        return BrandingSyncResponse(entries: entries, dead: dead)
    }

    /// The key `kid`, or nil when it was never registered (other store failures propagate).
    func knownDeviceKey(_ kid: String) async throws -> DeviceKeyRecord? {
        do {
            return try await store.deviceKey(keyID: kid)
        } catch AuthorityStoreError.notFound {
            return nil
        }
    }

    /// Records a device action in the tenant's audit log. Best effort: the action is already stored, and a
    /// lost audit line must not turn it into an error the device would retry.
    func auditDeviceEvent(_ kind: String, tenantID: String?, key: String, target: String) async {
        _ = try? await store.appendAudit(AuditEvent(tenantID: tenantID, kind: kind, actor: key, target: target))
    }
}
