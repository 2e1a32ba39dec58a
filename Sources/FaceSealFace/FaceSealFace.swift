/// The `FaceSealFace` module. See docs/ARCHITECTURE.md for what it owns.
public enum FaceSealFaceModule {}
