import FaceSealCrypto
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealSDK

/// A user enrolled on one device with one application, ready for requests.
struct Enrolled {
    let system: LiveSystem
    let client: LiveSystem.Client
    let email: String
    let subject: String
    let device: Device
    let authn: Authenticator
    let key: Key

    static func make(policy: LiveSystem.Policy = .init(), deviceProtocol: Int = 7, email: String = "ada@example.com") async throws -> Enrolled {
        let system = try await LiveSystem.start(policy: policy)
        let client = try await system.createApplication(label: "Acme Billing")
        let subject = try await system.createUser(email: email)
        let device = try system.device(deviceProtocol: deviceProtocol, subject: subject)
        let authn = try await device.open()
        let key = try await device.enrol(authn, link: try await system.invitation(email: email, client: client))
        return Enrolled(system: system, client: client, email: email, subject: subject, device: device, authn: authn, key: key)
    }

    /// Starts a request from the application and hands its link (from the device's outbox).
    func request(_ kind: String? = nil, context: String = "invoices", data: [UInt8]? = nil, client: LiveSystem.Client? = nil) async throws -> (rid: String, link: [UInt8]) {
        let rid = try await system.backchannel(client ?? self.client, email: email, pkiKind: kind, context: Array(context.utf8), data: data)
        return (rid, try await device.link(authn, rid: rid))
    }

    /// Runs a ceremony link to its end with one good capture; answers the states seen.
    func runCeremony(_ link: [UInt8], capture label: String = "ada") async -> [PkiCeremonyFlow.State] {
        let flow = authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: link)
        guard let ready = await states.until({ $0.isAwaitingFaceCapture || $0.isTerminal }), ready.isAwaitingFaceCapture else { return states.seen }
        flow.submitFaceCapture(captureSession: capture(label))
        _ = await states.rest()
        return states.seen
    }
}

extension PkiCeremonyFlow.State {
    var isSucceeded: Bool {
        if case .succeeded = self { return true }
        return false
    }
}

@Suite(.serialized, .timeLimit(.minutes(2))) struct ScenarioTests {
    @Test func scenario05_publicKeysSignDecapsulateDeliverThenComplete() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        #expect(e.authn.keys == [e.key])

        // public_keys: the application pins the delivered ML-DSA key.
        let keys = try await e.request("public_keys")
        let keyStates = await e.runCeremony(keys.link)
        #expect(keyStates.last?.isSucceeded == true, "\(keyStates)")
        let keysBody = try DeliveryBody.decode(try #require(e.system.application.accepted(keys.rid)))
        let delivered = try #require(keysBody.publicKeys)
        let token = try await e.system.token(e.client, rid: keys.rid)
        #expect(token.status == 200)
        let claims = try LiveSystem.claims(ofIDToken: try #require(token.body["id_token"] as? String))
        #expect(claims["pki_result_sha256"] as? String == Base64URL.encode(SHA256.hash(data: try #require(e.system.application.accepted(keys.rid))).bytes))
        #expect(claims["pki_kind"] as? String == "public_keys")

        // sign: verified against the pinned key with the empty context.
        let message = Array("invoice 2026-114 total 120.00 EUR".utf8)
        let sign = try await e.request("sign", data: message)
        #expect(await e.runCeremony(sign.link).last?.isSucceeded == true)
        let signBody = try DeliveryBody.decode(try #require(e.system.application.accepted(sign.rid)))
        let mldsa = try MLDSA65.PublicKey(rawRepresentation: try #require(delivered["ML-DSA-65"]).bytes)
        #expect(mldsa.isValidSignature(try #require(signBody.signature).bytes, for: message))
        let signToken = try await e.system.token(e.client, rid: sign.rid)
        let signClaims = try LiveSystem.claims(ofIDToken: try #require(signToken.body["id_token"] as? String))
        #expect(signClaims["pki_result_sha256"] as? String == Base64URL.encode(SHA256.hash(data: try #require(e.system.application.accepted(sign.rid))).bytes))

        // decapsulate: the application encapsulates to the delivered ML-KEM key and gets the same secret.
        let kem = try MLKEM768.PublicKey(rawRepresentation: try #require(delivered["ML-KEM-768"]).bytes)
        let encapsulated = try kem.encapsulate()
        let decap = try await e.request("decapsulate", data: Array(encapsulated.encapsulated))
        #expect(await e.runCeremony(decap.link).last?.isSucceeded == true)
        let decapBody = try DeliveryBody.decode(try #require(e.system.application.accepted(decap.rid)))
        #expect(decapBody.sharedSecret?.bytes == encapsulated.sharedSecret.secret.copyBytes())
        #expect(try await e.system.token(e.client, rid: decap.rid).status == 200)
        #expect(e.system.application.failures.isEmpty)
    }
}
