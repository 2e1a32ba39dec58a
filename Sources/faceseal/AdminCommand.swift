import FaceSealAuthority
import FaceSealCrypto
import FaceSealHTTP
import Foundation

/// `faceseal admin`: the management API from the command line. The API key comes from a file or the
/// environment — never from an argument, so it stays out of `ps` and shell history.
enum AdminCommand {
    static let usage = """
    usage: faceseal admin [--url URL] [--api-key-file PATH] [--json] <command>

    The API key is read from --api-key-file or the FACESEAL_API_KEY environment variable
    (`faceseal serve` writes the first administrator key to <data-dir>/admin-api-key).
    --url defaults to http://127.0.0.1:8080. --json prints the authority's JSON answer as is.

    commands:
      tenant create --id ID --name NAME [policy options]
      tenant list
      tenant show TENANT
      tenant delete TENANT                 (refused while it has users or applications)
      tenant policy TENANT [policy options]
          policy options: --key-algorithms ML-DSA-65,ML-KEM-768  --attempts-max 1…10
                          --liveness-required true|false  --password-mode none|optional|required
                          --password-min-length N  --one-device-per-user true|false
                          --request-lifetime 30…3600 (seconds)
      apikey create --label LABEL [--tenant TENANT]     (no --tenant: an administrator key)
      apikey list [--tenant TENANT]
      apikey revoke KEY_ID [--tenant TENANT]
      app create --tenant TENANT --label LABEL [app options] [--jwks-file PATH]
      app list --tenant TENANT
      app show CLIENT_ID --tenant TENANT
      app update CLIENT_ID --tenant TENANT [app options] [--jwks-file PATH]
      app secret CLIENT_ID --tenant TENANT              (a new client secret, shown once)
      app delete CLIENT_ID --tenant TENANT              (terminates its enrolments, ends its requests)
          app options: --delivery-mode poll|ping  --notification-endpoint URL  --delivery-endpoint URL
                       --id-token-alg RS256|EdDSA|ES256|ML-DSA-65  --branding-name NAME  --logo-url URL
                       --primary-color '#RRGGBB'  --secondary-color '#RRGGBB'   (update: an empty URL clears it)
                       --redirect-uris 'URL URL…'   the browser sign-in's redirect URIs (update: replaces them; '' clears)
      user create --tenant TENANT --email EMAIL
      user list --tenant TENANT
      user show SUBJECT|EMAIL --tenant TENANT
      user delete SUBJECT|EMAIL --tenant TENANT  (erases the face token, revokes every enrolment)
      invite create --tenant TENANT (--email EMAIL | --subject SUBJECT) --client-id CLIENT_ID [--expires-in SECONDS]
      invite list --tenant TENANT [--subject SUBJECT] [--client-id CLIENT_ID] [--status pending|consumed|cancelled|expired]
      invite show INVITATION_ID --tenant TENANT
      invite cancel INVITATION_ID --tenant TENANT
      devices list --tenant TENANT [--subject SUBJECT | --email EMAIL] [--client-id CLIENT_ID] [--status STATUS]
      revoke ENROLMENT_ID --tenant TENANT       (the device's next request gets deviceKeyRevoked)
      terminate ENROLMENT_ID --tenant TENANT    (the device's next request gets deviceKeyTerminated)
      audit [--tenant TENANT] [--limit N] [--before SEQ]

    exit status: 0 done, 1 refused by the authority or unreachable, 64 usage error
    """

    /// Runs `faceseal admin` with `arguments` (after `admin`); returns the exit status.
    static func run(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                    output: (String) -> Void = { print($0) }) async -> Int32 {
        do {
            var parsed = try AdminArguments(arguments)
            if parsed.flag("help") || parsed.positionals.first == "help" {
                output(usage)
                return 0
            }
            if parsed.option("api-key") != nil {
                throw AdminUsageError("the API key is never an argument: use --api-key-file PATH or FACESEAL_API_KEY")
            }
            var baseURL = parsed.option("url") ?? "http://127.0.0.1:8080"
            while baseURL.hasSuffix("/") { baseURL.removeLast() }
            guard let url = URL(string: baseURL), let scheme = url.scheme, ["http", "https"].contains(scheme.lowercased()), url.host != nil else {
                throw AdminUsageError("--url must be an http(s) URL, not '\(baseURL)'")
            }
            let json = parsed.flag("json")
            let keyFile = parsed.option("api-key-file")
            let request = try AdminRequest.parse(&parsed)
            try parsed.finish()
            let apiKey = try readAPIKey(file: keyFile, environment: environment)
            let client = AdminClient(baseURL: baseURL, apiKey: apiKey, client: HTTPClient())
            let body = try await request.perform(client)
            output(json ? String(decoding: body, as: UTF8.self) : try request.render(body, client))
            return 0
        } catch let error as AdminUsageError {
            printError("faceseal admin: \(error)\nrun `faceseal admin --help` for usage")
            return 64
        } catch let error as AdminFailure {
            printError("faceseal admin: \(error)")
            return 1
        } catch {
            printError("faceseal admin: \(error)")
            return 1
        }
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
        throw AdminUsageError("no API key: give --api-key-file PATH or set FACESEAL_API_KEY")
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

    static func parse(_ arguments: inout AdminArguments) throws(AdminUsageError) -> AdminRequest {
        let command = try arguments.word("command (tenant, apikey, app, user, invite, devices, revoke, terminate, audit)")
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
        case "audit":
            var query: [String] = []
            if let limit = try arguments.integer("limit") { query.append("limit=\(limit)") }
            if let before = try arguments.integer("before") { query.append("before=\(before)") }
            let prefix = arguments.option("tenant").map { "/tenants/\(escaped($0))" } ?? ""
            return AdminRequest(method: .get, path: prefix + "/audit" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")), body: nil) {
                AdminOutput.audit(try $1.decode(ManagedAuditPage.self, $0))
            }
        default:
            throw AdminUsageError("unknown command '\(command)'")
        }
    }

    /// What a deletion did.
    private static func deletion(_ body: [UInt8], _ client: AdminClient) throws -> String {
        AdminOutput.deletion(try client.decode(ManagedDeletion.self, body))
    }

    private static func action(_ arguments: inout AdminArguments, _ allowed: [String], of command: String) throws(AdminUsageError) -> String {
        let action = try arguments.word("\(command) action (\(allowed.joined(separator: ", ")))")
        guard allowed.contains(action) else { throw AdminUsageError("unknown action '\(command) \(action)' (\(allowed.joined(separator: ", ")))") }
        return action
    }

    private static func tenant(_ arguments: inout AdminArguments) throws(AdminUsageError) -> AdminRequest {
        let render: ([UInt8], AdminClient) throws -> String = { AdminOutput.tenant(try $1.decode(ManagedTenant.self, $0)) }
        switch try action(&arguments, ["create", "list", "show", "policy", "delete"], of: "tenant") {
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
            guard !policy.isEmpty else { throw AdminUsageError("tenant policy: give at least one policy option") }
            return AdminRequest(method: .patch, path: "/tenants/\(escaped(tenant))/policy", body: .object(policy), render: render)
        }
    }

    private static func policyMembers(_ arguments: inout AdminArguments) throws(AdminUsageError) -> [String: JSONValue] {
        var policy: [String: JSONValue] = [:]
        if let algorithms = arguments.option("key-algorithms") {
            policy["key_algorithms"] = .array(algorithms.split(separator: ",").map { .string($0.trimmingCharacters(in: .whitespaces)) })
        }
        if let attempts = try arguments.integer("attempts-max") { policy["attempts_max"] = .integer(Int64(attempts)) }
        if let liveness = try arguments.boolean("liveness-required") { policy["liveness_required"] = .bool(liveness) }
        if let oneDevice = try arguments.boolean("one-device-per-user") { policy["one_device_per_user"] = .bool(oneDevice) }
        if let lifetime = try arguments.integer("request-lifetime") { policy["request_lifetime_seconds"] = .integer(Int64(lifetime)) }
        var password: [String: JSONValue] = [:]
        if let mode = arguments.option("password-mode") { password["mode"] = .string(mode) }
        if let length = try arguments.integer("password-min-length") { password["minimum_length"] = .integer(Int64(length)) }
        if !password.isEmpty { policy["password_policy"] = .object(password) }
        return policy
    }

    private static func apiKey(_ arguments: inout AdminArguments) throws(AdminUsageError) -> AdminRequest {
        let render: ([UInt8], AdminClient) throws -> String = { AdminOutput.apiKey(try $1.decode(ManagedAPIKey.self, $0)) }
        let action = try action(&arguments, ["create", "list", "revoke"], of: "apikey")
        let prefix = arguments.option("tenant").map { "/tenants/\(escaped($0))" } ?? ""
        switch action {
        case "create":
            return AdminRequest(method: .post, path: prefix + "/api-keys", body: .object(["label": .string(try arguments.required("label"))]), render: render)
        case "list":
            return AdminRequest(method: .get, path: prefix + "/api-keys", body: nil) { AdminOutput.apiKeys(try $1.decode(ManagedList<ManagedAPIKey>.self, $0).items) }
        default:
            return AdminRequest(method: .post, path: prefix + "/api-keys/\(escaped(try arguments.word("KEY_ID")))/revoke", body: nil, render: render)
        }
    }

    private static func application(_ arguments: inout AdminArguments) throws(AdminUsageError) -> AdminRequest {
        let render: ([UInt8], AdminClient) throws -> String = { AdminOutput.application(try $1.decode(ManagedApplication.self, $0)) }
        let action = try action(&arguments, ["create", "list", "show", "update", "secret", "delete"], of: "app")
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
            if let label = arguments.option("label") { members["label"] = .string(label) }
            guard !members.isEmpty else { throw AdminUsageError("app update: give at least one option to change") }
            return AdminRequest(method: .patch, path: base + "/\(escaped(clientID ?? ""))", body: .object(members), render: render)
        case "delete":
            return AdminRequest(method: .delete, path: base + "/\(escaped(clientID ?? ""))", body: nil, render: deletion)
        default:
            return AdminRequest(method: .post, path: base + "/\(escaped(clientID ?? ""))/secret", body: nil, render: render)
        }
    }

    private static func applicationMembers(_ arguments: inout AdminArguments, updating: Bool) throws(AdminUsageError) -> [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        // On update an empty value clears an optional URL.
        func url(_ value: String) -> JSONValue { value.isEmpty && updating ? .null : .string(value) }
        if let mode = arguments.option("delivery-mode") { members["delivery_mode"] = .string(mode) }
        if let endpoint = arguments.option("notification-endpoint") { members["notification_endpoint"] = url(endpoint) }
        if let endpoint = arguments.option("delivery-endpoint") { members["delivery_endpoint"] = url(endpoint) }
        if let algorithm = arguments.option("id-token-alg") { members["id_token_signed_response_alg"] = .string(algorithm) }
        if let uris = arguments.option("redirect-uris") {
            members["redirect_uris"] = .array(uris.split(separator: " ").map { .string(String($0)) })
        }
        var branding: [String: JSONValue] = [:]
        if let name = arguments.option("branding-name") { branding["name"] = .string(name) }
        if let logo = arguments.option("logo-url") { branding["logo_url"] = url(logo) }
        if let colour = arguments.option("primary-color") { branding["primary_color"] = url(colour) }
        if let colour = arguments.option("secondary-color") { branding["secondary_color"] = url(colour) }
        if !branding.isEmpty { members["branding"] = .object(branding) }
        if let file = arguments.option("jwks-file") {
            guard let data = FileManager.default.contents(atPath: file), data.count <= 64 * 1024 else {
                throw AdminUsageError("cannot read --jwks-file \(file) (at most 64 KiB)")
            }
            guard let jwks = try? JSONValue.parse(data) else { throw AdminUsageError("--jwks-file \(file) is not JSON") }
            members["jwks"] = jwks
        }
        return members
    }

    private static func user(_ arguments: inout AdminArguments) throws(AdminUsageError) -> AdminRequest {
        let action = try action(&arguments, ["create", "list", "show", "delete"], of: "user")
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

    private static func invite(_ arguments: inout AdminArguments) throws(AdminUsageError) -> AdminRequest {
        let action = try action(&arguments, ["create", "list", "show", "cancel"], of: "invite")
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
                if let value = arguments.option(option) { query.append("\(name)=\(escaped(value))") }
            }
            return AdminRequest(method: .get, path: "/tenants/\(escaped(tenant))/invitations" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")),
                                body: nil) { AdminOutput.invitations(try $1.decode(ManagedList<ManagedInvitation>.self, $0).items) }
        }
        var members: [String: JSONValue] = ["client_id": .string(try arguments.required("client-id"))]
        let email = arguments.option("email")
        let subject = arguments.option("subject")
        guard (email == nil) != (subject == nil) else { throw AdminUsageError("invite create: give exactly one of --email and --subject") }
        if let email { members["email"] = .string(email) }
        if let subject { members["subject"] = .string(subject) }
        if let expiresIn = try arguments.integer("expires-in") { members["expires_in"] = .integer(Int64(expiresIn)) }
        return AdminRequest(method: .post, path: "/tenants/\(escaped(tenant))/invitations", body: .object(members), render: render)
    }

    private static func devices(_ arguments: inout AdminArguments) throws(AdminUsageError) -> AdminRequest {
        _ = try action(&arguments, ["list"], of: "devices")
        let tenant = try arguments.required("tenant")
        let email = arguments.option("email")
        var query: [String] = []
        if let subject = arguments.option("subject") {
            guard email == nil else { throw AdminUsageError("devices list: give --subject or --email, not both") }
            query.append("subject=\(escaped(subject))")
        }
        if let clientID = arguments.option("client-id") { query.append("client_id=\(escaped(clientID))") }
        if let status = arguments.option("status") { query.append("status=\(escaped(status))") }
        let base = "/tenants/\(escaped(tenant))"
        let render: ([UInt8], AdminClient) throws -> String = { AdminOutput.devices(try $1.decode(ManagedList<ManagedDevice>.self, $0).items) }
        guard let email else {
            return AdminRequest(method: .get, path: base + "/devices" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")), body: nil, render: render)
        }
        // By email: the user's devices (filters other than the user do not apply to that listing).
        guard query.isEmpty else { throw AdminUsageError("devices list: --email cannot be combined with --client-id or --status") }
        return AdminRequest(email: email, base: base, then: { base + "/users/\(escaped($0))/devices" }, render: render)
    }
}
