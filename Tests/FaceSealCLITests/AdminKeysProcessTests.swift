import Foundation
import Testing

/// Issue 14 item 6 as an operator runs it: `faceseal admin keys list` and `keys rotate` against a `faceseal serve`, with
/// a device (`faceseal device` child processes) enrolled before the rotation that follows the rollover statement,
/// re-pins the new device key and still approves; the application verifies ID tokens signed with the new keys. Every
/// server listens on an ephemeral port (the README walkthrough owns 8080 and 8788).
@Suite(.serialized) struct AdminKeysProcessTests {
    /// The `device key in use: KEY` line of `keys list` / `keys rotate`.
    static func deviceKey(in output: String) throws -> String {
        let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("device key in use: ") }, "\(output)")
        return String(line.dropFirst("device key in use: ".count))
    }

    /// The table rows of one use (`id_token` or `device`), each split into its columns.
    static func rows(_ use: String, in output: String) -> [[String]] {
        output.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
            .filter { $0.count > 2 && $0[1] == use }
    }

    @Test(.enabled(if: ReadmeWalkthroughTests.assetsPresent, "run `make setup`: face models and photos are missing"), .timeLimit(.minutes(8)))
    func keysRotateWhileADeviceIsEnrolled() async throws {
        let run = try Walkthrough()
        defer { run.stop() }
        let serve = try await run.run(#"faceseal serve --port 0 --data-dir data &    # ready when it prints "faceseal: listening on ""#)
        let listening = try #require(serve.split(separator: "\n").first { $0.hasPrefix("faceseal: listening on ") })
        let photos = ReadmeWalkthroughTests.cache.appendingPathComponent("images/johns/John_Salley").path
        run.environment.withLock {
            $0["AUTHORITY"] = String(listening.split(separator: " ").last ?? "")
            $0["PHOTOS"] = photos
        }
        for line in [
            "export FACESEAL_API_KEY=$(cat data/admin-api-key)",
            #"faceseal admin --url "$AUTHORITY" tenant create --id acme --name Acme --liveness-required false --password-mode none"#,
            #"faceseal admin --url "$AUTHORITY" user create --tenant acme --email ada@example.com"#,
            #"CLIENT_ID=$(faceseal admin --url "$AUTHORITY" --get client_id app create --tenant acme --label "Acme Docs" --delivery-endpoint http://127.0.0.1:9/faceseal/delivery --secret-file docs.secret)"#,
        ] {
            _ = try await run.run(line)
        }
        let rp = try await run.run(#"faceseal rp serve --issuer "$AUTHORITY" --client-id "$CLIENT_ID" --client-secret-file docs.secret --port 0 &    # ready when it prints "control: ""#)
        let delivery = try #require(rp.split(separator: "\n").first { $0.hasPrefix("delivery endpoint: ") }, "\(rp)")
        run.environment.withLock { $0["DELIVERY"] = String(delivery.split(separator: " ").last ?? "") }
        for line in [
            #"faceseal admin --url "$AUTHORITY" app update "$CLIENT_ID" --tenant acme --delivery-endpoint "$DELIVERY""#,
            #"faceseal admin --url "$AUTHORITY" --get link invite create --tenant acme --email ada@example.com --client-id "$CLIENT_ID" > invitation.txt"#,
            "faceseal device --presence scripted enrol --link @invitation.txt --faces $PHOTOS/000179_02159509.jpg $PHOTOS/000183_02159543.jpg $PHOTOS/000186_02159346.jpg",
        ] {
            _ = try await run.run(line)
        }

        // Before: the keys serve has used since its start; the device pinned that device key at enrolment.
        let before = try await run.run(#"faceseal admin --url "$AUTHORITY" keys list"#)
        let k0 = try Self.deviceKey(in: before)
        let idTokenKeys = Self.rows("id_token", in: before)
        #expect(!idTokenKeys.isEmpty && idTokenKeys.allSatisfy { $0[4] == "-" && $0[5] == "yes" }, "\(before)")
        let pin = run.directory.appendingPathComponent("faceseal-device/vault/authority.pin")
        #expect(try Self.pinnedKey(pin) == k0)
        #expect(try await Self.ceremony(run, "public-keys --context docs --message 'Link your document keys'", photo: "000189_02159361.jpg")
            .contains("verified: public keys"))

        // Refused by the authority (exit 1): a tenant key (403), a window out of range (400); nothing rotates.
        _ = try await run.run(#"TENANT_KEY=$(faceseal admin --url "$AUTHORITY" --get key apikey create --tenant acme --label ops)"#)
        let forbidden = try await run.run(#"env FACESEAL_API_KEY="$TENANT_KEY" faceseal admin --url "$AUTHORITY" keys rotate"#, status: 1)
        #expect(forbidden.contains("forbidden"), "\(forbidden)")
        let badWindow = try await run.run(#"faceseal admin --url "$AUTHORITY" keys rotate --device --rollover-days 0"#, status: 1)
        #expect(badWindow.contains("'rollover_days': must be within 1…365"), "\(badWindow)")
        #expect(try Self.deviceKey(in: try await run.run(#"faceseal admin --url "$AUTHORITY" keys list"#)) == k0)

        // Rotate both: new ID-token keys (the old ones stay in /jwks, retired) and a new device key with a rollover.
        let rotated = try await run.run(#"faceseal admin --url "$AUTHORITY" keys rotate --rollover-days 30"#)
        let k1 = try Self.deviceKey(in: rotated)
        #expect(k1 != k0)
        let idTokenAfter = Self.rows("id_token", in: rotated)
        #expect(idTokenAfter.count == 2 * idTokenKeys.count, "\(rotated)")
        for old in idTokenKeys {
            #expect(idTokenAfter.contains { $0[0] == old[0] && $0[4] != "-" && $0[5] == "yes" }, "old key \(old[0]) retired, still published: \(rotated)")
        }
        let deviceRows = Self.rows("device", in: rotated)
        #expect(deviceRows.count == 1 && deviceRows[0][6] != "-", "the device key's rollover window: \(rotated)")
        #expect(try Self.pinnedKey(pin) == k0, "the device has not talked to the authority yet")

        // After: the same device follows the rollover (signed by the key it pinned), re-pins, and approves again; the
        // application verifies the ID token under the new key and the signature under the key it pinned before.
        #expect(try await Self.ceremony(run, "sign --context docs --message 'Sign contract 7' --data 'contract 7'", photo: "000190_02159501.jpg")
            .contains("verified: ML-DSA-65 signature"))
        #expect(try Self.pinnedKey(pin) == k1)
        #expect(try await Self.ceremony(run, "login --message 'Sign in'", photo: "000194_02159572.jpg").contains("verified"))
        #expect(try Self.deviceKey(in: try await run.run(#"faceseal admin --url "$AUTHORITY" keys list"#)) == k1)
    }

    /// `faceseal rp request KIND …` in the background, approved by `faceseal device approve --next` with `photo`;
    /// answers what the request printed (it must exit 0).
    static func ceremony(_ run: Walkthrough, _ request: String, photo: String) async throws -> String {
        _ = try await run.run(#"faceseal rp request \#(request) --user ada@example.com --timeout 120 &    # ready when it prints "started: ""#)
        let approval = try await run.run("faceseal device --presence scripted approve --next --wait 30 --faces $PHOTOS/\(photo)")
        #expect(approval.contains("state: succeeded("), "\(approval)")
        return try await run.run("wait $!")
    }

    /// The device key the device's pin file holds, base64url (as `keys list` prints it).
    static func pinnedKey(_ file: URL) throws -> String {
        struct Pinned: Decodable { var key: [UInt8] }
        let key = try JSONDecoder().decode(Pinned.self, from: Data(contentsOf: file)).key
        return Data(key).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
