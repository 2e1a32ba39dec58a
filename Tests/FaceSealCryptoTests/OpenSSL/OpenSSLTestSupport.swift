import Foundation

/// Hex helpers for the OpenSSL/JOSE/Secrets suites (named to avoid clashing with other suites' helpers).
enum OSSLTestBytes {
    static func hex(_ string: String) -> [UInt8] {
        let chars = Array(string.utf8)
        precondition(chars.count % 2 == 0, "odd hex length")
        return stride(from: 0, to: chars.count, by: 2).map { i in
            UInt8(String(decoding: chars[i..<i + 2], as: UTF8.self), radix: 16)!
        }
    }

    static func hexString<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
