import Foundation

/// `faceseal rp`: a sample application built only on `FaceSealRelyingParty`.
enum RPCommand {
    static let spec: CommandSpec = {
        let stateDirectory = OptionSpec.value("state-dir", "DIR", "where control.json and pins.json live (default ./faceseal-rp)")
        return CommandSpec(
            name: "rp", summary: "A sample application (relying party) built only on FaceSealRelyingParty, in two processes.",
            synopsis: "SUBCOMMAND [options]",
            subcommands: [
                CommandSpec(
                    name: "serve", summary: "host the application's endpoints and a local control API",
                    synopsis: "--issuer URL --client-id ID --client-secret-file PATH [options]",
                    details: """
                    Endpoints:
                      POST <public-url>/faceseal/delivery   the delivery endpoint: register it with the authority
                                                            (`faceseal admin app update … --delivery-endpoint URL`)
                      POST <public-url>/faceseal/ping       the ping notification endpoint (--mode ping)
                      /control/...                          the control API `rp request` talks to (bearer-protected)
                      GET  <public-url>/                    "Sign in with FaceSeal" in a browser (the code flow with
                                                            PKCE); register <public-url>/callback as a redirect URI
                    Once it listens it prints the delivery endpoint and writes <state-dir>/control.json (0600: control
                    URL and token, delivery and ping URLs); it pins each user's keys per context in <state-dir>/pins.json.
                    """,
                    options: [
                        .value("issuer", "URL", "the authority's issuer (discovery at URL/.well-known/openid-configuration)"),
                        .value("client-id", "ID", "the application's client id"),
                        .value("client-secret-file", "PATH", "a file holding the client secret (trailing newline ignored)"),
                        .value("auth", "METHOD", "post (client_secret_post, default) or basic (client_secret_basic)"),
                        .value("port", "P", "port to listen on (default 8788; 0 picks one, see control.json)"),
                        .value("host", "ADDRESS", "address to listen on (default 127.0.0.1)"),
                        .value("public-url", "URL", "how the authenticator reaches this process (default http://HOST:PORT)"),
                        .value("mode", "MODE", "how tokens are retrieved: poll (default) or ping"),
                        stateDirectory,
                    ]),
                CommandSpec(
                    name: "request", summary: "ask the running `rp serve` for a request and print what it verified",
                    synopsis: "public-keys|sign|decapsulate|login --user EMAIL [--context CTX] --message TEXT [options]",
                    details: """
                    Finds `rp serve` through <state-dir>/control.json, starts the request, waits for the user's answer and
                    prints each check that passed, then `verified: …` (exit 0), or `denied: …` / `expired: …` /
                    `stale: …` / `failed: …` (exit 1).
                      public-keys   the user's public keys for the context (pinned on first delivery); ask for them
                                    before the first `sign`, whose signature is verified with the pinned key
                      sign          an ML-DSA-65 signature over --data (or --data-file)
                      decapsulate   a shared secret encapsulated to the pinned ML-KEM-768 key (its SHA-256 is printed)
                      login         a sign-in (ID token only)
                    """,
                    options: [
                        .value("user", "EMAIL", "the user (login_hint)"),
                        .value("context", "CTX", "the key context (required except for login)"),
                        .value("message", "TEXT", "the binding message shown to the user (1–64 printable characters)"),
                        .value("data", "TEXT", "the message to sign (sign only)"),
                        .value("data-file", "PATH", "the message to sign, from a file of at most 64 KiB (sign only)"),
                        .value("timeout", "SECONDS", "give up waiting after this long (1…86400, default 600)"),
                        stateDirectory,
                    ],
                    positionals: ["KIND"]),
            ])
    }()

    static func run(_ parsed: ParsedArguments) async throws(ArgumentError) -> Int32 {
        parsed.path[2] == "serve" ? try await RPServe.run(parsed) : try await RPRequest.run(parsed)
    }
}

/// What `rp serve` writes to `<state-dir>/control.json` and `rp request` reads.
struct RPControlFile: Codable {
    var controlURL: String
    var controlToken: String
    var deliveryEndpoint: String
    var notificationEndpoint: String?

    enum CodingKeys: String, CodingKey {
        case controlURL = "control_url"
        case controlToken = "control_token"
        case deliveryEndpoint = "delivery_endpoint"
        case notificationEndpoint = "notification_endpoint"
    }

    static func url(stateDirectory: String) -> URL {
        URL(fileURLWithPath: stateDirectory).appendingPathComponent("control.json")
    }
}

/// The body of `POST /control/requests`.
struct RPControlStart: Codable {
    var kind: String
    var user: String
    var context: String
    var message: String
    /// base64url of the data to sign.
    var data: String?
}

/// A request's state as the control API reports it.
struct RPControlStatus: Codable {
    /// `pending`, `verified`, `denied`, `expired`, `stale` or `failed`.
    var state: String
    var authReqId: String?
    var expiresIn: Int?
    /// One line per check that passed.
    var checks: [String]
    /// The final line's text.
    var summary: String?

    enum CodingKeys: String, CodingKey {
        case state, checks, summary
        case authReqId = "auth_req_id"
        case expiresIn = "expires_in"
    }
}

/// Writes one line to standard output at once (unbuffered: the demo reads it from a pipe while we run).
func rpPrint(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
