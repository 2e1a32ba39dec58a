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
        case inbox(wait: Int, take: Bool)
        case approve(link: String?, faces: [String], passwordFile: String?, wait: Int)
        case keys
        case rotate
        case revoke(keyId: String)
        case branding
        case audit(limit: Int)
    }

    var stateDirectory = "./faceseal-device"
    var presence = Presence.terminal
    var authority: String?
    var deviceName: String?
    var action = Action.keys
}

extension DeviceOptions {
    static let spec: CommandSpec = {
        let link = OptionSpec.value("link", "LINK", "the link text, or @FILE to read it from a file (at most 16 KiB)")
        let faces = OptionSpec.values("faces", "IMG", "face images: JPEG or PNG photos of one person")
        let passwordFile = OptionSpec.value("password-file", "F", "the face token's password, from a file")
        return CommandSpec(
            name: "device", summary: "The authenticator for Linux, on the FaceSeal SDK.",
            synopsis: "[--state-dir DIR] [--presence terminal|scripted] [--authority URL] SUBCOMMAND [options]",
            details: """
            Its vault and records live in --state-dir (default ./faceseal-device, mode 0700). Every flow state is
            printed as it changes, one line each. Exit 0 on success, 1 on a refusal, 64 on bad usage.
            """,
            options: [
                .value("state-dir", "DIR", "the device's state directory (default ./faceseal-device)"),
                .value("presence", "MODE", "terminal (default: asks for the device passphrase, echo off; the first enrolment sets it) or scripted (approves without asking: tests and the demo only)"),
                .value("authority", "URL", "the authority's http(s) URL (default: learned from the enrolment link)"),
            ],
            subcommands: [
                CommandSpec(name: "enrol", aliases: ["enroll"], summary: "enrol this device from an invitation link and face images",
                            synopsis: "--link LINK --faces IMG... [--password-file F] [--device-name NAME]",
                            details: """
                            A first device seals the face token to the invited user's subject and tenant (named by the
                            invitation). When the tenant requires liveness, still photos cannot pass its challenge.
                            """,
                            options: [link, faces, passwordFile, .value("device-name", "NAME", "how the authority lists this device (default: the host name)")]),
                CommandSpec(name: "inbox", summary: "show the links waiting for this device (they stay for `approve --next`)",
                            synopsis: "[--wait S] [--take]",
                            details: "Links are fetched from the authority's outbox and kept in the state directory until they are approved, taken or expire.",
                            options: [.value("wait", "S", "long-poll up to S seconds for a link when none is waiting (0…30, default 0)"),
                                      .flag("take", "remove the links shown from the inbox")]),
                CommandSpec(name: "approve", summary: "approve a sign-in or a ceremony with face images",
                            synopsis: "(--link LINK | --next [--wait S]) --faces IMG... [--password-file F]",
                            details: """
                            Tries a login flow first, then a ceremony flow. A face mismatch is retried with the same images
                            until the request's attempts are spent.
                            """,
                            options: [link, .flag("next", "the oldest link in the inbox"),
                                      .value("wait", "S", "with --next: wait up to S seconds for a link (0…30, default 30)"), faces, passwordFile]),
                CommandSpec(name: "keys", summary: "list the keys this device holds", synopsis: ""),
                CommandSpec(name: "rotate", summary: "rotate every key (make-before-break)", synopsis: ""),
                CommandSpec(name: "revoke", summary: "revoke one key", synopsis: "--key ID", options: [.value("key", "ID", "the key id (`faceseal device keys`)")]),
                CommandSpec(name: "branding", summary: "sync branding and drop keys the authority revoked", synopsis: ""),
                CommandSpec(name: "audit", summary: "the local activity record", synopsis: "[--limit N]",
                            options: [.value("limit", "N", "entries, 1…10000 (default 50)")]),
            ])
    }()

    /// The options of `faceseal device …`, parsed against `spec`.
    static func parse(_ arguments: ParsedArguments) throws(ArgumentError) -> DeviceOptions {
        var options = DeviceOptions()
        if let directory = arguments.string("state-dir") {
            guard !directory.isEmpty else { throw .badValue(option: "state-dir", value: directory, expected: "a path that is not empty") }
            options.stateDirectory = directory
        }
        options.presence = try arguments.choice("presence", Presence.self) ?? options.presence
        options.authority = try arguments.httpURL("authority")
        options.deviceName = arguments.string("device-name")
        let faces = arguments.strings("faces")
        func requireFaces() throws(ArgumentError) {
            guard !faces.isEmpty else { throw .missingOption("faces") }
        }
        switch arguments.path[2] {
        case "enrol":
            let link = try arguments.required("link")
            try requireFaces()
            options.action = .enrol(link: link, faces: faces, passwordFile: arguments.string("password-file"))
        case "inbox":
            options.action = .inbox(wait: try arguments.integer("wait", in: 0...30) ?? 0, take: arguments.flag("take"))
        case "approve":
            let link = arguments.string("link")
            if link != nil && arguments.flag("next") { throw .conflicting("link", "next") }
            guard link != nil || arguments.flag("next") else { throw .invalid("Give --link LINK or --next.") }
            if link != nil, arguments.string("wait") != nil { throw .conflicting("link", "wait") }
            try requireFaces()
            options.action = .approve(link: link, faces: faces, passwordFile: arguments.string("password-file"),
                                      wait: try arguments.integer("wait", in: 0...30) ?? 30)
        case "keys": options.action = .keys
        case "rotate": options.action = .rotate
        case "revoke": options.action = .revoke(keyId: try arguments.required("key"))
        case "branding": options.action = .branding
        default: options.action = .audit(limit: try arguments.integer("limit", in: 1...10_000) ?? 50)
        }
        return options
    }
}
