import Foundation
import Testing

/// `faceseal device enrol` on a further device, every party a child process of the built binary on loopback (an
/// authority on a port of its own, SQLite): the new device prints that approval is awaited, with its code, and
/// completes once the user's enrolled device approves with `faceseal device approve`; under `none` the enrolled device
/// is told instead, and `faceseal device inbox` shows that notice as information, with nothing to approve.
@Suite(.serialized) struct FurtherDeviceEnrolTests {
    static func photos() throws -> [String] {
        let directory = ReadmeWalkthroughTests.cache.appendingPathComponent("images/johns/John_Salley")
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".jpg") }.sorted()
            .map { directory.appendingPathComponent($0).path }
    }

    @Test(.enabled(if: ReadmeWalkthroughTests.assetsPresent, "run `make setup`: face models and photos are missing"), .timeLimit(.minutes(8)))
    func furtherDeviceWaitsForTheEnrolledDevicesApproval() async throws {
        let photos = try Self.photos()
        try #require(photos.count >= 7, "run `make setup`: the johns photos are missing")
        let walkthrough = try Walkthrough()
        defer { walkthrough.stop() }

        let served = try await walkthrough.run(#"faceseal serve --data-dir data --port 0 &    # ready when it prints "faceseal: listening on ""#)
        let url = try #require(served.firstMatch(of: /listening on (http:\/\/127\.0\.0\.1:\d+)/).map { String($0.1) }, "\(served)")
        for line in ["export FACESEAL_API_KEY=$(cat data/admin-api-key)",
                     "faceseal admin --url \(url) tenant create --id acme --name Acme --liveness-required false --password-mode none",
                     "faceseal admin --url \(url) user create --tenant acme --email ada@example.com",
                     "CLIENT_ID=$(faceseal admin --url \(url) --get client_id app create --tenant acme --label 'Acme Docs' "
                        + "--delivery-endpoint http://127.0.0.1:9/faceseal/delivery)"] {
            _ = try await walkthrough.run(line)
        }
        let invite = "faceseal admin --url \(url) --get link invite create --tenant acme --email ada@example.com --client-id \"$CLIENT_ID\""
        _ = try await walkthrough.run(invite + " > phone.txt")
        let phone = try await walkthrough.run("faceseal device --state-dir phone --presence scripted enrol --link @phone.txt --faces "
                                              + photos.prefix(3).joined(separator: " "))
        #expect(phone.contains("state: succeeded(key: "), "\(phone)")

        // The laptop registers and waits: it prints that approval is awaited, and the code.
        _ = try await walkthrough.run(invite + " > laptop.txt")
        let waiting = try await walkthrough.run("faceseal device --state-dir laptop --presence scripted enrol --link @laptop.txt "
                                                + "--device-name laptop --faces \(photos[3]) \(photos[4]) &    "
                                                + #"# ready when it prints "check that it names code ""#)
        #expect(waiting.contains("approval: awaiting approval on an enrolled device of this user"), "\(waiting)")
        let code = try #require(waiting.firstMatch(of: /names code (\d{6})/).map { String($0.1) }, "\(waiting)")

        // The phone's approve finds the approval request in its outbox: it names the laptop and the same code.
        let approved = try await walkthrough.run("faceseal device --state-dir phone --presence scripted approve --next --wait 30 --faces \(photos[5])")
        #expect(approved.contains("New device laptop (Acme Docs) code \(code)"), "\(approved)")
        #expect(approved.contains("state: succeeded(rp: \"Acme Docs\""), "\(approved)")
        let enrolled = try await walkthrough.run("wait $!")
        #expect(enrolled.contains("state: succeeded(key: "), "\(enrolled)")
        #expect(enrolled.contains("enrolled: key "), "\(enrolled)")
        let laptopKeys = try await walkthrough.run("faceseal device --state-dir laptop keys")
        #expect(laptopKeys.contains("Acme Docs") && laptopKeys.contains("ada@example.com"), "\(laptopKeys)")

        // Under `none` nobody approves; the phone and the laptop are told, and show it as information only.
        _ = try await walkthrough.run("faceseal admin --url \(url) tenant policy acme --further-device-approval none")
        _ = try await walkthrough.run(invite + " > tablet.txt")
        let tablet = try await walkthrough.run("faceseal device --state-dir tablet --presence scripted enrol --link @tablet.txt "
                                               + "--device-name tablet --faces \(photos[6])")
        #expect(tablet.contains("state: succeeded(key: "), "\(tablet)")
        for device in ["phone", "laptop"] {
            let inbox = try await walkthrough.run("faceseal device --state-dir \(device) inbox --wait 5")
            #expect(inbox.contains("notice: new device \"tablet\" (Acme Docs) code "), "\(device): \(inbox)")
            #expect(inbox.contains("released without approval") && inbox.contains("information only, nothing to approve"), "\(inbox)")
            #expect(!inbox.contains("eyJ"), "a notice is no link to approve: \(inbox)")
            let audit = try await walkthrough.run("faceseal device --state-dir \(device) audit")
            #expect(audit.contains("new_device_notice") && audit.contains("new device \"tablet\""), "\(audit)")
        }
        // `approve --next` finds no link in a notice: it waits for one, then says none came.
        let nothing = try await walkthrough.run("faceseal device --state-dir phone --presence scripted approve --next --wait 1 --faces \(photos[5])",
                                                status: 1)
        #expect(nothing.contains("no link arrived within 1 s"), "\(nothing)")
    }
}
