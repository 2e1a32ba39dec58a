import FaceSealHTTP
import Foundation

/// The browser sign-in page: the application's branding, the binding code, the QR code of the sign-in link (and the
/// link itself, for a phone that opens it directly), and a status line its script keeps current.
enum SignInPage {
    static func render(_ signIn: BrowserSignInRecord, application: ApplicationRecord, universalLink: String, loginHint: String?,
                       headers: HTTPHeaders) throws -> HTTPResponse {
        let branding = ApplicationBranding.decode(application.brandingJSON, label: application.label)
        let qr = try QRCode(encoding: universalLink)
        var images: [String] = []
        var logo = ""
        if let url = branding.logoURL, let origin = Self.origin(of: url) {
            images.append(origin)
            logo = "<img src=\"\(HTML.escape(url))\" alt=\"\">"
        } else if let url = branding.logoURL, url.hasPrefix("data:image/") {
            logo = "<img src=\"\(HTML.escape(url))\" alt=\"\">"
        }
        // A bar in the brand colour: an SVG fill, since the policy allows no inline style.
        let bar = branding.primaryColor.map {
            "<svg class=\"brand-bar\" viewBox=\"0 0 10 1\" preserveAspectRatio=\"none\" aria-hidden=\"true\"><rect width=\"10\" height=\"1\" fill=\"\(HTML.escape($0))\"/></svg>"
        } ?? ""
        let phone = loginHint.map {
            "<p class=\"muted\" id=\"hint-notice\">If \(HTML.escape($0)) has FaceSeal on a phone, the request was also sent there.</p>"
        } ?? ""
        let body = """
        <main class="card" id="signin" data-status-url="\(HTML.escape(WebPaths.status(signIn.id)))" \
        data-continue-url="\(HTML.escape(WebPaths.continue(signIn.id)))">\(bar)
        <div class="brand">\(logo)<h1 id="app-name">Sign in to \(HTML.escape(branding.name))</h1></div>
        <p>Scan this code with the phone where you set up FaceSeal for \(HTML.escape(branding.name)), then approve with your face.</p>
        <p>The phone must show this code: <span class="binding" id="binding-message">\(HTML.escape(signIn.bindingMessage))</span></p>
        \(qr.svg(pixels: 264, title: "QR code of the sign-in link"))
        <p class="muted">On that phone already? <a id="signin-link" href="\(HTML.escape(universalLink))">Open the sign-in link</a>.</p>
        \(phone)<p class="status" id="status" role="status">Waiting for your phone…</p>
        </main>
        """
        return HTML.page(title: "Sign in to \(branding.name)", body: body, scripts: [WebAssets.signInScriptPath], images: images,
                         headers: headers)
    }

    /// `https://host[:port]` of an https URL, for the image policy; nil for anything else.
    static func origin(of url: String) -> String? {
        guard let components = URLComponents(string: url), components.scheme == "https", let host = components.host, !host.isEmpty,
              host.unicodeScalars.allSatisfy({ $0.isASCII && !" ;'\",".unicodeScalars.contains($0) }) else { return nil }
        return "https://" + host + (components.port.map { ":\($0)" } ?? "")
    }
}
