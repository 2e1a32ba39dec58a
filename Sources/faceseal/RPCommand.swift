import Foundation

/// `faceseal rp`: a sample application built only on `FaceSealRelyingParty`.
enum RPCommand {
    static let usage = """
    usage: faceseal rp serve --issuer URL --client-id ID --client-secret-file PATH [options]
           faceseal rp request public-keys|sign|decapsulate|login --user EMAIL [--context CTX] --message TEXT [options]

    A sample application (relying party) in two processes:

      serve    hosts the application's endpoints and a local control API, and keeps its state in --state-dir:
                 POST <public-url>/faceseal/delivery   the delivery endpoint (register it with the authority)
                 POST <public-url>/faceseal/ping       the ping notification endpoint (--mode ping)
                 /control/...                          the control API `rp request` talks to (bearer-protected)
                 GET  <public-url>/                    "Sign in with FaceSeal" in a browser (the code flow with
                                                       PKCE); register <public-url>/callback as a redirect URI
               It writes <state-dir>/control.json (0600: control URL and token, delivery and ping URLs) once it
               listens, and pins each user's keys per context in <state-dir>/pins.json (0600).
        --issuer URL               the authority's issuer (discovery at URL/.well-known/openid-configuration)
        --client-id ID             the application's client id
        --client-secret-file PATH  a file holding the client secret (trailing newline ignored)
        --auth post|basic          client_secret_post (default) or client_secret_basic
        --port P                   port to listen on (default 8788; 0 picks one, see control.json)
        --host ADDRESS             address to listen on (default 127.0.0.1)
        --public-url URL           how the authenticator reaches this process (default http://HOST:PORT)
        --mode poll|ping           how tokens are retrieved (default poll)
        --state-dir DIR            default ./faceseal-rp

      request  asks the running `serve` (found through <state-dir>/control.json) to start a request, waits
               for the user's answer, and prints each check that passed, one per line, then a final line
               `verified: …` (exit 0), or `denied: …` / `expired: …` / `stale: …` / `failed: …` (exit 1).
                 public-keys   the user's public keys for the context (pinned on first delivery)
                 sign          an ML-DSA-65 signature over --data (or --data-file), verified with the pinned key
                 decapsulate   a shared secret encapsulated to the pinned ML-KEM-768 key (its SHA-256 is printed)
                 login         a sign-in (ID token only)
        --user EMAIL               the user (login_hint)
        --context CTX              the key context (required except for login)
        --message TEXT             the binding message shown to the user (1–64 printable characters)
        --data TEXT | --data-file PATH   the message to sign (sign only)
        --timeout SECONDS          give up waiting after this long (default 600)
        --state-dir DIR            default ./faceseal-rp
    """

    static func run(_ arguments: [String]) async -> Int32 {
        switch arguments.first {
        case "serve": return await RPServe.run(Array(arguments.dropFirst()))
        case "request": return await RPRequest.run(Array(arguments.dropFirst()))
        case "help", "--help", "-h", nil:
            print(usage)
            return arguments.isEmpty ? 64 : 0
        default:
            printError("faceseal rp: unknown subcommand '\(arguments[0])'\n\(usage)")
            return 64
        }
    }
}

/// `--name value` options and positional words, each option at most once.
struct RPOptions {
    private(set) var values: [String: String] = [:]
    private(set) var positional: [String] = []

    struct Failure: Error { var message: String }

    init(_ arguments: [String], known: Set<String>) throws(Failure) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument.hasPrefix("--") {
                let name = String(argument.dropFirst(2))
                guard known.contains(name) else { throw Failure(message: "unknown option \(argument)") }
                guard index + 1 < arguments.count else { throw Failure(message: "\(argument) needs a value") }
                guard values[name] == nil else { throw Failure(message: "\(argument) given twice") }
                values[name] = arguments[index + 1]
                index += 2
            } else {
                positional.append(argument)
                index += 1
            }
        }
    }

    subscript(name: String) -> String? { values[name] }

    func required(_ name: String) throws(Failure) -> String {
        guard let value = values[name], !value.isEmpty else { throw Failure(message: "--\(name) is required") }
        return value
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
