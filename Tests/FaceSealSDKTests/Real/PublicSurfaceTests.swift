import Foundation
import Testing

/// The SDK's public surface, as the compiler sees it from outside the package (its public symbol graph): every name of
/// the reference documents is there, and neither the request's `pki_context` nor its client id is ("your app does not
/// see the context and cannot change it", face-pki-ceremony-flow.txt).
@Suite struct PublicSurfaceTests {
    @Test func theDocumentsNamesArePublicAndTheContextIsNot() throws {
        let symbols = try SymbolGraphs.extract(["FaceSealSDK"], minimumAccessLevel: "public")
        let paths = Set(symbols.map(\.pathText))
        for name in [
            "Authenticator.startPkiCeremonyFlow()", "PkiCeremonyFlow.stateStream()", "PkiCeremonyFlow.submitLinkPayload(payload:)",
            "PkiCeremonyFlow.submitPassword(password:)", "PkiCeremonyFlow.submitFaceCapture(captureSession:)", "PkiCeremonyFlow.retry()",
            "PkiCeremonyFlow.cancelCeremony()", "PkiCeremonyFlow.cancel()", "Authenticator.keys", "Authenticator.currentKey",
            "Authenticator.startKeyRotationFlow()", "KeyRotationFlow.approve()", "KeyRotationFlow.cancel()", "Authenticator.takeKeyRotationHint()",
            "Authenticator.startRevocationFlow(keyId:)", "RevocationFlow.approve()", "Authenticator.brandingFor(keyId:)",
            "Authenticator.auditLog(limit:)", "RevokedKeyNotice.replaced", "RevokedKeyNotice.terminated", "BrandingSyncSummary.replacedKeys",
            "SignKeypairError.code", "CompletionFailureReason.isRetryable", "RequestDetails.rpLabel",
        ] {
            #expect(paths.contains(name), "\(name) is not public")
        }
        for hidden in ["RequestDetails.pkiContext", "RequestDetails.clientId"] {
            #expect(!paths.contains(hidden), "\(hidden) is public")
        }
        let leaking = symbols.filter { $0.declaration.contains("pkiContext") }.map(\.pathText)
        #expect(leaking.isEmpty, "public declarations naming the context: \(leaking)")
    }
}
