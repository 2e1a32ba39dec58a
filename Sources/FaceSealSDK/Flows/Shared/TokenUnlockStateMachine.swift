/// Opening a downloaded (or released) face token, with its password when it has one: the sub-step an approval and
/// a further device's enrolment share. The outer machine embeds it in its state and lifts its actions
/// (`ApprovalStateMachine`, `RegistrationStateMachine`), as a connection's machine embeds a request's.
///
/// `Password` is what the outer flow keeps a typed password as (a redacting wrapper during enrolment).
struct TokenUnlockStateMachine<Password: Equatable & Sendable>: Equatable, Sendable {
    /// Where the unlock stands.
    enum Phase: Equatable, Sendable {
        /// Waiting for the user's password; `lastError` says why the last one was not taken.
        case awaitingPassword(lastError: PasswordError?)
        /// The driver is opening the token.
        case opening
    }

    /// What the outer machine must do.
    enum Action: Equatable, Sendable {
        /// Nothing (wait for the password).
        case none
        /// Open the token with `password` → `opened()` / `openFailed(_:)`.
        case open(password: Password?)
        /// Every wrong password the flow allows was typed.
        case passwordAttemptsExhausted
        /// The token cannot be opened.
        case unusable
    }

    /// Whether the token needs a password (its header's word, corrected by the token itself).
    private(set) var passwordRequired: Bool
    /// Wrong passwords left before the flow gives up (nil: the device sets no limit).
    private var passwordAttemptsLeft: Int?
    private(set) var phase: Phase

    /// What the flow shows: whether a password is asked for, and why the last one was not taken.
    var prompt: (passwordRequired: Bool, lastError: PasswordError?) {
        switch phase {
        case .awaitingPassword(let error): (true, error)
        case .opening: (passwordRequired, nil)
        }
    }

    /// Starts the unlock. A `known` password (one already proven) opens at once; else a token that needs one waits.
    static func start(passwordRequired: Bool, known: Password?, passwordAttempts: Int?) -> (Self, Action) {
        var unlock = Self(passwordRequired: passwordRequired, passwordAttemptsLeft: passwordAttempts, phase: .opening)
        guard passwordRequired else { return (unlock, .open(password: nil)) }
        if let known { return (unlock, .open(password: known)) }
        unlock.phase = .awaitingPassword(lastError: nil)
        return (unlock, .none)
    }

    /// The user typed a password (`isEmpty` for an empty one); ignored unless it is asked for.
    mutating func submitPassword(_ password: Password, isEmpty: Bool) -> Action {
        guard case .awaitingPassword = phase else { return .none }
        guard !isEmpty else {
            phase = .awaitingPassword(lastError: .empty)
            return .none
        }
        phase = .opening
        return .open(password: password)
    }

    /// The token opened: the outer machine moves on to what the token unlocks (traps unless it was being opened).
    func opened() {
        guard case .opening = phase else { preconditionFailure("faceTokenOpened while \(phase)") }
    }

    mutating func openFailed(_ error: FaceTokenOpenError) -> Action {
        guard case .opening = phase else { preconditionFailure("faceTokenOpenFailed while \(phase)") }
        switch error {
        case .wrongPassword where passwordRequired:
            if let left = passwordAttemptsLeft {
                passwordAttemptsLeft = left - 1
                if left - 1 <= 0 { return .passwordAttemptsExhausted }
            }
            phase = .awaitingPassword(lastError: .incorrect)
        case .passwordRequired:
            // The header said no password; the token says otherwise. Ask for it.
            passwordRequired = true
            phase = .awaitingPassword(lastError: nil)
        case .wrongPassword, .unusable:
            return .unusable
        }
        return .none
    }
}
