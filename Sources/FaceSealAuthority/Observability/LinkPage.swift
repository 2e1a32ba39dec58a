import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

extension Authority {
    /// `GET /l/<JWS>`: a universal link opened where the authenticator is not installed (a desktop browser, a phone
    /// without the app) gets a small page saying what the link is and how to open it. Nothing of the path is written
    /// into the page; the link's kind and expiry are shown only when its signature verifies. The page is the shared
    /// `HTML.page`: no script, the authority's own stylesheet, its strict Content-Security-Policy, no referrer.
    func installLinkPage(into router: inout Router) {
        router.get(LinkLimits.universalLinkPath + ":link") { [self] request in linkPage(request.pathParameter("link")) }
    }

    func linkPage(_ link: String) -> HTTPResponse {
        let host = URL(string: issuer)?.host ?? issuer
        let (status, title, explanation): (HTTPStatus, String, String)
        do throws(LinkError) {
            // `parse` refuses anything over the link size limit before decoding it.
            let claims = try LinkSignature.parse(Array(link.utf8)).verify(with: keys.deviceKey.publicKey, now: now)
            let until = RequestLogger.timestamp(Date(timeIntervalSince1970: TimeInterval(claims.exp)))
            let what = switch claims.kind {
            case .login: "a sign-in request"
            case .ceremony: "a request to use your face-locked key (a signature, a decryption or your public keys)"
            case .enrolment: "an invitation to enrol a phone"
            }
            (status, title, explanation) = (.ok, "A FaceSeal link from \(host)", "This is \(what) from \(host), valid until \(until) (UTC).")
        } catch .expired {
            (status, title, explanation) = (.gone, "This FaceSeal link has expired", "It can no longer be used. Ask for a new one where you started.")
        } catch {
            (status, title, explanation) = (.notFound, "Not a FaceSeal link", "This address does not hold a link that \(host) issued.")
        }
        return HTML.page(title: title, body: """
        <main class="card"><h1>\(HTML.escape(title))</h1><p id="link-kind">\(HTML.escape(explanation))</p>
        <p>Open this link on the phone where the FaceSeal authenticator is set up for \(HTML.escape(host)): tap it there, or \
        scan it as a QR code from the authenticator. If you see this page on that phone, the authenticator is not \
        installed or not set up for this address yet.</p>
        <p class="muted">Only approve a request you started yourself. This page never asks for your face, a password or a code.</p></main>
        """, status: status)
    }
}
