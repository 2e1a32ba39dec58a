import FaceSealHTTP
import Foundation

/// The authority's HTML: every value from outside goes through `escape`; pages load scripts and styles only from the
/// authority's own origin, under a strict Content-Security-Policy (no inline script or style, no framing, no forms to
/// elsewhere), never cached.
enum HTML {
    /// `text` safe in element content and in double-quoted attribute values.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The Content-Security-Policy of every page; `images` adds image sources (a logo's origin) to `'self' data:`.
    static func contentSecurityPolicy(images: [String] = []) -> String {
        let imageSources = (["'self'", "data:"] + images).joined(separator: " ")
        return "default-src 'none'; script-src 'self'; style-src 'self'; img-src \(imageSources); connect-src 'self'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// The headers of every page and script: the policy, no sniffing, no framing, no referrer, no caching.
    static func securityHeaders(images: [String] = []) -> HTTPHeaders {
        [
            "Content-Security-Policy": contentSecurityPolicy(images: images),
            "X-Content-Type-Options": "nosniff",
            "X-Frame-Options": "DENY",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store",
            "Cross-Origin-Opener-Policy": "same-origin",
        ]
    }

    /// A whole page: `title` (escaped here), `body` (markup the caller built with `escape`), the shared stylesheet and
    /// the given scripts of the authority's origin.
    static func page(title: String, body: String, scripts: [String] = [], status: HTTPStatus = .ok, images: [String] = [],
                     headers extra: HTTPHeaders = [:]) -> HTTPResponse {
        let scriptTags = scripts.map { "<script src=\"\(escape($0))\" defer></script>" }.joined()
        let document = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">\
        <title>\(escape(title))</title><link rel="stylesheet" href="\(WebAssets.stylesheetPath)">\(scriptTags)</head>
        <body>\(body)</body></html>
        """
        var headers = securityHeaders(images: images)
        for field in extra { headers[field.name] = field.value }
        headers["Content-Type"] = "text/html; charset=utf-8"
        return HTTPResponse(status: status, headers: headers, body: Array(document.utf8))
    }

    /// An error page: what went wrong and what to do, nothing else.
    static func errorPage(status: HTTPStatus, title: String, message: String) -> HTTPResponse {
        page(title: title, body: """
        <main class="card error"><h1>\(escape(title))</h1><p id="error-message">\(escape(message))</p></main>
        """, status: status)
    }
}
