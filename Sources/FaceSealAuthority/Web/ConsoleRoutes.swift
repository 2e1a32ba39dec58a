import FaceSealHTTP

/// The admin console at `/console/`: one static page and its script (`Web/Assets/`, compiled in). The page holds the
/// API key in memory and does everything through the management API, so the console adds no authority of its own;
/// the one route it adds draws QR codes of the invitation links the API returned.
extension Authority {
    /// The console's page.
    static let consolePath = "/console/"
    /// Draws the QR code of a text the console posts (an enrolment link): the link stays out of every URL and log.
    static let consoleQRPath = "/console/qr"

    func installConsoleRoutes(into router: inout Router) {
        router.get("/console") { _ in
            var headers = HTML.securityHeaders()
            headers["Location"] = Self.consolePath
            return HTTPResponse(status: .movedPermanently, headers: headers)
        }
        router.get(Self.consolePath) { _ in
            // Invitation QR codes arrive as blobs from `/console/qr`.
            var headers = HTML.securityHeaders(images: ["blob:"])
            headers["Content-Type"] = "text/html; charset=utf-8"
            return HTTPResponse(headers: headers, body: PackageResources.console_html)
        }
        router.get("/console/console.js") { _ in WebAssets.response(PackageResources.console_js, contentType: "text/javascript; charset=utf-8") }
        router.post(Self.consoleQRPath) { request in
            // Unauthenticated but cheap: at most one version-40 symbol of an input no longer than it holds.
            guard request.body.count <= QRCode.maxBytes, let text = String(validating: request.body, as: UTF8.self),
                  let code = try? QRCode(encoding: text) else {
                return .text("the body must be 1–\(QRCode.maxBytes) bytes of UTF-8", status: .badRequest)
            }
            var headers = HTML.securityHeaders()
            headers["Content-Type"] = "image/svg+xml"
            return HTTPResponse(headers: headers, body: Array(code.svg(pixels: 264, title: "QR code").utf8))
        }
    }
}
