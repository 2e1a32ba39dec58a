import Foundation

/// The parsed command line of `faceseal device`.
struct DeviceOptions: Equatable {
    /// How the user-present keys' gate is answered.
    enum Presence: String, Equatable, CaseIterable {
        /// Asks for the device passphrase on the terminal, echo off (the default).
        case terminal
        /// Confirms at once under a passphrase written in the source: tests and the demo only, on request.
        case scripted
    }

    /// What to do.
    enum Action: Equatable {
        case enrol(link: String, faces: [String], passwordFile: String?)
        case inbox(wait: Int)
        case approve(link: String?, faces: [String], passwordFile: String?, wait: Int)
        case keys
        case rotate
        case revoke(keyId: String)
        case branding
        case audit(limit: Int)
        case help
    }

    var stateDirectory = "./faceseal-device"
    var presence = Presence.terminal
    var authority: String?
    var deviceName: String?
    var action = Action.help
}

/// A command line `faceseal device` cannot run (exit 64).
enum DeviceArgumentError: Error, Equatable, CustomStringConvertible {
    case missingSubcommand
    case unknownSubcommand(String)
    case unknownFlag(String)
    case missingValue(String)
    case badValue(flag: String, value: String, expected: String)
    case missingOption(String)
    case conflicting(String, String)
    case unexpectedArgument(String)

    var description: String {
        switch self {
        case .missingSubcommand: "expected a subcommand"
        case .unknownSubcommand(let name): "unknown subcommand '\(name)'"
        case .unknownFlag(let flag): "unknown option '\(flag)'"
        case .missingValue(let flag): "\(flag) needs a value"
        case .badValue(let flag, let value, let expected): "\(flag) '\(value)': expected \(expected)"
        case .missingOption(let flag): "\(flag) is required"
        case .conflicting(let a, let b): "\(a) and \(b) cannot be used together"
        case .unexpectedArgument(let value): "unexpected argument '\(value)'"
        }
    }
}

extension DeviceOptions {
    static let usage = """
    usage: faceseal device [--state-dir DIR] [--presence terminal|scripted] [--authority URL] <subcommand> [options]

    The authenticator for Linux, on the FaceSeal SDK. Its vault and records live in --state-dir
    (default ./faceseal-device, mode 0700). Every flow state is printed as it changes, one line each.

      enrol --link LINK --faces IMG... [--password-file F] [--device-name NAME]
                 enrol this device from an invitation link with face images (several photos of one person);
                 a first device seals the token to the invited user's subject and tenant (given by the invitation)
      inbox [--wait S]          long-polls the outbox (up to S seconds, default 0) and prints each link on a line
      approve (--link LINK | --next [--wait S]) --faces IMG... [--password-file F]
                 approves a sign-in or a ceremony (tries a login flow first, then a ceremony flow);
                 a face mismatch is retried with the same images until the request's attempts are spent
      keys                      lists the keys this device holds
      rotate                    rotates every key (make-before-break)
      revoke --key ID           revokes one key
      branding                  syncs branding and drops keys the authority revoked
      audit [--limit N]         the local activity record (default 50)

      --presence terminal|scripted  user presence for the user-present keys. terminal (the default) asks for the
                                    device passphrase, echo off; the first enrolment has you choose it, and it seals
                                    the user-present keys. scripted approves without asking anyone, under a fixed
                                    passphrase: for tests and the demo only (it says so when it runs)
      --authority URL               the authority (default: learned from the enrolment link)
      LINK is the link text, or @FILE to read it from a file. Exit 0 on success, 1 on a refusal, 64 on bad usage.
    """

    /// Parses `faceseal device …` (without the `device` word).
    static func parse(_ arguments: [String]) throws(DeviceArgumentError) -> DeviceOptions {
        var options = DeviceOptions()
        var subcommand: String?
        var link: String?
        var faces: [String] = []
        var passwordFile: String?
        var wait: Int?
        var next = false
        var keyId: String?
        var limit: Int?
        var index = 0

        func value(_ flag: String) throws(DeviceArgumentError) -> String {
            index += 1
            guard index < arguments.count, !arguments[index].hasPrefix("--") else { throw .missingValue(flag) }
            return arguments[index]
        }
        func number(_ flag: String, _ range: ClosedRange<Int>) throws(DeviceArgumentError) -> Int {
            let text = try value(flag)
            guard let parsed = Int(text), range.contains(parsed) else {
                throw .badValue(flag: flag, value: text, expected: "a whole number in \(range.lowerBound)…\(range.upperBound)")
            }
            return parsed
        }

        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--help", "-h": subcommand = subcommand ?? "help"
            case "--state-dir": options.stateDirectory = try value(argument)
            case "--authority": options.authority = try value(argument)
            case "--device-name": options.deviceName = try value(argument)
            case "--presence":
                let text = try value(argument)
                guard let presence = Presence(rawValue: text) else {
                    throw .badValue(flag: argument, value: text, expected: "terminal or scripted")
                }
                options.presence = presence
            case "--link": link = try value(argument)
            case "--faces":
                _ = try value(argument)
                faces.append(arguments[index])
                while index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") {
                    index += 1
                    faces.append(arguments[index])
                }
            case "--password-file": passwordFile = try value(argument)
            case "--wait": wait = try number(argument, 0...30)
            case "--next": next = true
            case "--key": keyId = try value(argument)
            case "--limit": limit = try number(argument, 1...10_000)
            default:
                if argument.hasPrefix("-") { throw .unknownFlag(argument) }
                guard subcommand == nil else { throw .unexpectedArgument(argument) }
                subcommand = argument
            }
            index += 1
        }

        guard let subcommand else { throw .missingSubcommand }
        let allowed: Set<String>
        switch subcommand {
        case "help":
            options.action = .help
            return options
        case "enrol", "enroll":
            guard let link else { throw .missingOption("--link") }
            guard !faces.isEmpty else { throw .missingOption("--faces") }
            options.action = .enrol(link: link, faces: faces, passwordFile: passwordFile)
            allowed = ["link", "faces", "password"]
        case "inbox":
            options.action = .inbox(wait: wait ?? 0)
            allowed = ["wait"]
        case "approve":
            if link != nil && next { throw .conflicting("--link", "--next") }
            guard link != nil || next else { throw .missingOption("--link or --next") }
            guard !faces.isEmpty else { throw .missingOption("--faces") }
            options.action = .approve(link: link, faces: faces, passwordFile: passwordFile, wait: wait ?? 30)
            allowed = ["link", "next", "faces", "password", "wait"]
        case "keys":
            options.action = .keys
            allowed = []
        case "rotate":
            options.action = .rotate
            allowed = []
        case "revoke":
            guard let keyId else { throw .missingOption("--key") }
            options.action = .revoke(keyId: keyId)
            allowed = ["key"]
        case "branding":
            options.action = .branding
            allowed = []
        case "audit":
            options.action = .audit(limit: limit ?? 50)
            allowed = ["limit"]
        default:
            throw .unknownSubcommand(subcommand)
        }
        // An option that belongs to another subcommand is a mistake worth naming, not something to ignore.
        let given: [(String, Bool)] = [
            ("link", link != nil), ("faces", !faces.isEmpty), ("password", passwordFile != nil), ("wait", wait != nil),
            ("next", next), ("key", keyId != nil), ("limit", limit != nil),
        ]
        for (name, present) in given where present && !allowed.contains(name) {
            throw .unknownFlag("--\(name == "password" ? "password-file" : name) (not an option of `\(subcommand)`)")
        }
        return options
    }
}
