import FaceSealCrypto
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Device API: parsed device keys are kept between requests")
struct DevicePublicKeysTests {
    @Test("a key's stored JWK is parsed once; a changed text is parsed again; garbage is the authority's error")
    func parsedOncePerText() throws {
        let cache = DevicePublicKeys()
        let first = P256.Signing.PrivateKey().publicKey
        let second = P256.Signing.PrivateKey().publicKey
        let firstJWK = String(decoding: JWK(publicKey: first, keyID: "k1").jsonData, as: UTF8.self)
        let secondJWK = String(decoding: JWK(publicKey: second, keyID: "k1").jsonData, as: UTF8.self)
        #expect(try cache.key(keyID: "k1", storedJWK: firstJWK) == first)
        #expect(try cache.key(keyID: "k1", storedJWK: firstJWK) == first)
        #expect(cache.parsed == 1)
        #expect(try cache.key(keyID: "k1", storedJWK: secondJWK) == second)
        #expect(cache.parsed == 2)
        #expect(throws: DeviceFailure.self) { try cache.key(keyID: "k2", storedJWK: "{\"kty\":\"EC\"}") }
    }

    @Test("signed requests parse the key once; a revoked key is refused although its parsed key is kept",
          arguments: StoreBackend.underTest)
    func edgeUsesTheCacheButNotForStatus(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            try await createPendingRequest(harness, "req-1")
            #expect(try await device.send(.get, DevicePaths.request("req-1")).status == 200)
            let parsed = harness.authority.devicePublicKeys.parsed
            #expect(try await device.send(.get, DevicePaths.request("req-1")).status == 200)
            #expect(harness.authority.devicePublicKeys.parsed == parsed)
            let key = try await harness.store.deviceKey(keyID: device.ambientKID)
            _ = try await harness.store.endEnrolment(id: key.enrolmentID, status: .revoked)
            expectDeviceError(try await device.send(.get, DevicePaths.request("req-1")), .deviceKeyRevoked)
        }
    }
}
