import FaceSealHTTP
import FaceSealWire

extension Authority {
    /// Installs the device API of SPEC §4.2 (`/device/v1/…`, docs/PROTOCOL.md §2). Every signed route goes through
    /// the edge (`signedDeviceRoute`): authentication once, handlers over decoded inputs, every answer signed.
    func installDeviceRoutes(into router: inout Router) {
        router.get("/device/v1/enrolments/:inv", use: unsignedDeviceRoute { [self] request in
            .ok(try await enrolmentDetails(invitationID: request.pathParameter("inv")))
        })
        router.get("/device/v1/enrolments/:inv/token", use: signedDeviceRoute(.pendingEnrolment) { [self] device, request in
            .ok(try await enrolmentToken(invitationID: request.pathParameter("inv"), device: device, request: request))
        })
        router.post("/device/v1/enrolments/:inv/password", use: signedDeviceRoute(.pendingEnrolment) { [self] device, request in
            .ok(try await provePassword(invitationID: request.pathParameter("inv"), device: device, request: request))
        })
        router.post("/device/v1/enrolments/:inv") { [self] request in await enrolRoute(request) }
        router.get(DevicePaths.authorityKeys, use: unsignedDeviceRoute { [self] _ in .ok(try await authorityKeyChain()) })

        router.get("/device/v1/requests/:rid", use: signedDeviceRoute(.ambient, registersJTIInHandler: true) { [self] device, request in
            .ok(try await requestDetails(rid: request.pathParameter("rid"), device: device))
        })
        router.get("/device/v1/requests/:rid/token", use: signedDeviceRoute(.userPresent, registersJTIInHandler: true) { [self] device, request in
            .ok(try await requestToken(rid: request.pathParameter("rid"), device: device))
        })
        router.post("/device/v1/requests/:rid/completion", use: signedDeviceRoute(.userPresent, registersJTIInHandler: true) { [self] device, request in
            .ok(try await complete(rid: request.pathParameter("rid"), device: device, request: request))
        })
        router.post("/device/v1/requests/:rid/attempts", use: signedDeviceRoute(.userPresent) { [self] device, request in
            .ok(try await reportAttempt(rid: request.pathParameter("rid"), device: device, request: request))
        })
        router.post("/device/v1/requests/:rid/abort", use: signedDeviceRoute(.userPresent) { [self] device, request in
            try await abort(rid: request.pathParameter("rid"), device: device, request: request)
            return .noContent
        })
        router.post(DevicePaths.rotation, use: signedDeviceRoute(.userPresent) { [self] device, request in
            .ok(try await rotateKeys(device: device, request: request))
        })
        router.post(DevicePaths.revocation, use: signedDeviceRoute(.userPresent) { [self] device, request in
            try await revokeKeys(device: device, request: request)
            return .noContent
        })
        router.get(DevicePaths.branding, use: signedDeviceRoute(.ambient) { [self] device, request in
            .ok(try await syncBranding(device: device, request: request))
        })
        router.get(DevicePaths.outbox, use: signedDeviceRoute(.ambient, registersJTIInHandler: true) { [self] device, request in
            .ok(try await pollOutbox(device: device, request: request))
        })
    }
}
