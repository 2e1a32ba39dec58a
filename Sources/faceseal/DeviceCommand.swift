import FaceSealSDK
import FaceSealWire
import Foundation

/// `faceseal device`: the authenticator for Linux, on the SDK's public API.
enum DeviceCommand {
    static let spec = DeviceOptions.spec

    static func run(_ parsed: ParsedArguments) async throws(ArgumentError) -> Int32 {
        let options = try DeviceOptions.parse(parsed)
        do {
            try await perform(options, say: { line in FileHandle.standardOutput.write(Data((line + "\n").utf8)) })
            return 0
        } catch .usage(let text) {
            throw .invalid(text)
        } catch {
            printError("\(parsed.commandName): \(error)")
            return 1
        }
    }

    /// Runs one parsed command, writing every line through `say`.
    static func perform(_ options: DeviceOptions, say: @escaping @Sendable (String) -> Void) async throws(DeviceCommandError) {
        switch options.action {
        case .enrol(let linkText, let faces, let passwordFile):
            let link = try readLink(linkText)
            let issuer: String
            do {
                issuer = try LinkSignature.parse(link).claims.iss
            } catch {
                throw .refused("the enrolment link does not parse: \(error)")
            }
            let password = try passwordFile.map(readPassword)
            try checkReadable(faces)
            let engine = try DeviceFaceEngine.load(progress: say)
            let capture = try engine.capture(images: faces, policy: .enrolment)
            say("capture: \(capture.session.faces.count) face(s) from \(faces.count) image(s)")
            let session = try await DeviceSession.open(
                directory: options.stateDirectory, authority: options.authority ?? issuer, presence: options.presence,
                deviceName: options.deviceName, faceEngine: engine, say: say)
            let key = try await session.enrol(link: link, capture: capture, password: password)
            say("enrolled: key \(key.id) for \(key.email) at \(key.appLabel)")
        case .inbox(let wait, let take):
            let session = try await open(options, engine: nil, say: say)
            let inbox = try await session.inbox(wait: wait)
            for notice in inbox.notices { say(Self.noticeLine(notice)) }
            for link in inbox.links { say(link) }
            if take { try session.removeFromInbox(inbox.links + inbox.notices.map { String(decoding: $0.payload, as: UTF8.self) }) }
        case .approve(let linkText, let faces, let passwordFile, let wait):
            let password = try passwordFile.map(readPassword)
            try checkReadable(faces)
            let engine = try DeviceFaceEngine.load(progress: say)
            let capture = try engine.capture(images: faces)
            say("capture: \(capture.session.faces.count) face(s) from \(faces.count) image(s)")
            let session = try await open(options, engine: engine, say: say)
            let link: [UInt8]
            if let linkText {
                link = try readLink(linkText)
            } else {
                say("inbox: waiting up to \(wait) s for a link…")
                let inbox = try await session.inbox(wait: wait)
                for notice in inbox.notices { say(Self.noticeLine(notice)) }
                guard let first = inbox.links.first else {
                    throw .refused("no link arrived within \(wait) s")
                }
                // Taken before the approval: a link that fails is not offered again by the next `--next`.
                try session.removeFromInbox([first])
                link = Array(first.utf8)
            }
            switch try await session.approve(link: link, capture: capture, password: password) {
            case .signedIn(let rp): say("approved: sign-in at \(rp)")
            case .ceremony(let rp, let kind): say("approved: \(kind) for \(rp)")
            }
        case .keys:
            let session = try await open(options, engine: nil, say: say)
            let keys = session.authenticator.keys
            if keys.isEmpty { say("no keys") }
            for key in keys.sorted(by: { $0.createdAt < $1.createdAt }) {
                say("\(key.id)  \(key.appLabel)  \(key.email)  client=\(key.clientId)  since \(DeviceStates.time(Int64(key.createdAt.timeIntervalSince1970)))")
            }
        case .rotate:
            let session = try await open(options, engine: nil, say: say)
            let flow: KeyRotationFlow
            do { flow = try session.authenticator.startKeyRotationFlow() } catch { throw .refused("\(error)") }
            var printer = StatePrinter(say: say)
            for await state in flow.stateStream() {
                printer.show(DeviceStates.describe(state))
                switch state {
                case .confirming: flow.approve()
                case .failed(let reason):
                    await flow.waitUntilIdle()
                    throw .refused("rotation failed: \(reason.explanation)")
                default: break
                }
            }
            await flow.waitUntilIdle()
        case .revoke(let keyId):
            let session = try await open(options, engine: nil, say: say)
            let flow: RevocationFlow
            do { flow = try session.authenticator.startRevocationFlow(keyId: keyId) } catch { throw .refused("\(error)") }
            var printer = StatePrinter(say: say)
            for await state in flow.stateStream() {
                printer.show(DeviceStates.describe(state))
                switch state {
                case .confirming: flow.approve()
                case .failed(let reason):
                    await flow.waitUntilIdle()
                    throw .refused("revocation failed: \(reason.explanation)")
                default: break
                }
            }
            await flow.waitUntilIdle()
        case .branding:
            let session = try await open(options, engine: nil, say: say)
            let summary: BrandingSyncSummary
            do { summary = try await session.authenticator.syncBranding() } catch { throw .refused("branding sync failed: \(error)") }
            say("branding: \(summary.updatedKeyIds.count) key(s) updated, \(summary.replacedKeys.count) removed")
            for notice in summary.replacedKeys { say("removed: \(DeviceStates.notice(notice))") }
            for key in session.authenticator.keys {
                let branding = session.authenticator.brandingFor(keyId: key.id)
                say("\(key.id)  \(branding?.displayName ?? key.appLabel)  colour=\(branding?.primaryColor ?? "-")  logo=\(branding?.logoURL?.absoluteString ?? "-")")
            }
        case .audit(let limit):
            let session = try await open(options, engine: nil, say: say)
            for entry in session.authenticator.auditLog(limit: limit) {
                say("\(DeviceStates.time(Int64(entry.timestamp.timeIntervalSince1970)))  \(entry.kind.rawValue)  \(entry.identityId ?? "-")  \(entry.note)")
            }
        }
    }

    /// A notice, said as information: nothing on this device answers it.
    static func noticeLine(_ notice: DeviceNotice) -> String {
        "notice: \(notice.summary) at \(DeviceStates.time(Int64(notice.registeredAt.timeIntervalSince1970))) — information only, "
            + "nothing to approve; if it was not you, have an administrator revoke that device"
    }

    private static func open(_ options: DeviceOptions, engine: DeviceFaceEngine?, say: @escaping @Sendable (String) -> Void) async throws(DeviceCommandError) -> DeviceSession {
        try await DeviceSession.open(directory: options.stateDirectory, authority: options.authority, presence: options.presence,
                                     deviceName: options.deviceName, faceEngine: engine, say: say)
    }

    /// Fails fast, before the models load, on a path that is not a readable file.
    static func checkReadable(_ paths: [String]) throws(DeviceCommandError) {
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  FileManager.default.isReadableFile(atPath: path) else {
                throw .image(path: path, reason: "cannot read the file")
            }
        }
    }

    /// The link text, or the contents of `@FILE`; at most 16 KiB.
    static func readLink(_ text: String) throws(DeviceCommandError) -> [UInt8] {
        var value = text
        if text.hasPrefix("@") {
            let path = String(text.dropFirst())
            guard let data = FileManager.default.contents(atPath: path) else { throw .usage("cannot read the link file \(path)") }
            guard data.count <= 16 << 10 else { throw .usage("the link file \(path) is larger than 16 KiB") }
            value = String(decoding: data, as: UTF8.self)
        }
        value = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !value.isEmpty, value.utf8.count <= 16 << 10 else { throw .usage("the link is empty or larger than 16 KiB") }
        return Array(value.utf8)
    }

    /// The password from a file (a trailing newline is not part of it); at most 1 KiB.
    static func readPassword(_ path: String) throws(DeviceCommandError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { throw .usage("cannot read the password file \(path)") }
        guard data.count <= 1024 else { throw .usage("the password file \(path) is larger than 1 KiB") }
        var text = String(decoding: data, as: UTF8.self)
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        guard !text.isEmpty else { throw .usage("the password file \(path) is empty") }
        return text
    }
}
