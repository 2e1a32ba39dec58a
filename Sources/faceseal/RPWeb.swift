import FaceSealCrypto
import FaceSealHTTP
import FaceSealRelyingParty
import FaceSealWire
import Foundation
import Synchronization

/// The sample application's web page (`faceseal rp serve`): "Sign in with FaceSeal" at `/` runs the browser sign-in
/// of `FaceSealRelyingParty` and shows the verified ID token's claims at `/callback`. Sessions live in memory, bound to
/// the browser by an `HttpOnly` cookie; each is used once.
struct RPWeb: Sendable {
    /// The callback path; `<public-url>/callback` is the redirect URI to register.
    static let callbackPath = "/callback"
    static let sessionCookie = "faceseal_rp_session"
    /// Sign-ins started and not yet finished that are kept (the oldest goes first).
    static let maxSessions = 1000

    let rp: RelyingParty
    let redirectURI: String
    private let sessions = Sessions()

    init(rp: RelyingParty, publicURL: String) {
        self.rp = rp
        redirectURI = publicURL + Self.callbackPath
    }

    func mount(on router: inout Router) {
        router.get("/") { _ in Self.page(title: "FaceSeal sample application", body: """
            <h1>FaceSeal sample application</h1>
            <p>Sign in with your face: the authority shows a QR code; approve on your phone.</p>
            <p><a id="sign-in" href="/signin">Sign in with FaceSeal</a></p>
            """) }
        router.get("/signin") { [self] request in
            let hint = request.query["login_hint"].flatMap { $0.isEmpty || $0.utf8.count > 320 ? nil : $0 }
            let start: BrowserSignInStart
            do {
                start = try await rp.startBrowserSignIn(redirectURI: redirectURI, loginHint: hint)
            } catch {
                return Self.errorPage("The sign-in could not start: \(error)")
            }
            let id = sessions.insert(start)
            return HTTPResponse(status: .seeOther, headers: [
                "Location": start.authorizationURL.absoluteString,
                "Set-Cookie": "\(Self.sessionCookie)=\(id); Path=/; HttpOnly; SameSite=Lax; Max-Age=600",
                "Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
            ])
        }
        router.get(Self.callbackPath) { [self] request in
            guard let id = Self.cookie(request.headers["Cookie"]), let start = sessions.take(id) else {
                return Self.errorPage("This browser has no sign-in in progress. Start again.")
            }
            let result: VerifiedResult
            do {
                result = try await rp.finishBrowserSignIn(start, callback: request.query.items.map { ($0.name, $0.value) })
            } catch {
                rpPrint("browser sign-in failed: \(error)")
                return Self.errorPage("The sign-in failed: \(error)")
            }
            rpPrint("browser sign-in verified: sub \(result.idToken.subject)")
            let rows = result.idToken.claims.members.sorted { $0.key < $1.key }.map { name, value in
                "<tr><th>\(Self.escape(name))</th><td data-claim=\"\(Self.escape(name))\">\(Self.escape(Self.text(value)))</td></tr>"
            }.joined()
            let checks = result.checks.map { "<li>\(Self.escape($0))</li>" }.joined()
            return Self.page(title: "Signed in", body: """
                <h1 id="signed-in">Signed in</h1>
                <p>The ID token verified (\(Self.escape(result.idToken.algorithm.rawValue))). Its claims:</p>
                <table id="claims">\(rows)</table>
                <h2>Checks</h2><ul id="checks">\(checks)</ul>
                <p><a href="/">Back</a></p>
                """)
        }
    }

    private static func text(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): text
        default: value.serializedString
        }
    }

    static func cookie(_ header: String?) -> String? {
        guard let header, header.utf8.count <= 4096 else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == sessionCookie {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
    }

    static func errorPage(_ message: String) -> HTTPResponse {
        page(title: "Sign-in failed", body: "<h1>Sign-in failed</h1><p id=\"error\">\(escape(message))</p><p><a href=\"/\">Back</a></p>",
             status: .badRequest)
    }

    /// A page without script or style, never framed or cached.
    static func page(title: String, body: String, status: HTTPStatus = .ok) -> HTTPResponse {
        let document = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>\(escape(title))</title></head><body>\(body)</body></html>"
        return HTTPResponse(status: status, headers: [
            "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "X-Frame-Options": "DENY",
            "Content-Security-Policy": "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff",
        ], body: Array(document.utf8))
    }

    /// Started sign-ins by session id, bounded.
    final class Sessions: Sendable {
        private let state = Mutex<(order: [String], starts: [String: BrowserSignInStart])>(([], [:]))

        func insert(_ start: BrowserSignInStart) -> String {
            let id = Base64URL.encode(SecureRandom.bytes(count: 32))
            state.withLock { state in
                if state.order.count >= RPWeb.maxSessions { state.starts[state.order.removeFirst()] = nil }
                state.order.append(id)
                state.starts[id] = start
            }
            return id
        }

        func take(_ id: String) -> BrowserSignInStart? {
            state.withLock { state in
                guard let start = state.starts.removeValue(forKey: id) else { return nil }
                state.order.removeAll { $0 == id }
                return start
            }
        }
    }
}
