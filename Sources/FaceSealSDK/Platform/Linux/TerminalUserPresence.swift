import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `UserPresence` provider for a terminal (the Linux `faceseal device` CLI): asks for the device passphrase with
/// echo off, and answers a proof carrying the key it derives, which the file vault needs to use a user-present key.
///
/// On a device without a passphrase (its first enrolment) it asks the user to choose one, twice. An empty line or the
/// end of input is a cancel; no terminal is "not available"; `maximumTries` wrong passphrases in one prompt, or the
/// ``DevicePassphrase``'s lock-out, are "not available" too. None of them removes a key.
public struct TerminalUserPresence: UserPresence {
    /// Where the prompt reads and writes.
    public struct Terminal: Sendable {
        /// Reads one line (nil at end of input) with echo off when `hidden`.
        public var readLine: @Sendable (_ hidden: Bool) -> String?
        /// Writes prompt text.
        public var write: @Sendable (String) -> Void
        /// Whether a terminal is attached.
        public var isAvailable: @Sendable () -> Bool

        /// Creates a terminal from closures (tests pass scripted ones).
        public init(readLine: @escaping @Sendable (Bool) -> String?, write: @escaping @Sendable (String) -> Void, isAvailable: @escaping @Sendable () -> Bool) {
            self.readLine = readLine
            self.write = write
            self.isAvailable = isAvailable
        }

        /// The process's controlling terminal on standard input and standard error.
        public static var standard: Terminal {
            Terminal(
                readLine: { hidden in Self.readStandardInput(hidden: hidden) },
                write: { text in FileHandle.standardError.write(Data(text.utf8)) },
                isAvailable: { isatty(STDIN_FILENO) == 1 }
            )
        }

        private static func readStandardInput(hidden: Bool) -> String? {
            var saved = termios()
            let canHide = hidden && tcgetattr(STDIN_FILENO, &saved) == 0
            if canHide {
                var quiet = saved
                quiet.c_lflag &= ~tcflag_t(ECHO)
                _ = tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
            }
            defer {
                if canHide {
                    _ = tcsetattr(STDIN_FILENO, TCSANOW, &saved)
                    FileHandle.standardError.write(Data("\n".utf8))
                }
            }
            return Swift.readLine(strippingNewline: true)
        }
    }

    /// The longest passphrase accepted (longer input is refused, not truncated).
    public static let maximumLength = 1_024
    /// The shortest passphrase a user may choose.
    public static let minimumLength = 8

    private let terminal: Terminal
    private let passphrase: DevicePassphrase
    private let maximumTries: Int

    /// Creates the provider for the vault whose passphrase is `passphrase`.
    public init(terminal: Terminal = .standard, passphrase: DevicePassphrase, maximumTries: Int = 3) {
        self.terminal = terminal
        self.passphrase = passphrase
        self.maximumTries = max(1, maximumTries)
    }

    /// Prompts until the passphrase opens the vault, the user cancels, or the tries run out; on a device without a
    /// passphrase, asks for a new one instead.
    public func confirm(reason: String) async throws(SignKeypairError) -> UserPresenceProof {
        guard terminal.isAvailable() else { throw SignKeypairError(code: .notAvailable, message: "no terminal") }
        guard passphrase.isSet else { return try choose(reason: reason) }
        for attempt in 1...maximumTries {
            terminal.write("\(reason)\nDevice passphrase\(attempt > 1 ? " (try \(attempt) of \(maximumTries))" : ""): ")
            let line = try read()
            if line.utf8.count <= Self.maximumLength, let proof = try passphrase.unlock(line) {
                return proof
            }
        }
        throw SignKeypairError(code: .notAvailable, message: "\(maximumTries) wrong passphrases")
    }

    /// The first enrolment on this device: a new passphrase, typed twice.
    private func choose(reason: String) throws(SignKeypairError) -> UserPresenceProof {
        terminal.write("\(reason)\nThis device has no passphrase yet. It seals the keys that need you; choose one "
                       + "(at least \(Self.minimumLength) characters).\nNew device passphrase: ")
        let first = try read()
        guard (Self.minimumLength...Self.maximumLength).contains(first.count) else {
            throw SignKeypairError(code: .userCancelled, message: "a passphrase needs \(Self.minimumLength) to \(Self.maximumLength) characters")
        }
        terminal.write("Type it again: ")
        guard try read() == first else { throw SignKeypairError(code: .userCancelled, message: "the two passphrases differ") }
        return try passphrase.set(first)
    }

    /// One hidden line; an empty line or the end of input is a cancel.
    private func read() throws(SignKeypairError) -> String {
        guard let line = terminal.readLine(true), !line.isEmpty else {
            throw SignKeypairError(code: .userCancelled, message: "cancelled at the prompt")
        }
        return line
    }
}
