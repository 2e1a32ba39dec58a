public import FaceSealWire
public import Foundation

/// A device (an installation of an authenticator). Links reach it through its outbox.
public struct DeviceRecord: Sendable, Hashable {
    /// Identifier of the device, chosen by the authority at its first enrolment.
    public var id: String
    /// A name for listings (e.g. the device model).
    public var label: String
    /// When the device first enrolled.
    public var createdAt: Date

    /// Creates a device record; `createdAt` is set by the store on insert.
    public init(id: String, label: String, createdAt: Date = Date(timeIntervalSince1970: 0)) {
        self.id = id
        self.label = label
        self.createdAt = createdAt
    }
}

/// One enrolment: an identity/application pair on a device, owning an ambient and a user-present key.
public struct EnrolmentRecord: Sendable, Hashable {
    /// Identifier of the enrolment (the SDK's `Key.id`).
    public var id: String
    /// The device holding the keys.
    public var deviceID: String
    /// Tenant of the user and application.
    public var tenantID: String
    /// The enrolled user.
    public var subject: String
    /// The application the enrolment is for.
    public var clientID: String
    /// `active` while usable; otherwise the status its keys got when it ended (`revoked`, `terminated`, `replaced`).
    public var status: DeviceKeyStatus
    /// When it was created.
    public var createdAt: Date
    /// When the status last changed.
    public var statusChangedAt: Date
    /// A further device's approval (nil: the enrolment was active at registration, a first device).
    public var approval: PendingApproval?

    /// Creates an enrolment record.
    public init(id: String, deviceID: String, tenantID: String, subject: String, clientID: String, status: DeviceKeyStatus = .active, createdAt: Date = Date(timeIntervalSince1970: 0), statusChangedAt: Date = Date(timeIntervalSince1970: 0),
                approval: PendingApproval? = nil) {
        self.approval = approval
        self.id = id
        self.deviceID = deviceID
        self.tenantID = tenantID
        self.subject = subject
        self.clientID = clientID
        self.status = status
        self.createdAt = createdAt
        self.statusChangedAt = statusChangedAt
    }
}

/// A device public key registered with the authority.
public struct DeviceKeyRecord: Sendable, Hashable {
    /// The key id (JWS `kid`), unique across the authority.
    public var keyID: String
    /// The enrolment that owns it.
    public var enrolmentID: String
    /// The device that holds it.
    public var deviceID: String
    /// The user it belongs to.
    public var subject: String
    /// The application of its enrolment.
    public var clientID: String
    /// Ambient or user-present.
    public var role: DeviceKeyRole
    /// The public key as a JWK JSON object.
    public var publicKeyJWK: String
    /// Its status.
    public var status: DeviceKeyStatus
    /// For a `superseded` key: the key that replaced it.
    public var supersededBy: String?
    /// For a `superseded` key: the end of the rotation overlap window.
    public var overlapUntil: Date?
    /// When it was registered.
    public var createdAt: Date
    /// When the status last changed.
    public var statusChangedAt: Date

    /// Creates a device key record.
    public init(keyID: String, enrolmentID: String, deviceID: String, subject: String, clientID: String, role: DeviceKeyRole, publicKeyJWK: String, status: DeviceKeyStatus = .active, supersededBy: String? = nil, overlapUntil: Date? = nil, createdAt: Date = Date(timeIntervalSince1970: 0), statusChangedAt: Date = Date(timeIntervalSince1970: 0)) {
        self.keyID = keyID
        self.enrolmentID = enrolmentID
        self.deviceID = deviceID
        self.subject = subject
        self.clientID = clientID
        self.role = role
        self.publicKeyJWK = publicKeyJWK
        self.status = status
        self.supersededBy = supersededBy
        self.overlapUntil = overlapUntil
        self.createdAt = createdAt
        self.statusChangedAt = statusChangedAt
    }

    /// How the authority treats a request signed with this key at `now` (SPEC §4.2).
    public func acceptance(at now: Date) -> DeviceKeyAcceptance {
        switch status {
        case .active:
            return .accepted
        case .superseded:
            if let overlapUntil, now < overlapUntil, let supersededBy {
                return .acceptedWithRotationHint(successorKeyID: supersededBy)
            }
            return .overlapEnded
        case .revoked:
            return .revoked
        case .terminated:
            return .terminated
        case .replaced:
            return .replaced
        case .pending:
            return .pending
        }
    }
}

/// The verdict on a device key for one request.
public enum DeviceKeyAcceptance: Sendable, Hashable {
    /// An active key.
    case accepted
    /// The previous key during a rotation overlap: accept and put the rotation hint in the signed response.
    case acceptedWithRotationHint(successorKeyID: String)
    /// A superseded key after its overlap window: refuse.
    case overlapEnded
    /// Refuse with `deviceKeyRevoked`.
    case revoked
    /// Refuse with `deviceKeyTerminated`.
    case terminated
    /// Refuse; the device reports the key as `replaced`.
    case replaced
    /// A pending further-device enrolment's key: only the enrolment's own approval endpoints accept it.
    case pending
}

/// Where a further device's enrolment stands on its way to the token (docs/PROTOCOL.md §8.1).
public struct PendingApproval: Sendable, Hashable {
    /// What releases the token.
    public var method: FurtherDeviceApproval
    /// The end of the approval window: approval and download must both happen before it.
    public var expiresAt: Date
    /// When the approval was given (nil while waiting).
    public var approvedAt: Date?
    /// When the token was released (the enrolment became active then); released once.
    public var releasedAt: Date?
    /// Wrong password proofs so far.
    public var passwordFailures: Int

    /// Creates an approval record.
    public init(method: FurtherDeviceApproval, expiresAt: Date, approvedAt: Date? = nil, releasedAt: Date? = nil, passwordFailures: Int = 0) {
        self.method = method
        self.expiresAt = expiresAt
        self.approvedAt = approvedAt
        self.releasedAt = releasedAt
        self.passwordFailures = passwordFailures
    }
}

/// A public key the device registers, with its id and role.
public struct NewDeviceKey: Sendable, Hashable {
    /// The key id (JWS `kid`).
    public var keyID: String
    /// The public key as a JWK JSON object.
    public var publicKeyJWK: String

    /// Creates a new key description.
    public init(keyID: String, publicKeyJWK: String) {
        self.keyID = keyID
        self.publicKeyJWK = publicKeyJWK
    }
}

/// Everything an enrolment stores, all or nothing (SPEC §6.1). (Named apart from FaceSealWire's
/// `EnrolmentRequest`, the message the device posts, from which the device API builds this.)
public struct EnrolmentInsert: Sendable, Hashable {
    /// The invitation being consumed (must be unexpired, unused, for this user and application).
    public var invitationID: String
    /// The new enrolment's id.
    public var enrolmentID: String
    /// The device: created if it is new, reused (label untouched) if it already enrolled before.
    public var device: DeviceRecord
    /// The ambient key.
    public var ambientKey: NewDeviceKey
    /// The user-present key.
    public var userPresentKey: NewDeviceKey
    /// The face token, for the user's first device (which creates it); `nil` for a further device.
    public var initialFaceToken: FaceTokenRecord?
    /// A further device: the enrolment and its keys are stored `pending` with this approval (`approvedAt` set for
    /// `none`), and the approval requests (`approvesEnrolment` = the enrolment) are stored with them. Nil: stored active
    /// at once (the device API passes nil only for a first device).
    public var approval: PendingApproval?
    /// The approval requests of an `enrolled_device` approval, one per application the user has a device for.
    public var approvalRequests: [CIBARequestRecord]
    /// A recovery: `initialFaceToken` replaces the user's existing token (the user must have no active enrolment).
    public var replacesFaceToken: Bool
    /// With an `approval`: `PendingRequestLimitReached` when the user already has this many pending further-device
    /// enrolments, or an approval request's application this many pending requests of the user (approval requests
    /// count among them). Checked in the enrolment's transaction, with the user row locked.
    public var pendingLimit: Int?

    /// Creates an enrolment insert.
    public init(invitationID: String, enrolmentID: String, device: DeviceRecord, ambientKey: NewDeviceKey, userPresentKey: NewDeviceKey, initialFaceToken: FaceTokenRecord? = nil,
                approval: PendingApproval? = nil, approvalRequests: [CIBARequestRecord] = [], replacesFaceToken: Bool = false,
                pendingLimit: Int? = nil) {
        self.approval = approval
        self.pendingLimit = pendingLimit
        self.approvalRequests = approvalRequests
        self.replacesFaceToken = replacesFaceToken
        self.invitationID = invitationID
        self.enrolmentID = enrolmentID
        self.device = device
        self.ambientKey = ambientKey
        self.userPresentKey = userPresentKey
        self.initialFaceToken = initialFaceToken
    }
}

/// What an enrolment stored.
public struct EnrolmentOutcome: Sendable, Hashable {
    /// The new enrolment.
    public var enrolment: EnrolmentRecord
    /// Its two keys (ambient first).
    public var keys: [DeviceKeyRecord]
    /// Keys set to `replaced` on other devices because the tenant allows one device per user.
    public var replacedKeyIDs: [String]
}

/// What releasing a further device's token stored: the token as it is now, the enrolment (now active) and the keys of
/// other devices it replaced (one device per user).
public struct EnrolmentRelease: Sendable, Hashable {
    /// The user's face token, current generation.
    public var token: FaceTokenRecord
    /// The enrolment, now active.
    public var enrolment: EnrolmentRecord
    /// Keys set to `replaced` on other devices.
    public var replacedKeyIDs: [String]
}

/// An entry of a device's link outbox (SPEC §4.6).
public struct OutboxLink: Sendable, Hashable {
    /// Monotonic sequence number assigned by the store; the device acknowledges up to one.
    public var sequence: Int64
    /// The device the link is for.
    public var deviceID: String
    /// The link itself: the authority's compact JWS.
    public var link: String
    /// The request it announces, if any.
    public var authReqID: String?
    /// When it was queued.
    public var createdAt: Date
    /// When it stops being worth delivering.
    public var expiresAt: Date

    /// Creates an outbox entry; `sequence` and `createdAt` are set by the store.
    public init(deviceID: String, link: String, authReqID: String?, expiresAt: Date, sequence: Int64 = 0, createdAt: Date = Date(timeIntervalSince1970: 0)) {
        self.sequence = sequence
        self.deviceID = deviceID
        self.link = link
        self.authReqID = authReqID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
