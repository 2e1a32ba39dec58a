import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Device API: request signatures, key status, replay, roles, signed responses")
struct DeviceAuthenticationTests {
    @Test("a replayed request (same jti) is refused", arguments: StoreBackend.underTest)
    func replayRefused(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-1")
            let jti = DeviceRequestSignature.newJTI()
            let first = try await device.send(.get, DevicePaths.request("req-1"), jti: jti)
            #expect(first.status == 200)
            let replay = try await device.send(.get, DevicePaths.request("req-1"), jti: jti)
            expectDeviceError(replay, .replayedRequest)
            // Still refused once the clock has moved on inside the acceptance window.
            harness.clock.advance(by: 100)
            expectDeviceError(try await device.send(.get, DevicePaths.request("req-1"), jti: jti, iat: device.now - 100), .replayedRequest)
        }
    }

    @Test("a request signed with a revoked key gets deviceKeyRevoked", arguments: StoreBackend.underTest)
    func revokedKey(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-1")
            let key = try await harness.store.deviceKey(keyID: device.ambientKID)
            _ = try await harness.store.endEnrolment(id: key.enrolmentID, status: .revoked)
            expectDeviceError(try await device.send(.get, DevicePaths.request("req-1")), .deviceKeyRevoked)
            expectDeviceError(try await device.send(.post, DevicePaths.abort("req-1"),
                                                    body: AbortRequest(rid: "req-1", reason: .userCancelled).encoded(), as: .userPresent),
                              .deviceKeyRevoked)
            #expect(try await harness.store.request(authReqID: "req-1").state == .pending)
        }
    }

    @Test("a request signed with a terminated key gets deviceKeyTerminated", arguments: StoreBackend.underTest)
    func terminatedKey(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let key = try await harness.store.deviceKey(keyID: device.ambientKID)
            _ = try await harness.store.endEnrolment(id: key.enrolmentID, status: .terminated)
            let response = try await device.send(.get, DevicePaths.outbox)
            expectDeviceError(response, .deviceKeyTerminated)
            #expect(response.error?.removesKey == true)
        }
    }

    @Test("one device per user: the old device's keys get deviceKeyReplaced and branding sync reports them replaced",
          arguments: StoreBackend.underTest)
    func replacedKey(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy(oneDevicePerUser: true, furtherDeviceApproval: .none))
            let (old, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            // The old phone also holds app-2, which the move of app-1 leaves alone.
            let (oldOther, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-2")
            // A further device replaces the old one when its token is released (not at its pending registration).
            _ = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            #expect(try await harness.store.deviceKey(keyID: old.userPresentKID).status == .replaced)
            #expect(try await harness.store.deviceKey(keyID: old.ambientKID).status == .replaced)

            expectDeviceError(try await old.send(.get, DevicePaths.outbox), .deviceKeyReplaced)
            let sync = try await oldOther.send(.get, DevicePaths.branding + "?kids=\(old.userPresentKID),\(oldOther.userPresentKID)")
            #expect(sync.status == 200)
            let summary = try sync.decode(BrandingSyncResponse.self)
            #expect(summary.dead == [DeadKey(kid: old.userPresentKID, terminated: false, replaced: true)])
            #expect(summary.entries.map(\.kid) == [oldOther.userPresentKID])
            #expect(summary.entries.first?.clientId == "app-2")
        }
    }

    @Test("the previous key works during the rotation overlap, with the hint; after it, it is refused",
          arguments: StoreBackend.underTest)
    func rotationOverlap(backend: StoreBackend) async throws {
        try await withAuthority(backend, configure: { $0.rotationOverlap = 3600 }) { harness in
            try await seedDeviceWorld(harness)
            let (old, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-1")
            let new = TestDevice(harness: harness)
            let rotation = try await rotationRequest(from: old, to: new)
            let rotated = try await old.send(.post, DevicePaths.rotation, body: rotation.body.encoded(), as: .userPresent, jti: rotation.jti)
            #expect(rotated.status == 200)
            #expect(rotated.hint == false)
            let answer = try rotated.decode(KeyRotationResponse.self)
            #expect(answer.kid == new.userPresentKID)
            #expect(answer.overlapUntil == old.now + 3600)

            let viaOld = try await old.send(.get, DevicePaths.request("req-1"))
            #expect(viaOld.status == 200)
            #expect(viaOld.hint)
            let viaNew = try await new.send(.get, DevicePaths.request("req-1"))
            #expect(viaNew.status == 200)
            #expect(viaNew.hint == false)

            // Errors raised after the key check carry the hint too.
            let jti = DeviceRequestSignature.newJTI()
            _ = try await old.send(.get, DevicePaths.request("req-1"), jti: jti)
            let replayed = try await old.send(.get, DevicePaths.request("req-1"), jti: jti)
            expectDeviceError(replayed, .replayedRequest)
            #expect(replayed.hint)
            let ambientOnly = try await old.send(.post, DevicePaths.abort("req-1"), body: AbortRequest(rid: "req-1", reason: .userCancelled).encoded())
            expectDeviceError(ambientOnly, .userPresenceRequired)
            #expect(ambientOnly.hint)

            // The same rotation again (its answer lost) succeeds with the original overlap; another successor is refused.
            let again = try await rotationRequest(from: old, to: new)
            let repeated = try await old.send(.post, DevicePaths.rotation, body: again.body.encoded(), as: .userPresent, jti: again.jti)
            #expect(repeated.status == 200)
            #expect(try repeated.decode(KeyRotationResponse.self).overlapUntil == old.now + 3600)
            let other = try await rotationRequest(from: old, to: TestDevice(harness: harness))
            expectDeviceError(try await old.send(.post, DevicePaths.rotation, body: other.body.encoded(), as: .userPresent, jti: other.jti),
                              .invalidRequest)
            #expect(try await harness.store.deviceKey(keyID: new.userPresentKID).status == .active)

            harness.clock.advance(by: 3601)
            expectDeviceError(try await old.send(.get, DevicePaths.request("req-1")), .deviceKeyRevoked)
            #expect(try await new.send(.get, DevicePaths.outbox).status == 200)
        }
    }

    @Test("two rotations signed by one key at once: one registers its successor, the other is refused; two keys stay active",
          arguments: StoreBackend.underTest)
    func racingRotations(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (old, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let successors = [TestDevice(harness: harness), TestDevice(harness: harness)]
            var rotations: [(body: KeyRotationRequest, jti: String)] = []
            for successor in successors { rotations.append(try await rotationRequest(from: old, to: successor)) }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for rotation in rotations {
                    group.addTask { try await old.send(.post, DevicePaths.rotation, body: rotation.body.encoded(), as: .userPresent, jti: rotation.jti).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.sorted() == [200, 400])
            let enrolment = try await harness.store.deviceKey(keyID: old.userPresentKID).enrolmentID
            let active = try await harness.store.deviceKeys(enrolmentID: enrolment).filter { $0.status == .active }.map(\.keyID)
            let winners = successors.filter { active.contains($0.userPresentKID) }
            #expect(active.count == 2 && winners.count == 1)
            #expect(try await harness.store.deviceKey(keyID: old.userPresentKID).supersededBy == winners.first?.userPresentKID)
        }
    }

    @Test("a rotation whose proofs do not verify changes nothing", arguments: StoreBackend.underTest)
    func rotationNeedsProofs(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (old, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let new = TestDevice(harness: harness)
            var rotation = try await rotationRequest(from: old, to: new)
            // The ambient proof made for another request id.
            rotation.body.entry.ambientProof = try JWS.sign(
                payload: WireJSON.encode(["jti": "other", "old": old.userPresentKID]), signer: new.ambientKey)
            let refused = try await old.send(.post, DevicePaths.rotation, body: rotation.body.encoded(), as: .userPresent, jti: rotation.jti)
            expectDeviceError(refused, .invalidRequest)
            #expect(try await harness.store.deviceKey(keyID: old.userPresentKID).status == .active)
            await expectStoreError(.notFound(.deviceKey, id: new.userPresentKID)) { try await harness.store.deviceKey(keyID: new.userPresentKID) }
        }
    }

    @Test("the ambient key is refused where the user must be present", arguments: StoreBackend.underTest)
    func ambientRefusedOnCompletion(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-1")
            let download = try await downloadToken(device, "req-1")
            let completion = try TestDevice.completion(rid: "req-1", from: download, receipt: receipt("delivery"))
            let response = try await device.post(DevicePaths.completion("req-1"), completion, as: .ambient)
            expectDeviceError(response, .userPresenceRequired)
            #expect(try await harness.store.request(authReqID: "req-1").state == .pending)
            #expect(try await harness.store.faceToken(subject: "user-1").generation == 1)
            expectDeviceError(try await device.post(DevicePaths.abort("req-1"), AbortRequest(rid: "req-1", reason: .refused), as: .ambient),
                              .userPresenceRequired)
        }
    }

    @Test("iat more than 120 s from the authority's clock is clock_skew", arguments: StoreBackend.underTest)
    func clockSkew(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            expectDeviceError(try await device.send(.get, DevicePaths.outbox, iat: device.now - 121), .clockSkew)
            expectDeviceError(try await device.send(.get, DevicePaths.outbox, iat: device.now + 121), .clockSkew)
            #expect(try await device.send(.get, DevicePaths.outbox, iat: device.now - 120).status == 200)
            #expect(try await device.send(.get, DevicePaths.outbox, iat: device.now + 120).status == 200)
        }
    }

    @Test("the response signature verifies, and a tampered body or status does not", arguments: StoreBackend.underTest)
    func responseSignature(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-1")
            let jti = DeviceRequestSignature.newJTI()
            let response = try await device.sendUnverified(.get, DevicePaths.request("req-1"), jti: jti)
            let header = response.headers[DeviceSigning.responseHeader]
            let claims = try AuthorityResponseSignature.verify(header, body: response.body, requestJTI: jti, status: 200, key: device.authorityKey)
            #expect(claims.jti == jti)
            var tampered = response.body
            tampered[tampered.count / 2] ^= 0x01
            #expect(throws: WireError.badSignature) {
                try AuthorityResponseSignature.verify(header, body: tampered, requestJTI: jti, status: 200, key: device.authorityKey)
            }
            #expect(throws: WireError.badSignature) {
                try AuthorityResponseSignature.verify(header, body: response.body, requestJTI: jti, status: 404, key: device.authorityKey)
            }
            #expect(throws: WireError.badSignature) {
                try AuthorityResponseSignature.verify(header, body: response.body, requestJTI: "another", status: 200, key: device.authorityKey)
            }
            // Errors are signed too.
            let error = try await device.send(.get, DevicePaths.request("req-unknown"))
            expectDeviceError(error, .unknownRequest)
        }
    }

    @Test("a bad or missing signature is invalid_signature; a missing protocol header is upgrade_required",
          arguments: StoreBackend.underTest)
    func badSignatures(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let unsigned = try await harness.client.send(HTTPClientRequest(url: harness.url(DevicePaths.outbox)))
            #expect(unsigned.status.code == 401)
            #expect(try DeviceErrorResponse.decode(unsigned.body).error == .invalidSignature)

            // Signed for another path.
            let jti = DeviceRequestSignature.newJTI()
            let signature = try DeviceRequestSignature.make(method: "GET", path: DevicePaths.branding, body: [], kid: device.ambientKID,
                                                            signer: device.ambientKey, now: device.now, jti: jti)
            let wrongPath = try await harness.client.send(HTTPClientRequest(url: harness.url(DevicePaths.outbox), headers: [
                DeviceSigning.requestHeader: signature.header, DeviceSigning.protocolHeader: "7",
            ]))
            #expect(wrongPath.status.code == 401)
            #expect(try DeviceErrorResponse.decode(wrongPath.body).error == .invalidSignature)
            _ = try AuthorityResponseSignature.verify(wrongPath.headers[DeviceSigning.responseHeader], body: wrongPath.body,
                                                      requestJTI: jti, status: 401, key: device.authorityKey)

            var old = device
            old.protocolVersion = 5
            expectDeviceError(try await old.send(.get, DevicePaths.outbox), .upgradeRequired)
        }
    }

    @Test("a ceremony's token and completion need device protocol 7", arguments: StoreBackend.underTest)
    func ceremonyNeedsProtocol7(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            var (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-ceremony")
            try await createPendingRequest(harness, "req-login", kind: .login)
            device.protocolVersion = 6
            let details = try await device.send(.get, DevicePaths.request("req-ceremony"))
            #expect(try details.decode(RequestDetails.self).minProtocol == 7)
            expectDeviceError(try await device.send(.get, DevicePaths.requestToken("req-ceremony"), as: .userPresent), .upgradeRequired)
            #expect(try await device.send(.get, DevicePaths.requestToken("req-login"), as: .userPresent).status == 200)
        }
    }
}

/// A rotation from `old`'s keys to `new`'s, with both proofs over the request's `jti`.
func rotationRequest(from old: TestDevice, to new: TestDevice) async throws -> (body: KeyRotationRequest, jti: String) {
    let jti = DeviceRequestSignature.newJTI()
    let claims = WireJSON.encode(["jti": jti, "old": old.userPresentKID])
    let entry = KeyRotationEntry(
        oldKid: old.userPresentKID,
        ambientKey: DevicePublicKey(kid: new.ambientKID, x963: Array(new.ambientKey.publicKey.x963Representation)),
        userPresentKey: DevicePublicKey(kid: new.userPresentKID, x963: Array(new.userPresentKey.publicKey.x963Representation)),
        proof: try JWS.sign(payload: claims, signer: new.userPresentKey, keyID: new.userPresentKID),
        ambientProof: try JWS.sign(payload: claims, signer: new.ambientKey, keyID: new.ambientKID))
    return (KeyRotationRequest(entry: entry), jti)
}
