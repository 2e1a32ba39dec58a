import FaceSealCrypto
import FaceSealHTTP
import Foundation

/// `faceseal rp request`: asks the running `rp serve` for keys, a signature, a decapsulation or a sign-in,
/// and prints what it verified.
enum RPRequest {
    static let kinds = ["public-keys", "sign", "decapsulate", "login"]

    static func run(_ options: ParsedArguments) async throws(ArgumentError) -> Int32 {
        var options = options
        let kind = try options.word("KIND (one of \(kinds.joined(separator: ", ")))")
        guard kinds.contains(kind) else { throw .badValue(option: "KIND", value: kind, expected: kinds.joined(separator: ", ")) }
        let user = try options.required("user")
        let message = try options.required("message")
        let context = kind == "login" ? (options.string("context") ?? "") : try options.required("context")
        var data: String?
        if kind == "sign" {
            if options.string("data") != nil && options.string("data-file") != nil { throw .conflicting("data", "data-file") }
            if let text = options.string("data") {
                data = Base64URL.encode(Array(text.utf8))
            } else if let path = options.string("data-file") {
                guard let bytes = FileManager.default.contents(atPath: path), bytes.count <= 64 * 1024 else {
                    throw .invalid("Cannot read at most 64 KiB from \(path).")
                }
                data = Base64URL.encode(bytes)
            } else {
                throw .invalid("sign needs --data or --data-file.")
            }
        } else if options.string("data") != nil || options.string("data-file") != nil {
            throw .invalid("--data and --data-file belong to sign only.")
        }
        let timeout = try options.integer("timeout", in: 1...86_400) ?? 600
        do {
            return try await request(kind: kind, start: RPControlStart(kind: kind, user: user, context: context, message: message, data: data),
                                     timeout: timeout, stateDirectory: options.string("state-dir") ?? "faceseal-rp")
        } catch let error as ArgumentError {
            throw error
        } catch {
            rpPrint("failed: \(error)")
            return 1
        }
    }

    private static func request(kind: String, start: RPControlStart, timeout: Int, stateDirectory: String) async throws -> Int32 {
        let user = start.user
        let controlURL = RPControlFile.url(stateDirectory: stateDirectory)
        guard let controlData = FileManager.default.contents(atPath: controlURL.path),
              let control = try? JSONDecoder().decode(RPControlFile.self, from: controlData),
              let base = URL(string: control.controlURL) else {
            throw ArgumentError.invalid("No running `faceseal rp serve` found (\(controlURL.path)); start it first, with the same --state-dir.")
        }
        let client = HTTPClient()
        let headers: HTTPHeaders = ["Authorization": "Bearer \(control.controlToken)"]
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
