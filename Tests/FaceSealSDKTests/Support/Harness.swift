import Foundation
@testable import FaceSealSDK

/// Builds an `Authenticator` on the fakes, with helpers to preload enrolments and script requests.
struct Harness {
    static let issuer = "https://authority.test"

    let clock = FixedClock()
    let log = EventLog()
    let authority: FakeAuthority
    let delivery: FakeDelivery
    let verifier = FakeFaceVerifier()
    let vault: FakeVault
    let deviceProtocol: Int

    init(deviceProtocol: Int = 7) {
        authority = FakeAuthority(log: log)
        delivery = FakeDelivery(log: log)
        vault = FakeVault(clock: clock)
        self.deviceProtocol = deviceProtocol
    }

    var environment: AuthenticatorEnvironment {
        AuthenticatorEnvironment(
            authority: authority, delivery: delivery, faceVerifier: verifier, faceTokens: FakeFaceTokens(), vault: vault,
            recordSealer: FakeSealer(), clock: clock, deviceProtocol: deviceProtocol
        )
    }

    func open() async throws -> Authenticator {
        try await Authenticator.open(environment: environment)
    }

    /// Stores an enrolment as a finished registration leaves it: two device keys and a sealed record.
    @discardableResult
    func preload(keyId: String = "key-1", identityId: String = "id-1", email: String = "ada@example.com", clientId: String = "acme",
                 appLabel: String = "Acme", branding: Branding? = nil, createdAt: Date = Date(timeIntervalSince1970: 1_700_000_000)) throws -> KeyRecord {
        let ambient = try vault.createKey(protection: .ambient, alias: "a")
        let userPresent = try vault.createKey(protection: .userPresent, alias: "u")
        let record = KeyRecord(
            key: Key(id: keyId, identityId: identityId, email: email, clientId: clientId, appLabel: appLabel, createdAt: createdAt),
            issuer: Self.issuer, ambient: DeviceKeyRecord(ambient), userPresent: DeviceKeyRecord(userPresent), branding: branding
        )
        try writeRecords(readRecords() + [record])
        return record
    }

    /// `preload()` for callers outside `@testable` (the documents' snippets): answers the public `Key`.
    func preloadKey() throws -> Key { try preload().key }

    func readRecords() throws -> [KeyRecord] {
        try KeyRecordStore(vault: vault, sealer: FakeSealer()).load()
    }

    func writeRecords(_ records: [KeyRecord]) throws {
        try KeyRecordStore(vault: vault, sealer: FakeSealer()).save(records)
    }

    /// Scripts a pending request reachable through the link payload `payload`.
    func scriptRequest(payload: String, requestId: String, kind: PkiCeremonyKind?, identityId: String = "id-1", attemptsMax: Int = 3,
                       minimumDeviceProtocol: Int = 7, pkiData: [UInt8] = [1, 2, 3]) {
        let link = VerifiedLink(kind: kind == nil ? .login : .ceremony, requestId: requestId, issuer: Self.issuer, expiresAtUnix: 1_800_000_300)
        let details = RequestDetails(
            requestId: requestId, identityId: identityId, clientId: "acme", rpLabel: "Acme", branding: Branding(displayName: "Acme"),
            bindingMessage: kind == nil ? nil : "Sign order 42", pkiKind: kind, expiresAtUnix: 1_800_000_300, attemptsMax: attemptsMax,
            minimumDeviceProtocol: minimumDeviceProtocol, keyPolicy: ["ML-DSA-65", "ML-KEM-768"], pkiContext: Array("ctx".utf8),
            pkiData: pkiData, deliveryEndpoint: kind == nil ? nil : URL(string: "https://acme.test/faceseal/deliver"),
            clientNotificationToken: kind == nil ? nil : "bearer-\(requestId)"
        )
        authority.script.withLock {
            $0.links[payload] = link
            $0.details[requestId] = details
        }
    }

    func scriptEnrolment(payload: String, requestId: String, hasFaceToken: Bool, passwordPolicy: Bool = false, attemptsMax: Int = 3) {
        let link = VerifiedLink(kind: .enrolment, requestId: requestId, issuer: Self.issuer, expiresAtUnix: 1_800_000_600)
        let details = EnrolmentDetails(
            requestId: requestId, identityId: "id-9", email: "grace@example.com", subject: "usr-9", tenant: "acme", clientId: "acme", appLabel: "Acme",
            branding: Branding(displayName: "Acme", primaryColor: "#123456"), hasFaceToken: hasFaceToken,
            passwordPolicyRequiresPassword: passwordPolicy, livenessRequired: true, attemptsMax: attemptsMax,
            expiresAtUnix: 1_800_000_600, keyPolicy: ["ML-DSA-65"], minimumDeviceProtocol: 7
        )
        authority.script.withLock {
            $0.links[payload] = link
            $0.enrolments[requestId] = details
        }
    }
}

/// Reads a flow's state stream step by step.
struct Observed<S: Sendable> {
    private var iterator: AsyncStream<S>.Iterator
    private(set) var seen: [S] = []

    init(_ stream: AsyncStream<S>) {
        iterator = stream.makeAsyncIterator()
    }

    /// The next state satisfying `predicate`, or nil if the stream ended first.
    mutating func until(_ predicate: (S) -> Bool) async -> S? {
        while let state = await iterator.next() {
            seen.append(state)
            if predicate(state) { return state }
        }
        return nil
    }

    /// Every remaining state until the stream finishes (after a terminal state).
    mutating func rest() async -> [S] {
        var states: [S] = []
        while let state = await iterator.next() {
            seen.append(state)
            states.append(state)
        }
        return states
    }
}

func capture(_ label: String) -> FakeCaptureSession { FakeCaptureSession(label: label) }
