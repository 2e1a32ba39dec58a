import FaceSealCrypto
import FaceSealHTTP
import Foundation

/// `faceseal rp request`: asks the running `rp serve` for keys, a signature, a decapsulation or a sign-in,
/// and prints what it verified.
enum RPRequest {
    static let known: Set<String> = ["user", "context", "message", "data", "data-file", "timeout", "state-dir"]
    static let kinds: Set<String> = ["public-keys", "sign", "decapsulate", "login"]

    static func run(_ arguments: [String]) async -> Int32 {
        do {
            return try await request(RPOptions(arguments, known: known))
        } catch let failure as RPOptions.Failure {
            printError("faceseal rp request: \(failure.message)\n\(RPCommand.usage)")
            return 64
        } catch {
            rpPrint("failed: \(error)")
            return 1
        }
    }

    private static func request(_ options: RPOptions) async throws -> Int32 {
        guard options.positional.count == 1, let kind = options.positional.first, kinds.contains(kind) else {
            throw RPOptions.Failure(message: "name one of public-keys, sign, decapsulate, login")
        }
        let user = try options.required("user")
        let message = try options.required("message")
        let context = kind == "login" ? (options["context"] ?? "") : try options.required("context")
        var data: String?
        if kind == "sign" {
            if let text = options["data"] {
                data = Base64URL.encode(Array(text.utf8))
            } else if let path = options["data-file"] {
                guard let bytes = FileManager.default.contents(atPath: path), bytes.count <= 64 * 1024 else {
                    throw RPOptions.Failure(message: "cannot read at most 64 KiB from \(path)")
                }
                data = Base64URL.encode(bytes)
            } else {
                throw RPOptions.Failure(message: "sign needs --data or --data-file")
            }
        }
        guard let timeout = Int(options["timeout"] ?? "600"), (1...86_400).contains(timeout) else {
            throw RPOptions.Failure(message: "--timeout must be 1…86400 seconds")
        }
        let stateDirectory = options["state-dir"] ?? "faceseal-rp"
        let controlURL = RPControlFile.url(stateDirectory: stateDirectory)
        guard let controlData = FileManager.default.contents(atPath: controlURL.path),
              let control = try? JSONDecoder().decode(RPControlFile.self, from: controlData),
              let base = URL(string: control.controlURL) else {
            throw RPOptions.Failure(message: "no running `faceseal rp serve` found (\(controlURL.path))")
        }
        let client = HTTPClient()
        let headers: HTTPHeaders = ["Authorization": "Bearer \(control.controlToken)"]
        let start = RPControlStart(kind: kind, user: user, context: context, message: message, data: data)
        let created = try await client.send(try .json(url: base.appendingPathComponent("control/requests"), value: start, headers: headers))
        guard created.status == .accepted, let id = (try? created.decodeJSON([String: String].self))?["id"] else {
            rpPrint("failed: the control API answered HTTP \(created.status.code): \(String(decoding: created.body.prefix(512), as: UTF8.self))")
            return 1
        }
        let deadline = ContinuousClock.now + .seconds(timeout)
        var announced = false
        while ContinuousClock.now < deadline {
            let response = try await client.send(HTTPClientRequest(url: base.appendingPathComponent("control/requests/\(id)"), headers: headers))
            let status = try response.decodeJSON(RPControlStatus.self)
            if status.state == "pending" {
                if !announced, let authReqId = status.authReqId {
                    rpPrint("started: \(kind) for \(user), auth_req_id \(authReqId), expires in \(status.expiresIn ?? 0) s; waiting for the user")
                    announced = true
                }
                try await Task.sleep(for: .milliseconds(250))
                continue
            }
            for check in status.checks { rpPrint("ok  \(check)") }
            rpPrint("\(status.state): \(status.summary ?? "")")
            return status.state == "verified" ? 0 : 1
        }
        rpPrint("failed: no answer within \(timeout) s")
        return 1
    }
}
