/// The `FaceSealWire` module. See docs/ARCHITECTURE.md for what it owns.
public enum FaceSealWireModule {}
