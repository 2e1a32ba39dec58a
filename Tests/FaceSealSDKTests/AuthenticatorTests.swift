import Foundation
import Testing
@testable import FaceSealSDK

/// `Authenticator`'s own surface: keys, reinstall, branding, the rotation hint and the audit log.
@Suite(.timeLimit(.minutes(1))) struct AuthenticatorTests {
    @Test func keysOmitARecordWhoseKeyMaterialIsGone() async throws {
        let h = Harness()
        let wiped = try h.preload(keyId: "key-1")
        let kept = try h.preload(keyId: "key-2", identityId: "id-2", createdAt: Date(timeIntervalSince1970: 1_700_000_500))
        h.vault.wipe(wiped.ambient.deviceKeyId)
        let authn = try await h.open()
        #expect(authn.keys == [kept.key])
        #expect(authn.currentKey == kept.key)
        #expect(authn.unusableKeys == [wiped.key])
        #expect(throws: AuthnRuntimeError.UnknownKey("key-3")) { try authn.startRevocationFlow(keyId: "key-3") }
        _ = try authn.startRevocationFlow(keyId: "key-1")
    }

    @Test func openAfterAReinstallClearsSurvivingRecordsAndKeys() async throws {
        let h = Harness()
        try h.preload()
        h.vault.state.withLock { $0.freshInstall = true }
        let authn = try await h.open()
        #expect(authn.keys.isEmpty)
        #expect(h.vault.keyIds.isEmpty)
        #expect(try h.readRecords().isEmpty)
        #expect(!h.vault.isFreshInstall())
        #expect(authn.auditLog().first?.kind == .vaultReconciled)
    }

    @Test func openRefusesAnUnknownProtectionTag() async throws {
        let h = Harness()
        try h.preload()
        let plain = try FakeSealer().open(try #require(try h.vault.readRecordFile()))
        let tampered = String(decoding: plain, as: UTF8.self).replacingOccurrences(of: "\"user_present\"", with: "\"biometric_strong\"")
        try h.vault.writeRecordFile(try FakeSealer().seal(Array(tampered.utf8)))
        await #expect(throws: AuthnRuntimeError.vault(.unknownProtectionTag("biometric_strong"))) { try await h.open() }
    }

    @Test func brandingForReturnsTheCachedBrandingOrNil() async throws {
        let h = Harness()
        try h.preload(keyId: "key-1", branding: Branding(displayName: "Acme", logoURL: URL(string: "https://acme.test/logo.png")))
        let authn = try await h.open()
        #expect(authn.brandingFor(keyId: "key-1")?.logoURL?.absoluteString == "https://acme.test/logo.png")
        #expect(authn.brandingFor(keyId: "nope") == nil)
    }

    @Test func brandingSyncUpdatesBrandingAndReportsReplacedKeys() async throws {
        let h = Harness()
        try h.preload(keyId: "key-1")
        let moved = try h.preload(keyId: "key-2", identityId: "id-2", email: "bob@example.com", clientId: "beta", appLabel: "Beta")
        h.authority.script.withLock {
            $0.branding = ["key-1": Branding(displayName: "Acme", primaryColor: "#000000")]
            $0.revokedOnSync = ["key-2": .revoked(terminated: false, replaced: true)]
        }
        let authn = try await h.open()
        let summary = try await authn.syncBranding()
        #expect(summary.updatedKeyIds == ["key-1"])
        #expect(summary.replacedKeys == [RevokedKeyNotice(key: moved.key, terminated: false, replaced: true)])
        #expect(authn.brandingFor(keyId: "key-1")?.primaryColor == "#000000")
        #expect(authn.keys.map(\.id) == ["key-1"])
        #expect(h.vault.keyIds.isDisjoint(with: moved.allDeviceKeyIds))
    }

    @Test func theRotationHintIsOneShotAndSetAgainByTheNextHintedReply() async throws {
        let h = Harness()
        try h.preload()
        let authn = try await h.open()
        #expect(authn.takeKeyRotationHint() == false)
        for round in 1...2 {
            h.scriptRequest(payload: "l\(round)", requestId: "req-\(round)", kind: nil)
            h.authority.script.withLock { $0.hintOnNextReply = true }
            let flow = authn.startLoginFlow()
            var states = Observed(flow.stateStream())
            flow.submitLinkPayload(payload: Array("l\(round)".utf8))
            _ = await states.until { if case .awaitingFaceCapture = $0 { true } else { false } }
            #expect(authn.takeKeyRotationHint() == true, "round \(round)")
            #expect(authn.takeKeyRotationHint() == false, "round \(round)")
            flow.cancel()
        }
    }

    @Test func theAuditLogIsNewestFirstAndLimited() async throws {
        let h = Harness()
        let authn = try await h.open()
        let ring = authn.keyRing()
        for index in 0..<60 {
            h.clock.advance(1)
            ring.audit(.signIn, identityId: "id-\(index)", note: "entry \(index)")
        }
        #expect(authn.auditLog().count == 50)
        #expect(authn.auditLog(limit: 3).map(\.note) == ["entry 59", "entry 58", "entry 57"])
        #expect(authn.auditLog(limit: 3).first?.timestamp == h.clock.now())
        #expect(authn.auditLog(limit: 0).isEmpty)
        #expect(authn.auditLog(limit: 1_000).count == 60)
    }

    @Test func theAuditLogDropsItsOldestEntriesAtCapacity() {
        var log = AuditLog(capacity: 2)
        for index in 0..<3 {
            log.append(AuditEntry(timestamp: Date(timeIntervalSince1970: Double(index)), kind: .ceremony, identityId: nil, note: "\(index)"))
        }
        #expect(log.newest(limit: 10).map(\.note) == ["2", "1"])
    }
}
