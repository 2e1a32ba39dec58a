import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

// Devices: each entry is one enrolment (a user and an application on one device, with its two keys).
// Revoking ends the enrolment as `revoked` (the device's next signed request gets `deviceKeyRevoked`);
// terminating ends it as `terminated` (`deviceKeyTerminated`).
extension Authority {
    /// `GET /tenants/{tenant}/devices[?subject=&client_id=&status=]`.
    @Sendable func listTenantDevices(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let tenant = try await pathTenant(request, caller)
        let subject = try request.queryValue("subject")
        let clientID = try request.queryValue("client_id")
        let status = try request.queryValue("status", maxBytes: 32).map { value throws(ManagementError) in
            guard let status = DeviceKeyStatus(rawValue: value) else {
                throw ManagementError.invalidField(field: "status", reason: "must be active, revoked, terminated or replaced")
            }
            return status
        }
        let enrolments = try await store.enrolments(tenantID: tenant.id).filter {
            (subject == nil || $0.subject == subject) && (clientID == nil || $0.clientID == clientID) && (status == nil || $0.status == status)
        }
        return try ManagementJSON.response(ManagedList(try await managedDevices(enrolments)))
    }

    /// `GET /tenants/{tenant}/users/{subject}/devices`.
    @Sendable func listUserDevices(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let user = try await pathUser(request, caller)
        return try ManagementJSON.response(ManagedList(try await managedDevices(try await store.enrolments(subject: user.subject))))
    }

    /// `GET /tenants/{tenant}/devices/{enrolment}`.
    @Sendable func showDevice(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        let enrolment = try await pathEnrolment(request, caller)
        return try ManagementJSON.response(try await managedDevices([enrolment])[0])
    }

    /// `POST /tenants/{tenant}/devices/{enrolment}/revoke`.
    @Sendable func revokeDevice(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        try await endDevice(request, caller, status: .revoked)
    }

    /// `POST /tenants/{tenant}/devices/{enrolment}/terminate`.
    @Sendable func terminateDevice(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> HTTPResponse {
        try await endDevice(request, caller, status: .terminated)
    }

    /// Ends an active enrolment with `status`; repeating the same action is a no-op, ending an enrolment that
    /// already ended otherwise is 409.
    private func endDevice(_ request: HTTPRequest, _ caller: ManagementCaller, status: DeviceKeyStatus) async throws -> HTTPResponse {
        let enrolment = try await pathEnrolment(request, caller)
        try refuseActionBody(request)
        let ended = try await store.endEnrolment(id: enrolment.id, status: status)
        if enrolment.status != status {
            try await audit(caller, tenant: enrolment.tenantID, kind: "device.\(status.rawValue)", target: enrolment.id,
                            detail: ["subject": .string(enrolment.subject), "client_id": .string(enrolment.clientID),
                                     "device_id": .string(enrolment.deviceID)])
        }
        return try ManagementJSON.response(try await managedDevices([ended])[0])
    }

    /// The enrolment named in the path, which must belong to the path's tenant (else 404).
    func pathEnrolment(_ request: HTTPRequest, _ caller: ManagementCaller) async throws -> EnrolmentRecord {
        let tenant = try await pathTenant(request, caller)
        let enrolment = try await store.enrolment(id: request.pathParameter("enrolment"))
        guard enrolment.tenantID == tenant.id else { throw ManagementError.notFound("device enrolment") }
        return enrolment
    }

    /// Enrolments with their device label and keys.
    func managedDevices(_ enrolments: [EnrolmentRecord]) async throws -> [ManagedDevice] {
        var labels: [String: String] = [:]
        var devices: [ManagedDevice] = []
        for enrolment in enrolments {
            if labels[enrolment.deviceID] == nil { labels[enrolment.deviceID] = try await store.device(id: enrolment.deviceID).label }
            let keys = try await store.deviceKeys(enrolmentID: enrolment.id)
            devices.append(ManagedDevice(
                id: enrolment.id, deviceID: enrolment.deviceID, deviceLabel: labels[enrolment.deviceID] ?? "", tenantID: enrolment.tenantID,
                subject: enrolment.subject, clientID: enrolment.clientID, status: enrolment.status, createdAt: enrolment.createdAt,
                statusChangedAt: enrolment.statusChangedAt, keys: keys.map(ManagedDeviceKey.init)))
        }
        return devices
    }
}
