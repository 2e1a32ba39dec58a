import FaceSealCrypto
import Testing
@testable import FaceSealWire

@Suite struct ManagementBodyTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func duplicateMembersAreRefusedAtAnyDepth() throws {
        #expect(throws: WireError.self) { try TenantCreation.decode(self.bytes(#"{"id":"a","name":"b","id":"c"}"#)) }
        #expect(throws: WireError.self) { try TenantCreation.decode(self.bytes(#"{"id":"a","name":"b","policy":{"attempts_max":1,"attempts_max":2}}"#)) }
        #expect(throws: WireError.self) { try ApplicationFields.decode(self.bytes(#"{"branding":{"name":"a","name":"b"}}"#)) }
    }

    @Test func unknownMembersAreNamedWithTheirPath() throws {
        #expect(throws: WireError.unknownField("owner")) { try TenantCreation.decode(self.bytes(#"{"id":"a","name":"b","owner":1}"#)) }
        #expect(throws: WireError.unknownField("policy.password_policy.hint")) {
            try TenantCreation.decode(self.bytes(#"{"id":"a","name":"b","policy":{"password_policy":{"hint":1}}}"#))
        }
        #expect(throws: WireError.unknownField("branding.font")) { try ApplicationFields.decode(self.bytes(#"{"branding":{"font":"serif"}}"#)) }
        #expect(throws: WireError.unknownField("reason")) { try EmptyBody.decode(self.bytes(#"{"reason":"x"}"#)) }
        #expect(try EmptyBody.decode(bytes("{}")) == EmptyBody())
    }

    @Test func integersAreSchemaIntegersRangeCheckedBeforeUse() throws {
        #expect(try PolicyChange.decode(bytes(#"{"attempts_max":4.0,"capture_retries_max":2e1}"#))
                == PolicyChange(attemptsMax: 4, captureRetriesMax: 20))
        let wrongType = WireError.invalidValue(field: "attempts_max", reason: WireJSON.wrongType)
        #expect(throws: wrongType) { try PolicyChange.decode(self.bytes(#"{"attempts_max":3.5}"#)) }
        #expect(throws: wrongType) { try PolicyChange.decode(self.bytes(#"{"attempts_max":"3"}"#)) }
        #expect(throws: wrongType) { try PolicyChange.decode(self.bytes(#"{"attempts_max":null}"#)) }
        let outOfRange = WireError.invalidValue(field: "attempts_max", reason: "must be within 1…10")
        for text in ["11", "0", "-1", "1e300", "99999999999999999999", "-9223372036854775808"] {
            #expect(throws: outOfRange) { try PolicyChange.decode(self.bytes(#"{"attempts_max":\#(text)}"#)) }
        }
        #expect(throws: WireError.invalidValue(field: "policy.password_policy.minimum_length", reason: "must be within 4…128")) {
            try TenantCreation.decode(self.bytes(#"{"id":"a","name":"b","policy":{"password_policy":{"minimum_length":2}}}"#))
        }
        #expect(SchemaInteger(7).within(1...10) == 7)
    }

    @Test func stringsAndArraysHaveLimits() throws {
        let long = String(repeating: "x", count: 1025)
        #expect(throws: WireError.invalidValue(field: "label", reason: "longer than 1024 bytes")) {
            try APIKeyCreation.decode(self.bytes(#"{"label":"\#(long)"}"#))
        }
        let uris = Array(repeating: #""https://rp.example/cb""#, count: 17).joined(separator: ",")
        #expect(throws: WireError.invalidValue(field: "redirect_uris", reason: "more than 16 entries")) {
            try ApplicationFields.decode(self.bytes(#"{"redirect_uris":[\#(uris)]}"#))
        }
        #expect(throws: WireError.invalidValue(field: "delivery_mode", reason: "must be poll or ping")) {
            try ApplicationFields.decode(self.bytes(#"{"delivery_mode":"push"}"#))
        }
        #expect(throws: WireError.missingField("label")) { try APIKeyCreation.decode(self.bytes("{}")) }
        #expect(throws: WireError.tooLarge(limit: 4096)) { try UserCreation.decode(self.bytes(#"{"email":"\#(String(repeating: "a", count: 5000))"}"#)) }
    }

    @Test func hostileBytesAreRefused() throws {
        #expect(throws: WireError.self) { try UserCreation.decode(self.bytes(#"{"email":""#) + [0xC3, 0x28] + self.bytes(#""}"#)) }
        let deep = #"{"jwks":"# + String(repeating: "[", count: 8) + String(repeating: "]", count: 8) + "}"
        #expect(throws: WireError.self) { try ApplicationFields.decode(self.bytes(deep)) }
        #expect(throws: WireError.self) { try UserCreation.decode(self.bytes(#"{"email":"a@b.c"} x"#)) }
        #expect(throws: WireError.self) { try UserCreation.decode(self.bytes("[]")) }
    }

    @Test func nullClearsOnlyWhereAFieldCanBeCleared() throws {
        let cleared = try ApplicationFields.decode(bytes(#"{"notification_endpoint":null,"jwks":null,"branding":{"logo_url":null}}"#))
        #expect(cleared.notificationEndpoint == .clear && cleared.jwks == .clear && cleared.deliveryEndpoint == .keep)
        #expect(cleared.branding == BrandingChange())
        #expect(cleared.memberNames == ["branding", "jwks", "notification_endpoint"])
        #expect(throws: WireError.invalidValue(field: "label", reason: WireJSON.wrongType)) {
            try ApplicationFields.decode(self.bytes(#"{"label":null}"#))
        }
        #expect(FieldChange<String>.keep.applied(to: "a") == "a" && FieldChange<String>.clear.applied(to: "a") == nil)
    }

    @Test func bodiesRoundTripThroughTheirCanonicalEncoding() throws {
        let policy = PolicyChange(keyAlgorithms: ["ML-DSA-65"], attemptsMax: 3, matchThreshold: 0.5,
                                  passwordPolicy: PasswordPolicyChange(mode: .optional, minimumLength: 8), furtherDeviceApproval: .password)
        #expect(try PolicyChange.decode(policy.encoded()) == policy)
        let tenant = TenantCreation(id: "acme", name: "Acme", policy: policy)
        #expect(try TenantCreation.decode(tenant.encoded()) == tenant)
        let application = ApplicationFields(label: "Shop", branding: BrandingChange(name: "Shop", primaryColor: "#112233"), deliveryMode: .ping,
                                            notificationEndpoint: .set("https://rp.example/ping"), deliveryEndpoint: .clear,
                                            jwks: .set(JSONDocument(.object(["keys": .array([])]))), redirectURIs: ["https://rp.example/cb"])
        #expect(try ApplicationFields.decode(application.encoded()) == application)
        let invitation = InvitationCreation(email: "ada@example.com", clientID: "app_1", expiresIn: 600, kind: .recovery)
        #expect(try InvitationCreation.decode(invitation.encoded()) == invitation)
        let rotation = AuthorityKeyRotation(device: true, rolloverDays: 30)
        #expect(try AuthorityKeyRotation.decode(rotation.encoded()) == rotation)
        #expect(String(decoding: EmptyBody().encoded(), as: UTF8.self) == "{}")
    }
}
