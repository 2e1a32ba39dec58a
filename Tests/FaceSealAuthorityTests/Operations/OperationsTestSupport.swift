import FaceSealHTTP
import Foundation
import Synchronization
@testable import FaceSealAuthority

/// Collects the lines an `EventLog` writes.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    /// A log at `level` in `format` writing here.
    func log(level: EventLog.Level = .debug, format: EventLog.Format) -> EventLog {
        EventLog(level: level, format: format) { [self] line in lines.withLock { $0.append(line) } }
    }

    var all: [String] { lines.withLock { $0 } }
}

extension AuthorityHarness {
    /// `GET path` with an optional bearer key.
    func get(_ path: String, bearer: String? = nil) async throws -> HTTPClientResponse {
        try await client.send(HTTPClientRequest(url: url(path), headers: bearer.map { ["Authorization": "Bearer \($0)"] } ?? [:]))
    }
}

extension HTTPClientResponse {
    /// The body as UTF-8 text.
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// The value of the sample `name{labels}` in a Prometheus exposition, or nil when it is absent.
func sample(_ exposition: String, _ series: String) -> Double? {
    for line in exposition.split(separator: "\n") where line.hasPrefix(series + " ") {
        return Double(line.dropFirst(series.count + 1))
    }
    return nil
}
