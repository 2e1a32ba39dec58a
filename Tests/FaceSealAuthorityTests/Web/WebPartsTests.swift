import FaceSealHTTP
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
}
