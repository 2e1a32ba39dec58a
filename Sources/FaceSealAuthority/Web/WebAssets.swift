import FaceSealHTTP

/// The static files of the authority's pages, in `Web/Assets/` and compiled into the binary (`PackageResources`, SwiftPM's
/// `embedInCode`): no build step, no CDN, nothing read from disk at run time.
enum WebAssets {
    /// Path of the shared stylesheet.
    static let stylesheetPath = "/assets/faceseal.css"
    /// Path of the sign-in page's script.
    static let signInScriptPath = "/assets/signin.js"

    /// Serves `bytes` with `contentType` under the pages' security headers; cacheable for five minutes.
    static func response(_ bytes: [UInt8], contentType: String) -> HTTPResponse {
        var headers = HTML.securityHeaders()
        headers["Content-Type"] = contentType
        headers["Cache-Control"] = "public, max-age=300"
        return HTTPResponse(headers: headers, body: bytes)
    }

    /// Installs the shared assets.
    static func install(into router: inout Router) {
        router.get(stylesheetPath) { _ in response(PackageResources.faceseal_css, contentType: "text/css; charset=utf-8") }
        router.get(signInScriptPath) { _ in response(PackageResources.signin_js, contentType: "text/javascript; charset=utf-8") }
    }
}
