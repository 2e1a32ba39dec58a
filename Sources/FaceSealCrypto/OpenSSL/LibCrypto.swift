import COpenSSL
import COpenSSLShims
import Foundation

/// Small internal helpers around libcrypto: error-queue handling and contiguous byte access.
enum LibCrypto {
    /// Drains the calling thread's OpenSSL error queue into one line (so later calls start clean).
    static func drainErrors() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "no OpenSSL error recorded" : messages.joined(separator: "; ")
    }

    /// A `CryptoError.underlyingLibraryFailure` naming the failed step and OpenSSL's reason.
    static func failure(_ step: String) -> CryptoError {
        .underlyingLibraryFailure("\(step): \(drainErrors())")
    }

    /// Discards queued OpenSSL errors after an expected failure (a bad key, a failed verification).
    static func clearErrors() {
        ERR_clear_error()
    }
}

extension DataProtocol {
    /// Calls `body` with the bytes in one contiguous buffer, copying only when they are not contiguous already.
    func withContiguousBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        if regions.count == 1, let region = regions.first {
            var result: Result<R, E>!
            region.withUnsafeBytes { raw in
                do throws(E) { result = .success(try body(raw)) } catch { result = .failure(error) }
            }
            return try result.get()
        }
        let copy = [UInt8](self)
        var result: Result<R, E>!
        copy.withUnsafeBytes { raw in
            do throws(E) { result = .success(try body(raw)) } catch { result = .failure(error) }
        }
        return try result.get()
    }
}

extension UnsafeRawBufferPointer {
    /// The base address as `UInt8`, or a pointer to a static zero byte for an empty buffer
    /// (OpenSSL rejects NULL even when the length is zero in some functions).
    var uint8Base: UnsafePointer<UInt8> {
        if let base = baseAddress { return base.assumingMemoryBound(to: UInt8.self) }
        return LibCrypto.emptyByte
    }
}

extension LibCrypto {
    /// One readable zero byte for zero-length inputs.
    static var emptyByte: UnsafePointer<UInt8> {
        // A string literal's storage is static and immortal.
        UnsafeRawPointer(("\0" as StaticString).utf8Start).assumingMemoryBound(to: UInt8.self)
    }
}
