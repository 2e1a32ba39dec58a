import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Web parts: QR codes, redirect URIs in the management API, HTML escaping, cookies")
struct WebPartsTests {
    @Test("libqrencode's symbol has the three finder patterns and grows with the input; too much input is refused")
    func qrCode() throws {
        let short = try QRCode(encoding: "https://127.0.0.1/l/abc")
        #expect(short.size >= 21 && (short.size - 17) % 4 == 0)
        // A finder pattern: a dark 7×7 ring around a light ring around a dark 3×3 core, in three corners.
        for (left, top) in [(0, 0), (short.size - 7, 0), (0, short.size - 7)] {
            #expect(short.isDark(x: left, y: top) && short.isDark(x: left + 6, y: top + 6))
            #expect(!short.isDark(x: left + 1, y: top + 1) && short.isDark(x: left + 3, y: top + 3))
        }
        let long = try QRCode(encoding: String(repeating: "x", count: 1500))
        #expect(long.size > short.size)
        #expect(throws: QRCode.Failure.unencodable(byteCount: 2332)) { try QRCode(encoding: String(repeating: "x", count: 2332)) }
        #expect(throws: QRCode.Failure.unencodable(byteCount: 0)) { try QRCode(encoding: "") }
        let svg = short.svg(pixels: 200, title: "<t>")
        #expect(svg.hasPrefix("<svg") && svg.contains("&lt;t&gt;") && !svg.contains("<script"))
    }

    @Test("HTML escaping covers the five characters; the cookie parser finds one name and ignores long headers")
    func escapingAndCookies() {
        #expect(HTML.escape(#"<a href="x" onclick='y'>&</a>"#) == "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;")
        #expect(Authority.cookie("faceseal_signin", in: "a=1; faceseal_signin=abc; b=2") == "abc")
        #expect(Authority.cookie("faceseal_signin", in: "faceseal_signin_x=abc") == nil)
        #expect(Authority.cookie("faceseal_signin", in: nil) == nil)
        #expect(Authority.cookie("faceseal_signin", in: "faceseal_signin=" + String(repeating: "a", count: 5000)) == nil)
    }

    @Test("redirect URIs: registered, deduplicated, replaced by an update, shown", arguments: StoreBackend.underTest)
    func redirectURIs(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            try await admin.createTenant("acme")
            let created = try await admin.createApplication(
                "acme", extra: #","redirect_uris":["https://rp.example/cb","https://rp.example/cb","http://127.0.0.1:9/cb"]"#)
            #expect(created["redirect_uris"] == .array([.string("https://rp.example/cb"), .string("http://127.0.0.1:9/cb")]))
            let clientID = try #require(created["client_id"]?.stringValue)
            let updated = try await admin.expect(200, .patch, "/tenants/acme/applications/\(clientID)", body: #"{"redirect_uris":[]}"#)
            #expect(updated["redirect_uris"] == .array([]))
            #expect(try await admin.harness.store.application(clientID: clientID).redirectURIs.isEmpty)
        }
    }

    @Test("the console is one static page under the strict policy, its key kept in memory; its QR route takes bounded UTF-8 only")
    func consoleRoutes() async throws {
        try await withAuthority(.sqlite) { harness in
            func send(_ method: HTTPMethod, _ path: String, _ body: [UInt8] = []) async throws -> HTTPClientResponse {
                try await harness.client.send(HTTPClientRequest(method: method, url: harness.url(path), body: body))
            }
            let page = try await send(.get, "/console/")
            #expect(page.status == .ok)
            let policy = try #require(page.headers["Content-Security-Policy"])
            for directive in ["default-src 'none'", "script-src 'self'", "img-src 'self' data: blob:", "frame-ancestors 'none'", "form-action 'none'"] {
                #expect(policy.contains(directive), "\(directive)")
            }
            let html = String(decoding: page.body, as: UTF8.self)
            #expect(html.contains(#"<script src="/console/console.js" defer></script>"#))
            #expect(!html.contains("<script>") && !html.contains("onclick=") && !html.contains("style="))
            let redirect = try await send(.get, "/console")
            #expect(redirect.status == .movedPermanently && redirect.headers["Location"] == "/console/")

            let script = try await send(.get, "/console/console.js")
            #expect(script.headers["Content-Type"] == "text/javascript; charset=utf-8")
            let code = String(decoding: script.body, as: UTF8.self)
            // The key stays in the tab's memory and data is only ever text in the page.
            for forbidden in ["localStorage", "sessionStorage", "document.cookie", "innerHTML", "eval("] {
                #expect(!code.contains(forbidden), "\(forbidden)")
            }
            #expect(code.contains(#""Authorization": "Bearer " + apiKey"#))

            let qr = try await send(.post, "/console/qr", Array("https://127.0.0.1/l/abc".utf8))
            #expect(qr.status == .ok && qr.headers["Content-Type"] == "image/svg+xml")
            #expect(String(decoding: qr.body, as: UTF8.self).hasPrefix("<svg"))
            for body in [[], [0xFF, 0xFE], Array(repeating: UInt8(ascii: "x"), count: QRCode.maxBytes + 1)] as [[UInt8]] {
                #expect(try await send(.post, "/console/qr", body).status == .badRequest)
            }
        }
    }
}
