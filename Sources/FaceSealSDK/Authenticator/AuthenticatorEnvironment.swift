/// The seams an `Authenticator` is built on. The real implementations come from the wire, HTTP,
/// crypto and face modules (and the platform vault); tests and the demo may pass their own.
public import FaceSealWire
public struct AuthenticatorEnvironment: Sendable {
    /// The device protocol this SDK speaks.
    public static let currentDeviceProtocol = 7

    /// The authority's device API.
    public var authority: any AuthorityClient
    /// Posts deliveries to applications.
    public var delivery: any DeliveryPoster
    /// Liveness and face match.
    public var faceVerifier: any FaceVerifier
    /// Opens, creates and re-seals face tokens.
    public var faceTokens: any FaceTokenOpener
    /// The device key store.
    public var vault: any KeyVault
    /// Seals the key-record file (AES-256-GCM on the Linux file vault).
    public var recordSealer: any RecordSealer
    /// The wall clock (audit timestamps, `issuedAt`, record dates).
    public var clock: any WallClock
    /// The device protocol to announce; settable so tests can play an older SDK.
    public var deviceProtocol: Int
    /// How many audit entries are kept.
    public var auditCapacity: Int

    /// Creates an environment.
    public init(
        authority: any AuthorityClient, delivery: any DeliveryPoster, faceVerifier: any FaceVerifier,
        faceTokens: any FaceTokenOpener, vault: any KeyVault, recordSealer: any RecordSealer,
        clock: any WallClock = SystemWallClock(), deviceProtocol: Int = AuthenticatorEnvironment.currentDeviceProtocol,
        auditCapacity: Int = 1_000
    ) {
        self.authority = authority
        self.delivery = delivery
        self.faceVerifier = faceVerifier
        self.faceTokens = faceTokens
        self.vault = vault
        self.recordSealer = recordSealer
        self.clock = clock
        self.deviceProtocol = deviceProtocol
        self.auditCapacity = max(1, auditCapacity)
    }
}
