import Foundation
import FaceSealCrypto
import FaceSealWire
import Testing
@testable import FaceSealRelyingParty

/// The delivery endpoint (SPEC §4.4): happy paths for the three kinds, and every forged delivery refused
/// with a 4xx that leaves nothing pinned or stored.
@Suite struct DeliveryTests {
    let user = "ada@example.com"
    let context = "mail"

    // MARK: Happy paths

    @Test func publicKeysDeliveryIsAcceptedAndPinsTheDeliveredKeys() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        let handle = try await h.rp.start(.publicKeys, user: user, context: context, bindingMessage: "Link your keys")
        let response = await h.deliver(try h.device.deliver(h.body(for: handle, publicKeys: h.device.publicKeys)))
        #expect(response.status == 204)
        #expect(h.pins.count == 1)
        let pinned = try await h.pins.pinnedKeys(for: PinKey(user: user, context: context))
        #expect(pinned == PinnedKeys(keys: h.device.publicKeys))
        #expect(h.pending.deliveredCount == 1)
        // What the relying party sent: a ceremony with a fresh ≥128-bit bearer.
        let form = try #require(h.authority.backchannelForms.last)
        #expect(form["pki_kind"] == "public_keys")
        #expect(form["pki_context"] == context)
        #expect(form["login_hint"] == user)
        #expect(form["binding_message"] == "Link your keys")
        #expect(try Base64URL.decode(h.authority.lastBearer).count >= 16)
    }

    @Test func eachRequestGetsItsOwnBearer() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        _ = try await h.rp.start(.signIn, user: user, context: "", bindingMessage: "Sign in")
        _ = try await h.rp.start(.signIn, user: user, context: "", bindingMessage: "Sign in")
        let bearers = h.authority.backchannelForms.compactMap { $0["client_notification_token"] }
        #expect(bearers.count == 2)
        #expect(Set(bearers).count == 2)
    }

    @Test func signDeliveryIsAcceptedWhenTheSignatureOverTheDataVerifies() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        try await h.pinDeviceKeys()
        let message = Array("pay 10 EUR to Bob".utf8)
        let handle = try await h.rp.start(.sign(data: message), user: user, context: context, bindingMessage: "Pay 10 EUR")
        #expect(h.authority.backchannelForms.last?["pki_data"] == Base64URL.encode(message))
        let signature = Array(try h.device.signingKey.signature(for: message))
        let response = await h.deliver(try h.device.deliver(h.body(for: handle, signature: signature)))
        #expect(response.status == 204)
        #expect(h.pending.deliveredCount == 1)
    }

    @Test func decapsulateDeliveryIsAcceptedWithTheEncapsulatedSecret() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        try await h.pinDeviceKeys()
        let handle = try await h.rp.start(.decapsulate, user: user, context: context, bindingMessage: "Open the vault")
        let secret = try h.device.kemKey.decapsulate(h.lastCiphertext)
        let response = await h.deliver(try h.device.deliver(h.body(for: handle, sharedSecret: secret.secret.copyBytes())))
        #expect(response.status == 204)
        #expect(h.pending.deliveredCount == 1)
    }

    @Test func signAndDecapsulateNeedAPinnedKey() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        await #expect(throws: RelyingPartyError.self) {
            _ = try await h.rp.start(.sign(data: [1, 2, 3]), user: user, context: context, bindingMessage: "Sign")
        }
        await #expect(throws: RelyingPartyError.self) {
            _ = try await h.rp.start(.decapsulate, user: user, context: context, bindingMessage: "Open")
        }
        #expect(h.authority.backchannelForms.isEmpty)
    }

    // MARK: Forged deliveries

    /// A sign ceremony whose delivery the test forges; returns the harness and the handle.
    func signSetup() async throws -> (Harness, PendingRequestHandle, [UInt8]) {
        let h = try Harness()
        try await h.pinDeviceKeys()
        let message = Array("transfer".utf8)
        let handle = try await h.rp.start(.sign(data: message), user: user, context: context, bindingMessage: "Transfer")
        return (h, handle, message)
    }

    func expectNothingStored(_ h: Harness, pins: Int = 1) {
        #expect(h.pending.deliveredCount == 0)
        #expect(h.pins.count == pins)
    }

    @Test func wrongBearerIsRefused() async throws {
        let (h, handle, message) = try await signSetup()
        defer { Task { await h.authority.stop() } }
        let signature = Array(try h.device.signingKey.signature(for: message))
        let delivered = try h.device.deliver(h.body(for: handle, signature: signature))
        let wrong = Base64URL.encode(SecureRandom.bytes(count: 32))
        #expect(await h.deliver(delivered, bearer: wrong).status == 401)
        // No bearer at all.
        let none = await h.rp.handleDelivery(method: "POST", headers: TestDevice.headers(bearer: nil, signature: delivered.signature), body: delivered.body)
        #expect(none.status == 401)
        expectNothingStored(h)
        // The genuine delivery still goes through afterwards.
        #expect(await h.deliver(delivered).status == 204)
    }

    @Test func wrongSignatureIsRefused() async throws {
        let (h, handle, message) = try await signSetup()
        defer { Task { await h.authority.stop() } }
        let signature = Array(try h.device.signingKey.signature(for: message))
        var delivered = try h.device.deliver(h.body(for: handle, signature: signature))
        var bytes = try Base64URL.decode(delivered.signature)
        bytes[10] ^= 1
        delivered.signature = Base64URL.encode(bytes)
        #expect(await h.deliver(delivered).status == 403)
        // Missing and garbage headers.
        let missing = await h.rp.handleDelivery(method: "POST", headers: TestDevice.headers(bearer: h.authority.lastBearer, signature: nil), body: delivered.body)
        #expect(missing.status == 403)
        #expect(await h.deliver((delivered.body, "not base64url!")).status == 403)
        // A signature under the sign context (a `sign` result passed off as a delivery signature).
        let wrongContext = Base64URL.encode(try h.device.signingKey.signature(for: delivered.body))
        #expect(await h.deliver((delivered.body, wrongContext)).status == 403)
        expectNothingStored(h)
    }

    @Test func signatureByAnotherKeyIsRefused() async throws {
        let (h, handle, message) = try await signSetup()
        defer { Task { await h.authority.stop() } }
        let intruder = MLDSA65.PrivateKey()
        let signature = Array(try intruder.signature(for: message))
        let body = h.body(for: handle, signature: signature, keyID: PinnedKeys.keyID(of: Array(intruder.publicKey.rawRepresentation)))
        #expect(await h.deliver(try h.device.deliver(body, signer: intruder)).status == 403)
        expectNothingStored(h)
    }

    @Test func publicKeysSignedByAnotherKeyThanTheDeliveredOneIsRefused() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        let handle = try await h.rp.start(.publicKeys, user: user, context: context, bindingMessage: "Link")
        let intruder = MLDSA65.PrivateKey()
        #expect(await h.deliver(try h.device.deliver(h.body(for: handle, publicKeys: h.device.publicKeys), signer: intruder)).status == 403)
        expectNothingStored(h, pins: 0)
    }

    @Test func publicKeysContradictingThePinAreRefused() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        try await h.pinDeviceKeys()
        let handle = try await h.rp.start(.publicKeys, user: user, context: context, bindingMessage: "Link")
        let other = try TestDevice()
        let response = await h.deliver(try other.deliver(h.body(for: handle, publicKeys: other.publicKeys, keyID: other.keyID)))
        #expect(response.status == 409)
        #expect(try await h.pins.pinnedKeys(for: PinKey(user: user, context: context)) == PinnedKeys(keys: h.device.publicKeys))
        expectNothingStored(h)
    }

    @Test func replayedBodyIsRefused() async throws {
        let (h, handle, message) = try await signSetup()
        defer { Task { await h.authority.stop() } }
        let signature = Array(try h.device.signingKey.signature(for: message))
        let delivered = try h.device.deliver(h.body(for: handle, signature: signature))
        #expect(await h.deliver(delivered).status == 204)
        let firstHash = try await h.pending.request(handle.authReqId)?.delivery?.bodySHA256
        // The same bytes again, and a second, different (but valid) delivery: both refused, the first stays.
        #expect(await h.deliver(delivered).status == 409)
        let resigned = Array(try h.device.signingKey.signature(for: message))
        #expect(await h.deliver(try h.device.deliver(h.body(for: handle, signature: resigned))).status == 409)
        #expect(try await h.pending.request(handle.authReqId)?.delivery?.bodySHA256 == firstHash)
        #expect(h.pending.deliveredCount == 1)
    }

    @Test func unknownAuthReqIdIsRefused() async throws {
        let (h, handle, message) = try await signSetup()
        defer { Task { await h.authority.stop() } }
        let signature = Array(try h.device.signingKey.signature(for: message))
        var body = h.body(for: handle, signature: signature)
        body.authReqId = "req-unknown-" + Base64URL.encode(SecureRandom.bytes(count: 16))
        #expect(await h.deliver(try h.device.deliver(body)).status == 404)
        expectNothingStored(h)
    }

    @Test func expiredRequestIsRefused() async throws {
        let (h, handle, message) = try await signSetup()
        defer { Task { await h.authority.stop() } }
        h.clock.advance(301)
        let signature = Array(try h.device.signingKey.signature(for: message))
        #expect(await h.deliver(try h.device.deliver(h.body(for: handle, signature: signature))).status == 404)
        expectNothingStored(h)
    }

    @Test func wrongKindIsRefused() async throws {
        let (h, handle, _) = try await signSetup()
        defer { Task { await h.authority.stop() } }
        let body = h.body(for: handle, kind: .decapsulate, sharedSecret: Array(repeating: 7, count: 32))
        #expect(await h.deliver(try h.device.deliver(body)).status == 422)
        // A delivery for a sign-in, which expects none.
        let login = try await h.rp.start(.signIn, user: user, context: "", bindingMessage: "Sign in")
        let loginBody = h.body(for: login, kind: .sign, signature: [1])
        #expect(await h.deliver(try h.device.deliver(loginBody)).status == 422)
        expectNothingStored(h)
    }

    @Test func oversizedBodyIsRefused() async throws {
        let (h, handle, _) = try await signSetup()
        defer { Task { await h.authority.stop() } }
        // Valid bearer, id, kind and signature: refused at the limit check (32 KiB).
        let body = h.body(for: handle, signature: Array(repeating: 0xAB, count: 30_000))
        let bytes = body.encoded()
        #expect(bytes.count > DeliveryBody.maxBytes)
        #expect(await h.deliver(try h.device.sign(bytes)).status == 413)
        // Beyond the envelope limit: refused before anything is parsed.
        let huge = [UInt8](repeating: 0x20, count: DeliveryVerifier.maxEnvelopeBytes + 1)
        #expect(await h.deliver((huge, "AA")).status == 413)
        expectNothingStored(h)
    }

    @Test func malformedJSONIsRefused() async throws {
        let (h, handle, message) = try await signSetup()
        defer { Task { await h.authority.stop() } }
        #expect(await h.deliver(try h.device.sign(Array("{not json".utf8))).status == 400)
        #expect(await h.deliver(try h.device.sign(Array("[1,2]".utf8))).status == 400)
        // Valid envelope, but an unknown field fails the strict parse (after the signature verified).
        let signature = Array(try h.device.signingKey.signature(for: message))
        var text = String(decoding: h.body(for: handle, signature: signature).encoded(), as: UTF8.self)
        text.removeLast()
        text += ",\"extra\":1}"
        #expect(await h.deliver(try h.device.sign(Array(text.utf8))).status == 400)
        // A bad base64url result field.
        let bad = "{\"auth_req_id\":\"\(handle.authReqId)\",\"iat\":1,\"key_id\":\"\(h.device.keyID)\",\"kind\":\"sign\",\"signature\":\"@@\",\"v\":7}"
        #expect(await h.deliver(try h.device.sign(Array(bad.utf8))).status == 400)
        // Not a POST.
        let get = await h.rp.handleDelivery(method: "GET", headers: [:], body: [])
        #expect(get.status == 405)
        expectNothingStored(h)
    }

    @Test func inconsistentResultFieldsAreRefused() async throws {
        let (h, handle, message) = try await signSetup()
        defer { Task { await h.authority.stop() } }
        let signature = Array(try h.device.signingKey.signature(for: message))
        // Two result fields.
        let both = h.body(for: handle, signature: signature, sharedSecret: Array(repeating: 1, count: 32))
        #expect(await h.deliver(try h.device.deliver(both)).status == 400)
        // None.
        #expect(await h.deliver(try h.device.deliver(h.body(for: handle))).status == 400)
        // A key_id that is not the signing key's.
        let wrongID = h.body(for: handle, signature: signature, keyID: Base64URL.encode(SHA256.hash(data: [1]).bytes))
        #expect(await h.deliver(try h.device.deliver(wrongID)).status == 400)
        expectNothingStored(h)
    }

    @Test func signResultThatDoesNotVerifyIsRefused() async throws {
        let (h, handle, _) = try await signSetup()
        defer { Task { await h.authority.stop() } }
        // A valid signature, but over other data than was asked for.
        let signature = Array(try h.device.signingKey.signature(for: Array("something else".utf8)))
        #expect(await h.deliver(try h.device.deliver(h.body(for: handle, signature: signature))).status == 422)
        expectNothingStored(h)
    }

    @Test func wrongSharedSecretIsRefused() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        try await h.pinDeviceKeys()
        let handle = try await h.rp.start(.decapsulate, user: user, context: context, bindingMessage: "Open")
        var secret = try h.device.kemKey.decapsulate(h.lastCiphertext).secret.copyBytes()
        secret[0] ^= 0x80
        #expect(await h.deliver(try h.device.deliver(h.body(for: handle, sharedSecret: secret))).status == 422)
        expectNothingStored(h)
    }

    @Test func malformedDeliveredPublicKeysAreRefusedAndNotPinned() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        let handle = try await h.rp.start(.publicKeys, user: user, context: context, bindingMessage: "Link")
        var keys = h.device.publicKeys
        keys[.mlKEM768] = [1, 2, 3]
        #expect(await h.deliver(try h.device.deliver(h.body(for: handle, publicKeys: keys))).status == 422)
        expectNothingStored(h, pins: 0)
    }
}
