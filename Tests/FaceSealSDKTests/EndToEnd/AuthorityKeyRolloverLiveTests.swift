@testable import FaceSealAuthority
import FaceSealCrypto
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealSDK

/// Issue 14 item 6 end to end: the authority rotates the device-response key every device pinned; an enrolled device
/// follows the rollover statement, re-pins (on disk) and keeps working; a rollover its pinned key did not sign is refused.
@Suite(.serialized, .timeLimit(.minutes(2))) struct AuthorityKeyRolloverLiveTests {
    /// Signs in on the enrolled device with a fresh request; answers the flow's last state.
    static func signIn(_ e: Enrolled) async throws -> LoginFlow.State? {
        let rid = try await e.system.backchannel(e.client, email: e.email)
        let flow = e.authn.startLoginFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: try await e.device.link(e.authn, rid: rid))
        guard case .awaitingFaceCapture = await states.until({ state in
            if case .awaitingFaceCapture = state { return true }
            return state.isTerminal
        }) else { return states.seen.last }
        flow.submitFaceCapture(captureSession: capture("ada"))
        return await states.until(\.isTerminal)
    }

    static func pinnedKey(_ e: Enrolled) throws -> [UInt8] {
        try #require(e.device.pin.currentKey()).rawRepresentation.map { $0 }
    }

    @Test(arguments: StoreBackend.underTest)
    func aDeviceFollowsTheRolloverAndKeepsWorking(_ backend: StoreBackend) async throws {
        let e = try await Enrolled.make(backend: backend)
        defer { Task { await e.system.stop() } }
        let k0 = try Self.pinnedKey(e)
        guard case .succeeded = try await Self.signIn(e) else { Issue.record("sign-in before the rotation failed"); return }

        let rotated = try await e.system.manage("POST", "/keys/rotate", ["device": true, "id_token": true])
        let k1 = try Base64URL.decode(try #require(rotated["device_public_key"] as? String))
        #expect(k1 != k0)
        guard case .succeeded = try await Self.signIn(e) else { Issue.record("sign-in after the rotation failed"); return }
        #expect(try Self.pinnedKey(e) == k1)
        // Persisted: a reopened pin file holds the new key.
        let reopened = try AuthorityKeyPin(file: e.device.directory.appendingPathComponent("vault/authority.pin"))
        #expect(reopened.currentKey()?.rawRepresentation.map { $0 } == k1)

        // An impostor takes over the authority's signing with a statement of its own key: the device does not follow.
        let impostor = Curve25519.Signing.PrivateKey()
        let now = Int64(Date().timeIntervalSince1970)
        let forged = try AuthorityKeyRollover.make(
            AuthorityKeyRolloverClaims(iss: e.system.baseURL.absoluteString, old: k1, new: Array(impostor.publicKey.rawRepresentation),
                                       iat: now, exp: now + 3600), oldKey: impostor)
        let authority = e.system.authority
        var jwk = JWK(publicKey: impostor.publicKey)
        jwk.keyID = jwk.thumbprintBase64URL
        let keyID = try #require(jwk.keyID)
        var record = SigningKeyRecord(keyID: keyID, algorithm: DeviceResponseKeyRing.algorithm, publicJWK: String(decoding: jwk.jsonData, as: UTF8.self),
                                      encryptedPrivateKey: try SigningKeySeal.seal(impostor.secretRepresentation, keyID: keyID,
                                                                                   algorithmName: DeviceResponseKeyRing.algorithm,
                                                                                   masterKey: authority.keys.signingKeyWrappingKey))
        record.rollover = forged
        record.rolloverExpiresAt = Date(timeIntervalSince1970: TimeInterval(now + 3600))
        _ = try await authority.store.rotateDeviceResponseKey(record, replacing: authority.deviceResponseKeys.current.keyID)
        try await authority.refreshDeviceResponseKey(force: true)
        await #expect(throws: (any Error).self) { _ = try await e.device.links(e.authn) }
        #expect(try Self.pinnedKey(e) == k1)
        #expect(try AuthorityKeyPin(file: e.device.directory.appendingPathComponent("vault/authority.pin")).currentKey()?
            .rawRepresentation.map { $0 } == k1)

        // Nor does a pin follow a statement of its previous key once it moved on.
        let pin = try AuthorityKeyPin(file: nil)
        try pin.confirm(invitation: "inv", issuer: e.system.baseURL.absoluteString, key: k1, now: now)
        #expect(try pin.rollOver([forged], now: now) == false)
        #expect(pin.currentKey()?.rawRepresentation.map { $0 } == k1)
    }
}
