import FaceSealCrypto
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealSDK

/// The authority key pin against real authorities on loopback: an enrolment link never replaces it (SPEC §4.1);
/// only the host app's explicit reset does.
@Suite(.serialized, .timeLimit(.minutes(1))) struct AuthorityPinTests {
    @Test func anEnrolmentLinkOfAnotherAuthorityIsRefusedUntilTheHostResetsThePin() async throws {
        let e = try await Enrolled.make()
        defer { Task { await e.system.stop() } }
        let other = try await LiveSystem.start()
        defer { Task { await other.stop() } }
        let impostorApp = try await other.createApplication(label: "Acme Billing")
        _ = try await other.createUser(email: e.email)
        let link = try await other.invitation(email: e.email, client: impostorApp)
        let claims = try LinkSignature.parse(link).claims
        #expect(claims.iss == other.baseURL.absoluteString && claims.iss != e.system.baseURL.absoluteString)

        // The same device directory with its client on the other authority, as `faceseal device enrol` would open it
        // for a link naming that authority as its issuer.
        let moved = try Device(directory: e.device.directory, baseURL: other.baseURL, deviceProtocol: 7,
                               faceVerifier: FakeFaceVerifier(), clock: SystemWallClock(), name: "phone")
        let authn = try await moved.open()
        let flow = authn.startRegistrationFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: link)
        #expect(await states.until { if case .awaitingLink(.some) = $0 { true } else { false } } == .awaitingLink(refusal: .badSignature))
        flow.cancel()
        #expect(moved.pin.issuer == e.system.baseURL.absoluteString)
        let listed = try await other.manage("GET", "/tenants/acme/devices")
        #expect((listed["devices"] as? [[String: Any]] ?? listed["items"] as? [[String: Any]])?.isEmpty == true)
        // A link naming the pinned authority as its issuer but carrying (and signed with) the other authority's key is
        // refused too, by the pinned client and by the registration flow; the pin stays.
        var forgedClaims = claims
        forgedClaims.iss = e.system.baseURL.absoluteString
        let forged = Array(try LinkSignature.make(forgedClaims, key: other.authority.keys.deviceKey).utf8)
        await #expect(throws: AuthorityFailure.linkRefused(.badSignature)) { _ = try await e.device.client.verifyLink(forged) }
        let pinned = e.authn.startRegistrationFlow()
        var pinnedStates = Observed(pinned.stateStream())
        pinned.submitLinkPayload(payload: forged)
        #expect(await pinnedStates.until { if case .awaitingLink(.some) = $0 { true } else { false } } == .awaitingLink(refusal: .badSignature))
        pinned.cancel()
        #expect(e.device.pin.issuer == e.system.baseURL.absoluteString)
        #expect(e.device.pin.currentKey()?.rawRepresentation == e.system.authority.keys.deviceKey.publicKey.rawRepresentation)
        // The first authority's links still verify against the untouched pin.
        let request = try await e.request()
        #expect(try await e.device.client.verifyLink(request.link).kind == .login)

        // The host app moves the device on purpose: the same (still unused) invitation now enrols and is pinned.
        try moved.pin.reset()
        #expect(moved.pin.issuer == nil)
        let key = try await moved.enrol(authn, link: link)
        #expect(key.email == e.email)
        #expect(moved.pin.issuer == other.baseURL.absoluteString)
        let reopened = try AuthorityKeyPin(file: e.device.directory.appendingPathComponent("vault/authority.pin"))
        #expect(reopened.issuer == other.baseURL.absoluteString)
    }
}
