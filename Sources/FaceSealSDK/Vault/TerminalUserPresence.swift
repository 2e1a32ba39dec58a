import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `UserPresence` provider for a terminal (the Linux `faceseal device` CLI): asks for the
/// device passphrase with echo off and checks it with `verify`.
///
/// The passphrase check is a seam: the file vault passes a verifier over its stored scrypt hash
/// (`FaceSealCrypto`). An empty line or end of input is a cancel; no terminal is "not available";
/// `maximumTries` wrong passphrases in a row lock out ("not available") — none of them removes keys.
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

    private let terminal: Terminal
    private let verify: @Sendable (String) -> Bool
    private let maximumTries: Int
    private let clock: any WallClock

    /// Creates the provider.
    public init(terminal: Terminal = .standard, maximumTries: Int = 3, clock: any WallClock = SystemWallClock(), verify: @escaping @Sendable (String) -> Bool) {
        self.terminal = terminal
        self.verify = verify
        self.maximumTries = max(1, maximumTries)
        self.clock = clock
    }

    /// Prompts until the passphrase verifies, the user cancels, or the tries run out.
    public func confirm(reason: String) async throws(SignKeypairError) -> UserPresenceProof {
        guard terminal.isAvailable() else { throw SignKeypairError(code: .notAvailable, message: "no terminal") }
        for attempt in 1...maximumTries {
            terminal.write("\(reason)\nDevice passphrase\(attempt > 1 ? " (try \(attempt) of \(maximumTries))" : ""): ")
            guard let line = terminal.readLine(true), !line.isEmpty else {
                throw SignKeypairError(code: .userCancelled, message: "cancelled at the prompt")
            }
            if line.utf8.count <= Self.maximumLength && verify(line) {
                return UserPresenceProof(confirmedAt: clock.now())
            }
        }
        throw SignKeypairError(code: .notAvailable, message: "locked out after \(maximumTries) wrong passphrases")
    }
}
