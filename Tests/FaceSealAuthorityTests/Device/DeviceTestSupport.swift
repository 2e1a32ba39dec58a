import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// Seeds the authority behind `harness`: tenant `acme`, applications `app-1` and `app-2`, users `user-1`, `user-2`. Further
/// devices are approved with `none` unless the policy says otherwise (the custody tests do): tests of other endpoints
/// enrol several devices per user without an approver.
func seedDeviceWorld(_ harness: AuthorityHarness, policy: TenantPolicy = TenantPolicy(furtherDeviceApproval: .none)) async throws {
    let store = harness.store
    _ = try await store.createTenant(StoreFixtures.tenant(policy: policy))
    _ = try await store.createApplication(StoreFixtures.application("app-1"))
    _ = try await store.createApplication(StoreFixtures.application("app-2"))
    _ = try await store.createUser(StoreFixtures.user("user-1"))
    _ = try await store.createUser(StoreFixtures.user("user-2"))
}

/// A pending request of `user-1` at `clientID` (a ceremony unless told).
@discardableResult
func createPendingRequest(_ harness: AuthorityHarness, _ id: String, clientID: String = "app-1",
                          kind: CIBARequestKind = .ceremony) async throws -> CIBARequestRecord {
    var request = StoreFixtures.pendingRequest(id, clock: harness.clock, kind: kind)
    request.clientID = clientID
    return try await harness.store.createRequest(request)
}

/// Downloads the face token for `rid` with the device's user-present key.
func downloadToken(_ device: TestDevice, _ rid: String) async throws -> FaceTokenDownload {
    let response = try await device.send(.get, DevicePaths.requestToken(rid), as: .userPresent)
    guard response.status == 200 else { throw TestDeviceError.refused(response.status, response.error) }
    return try response.decode(FaceTokenDownload.self)
}

/// Expects a verified device answer to be the error `code` with its status.
func expectDeviceError(_ response: DeviceResponse, _ code: DeviceErrorCode, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(response.status == code.httpStatus, sourceLocation: sourceLocation)
    #expect(response.error == code, sourceLocation: sourceLocation)
}

/// A receipt: SHA-256 of some delivery body.
func receipt(_ text: String) -> [UInt8] { SHA256.hash(data: Array(text.utf8)).bytes }
