import FaceSealAdmin
import FaceSealCrypto
import FaceSealHTTPClient
import FaceSealWire
import Foundation

/// `faceseal admin`: the management API from the command line. The API key comes from a file or the
/// environment — never from an argument, so it stays out of `ps` and shell history.
enum AdminCommand {
    static let spec: CommandSpec = {
        let tenant = OptionSpec.value("tenant", "TENANT", "the tenant")
        let secretFile = OptionSpec.value("secret-file", "PATH", "write the new client secret to PATH (mode 0600) instead of printing it")
        let policy: [OptionSpec] = [
            .value("key-algorithms", "LIST", "comma-separated, e.g. ML-DSA-65,ML-KEM-768 (ML-DSA-65 is required)"),
            .value("attempts-max", "N", "face attempts per request, 1…10"),
            .value("liveness-required", "BOOL", "true: captures must pass a liveness challenge (still photos cannot)"),
            .value("password-mode", "MODE", "none, optional or required"),
            .value("password-min-length", "N", "the shortest password accepted"),
            .value("one-device-per-user", "BOOL", "true: a second enrolment of a user is refused"),
            .value("request-lifetime", "SECONDS", "how long a request waits for the user, 30…3600"),
            .value("further-device-approval", "METHOD", "what adds a further device: enrolled_device, password or none (weaker)"),
        ]
        let application: [OptionSpec] = [
            .value("delivery-mode", "MODE", "poll or ping"),
            .value("notification-endpoint", "URL", "the ping endpoint (ping mode)"),
            .value("delivery-endpoint", "URL", "where devices POST results (`faceseal rp serve` prints its own)"),
            .value("id-token-alg", "ALG", "RS256, EdDSA, ES256 or ML-DSA-65"),
            .value("branding-name", "NAME", "the name devices show"),
            .value("logo-url", "URL", "the logo devices show"),
            .value("primary-color", "#RRGGBB", "the primary colour"),
            .value("secondary-color", "#RRGGBB", "the secondary colour"),
            .value("jwks-file", "PATH", "the application's public keys (private_key_jwt), at most 64 KiB of JSON"),
            .value("redirect-uris", "'URL URL…'", "the browser sign-in's redirect URIs, space-separated (update: replaces them; '' clears)"),
        ]
        func command(_ name: String, _ summary: String, _ synopsis: String = "[options]", positionals: [String] = [],
                     _ options: [OptionSpec] = []) -> CommandSpec {
            CommandSpec(name: name, summary: summary, synopsis: synopsis, options: options, positionals: positionals)
        }
        return CommandSpec(
            name: "admin", summary: "The management API from the command line.", synopsis: "[--url URL] [--api-key-file PATH] [--json] COMMAND",
            details: """
            The API key is read from --api-key-file or the FACESEAL_API_KEY environment variable, never from an argument
            (`faceseal serve` writes the first administrator key to <data-dir>/admin-api-key).
            Exit status: 0 done, 1 refused by the authority or unreachable, 64 usage error.
            """,
            options: [
                .value("url", "URL", "the authority (default http://127.0.0.1:8080)"),
                .value("api-key-file", "PATH", "a file holding the API key (else FACESEAL_API_KEY)"),
                .flag("json", "print the authority's JSON answer as is"),
                .value("get", "MEMBER", "print only this member of the answer, e.g. client_id or link (for scripts)"),
            ],
            subcommands: [
                CommandSpec(name: "tenant", summary: "tenants and their policies", synopsis: "ACTION", subcommands: [
                    command("create", "create a tenant", "--id ID --name NAME [policy options]",
                            [.value("id", "ID", "the tenant's id"), .value("name", "NAME", "its display name")] + policy),
                    command("list", "list the tenants", ""),
                    command("show", "show one tenant", "TENANT", positionals: ["TENANT"]),
                    command("policy", "change a tenant's policy", "TENANT [policy options]", positionals: ["TENANT"], policy),
                    command("delete", "delete a tenant (refused while it has users or applications)", "TENANT", positionals: ["TENANT"]),
                ]),
                CommandSpec(name: "apikey", summary: "API keys (no --tenant: administrator keys)", synopsis: "ACTION", subcommands: [
                    command("create", "create a key (shown once)", "--label LABEL [--tenant TENANT]",
                            [.value("label", "LABEL", "what the key is for"), tenant]),
                    command("list", "list the keys", "[--tenant TENANT]", [tenant]),
                    command("revoke", "revoke a key", "KEY_ID [--tenant TENANT]", positionals: ["KEY_ID"], [tenant]),
                ]),
                CommandSpec(name: "app", summary: "applications (relying parties)", synopsis: "ACTION", subcommands: [
                    command("create", "register an application (its client secret is shown once)",
                            "--tenant TENANT --label LABEL [--secret-file PATH] [app options]",
                            [tenant, .value("label", "LABEL", "its name"), secretFile] + application),
                    command("list", "list a tenant's applications", "--tenant TENANT", [tenant]),
                    command("show", "show one application", "CLIENT_ID --tenant TENANT", positionals: ["CLIENT_ID"], [tenant]),
                    command("update", "change an application (an empty URL clears it)", "CLIENT_ID --tenant TENANT [app options]",
                            positionals: ["CLIENT_ID"], [tenant, .value("label", "LABEL", "its name")] + application),
                    command("secret", "issue a new client secret (shown once)", "CLIENT_ID --tenant TENANT [--secret-file PATH]",
                            positionals: ["CLIENT_ID"], [tenant, secretFile]),
                    command("delete", "delete an application (terminates its enrolments, ends its requests)", "CLIENT_ID --tenant TENANT",
                            positionals: ["CLIENT_ID"], [tenant]),
                ]),
                CommandSpec(name: "user", summary: "users", synopsis: "ACTION", subcommands: [
                    command("create", "create a user", "--tenant TENANT --email EMAIL", [tenant, .value("email", "EMAIL", "the user's email")]),
                    command("list", "list a tenant's users", "--tenant TENANT", [tenant]),
                    command("show", "show one user", "SUBJECT|EMAIL --tenant TENANT", positionals: ["SUBJECT or EMAIL"], [tenant]),
                    command("delete", "delete a user (erases the face token, revokes every enrolment)", "SUBJECT|EMAIL --tenant TENANT",
                            positionals: ["SUBJECT or EMAIL"], [tenant]),
                ]),
                CommandSpec(name: "invite", summary: "enrolment invitations", synopsis: "ACTION", subcommands: [
                    command("create", "create an invitation; its link goes to `faceseal device enrol --link`",
                            "--tenant TENANT (--email EMAIL | --subject SUBJECT) --client-id CLIENT_ID [--expires-in SECONDS]",
                            [tenant, .value("email", "EMAIL", "the invited user"), .value("subject", "SUBJECT", "the invited user"),
                             .value("client-id", "CLIENT_ID", "the application the device enrols for"),
                             .value("expires-in", "SECONDS", "how long the link is valid")]),
                    command("list", "list a tenant's invitations",
                            "--tenant TENANT [--subject SUBJECT] [--client-id CLIENT_ID] [--status pending|consumed|cancelled|expired]",
                            [tenant, .value("subject", "SUBJECT", "one user's"), .value("client-id", "CLIENT_ID", "one application's"),
                             .value("status", "STATUS", "pending, consumed, cancelled or expired")]),
                    command("show", "show one invitation", "INVITATION_ID --tenant TENANT", positionals: ["INVITATION_ID"], [tenant]),
                    command("cancel", "cancel an invitation (its link stops working)", "INVITATION_ID --tenant TENANT",
                            positionals: ["INVITATION_ID"], [tenant]),
                ]),
                CommandSpec(name: "devices", summary: "enrolled devices", synopsis: "ACTION", subcommands: [
                    command("list", "list enrolments", "--tenant TENANT [--subject SUBJECT | --email EMAIL] [--client-id ID] [--status STATUS]",
                            [tenant, .value("subject", "SUBJECT", "one user's"), .value("email", "EMAIL", "one user's"),
                             .value("client-id", "CLIENT_ID", "one application's"), .value("status", "STATUS", "active, revoked or terminated")]),
                ]),
                command("revoke", "revoke an enrolment (its device's next request gets deviceKeyRevoked)", "ENROLMENT_ID --tenant TENANT",
                        positionals: ["ENROLMENT_ID"], [tenant]),
                command("terminate", "terminate an enrolment (its device's next request gets deviceKeyTerminated)",
                        "ENROLMENT_ID --tenant TENANT", positionals: ["ENROLMENT_ID"], [tenant]),
                command("audit", "the audit log, newest first", "[--tenant TENANT] [--limit N] [--before SEQ]",
                        [tenant, .value("limit", "N", "entries, 1…1000"), .value("before", "SEQ", "entries before this sequence number")]),
                CommandSpec(name: "keys", summary: "the authority's own keys (administrator)", synopsis: "ACTION", subcommands: [
                    command("list", "the ID-token keys and the device key in use", ""),
                    command("rotate", "rotate the ID-token keys, the device key devices pinned, or both (no flag: both)",
                            "[--id-token] [--device] [--rollover-days 1…365]",
                            [.flag("id-token", "new ID-token keys; /jwks keeps the old ones for a day"),
                             .flag("device", "a new device key; the old one signs the rollover devices follow"),
                             .value("rollover-days", "DAYS", "how long a device still on the old key can follow it (default 90)")]),
                ]),
            ],
            refusedOptions: ["api-key": "The API key is never an argument: use --api-key-file PATH or FACESEAL_API_KEY."])
    }()

    /// Runs `faceseal admin …`; returns the exit status.
    static func run(_ parsed: ParsedArguments, environment: [String: String] = ProcessInfo.processInfo.environment,
                    output: (String) -> Void = { print($0) }) async -> Int32 {
        do {
            var arguments = parsed
            let baseURL = try arguments.httpURL("url") ?? "http://127.0.0.1:8080"
            let json = arguments.flag("json")
            let keyFile = arguments.string("api-key-file")
            let request = try AdminRequest.parse(&arguments)
            let apiKey = try readAPIKey(file: keyFile, environment: environment)
            let client = AdminClient(baseURL: baseURL, apiKey: apiKey, client: HTTPClient())
            var body = try await request.perform(client)
            if let path = arguments.string("secret-file") { body = try storeSecret(body, to: path) }
            if let member = arguments.string("get") {
                guard let value = (try? JSONValue.parse(body))?.objectValue?[member], value != .null else {
                    throw AdminFailure.transport("the answer has no member \(ArgumentError.quoted(member))")
                }
                output(value.stringValue ?? value.serializedString)
            } else {
                output(json ? String(decoding: body, as: UTF8.self) : try request.render(body, client))
            }
            return 0
        } catch let error as ArgumentError {
            return FaceSealCommand.usageError(error, command: parsed.commandName)
        } catch {
            printError("faceseal admin: \(error)")
            return 1
        }
    }

    /// Writes the answer's `client_secret` to `path` (0600) and answers the body without it.
    static func storeSecret(_ body: [UInt8], to path: String) throws -> [UInt8] {
        guard var members = (try? JSONValue.parse(body))?.objectValue, let secret = members["client_secret"]?.stringValue else {
            throw AdminFailure.transport("the answer carries no client secret")
        }
        do {
            try writeSecretFile(secret, to: path)
        } catch {
            throw AdminFailure.transport("\(error); the new secret is lost: issue another with `faceseal admin app secret`")
        }
        members["client_secret"] = nil
        return JSONValue.object(members).serialized
    }

    /// The key from the file (first line, trimmed) or else the environment.
    static func readAPIKey(file: String?, environment: [String: String]) throws -> String {
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else { throw AdminFailure.apiKey("cannot read API key file \(file)") }
            guard data.count <= 1024 else { throw AdminFailure.apiKey("API key file \(file) is larger than 1 KiB") }
            let key = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !key.isEmpty else { throw AdminFailure.apiKey("API key file \(file) is empty") }
            return key
        }
        if let key = environment["FACESEAL_API_KEY"]?.trimmingCharacters(in: .whitespacesAndNewlines), !key.isEmpty { return key }
        throw ArgumentError.invalid("No API key: give --api-key-file PATH or set FACESEAL_API_KEY.")
    }
}

/// One management call decided from the command line, and how to show its answer.
struct AdminRequest {
    /// Makes the call(s); returns the body of the answer to show.
    let perform: (AdminClient) async throws(AdminFailure) -> [UInt8]
    /// Turns the answer into human-readable text.
    let render: ([UInt8], AdminClient) throws -> String

    /// One call.
    init(method: HTTPMethod, path: String, body: JSONValue?, render: @escaping ([UInt8], AdminClient) throws -> String) {
        perform = { client throws(AdminFailure) in try await client.call(method, path, body: body) }
        self.render = render
    }

    /// A call that needs the user's subject first: looks `email` up under `base` (a tenant path), then sends `method`
    /// to the path `then(subject)` builds.
    init(email: String, base: String, method: HTTPMethod = .get, then path: @escaping (String) -> String,
         render: @escaping ([UInt8], AdminClient) throws -> String) {
        perform = { client throws(AdminFailure) in
            let list = try client.decode(ManagedList<ManagedUser>.self, try await client.call(.get, base + "/users?email=\(escaped(email))"))
            guard let user = list.items.first else { throw .refused(status: 404, code: "not_found", description: "user not found") }
            return try await client.call(method, path(user.subject))
        }
        self.render = render
    }

    /// The range of a number the authority checks itself (only overflow is the command line's concern).
    static let wholeNumbers = 0...Int(Int32.max)

    /// The call `faceseal admin …` names; `arguments.path` is `["faceseal", "admin", COMMAND, ACTION?]`.
    static func parse(_ arguments: inout ParsedArguments) throws(ArgumentError) -> AdminRequest {
        let command = arguments.path[2]
        switch command {
        case "tenant": return try tenant(&arguments)
        case "apikey": return try apiKey(&arguments)
        case "app": return try application(&arguments)
        case "user": return try user(&arguments)
        case "invite": return try invite(&arguments)
        case "devices": return try devices(&arguments)
        case "revoke", "terminate":
            let enrolment = try arguments.word("ENROLMENT_ID")
            let tenant = try arguments.required("tenant")
            return AdminRequest(method: .post, path: "/tenants/\(escaped(tenant))/devices/\(escaped(enrolment))/\(command)", body: nil) {
                AdminOutput.device(try $1.decode(ManagedDevice.self, $0))
            }
        case "keys":
            let render: ([UInt8], AdminClient) throws -> String = { AdminOutput.authorityKeys(try $1.decode(ManagedAuthorityKeys.self, $0)) }
            guard arguments.path[3] == "rotate" else { return AdminRequest(method: .get, path: "/keys", body: nil, render: render) }
            let idToken = arguments.flag("id-token")
            let device = arguments.flag("device")
            var members: [String: JSONValue] = ["id_token": .bool(idToken || !device), "device": .bool(device || !idToken)]
            if let days = try arguments.integer("rollover-days", in: wholeNumbers) { members["rollover_days"] = .integer(Int64(days)) }
            return AdminRequest(method: .post, path: "/keys/rotate", body: .object(members), render: render)
        case "audit":
            var query: [String] = []
            if let limit = try arguments.integer("limit", in: wholeNumbers) { query.append("limit=\(limit)") }
            if let before = try arguments.integer("before", in: 0...Int(Int64.max)) { query.append("before=\(before)") }
            let prefix = arguments.string("tenant").map { "/tenants/\(escaped($0))" } ?? ""
            return AdminRequest(method: .get, path: prefix + "/audit" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")), body: nil) {
                AdminOutput.audit(try $1.decode(ManagedAuditPage.self, $0))
            }
        default:
            throw .invalid("There is no admin command '\(command)'.")
        }
    }

    /// What a deletion did.
    private static func deletion(_ body: [UInt8], _ client: AdminClient) throws -> String {
        AdminOutput.deletion(try client.decode(ManagedDeletion.self, body))
    }

    private static func tenant(_ arguments: inout ParsedArguments) throws(ArgumentError) -> AdminRequest {
        let render: ([UInt8], AdminClient) throws -> String = { AdminOutput.tenant(try $1.decode(ManagedTenant.self, $0)) }
        switch arguments.path[3] {
        case "create":
            var members: [String: JSONValue] = ["id": .string(try arguments.required("id")), "name": .string(try arguments.required("name"))]
            let policy = try policyMembers(&arguments)
            if !policy.isEmpty { members["policy"] = .object(policy) }
            return AdminRequest(method: .post, path: "/tenants", body: .object(members), render: render)
        case "list":
            return AdminRequest(method: .get, path: "/tenants", body: nil) { AdminOutput.tenants(try $1.decode(ManagedList<ManagedTenant>.self, $0).items) }
        case "show":
            return AdminRequest(method: .get, path: "/tenants/\(escaped(try arguments.word("TENANT")))", body: nil, render: render)
        case "delete":
            return AdminRequest(method: .delete, path: "/tenants/\(escaped(try arguments.word("TENANT")))", body: nil, render: deletion)
        default:
            let tenant = try arguments.word("TENANT")
            let policy = try policyMembers(&arguments)
            guard !policy.isEmpty else { throw ArgumentError.invalid("Tenant policy: give at least one policy option.") }
            return AdminRequest(method: .patch, path: "/tenants/\(escaped(tenant))/policy", body: .object(policy), render: render)
        }
    }

    private static func policyMembers(_ arguments: inout ParsedArguments) throws(ArgumentError) -> [String: JSONValue] {
        var policy: [String: JSONValue] = [:]
        if let algorithms = arguments.string("key-algorithms") {
            policy["key_algorithms"] = .array(algorithms.split(separator: ",").map { .string($0.trimmingCharacters(in: .whitespaces)) })
        }
        if let attempts = try arguments.integer("attempts-max", in: wholeNumbers) { policy["attempts_max"] = .integer(Int64(attempts)) }
        if let liveness = try arguments.boolean("liveness-required") { policy["liveness_required"] = .bool(liveness) }
        if let oneDevice = try arguments.boolean("one-device-per-user") { policy["one_device_per_user"] = .bool(oneDevice) }
        if let lifetime = try arguments.integer("request-lifetime", in: wholeNumbers) { policy["request_lifetime_seconds"] = .integer(Int64(lifetime)) }
        if let approval = arguments.string("further-device-approval") { policy["further_device_approval"] = .string(approval) }
        var password: [String: JSONValue] = [:]
        if let mode = arguments.string("password-mode") { password["mode"] = .string(mode) }
        if let length = try arguments.integer("password-min-length", in: wholeNumbers) { password["minimum_length"] = .integer(Int64(length)) }
        if !password.isEmpty { policy["password_policy"] = .object(password) }
        return policy
    }

    private static func apiKey(_ arguments: inout ParsedArguments) throws(ArgumentError) -> AdminRequest {
        let render: ([UInt8], AdminClient) throws -> String = { AdminOutput.apiKey(try $1.decode(ManagedAPIKey.self, $0)) }
        let action = arguments.path[3]
        let prefix = arguments.string("tenant").map { "/tenants/\(escaped($0))" } ?? ""
        switch action {
        case "create":
            return AdminRequest(method: .post, path: prefix + "/api-keys", body: .object(["label": .string(try arguments.required("label"))]), render: render)
        case "list":
            return AdminRequest(method: .get, path: prefix + "/api-keys", body: nil) { AdminOutput.apiKeys(try $1.decode(ManagedList<ManagedAPIKey>.self, $0).items) }
        default:
            return AdminRequest(method: .post, path: prefix + "/api-keys/\(escaped(try arguments.word("KEY_ID")))/revoke", body: nil, render: render)
        }
    }

    private static func application(_ arguments: inout ParsedArguments) throws(ArgumentError) -> AdminRequest {
        let render: ([UInt8], AdminClient) throws -> String = { AdminOutput.application(try $1.decode(ManagedApplication.self, $0)) }
        let action = arguments.path[3]
        let clientID = ["show", "update", "secret", "delete"].contains(action) ? try arguments.word("CLIENT_ID") : nil
        let base = "/tenants/\(escaped(try arguments.required("tenant")))/applications"
        switch action {
        case "create":
            var members = try applicationMembers(&arguments, updating: false)
            members["label"] = .string(try arguments.required("label"))
            return AdminRequest(method: .post, path: base, body: .object(members), render: render)
        case "list":
            return AdminRequest(method: .get, path: base, body: nil) { AdminOutput.applications(try $1.decode(ManagedList<ManagedApplication>.self, $0).items) }
        case "show":
            return AdminRequest(method: .get, path: base + "/\(escaped(clientID ?? ""))", body: nil, render: render)
        case "update":
            var members = try applicationMembers(&arguments, updating: true)
            if let label = arguments.string("label") { members["label"] = .string(label) }
            guard !members.isEmpty else { throw ArgumentError.invalid("App update: give at least one option to change.") }
            return AdminRequest(method: .patch, path: base + "/\(escaped(clientID ?? ""))", body: .object(members), render: render)
        case "delete":
            return AdminRequest(method: .delete, path: base + "/\(escaped(clientID ?? ""))", body: nil, render: deletion)
        default:
            return AdminRequest(method: .post, path: base + "/\(escaped(clientID ?? ""))/secret", body: nil, render: render)
        }
    }

    private static func applicationMembers(_ arguments: inout ParsedArguments, updating: Bool) throws(ArgumentError) -> [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        // On update an empty value clears an optional URL.
        func url(_ value: String) -> JSONValue { value.isEmpty && updating ? .null : .string(value) }
        if let mode = arguments.string("delivery-mode") { members["delivery_mode"] = .string(mode) }
        if let endpoint = arguments.string("notification-endpoint") { members["notification_endpoint"] = url(endpoint) }
        if let endpoint = arguments.string("delivery-endpoint") { members["delivery_endpoint"] = url(endpoint) }
        if let algorithm = arguments.string("id-token-alg") { members["id_token_signed_response_alg"] = .string(algorithm) }
        if let uris = arguments.string("redirect-uris") {
            members["redirect_uris"] = .array(uris.split(separator: " ").map { .string(String($0)) })
        }
        var branding: [String: JSONValue] = [:]
        if let name = arguments.string("branding-name") { branding["name"] = .string(name) }
        if let logo = arguments.string("logo-url") { branding["logo_url"] = url(logo) }
        if let colour = arguments.string("primary-color") { branding["primary_color"] = url(colour) }
        if let colour = arguments.string("secondary-color") { branding["secondary_color"] = url(colour) }
        if !branding.isEmpty { members["branding"] = .object(branding) }
        if let file = arguments.string("jwks-file") {
            guard let data = FileManager.default.contents(atPath: file), data.count <= 64 * 1024 else {
                throw ArgumentError.invalid("Cannot read --jwks-file \(file) (at most 64 KiB).")
            }
            guard let jwks = try? JSONValue.parse(data) else { throw ArgumentError.invalid("--jwks-file \(file) is not JSON.") }
            members["jwks"] = jwks
        }
        return members
    }

    private static func user(_ arguments: inout ParsedArguments) throws(ArgumentError) -> AdminRequest {
        let action = arguments.path[3]
        let who = action == "show" || action == "delete" ? try arguments.word("SUBJECT or EMAIL") : nil
        let base = "/tenants/\(escaped(try arguments.required("tenant")))/users"
        switch action {
        case "create":
            return AdminRequest(method: .post, path: base, body: .object(["email": .string(try arguments.required("email"))])) {
                AdminOutput.user(try $1.decode(ManagedUser.self, $0))
            }
        case "list":
            return AdminRequest(method: .get, path: base, body: nil) { AdminOutput.users(try $1.decode(ManagedList<ManagedUser>.self, $0).items) }
        default:
            let who = who ?? ""
            let method: HTTPMethod = action == "delete" ? .delete : .get
            let render: ([UInt8], AdminClient) throws -> String
            if action == "delete" {
                render = deletion
            } else {
                render = { body, client in AdminOutput.user(try client.decode(ManagedUser.self, body)) }
            }
            if who.contains("@") {
                return AdminRequest(email: who, base: String(base.dropLast("/users".count)), method: method, then: { base + "/\(escaped($0))" },
                                    render: render)
            }
            return AdminRequest(method: method, path: base + "/\(escaped(who))", body: nil, render: render)
        }
    }

    private static func invite(_ arguments: inout ParsedArguments) throws(ArgumentError) -> AdminRequest {
        let action = arguments.path[3]
        let render: ([UInt8], AdminClient) throws -> String = { AdminOutput.invitation(try $1.decode(ManagedInvitation.self, $0)) }
        if action == "show" || action == "cancel" {
            let id = try arguments.word("INVITATION_ID")
            let path = "/tenants/\(escaped(try arguments.required("tenant")))/invitations/\(escaped(id))"
            return action == "show" ? AdminRequest(method: .get, path: path, body: nil, render: render)
                : AdminRequest(method: .post, path: path + "/cancel", body: nil, render: render)
        }
        let tenant = try arguments.required("tenant")
        if action == "list" {
            var query: [String] = []
            for (option, name) in [("subject", "subject"), ("client-id", "client_id"), ("status", "status")] {
                if let value = arguments.string(option) { query.append("\(name)=\(escaped(value))") }
            }
            return AdminRequest(method: .get, path: "/tenants/\(escaped(tenant))/invitations" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")),
                                body: nil) { AdminOutput.invitations(try $1.decode(ManagedList<ManagedInvitation>.self, $0).items) }
        }
        var members: [String: JSONValue] = ["client_id": .string(try arguments.required("client-id"))]
        let email = arguments.string("email")
        let subject = arguments.string("subject")
        guard (email == nil) != (subject == nil) else { throw ArgumentError.invalid("Invite create: give exactly one of --email and --subject.") }
        if let email { members["email"] = .string(email) }
        if let subject { members["subject"] = .string(subject) }
        if let expiresIn = try arguments.integer("expires-in", in: wholeNumbers) { members["expires_in"] = .integer(Int64(expiresIn)) }
        return AdminRequest(method: .post, path: "/tenants/\(escaped(tenant))/invitations", body: .object(members), render: render)
    }

    private static func devices(_ arguments: inout ParsedArguments) throws(ArgumentError) -> AdminRequest {
        let tenant = try arguments.required("tenant")
        let email = arguments.string("email")
        var query: [String] = []
        if let subject = arguments.string("subject") {
            guard email == nil else { throw ArgumentError.invalid("Devices list: give --subject or --email, not both.") }
            query.append("subject=\(escaped(subject))")
        }
        if let clientID = arguments.string("client-id") { query.append("client_id=\(escaped(clientID))") }
        if let status = arguments.string("status") { query.append("status=\(escaped(status))") }
        let base = "/tenants/\(escaped(tenant))"
        let render: ([UInt8], AdminClient) throws -> String = { AdminOutput.devices(try $1.decode(ManagedList<ManagedDevice>.self, $0).items) }
        guard let email else {
            return AdminRequest(method: .get, path: base + "/devices" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")), body: nil, render: render)
        }
        // By email: the user's devices (filters other than the user do not apply to that listing).
        guard query.isEmpty else { throw ArgumentError.invalid("Devices list: --email cannot be combined with --client-id or --status.") }
        return AdminRequest(email: email, base: base, then: { base + "/users/\(escaped($0))/devices" }, render: render)
    }
}

/// Percent-encodes a path segment or query value.
func escaped(_ value: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
}
