public import FaceSealWire
public import Foundation

/// A notice from the authority, read from the outbox beside the links: a further device was registered for this
/// user under a tenant that does not ask an enrolled device (`password` or `none`). Information to show the user —
/// "was that you?" — never a request: nothing answers it. Each one is also written to the local audit log
/// (`AuditEntry.Kind.newDeviceNotice`).
public struct DeviceNotice: Sendable, Hashable {
    /// The new enrolment's id, as the tenant's audit log names it.
    public let enrolmentId: String
    /// The new device's name.
    public let deviceName: String
    /// The application it enrols for.
    public let appLabel: String
    /// The six digits the new device shows.
    public let code: String
    /// What releases the keys to it: the token's password, or nothing.
    public let method: FurtherDeviceApproval
    /// When it registered.
    public let registeredAt: Date
    /// The signed notice as the outbox gave it (keep it to show it again: ``HTTPAuthorityClient/verifyNotice(_:)``).
    public let payload: [UInt8]

    init(_ claims: DeviceNoticeClaims, payload: [UInt8]) {
        self.payload = payload
        enrolmentId = claims.enrolment
        deviceName = claims.device
        appLabel = claims.app
        code = claims.code
        method = claims.method
        registeredAt = Date(timeIntervalSince1970: TimeInterval(claims.iat))
    }

    /// One line for the user: `new device "laptop" (Acme Billing) code 482193, released by the token's password`.
    public var summary: String {
        let release = method == .password ? "released by the token's password" : "released without approval"
        return "new device \"\(deviceName)\" (\(appLabel)) code \(code), \(release)"
    }
}

/// What one read of the outbox brought: links to submit to a flow, and notices to show.
public struct PendingOutbox: Sendable, Hashable {
    /// Link bytes, oldest first (submit each to a `LoginFlow` or `PkiCeremonyFlow`).
    public let links: [[UInt8]]
    /// Verified notices, oldest first.
    public let notices: [DeviceNotice]
}
