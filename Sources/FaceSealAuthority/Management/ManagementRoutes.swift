import FaceSealHTTP

extension Authority {
    /// Installs the management API of SPEC §4.5 (`/manage/v1/…`).
    func installManagementRoutes(into router: inout Router) {}
}
