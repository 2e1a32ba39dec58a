import Testing
@testable import FaceSealWire

@Suite struct BackchannelRequestTests {
    private let base = ["scope": "openid", "login_hint": "ada@example.com"]

    private func parse(_ extra: [String: String], removing: [String] = []) throws(CIBARequestError) -> BackchannelAuthenticationRequest {
        var form = base.merging(extra) { $1 }
        for key in removing { form[key] = nil }
        return try BackchannelAuthenticationRequest(form: form)
    }

    private func code(_ extra: [String: String], removing: [String] = []) -> CIBAErrorCode? {
        do {
            _ = try parse(extra, removing: removing)
            return nil
        } catch {
            return error.code
        }
    }

    @Test func signInParses() throws {
        let request = try parse([:])
        #expect(request.pkiKind == nil && request.loginHint == "ada@example.com")
    }

    @Test func ceremonyParsesAndRoundTripsThroughTheForm() throws {
        let request = try parse(["pki_kind": "sign", "pki_data": "AQID", "pki_context": "invoices",
                                 "binding_message": "Sign invoice 42", "client_notification_token": "tok-123"])
        #expect(request.pkiKind == .sign && request.pkiData == [1, 2, 3] && request.pkiContext == Array("invoices".utf8))
        let again = try BackchannelAuthenticationRequest(form: Dictionary(uniqueKeysWithValues: request.formItems))
        #expect(again == request)
    }

    @Test func scopeRules() {
        #expect(code([:], removing: ["scope"]) == .invalidRequest)
        #expect(code(["scope": "profile"]) == .invalidScope)
    }

    @Test func exactlyOneHint() {
        #expect(code([:], removing: ["login_hint"]) == .invalidRequest)
        #expect(code(["id_token_hint": "x"]) == .invalidRequest)
    }

    @Test func bindingMessageRules() {
        #expect(code(["binding_message": String(repeating: "a", count: 65)]) == .invalidBindingMessage)
        #expect(code(["binding_message": "bad\u{7}bell"]) == .invalidBindingMessage)
        #expect(code(["binding_message": ""]) == .invalidBindingMessage)
        #expect(code(["binding_message": String(repeating: "é", count: 64)]) == nil)
        #expect(code(["pki_kind": "public_keys", "client_notification_token": "t"]) == .invalidBindingMessage)
    }

    @Test func ceremonyRules() {
        let ceremony = ["binding_message": "ok", "client_notification_token": "t"]
        #expect(code(ceremony.merging(["pki_kind": "sign"]) { $1 }) == .invalidRequest)
        #expect(code(ceremony.merging(["pki_kind": "public_keys", "pki_data": "AQID"]) { $1 }) == .invalidRequest)
        #expect(code(ceremony.merging(["pki_kind": "mint"]) { $1 }) == .invalidRequest)
        #expect(code(["pki_kind": "public_keys", "binding_message": "ok"]) == .invalidRequest)
        #expect(code(ceremony.merging(["pki_kind": "sign", "pki_data": "AQ=="]) { $1 }) == .invalidRequest)
        #expect(code(ceremony.merging(["pki_kind": "public_keys", "pki_context": String(repeating: "c", count: 257)]) { $1 }) == .invalidRequest)
        #expect(code(["pki_data": "AQID"]) == .invalidRequest)
        #expect(code(["client_notification_token": String(repeating: "t", count: 1025)]) == .invalidRequest)
        #expect(code(["requested_expiry": "-1"]) == .invalidRequest)
    }
}
