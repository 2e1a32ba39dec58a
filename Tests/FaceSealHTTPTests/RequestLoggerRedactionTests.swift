import Synchronization
import Testing
@testable import FaceSealHTTP

@Suite struct RequestLoggerRedactionTests {
    @Test func segmentsAfterMarkersAreRedacted() {
        let seen = Mutex<[String]>([])
        let logger = RequestLogger { entry in seen.withLock { $0.append(entry.path) } }
            .redactingPathSegments(after: ["enrolments", "invitations"])
        for path in ["/device/v1/enrolments/inv_secret/token", "/manage/v1/tenants/t/invitations/inv_x", "/device/v1/enrolments", "/jwks"] {
            logger.log(RequestLogger.Entry(requestID: "r", method: "GET", path: path, status: 200, duration: .zero, errorType: nil))
        }
        #expect(seen.withLock { $0 } == ["/device/v1/enrolments/-/token", "/manage/v1/tenants/t/invitations/-", "/device/v1/enrolments", "/jwks"])
    }

    /// A replaced segment is no marker itself; empty segments and long bearers are kept or replaced like any other.
    @Test func edgesOfTheSegmentWalk() {
        let markers: Set<String> = ["enrolments", "l"]
        let bearer = String(repeating: "b", count: 200)
        let cases = [
            ("/enrolments/enrolments/x", "/enrolments/-/x"),
            ("/l//x", "/l/-/x"),
            ("/a/l/x/l/y/z", "/a/l/-/l/-/z"),
            ("//l/\(bearer)/l", "//l/-/l"),
            ("/\(bearer)/l/\(bearer)", "/\(bearer)/l/-"),
            ("/", "/"),
            ("", ""),
        ]
        for (path, expected) in cases {
            #expect(RequestLogger.redacting(path, after: markers, longest: 10) == expected, "\(path)")
        }
    }
}
