// swift-tools-version:6.0
// FaceSeal's libFuzzer targets, kept out of the main package's build and test graph: build with
// `swift build -c release --sanitize=fuzzer` from this directory, or run `make fuzz` (scripts/fuzz.sh).
import PackageDescription

let package = Package(
    name: "FaceSealFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "FaceSeal", path: "..")],
    targets: [
        // One executable; FACESEAL_FUZZ_TARGET picks the parser (FuzzTargets.swift lists them).
        .executableTarget(
            name: "faceseal-fuzz",
            dependencies: [
                .product(name: "FaceSealCrypto", package: "FaceSeal"),
                .product(name: "FaceSealWire", package: "FaceSeal"),
                .product(name: "FaceSealHTTP", package: "FaceSeal"),
                .product(name: "FaceSealHTTPTypes", package: "FaceSeal"),
                .product(name: "FaceSealAuthority", package: "FaceSeal"),
                .product(name: "FaceSealFace", package: "FaceSeal"),
            ],
            path: "Sources/FaceSealFuzz"
        ),
    ],
    swiftLanguageModes: [.v6]
)
