/// The `FaceSealCrypto` module. See docs/ARCHITECTURE.md for what it owns.
public enum FaceSealCryptoModule {}
