import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation

extension Authority {
    /// `GET /l/<JWS>`: a universal link opened where the authenticator is not installed (a desktop browser, a phone
    /// without the app) gets a small page saying what the link is and how to open it. The link itself is never
    /// written into the page (nothing of the path is reflected); its kind and expiry are shown only when its
    /// signature verifies. No script, no outside resource, no referrer: the strict `Content-Security-Policy` allows
    /// only the page's own inline style, by hash.
    func installLinkPage(into router: inout Router) {
        router.get(LinkLimits.universalLinkPath + ":link") { [self] request in linkPage(request.pathParameter("link")) }
    }

    private static let linkPageStyle =
        "body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#222}"
        + "h1{font-size:1.4rem}p.note{color:#555;font-size:.9rem}"

    /// The page's headers: the CSP allows the one inline style by its SHA-256, nothing else.
    static let linkPageHeaders: HTTPHeaders = {
        let hash = Data(SHA256.hash(data: Array(linkPageStyle.utf8)).bytes).base64EncodedString()
        return [
            "Content-Type": "text/html; charset=utf-8",
            "Content-Security-Policy": "default-src 'none'; style-src 'sha256-\(hash)'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            "Referrer-Policy": "no-referrer",
            "X-Content-Type-Options": "nosniff",
            "X-Frame-Options": "DENY",
            "Cache-Control": "no-store",
        ]
    }()

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
            (status, title, explanation) = (.ok, "A FaceSeal link from \(host)",
                                            "This is \(what) from \(host), valid until \(until) (UTC).")
        } catch .expired {
            (status, title, explanation) = (.gone, "This FaceSeal link has expired",
                                            "It can no longer be used. Ask for a new one where you started.")
        } catch {
            (status, title, explanation) = (.notFound, "Not a FaceSeal link",
                                            "This address does not hold a link that \(host) issued.")
        }
        let page = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
        <meta name="referrer" content="no-referrer"><title>\(Self.html(title))</title><style>\(Self.linkPageStyle)</style></head>
        <body><h1>\(Self.html(title))</h1><p>\(Self.html(explanation))</p>
        <p>Open this link on the phone where the FaceSeal authenticator is set up for \(Self.html(host)): tap it there, or \
        scan it as a QR code from the authenticator. If you see this page on that phone, the authenticator is not \
        installed or not set up for this address yet.</p>
        <p class="note">Only approve a request you started yourself. This page never asks for your face, a password or a code.</p>
        </body></html>

        """
        return HTTPResponse(status: status, headers: Self.linkPageHeaders, body: Array(page.utf8))
    }

    /// `text` with the five HTML metacharacters escaped.
    static func html(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
