public import FaceSealWire
import Foundation

/// The kinds of things the store keeps, named in errors.
public enum StoredEntity: String, Sendable, Hashable, CaseIterable {
    /// A `TenantRecord`, by id.
    case tenant
    /// An `APIKeyRecord`, by id.
    case apiKey
    /// An `ApplicationRecord`, by client id.
    case application
    /// A `UserRecord`, by subject (or email for lookups by email).
    case user
    /// An `InvitationRecord`, by id.
    case invitation
    /// A `DeviceRecord`, by id.
    case device
    /// An `EnrolmentRecord`, by id.
    case enrolment
    /// A `DeviceKeyRecord`, by key id.
    case deviceKey
    /// A `FaceTokenRecord`, by subject.
    case faceToken
    /// A `CIBARequestRecord`, by `auth_req_id`.
    case cibaRequest
    /// A `SigningKeyRecord`, by key id.
    case signingKey
    /// A `BrowserSignInRecord`, by id.
    case browserSignIn
}

/// Typed failures of an `AuthorityStore` operation. A throwing operation changed nothing.
public enum AuthorityStoreError: Error, Sendable, Hashable {
    /// No such record.
    case notFound(StoredEntity, id: String)
    /// A record with that identity already exists (duplicate client id, key id, email within a tenant…).
    case conflict(StoredEntity, id: String)
    /// A value the store refuses (empty id, negative interval, wrong next generation…).
    case invalidInput(field: String, reason: String)
    /// The invitation is expired, already used, or for another user or application.
    case invitationUnusable(id: String, reason: String)
    /// The request cannot take this step in its current state (e.g. completing a denied request).
    case requestNotPending(authReqID: String, state: CIBARequestState)
    /// A retried completion carried a different receipt than the one already stored.
    case completionMismatch(authReqID: String)
    /// The enrolment has ended (revoked, terminated or replaced) and cannot take this step.
    case enrolmentNotActive(id: String, status: DeviceKeyStatus)
    /// A key operation needs an active key, and this one is not.
    case deviceKeyNotActive(keyID: String, status: DeviceKeyStatus)
    /// The record still has dependants that must go first (a tenant with users or applications).
    case inUse(StoredEntity, id: String, reason: String)
    /// The database holds a schema newer than this build knows.
    case schemaTooNew(found: Int, known: Int)
    /// The database cannot be opened or reached.
    case unavailable(String)
    /// Any other database failure (message from the database; never contains bound values).
    case database(String)
}
