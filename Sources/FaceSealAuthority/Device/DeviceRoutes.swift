import FaceSealHTTP

extension Authority {
    /// Installs the device API of SPEC §4.2 (`/device/v1/…`).
    func installDeviceRoutes(into router: inout Router) {}
}
