import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Device API: enrolment, revocation, branding sync, link outbox")
struct DeviceEnrolmentTests {
    @Test("a first device enrols both keys and creates the face token; a further device sends none and gets it once, signed",
          arguments: StoreBackend.underTest)
    func enrolment(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let invitation = try await TestDevice.invite(in: harness, subject: "user-1", clientID: "app-1")
            let detailsResponse = try await harness.client.send(HTTPClientRequest(url: harness.url(DevicePaths.enrolment(invitation))))
            let details = try EnrolmentDetails.decode(detailsResponse.body)
            #expect(details.email == "user-1@example.com")
            #expect(details.subject == "user-1")
            #expect(details.tenant == (try await harness.store.invitation(id: invitation)).tenantID)
            #expect(details.clientId == "app-1")
            #expect(details.tokenExists == false)
            #expect(details.keyPolicy == KeyPolicy.standard)
            let noToken = try await harness.client.send(HTTPClientRequest(url: harness.url(DevicePaths.enrolmentToken(invitation))))
            #expect(noToken.status.code == 401)

            let first = TestDevice(harness: harness)
            let response = try await first.enrol(invitation: invitation)
            #expect(response.status == 200)
            let enrolled = try response.decode(EnrolmentResponse.self)
            #expect(enrolled.identityId == harness.authority.pairwiseSubject(userSubject: "user-1", clientID: "app-1"))
            #expect(enrolled.issuer == harness.authority.configuration.issuer)
            #expect(enrolled.authorityKey.bytes == Array(harness.authority.keys.deviceKey.publicKey.rawRepresentation))
            #expect(enrolled.replacedKeys.isEmpty)
            let ambient = try await harness.store.deviceKey(keyID: first.ambientKID)
            let userPresent = try await harness.store.deviceKey(keyID: first.userPresentKID)
            #expect(ambient.role == .ambient)
            #expect(userPresent.role == .userPresent)
            #expect(ambient.enrolmentID == userPresent.enrolmentID)
            #expect(try await harness.store.faceToken(subject: "user-1").generation == 1)
            // The invitation is used up, and says so to whoever holds its link (PROTOCOL §8).
            let reused = try await harness.client.send(HTTPClientRequest(url: harness.url(DevicePaths.enrolment(invitation))))
            #expect(reused.status.code == 409)
            #expect(try DeviceErrorResponse.decode(reused.body).error == .invitationUsed)

            let second = try await TestDevice.invite(in: harness, subject: "user-1", clientID: "app-2")
            let unsigned = try await harness.client.send(HTTPClientRequest(url: harness.url(DevicePaths.enrolmentToken(second))))
            #expect(unsigned.status.code == 401)
            let further = TestDevice(harness: harness)
            let pending = try await further.enrol(invitation: second)
            #expect(pending.status == 200)
            #expect(try pending.decode(EnrolmentResponse.self).approval?.method == FurtherDeviceApproval.none)
            let tokenResponse = try await further.enrolmentToken(invitation: second)
            #expect(tokenResponse.status == 200)
            _ = try TestDevice.open(try tokenResponse.decode(FaceTokenDownload.self))
            #expect(try await harness.store.faceToken(subject: "user-1").generation == 1)
        }
    }

    @Test("enrolment is all or nothing: a failure after the first key leaves neither", arguments: StoreBackend.underTest)
    func enrolmentAllOrNothing(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (existing, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let invitation = try await TestDevice.invite(in: harness, subject: "user-1", clientID: "app-2")
            // A device whose user-present key id is already taken: its ambient key is inserted first, then the
            // user-present key fails, and the whole enrolment must roll back.
            let clash = TestDevice(harness: harness)
            let jti = DeviceRequestSignature.newJTI()
            var body = try await clash.enrolmentRequest(invitation: invitation, jti: jti)
            body.userPresentKey.kid = existing.userPresentKID
            let signature = try DeviceRequestSignature.make(method: "POST", path: DevicePaths.enrolment(invitation), body: body.encoded(),
                                                            kid: existing.userPresentKID, signer: clash.userPresentKey, now: clash.now, jti: jti)
            let response = try await harness.client.send(HTTPClientRequest(
                method: .post, url: harness.url(DevicePaths.enrolment(invitation)),
                headers: [DeviceSigning.requestHeader: signature.header, DeviceSigning.protocolHeader: "7", "Content-Type": "application/json"],
                body: body.encoded()))
            #expect(response.status.code == 400)
            #expect(try DeviceErrorResponse.decode(response.body).error == .invalidRequest)
            // Refused by the store's insert of the second key, not before it.
            #expect(try DeviceErrorResponse.decode(response.body).errorDescription == "deviceKey already exists")

            await expectStoreError(.notFound(.deviceKey, id: clash.ambientKID)) { try await harness.store.deviceKey(keyID: clash.ambientKID) }
            #expect(try await harness.store.enrolments(subject: "user-1").count == 1)
            #expect(try await harness.store.invitation(id: invitation).consumedAt == nil)
            #expect(try await harness.store.deviceKey(keyID: existing.userPresentKID).publicKeyJWK
                        != String(decoding: JWK(publicKey: clash.userPresentKey.publicKey).jsonData, as: UTF8.self))
            // The same device with its own ids then enrols through the unused invitation.
            #expect(try await clash.enrol(invitation: invitation).status == 200)
        }
    }

    @Test("an enrolment with a bad ambient proof, a token of another user, of format 1 or of a wrong generation stores nothing",
          arguments: StoreBackend.underTest)
    func enrolmentChecks(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let invitation = try await TestDevice.invite(in: harness, subject: "user-1", clientID: "app-1")
            let device = TestDevice(harness: harness)

            func post(_ edit: (inout EnrolmentRequest, String) throws -> Void) async throws -> DeviceResponse {
                let jti = DeviceRequestSignature.newJTI()
                var body = try await device.enrolmentRequest(invitation: invitation, jti: jti)
                try edit(&body, jti)
                return try await device.send(.post, DevicePaths.enrolment(invitation), body: body.encoded(), as: .userPresent, jti: jti)
            }
            expectDeviceError(try await post { body, _ in
                body.ambientProof = try JWS.sign(payload: WireJSON.encode(["inv": invitation, "jti": "old"]), signer: device.ambientKey)
            }, .invalidRequest)
            expectDeviceError(try await post { body, _ in
                let (token, share) = try TestDevice.sealToken(subject: "user-2", tenant: "acme", generation: 1)
                body.token = token
                body.serverShare = Base64URLSecret(share)
            }, .invalidRequest)
            expectDeviceError(try await post { body, _ in
                let (token, share) = try TestDevice.sealToken(subject: "user-1", tenant: "acme", generation: 2)
                body.token = token
                body.serverShare = Base64URLSecret(share)
            }, .invalidRequest)
            // A first token in format 1 (one body, no keys layer) is refused: every new token is format 2.
            expectDeviceError(try await post { body, _ in
                let formatOne = FaceTokenHeader(v: 1, tid: "tok_test", sub: "user-1", tenant: "acme", gen: 1, passwordRequired: false,
                                                livenessRequired: true, threshold: 0.5, scrypt: nil, createdAt: 1_800_000_000)
                body.token = FaceTokenEnvelope(header: formatOne.encoded(), nonce: Array(repeating: 1, count: 12), sealed: Array(repeating: 2, count: 40))
            }, .invalidRequest)
            expectDeviceError(try await post { body, _ in body.serverShare = Base64URLSecret(SecretBytes([1, 2, 3] as [UInt8])) }, .invalidRequest)
            expectDeviceError(try await post { body, _ in body.token = nil; body.serverShare = nil }, .invalidRequest)

            await expectStoreError(.notFound(.faceToken, id: "user-1")) { try await harness.store.faceToken(subject: "user-1") }
            await expectStoreError(.notFound(.deviceKey, id: device.ambientKID)) { try await harness.store.deviceKey(keyID: device.ambientKID) }
            #expect(try await harness.store.invitation(id: invitation).consumedAt == nil)
            #expect(try await device.enrol(invitation: invitation).status == 200)
        }
    }

    @Test("a device revokes its own enrolment; its keys then get deviceKeyRevoked", arguments: StoreBackend.underTest)
    func deviceRevocation(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let (other, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-2")
            // Another enrolment's key is not this key's to revoke.
            expectDeviceError(try await device.post(DevicePaths.revocation, KeyRevocationRequest(kid: other.userPresentKID)), .invalidRequest)
            #expect(try await harness.store.deviceKey(keyID: other.userPresentKID).status == .active)

            let response = try await device.post(DevicePaths.revocation, KeyRevocationRequest(kid: device.userPresentKID))
            #expect(response.status == 204)
            #expect(try await harness.store.deviceKey(keyID: device.ambientKID).status == .revoked)
            expectDeviceError(try await device.send(.get, DevicePaths.outbox), .deviceKeyRevoked)
            let sync = try await other.send(.get, DevicePaths.branding + "?kids=\(device.userPresentKID)").decode(BrandingSyncResponse.self)
            #expect(sync.dead == [DeadKey(kid: device.userPresentKID, terminated: false, replaced: false)])
        }
    }

    @Test("branding sync reports live enrolments, leaves out other users' keys, and refuses a bad query",
          arguments: StoreBackend.underTest)
    func brandingSync(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            var application = try await harness.store.application(clientID: "app-1")
            application.brandingJSON = ##"{"name":"Acme Billing","primary_color":"#0A84FF"}"##
            _ = try await harness.store.updateApplication(application)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let (stranger, _) = try await TestDevice.enrolled(in: harness, subject: "user-2", clientID: "app-1")
            let sync = try await device.send(.get, DevicePaths.branding + "?kids=\(device.userPresentKID),\(stranger.userPresentKID)")
                .decode(BrandingSyncResponse.self)
            #expect(sync.entries == [BrandingEntry(kid: device.userPresentKID, clientId: "app-1",
                                                   branding: BrandingInfo(name: "Acme Billing", primaryColor: "#0A84FF"))])
            #expect(sync.dead.isEmpty)
            expectDeviceError(try await device.send(.get, DevicePaths.branding), .invalidRequest)
            expectDeviceError(try await device.send(.get, DevicePaths.branding + "?kids=a,b&x=1"), .invalidRequest)
        }
    }

    @Test("a stored branding the strict parser refuses, or of the wrong types, reaches devices as the label alone",
          arguments: [##"{"name":"A","name":"B"}"##, "not json", ##"{"name":7,"primary_color":["#000"]}"##, ##"["Acme"]"##])
    func malformedStoredBrandingFallsBackToTheLabel(stored: String) async throws {
        try await withAuthority(.sqlite) { harness in
            try await seedDeviceWorld(harness)
            var application = try await harness.store.application(clientID: "app-1")
            application.brandingJSON = stored
            _ = try await harness.store.updateApplication(application)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let sync = try await device.send(.get, DevicePaths.branding + "?kids=\(device.userPresentKID)").decode(BrandingSyncResponse.self)
            #expect(sync.entries.map(\.branding) == [BrandingInfo(name: application.label)])
        }
    }

    @Test("the outbox returns an announced link, waking a waiting poll, and acknowledges it", arguments: StoreBackend.underTest)
    func outbox(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let (otherApp, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-2")
            let request = try await createPendingRequest(harness, "req-1")
            let deviceID = try await harness.store.deviceKey(keyID: device.ambientKID).deviceID
            // The second enrolment (approved with `none`) was announced to the first device as a notice.
            let notice = try await device.send(.get, DevicePaths.outbox + "?wait=0").decode(OutboxResponse.self).links
            #expect(notice.count == 1 && NoticeSignature.isNotice(Array(notice[0].utf8)))

            // Nothing queued: wait=0 answers at once with no links.
            #expect(try await device.send(.get, DevicePaths.outbox + "?wait=0").decode(OutboxResponse.self).links.isEmpty)

            // A poll waiting for up to 20 s is answered as soon as the link is announced.
            let started = ContinuousClock.now
            let poll = Task { try await device.send(.get, DevicePaths.outbox + "?wait=20") }
            while harness.authority.outbox.waiterCount(deviceID: deviceID) == 0 && ContinuousClock.now - started < .seconds(15) {
                await Task.yield()
            }
            try await harness.authority.announce(link: "link-for-req-1", for: request)
            let answer = try await poll.value
            #expect(ContinuousClock.now - started < .seconds(15))
            #expect(try answer.decode(OutboxResponse.self).links == ["link-for-req-1"])

            // Acknowledged: gone on the next poll. The other application's enrolment never got it.
            #expect(try await device.send(.get, DevicePaths.outbox).decode(OutboxResponse.self).links.isEmpty)
            #expect(try await otherApp.send(.get, DevicePaths.outbox).decode(OutboxResponse.self).links.isEmpty)

            // Queued before the poll: answered at once.
            try await harness.authority.announce(link: "second", for: request)
            #expect(try await device.send(.get, DevicePaths.outbox + "?wait=30").decode(OutboxResponse.self).links == ["second"])
            expectDeviceError(try await device.send(.get, DevicePaths.outbox + "?wait=31"), .invalidRequest)
            expectDeviceError(try await device.send(.get, DevicePaths.outbox + "?wait=soon"), .invalidRequest)
        }
    }

    @Test("an empty long poll answers at its deadline with no links and leaves no waiter behind", arguments: StoreBackend.underTest)
    func outboxDeadline(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let deviceID = try await harness.store.deviceKey(keyID: device.ambientKID).deviceID
            let started = ContinuousClock.now
            let answer = try await device.send(.get, DevicePaths.outbox + "?wait=1")
            #expect(ContinuousClock.now - started >= .seconds(1))
            #expect(try answer.decode(OutboxResponse.self).links.isEmpty)
            #expect(harness.authority.outbox.waiterCount(deviceID: deviceID) == 0)
        }
    }
}
