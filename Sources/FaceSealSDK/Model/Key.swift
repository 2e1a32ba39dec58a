public import Foundation

/// One enrolment held by this device: an identity at one application (SPEC §6.1).
///
/// Each `Key` is backed by two hardware keys (ambient and user-present, see ``KeyProtection``);
/// their ids are internal to the vault and never shown to the host app.
public struct Key: Sendable, Hashable, Codable {
    /// Stable id of this enrolment on this device; pass it to `startRevocationFlow(keyId:)`.
    public let id: String
    /// The authority's id for the user (the identity) this key enrols.
    public let identityId: String
    /// The user's email address as the authority knows it.
    public let email: String
    /// The application (OIDC client) the identity was enrolled through.
    public let clientId: String
    /// The application's display name, for key lists.
    public let appLabel: String
    /// When this enrolment (or its latest rotation) was made.
    public let createdAt: Date

    /// Creates a key description.
    public init(id: String, identityId: String, email: String, clientId: String, appLabel: String, createdAt: Date) {
        self.id = id
        self.identityId = identityId
        self.email = email
        self.clientId = clientId
        self.appLabel = appLabel
        self.createdAt = createdAt
    }
}

/// A key the device thought it held but the authority had revoked or terminated, reported by
/// rotation (`succeeded(revokedKeys:)`) and by branding sync (`BrandingSyncSummary.replacedKeys`).
public struct RevokedKeyNotice: Sendable, Hashable, Codable {
    /// The email address of the identity that lost its enrolment.
    public let email: String
    /// The application the enrolment was for.
    public let clientId: String
    /// The application's display name.
    public let appLabel: String
    /// True when the user no longer has any application they could enrol through.
    public let terminated: Bool
    /// True when the user moved the application to another device under a one-device-per-user
    /// tenant: tell the user the account moved, not that an administrator removed it.
    public let replaced: Bool

    /// Creates a notice.
    public init(email: String, clientId: String, appLabel: String, terminated: Bool, replaced: Bool) {
        self.email = email
        self.clientId = clientId
        self.appLabel = appLabel
        self.terminated = terminated
        self.replaced = replaced
    }

    /// The notice for a held key.
    public init(key: Key, terminated: Bool, replaced: Bool) {
        self.init(email: key.email, clientId: key.clientId, appLabel: key.appLabel, terminated: terminated, replaced: replaced)
    }
}

/// An application's name, logo and colours, as configured on the authority.
public struct Branding: Sendable, Hashable, Codable {
    /// The application's display name.
    public let displayName: String
    /// Where the logo can be fetched, if the application set one.
    public let logoURL: URL?
    /// Primary colour as `#RRGGBB`, if set.
    public let primaryColor: String?
    /// Accent colour as `#RRGGBB`, if set.
    public let accentColor: String?

    /// Creates a branding value.
    public init(displayName: String, logoURL: URL? = nil, primaryColor: String? = nil, accentColor: String? = nil) {
        self.displayName = displayName
        self.logoURL = logoURL
        self.primaryColor = primaryColor
        self.accentColor = accentColor
    }
}

/// What a branding sync changed on the device.
public struct BrandingSyncSummary: Sendable, Hashable {
    /// Ids of the keys whose cached branding was added or changed.
    public let updatedKeyIds: [String]
    /// Keys the authority had revoked or terminated; the sync removed them from the device.
    public let replacedKeys: [RevokedKeyNotice]

    /// Creates a summary.
    public init(updatedKeyIds: [String], replacedKeys: [RevokedKeyNotice]) {
        self.updatedKeyIds = updatedKeyIds
        self.replacedKeys = replacedKeys
    }
}
