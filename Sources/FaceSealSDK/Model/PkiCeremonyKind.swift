public import FaceSealWire

/// What an application asks for in a face-PKI ceremony (`publicKeys`, `sign`, `decapsulate`). Word the approval
/// screen from it. The same type as the wire protocol's `pki_kind`.
public typealias PkiCeremonyKind = PKIKind
