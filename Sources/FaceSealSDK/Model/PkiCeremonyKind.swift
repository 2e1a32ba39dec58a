/// What an application asks for in a face-PKI ceremony. Word the approval screen from it.
public enum PkiCeremonyKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// The user's public keys for this application and context.
    case publicKeys = "public_keys"
    /// A signature over the application's data.
    case sign
    /// An ML-KEM shared secret from the application's ciphertext.
    case decapsulate
}
