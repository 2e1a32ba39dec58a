// swift-tools-version:6.0
// FaceSeal — an open face-locked public-key infrastructure. Layout and dependency direction: docs/ARCHITECTURE.md.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // Imports are internal unless marked `public`/`package`: the compiler keeps a C module (and its pointers) inside
    // the target that wraps it (docs/ARCHITECTURE.md, "Imports").
    .enableUpcomingFeature("InternalImportsByDefault"),
]


let package = Package(
    name: "FaceSeal",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "FaceSealCrypto", targets: ["FaceSealCrypto"]),
        .library(name: "FaceSealFace", targets: ["FaceSealFace"]),
        .library(name: "FaceSealWire", targets: ["FaceSealWire"]),
        .library(name: "FaceSealHTTPTypes", targets: ["FaceSealHTTPTypes"]),
        .library(name: "FaceSealHTTPClient", targets: ["FaceSealHTTPClient"]),
        .library(name: "FaceSealHTTP", targets: ["FaceSealHTTP"]),
        .library(name: "FaceSealAuthority", targets: ["FaceSealAuthority"]),
        .library(name: "FaceSealSDK", targets: ["FaceSealSDK"]),
        .library(name: "FaceSealRelyingParty", targets: ["FaceSealRelyingParty"]),
        .library(name: "FaceSealAdmin", targets: ["FaceSealAdmin"]),
        .executable(name: "faceseal", targets: ["faceseal"]),
    ],
    targets: [
        // System libraries (Debian -dev packages through pkg-config). Each is wrapped once, by the target above it.
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // Ed25519 only: more than twice as fast as OpenSSL 3.0's (docs/PERFORMANCE.md, session 6).
        .systemLibrary(name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "COpenBLAS", path: "Sources/COpenBLAS", pkgConfig: "openblas", providers: [.apt(["libopenblas-dev"])]),
        .systemLibrary(name: "CJPEG", path: "Sources/CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CPNG", path: "Sources/CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CQREncode", path: "Sources/CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // C shims (macros and variadic functions Swift cannot import, longjmp error paths): one per wrapped library,
        // used only by the target that wraps that library.
        .target(name: "COpenSSLShims", dependencies: ["COpenSSL"]),
        .target(name: "CMicroHTTPDShims", dependencies: ["CMicroHTTPD"]),
        .target(name: "CSQLiteShims", dependencies: ["CSQLite"]),
        .target(name: "CImageShims", dependencies: ["CJPEG", "CPNG"]),

        // FaceSeal's own AVX2 kernels for ML-KEM/ML-DSA (run-time CPU dispatch; the portable Swift path stays).
        .target(name: "CFaceSealPQ", exclude: ["keccak_x4_body.h"]),
        // FaceSeal's own Ed25519 verification on precomputed key tables (for keys that verify often, e.g. a pinned one).
        .target(name: "CFaceSealCurves", cSettings: [.unsafeFlags(["-O2"], .when(configuration: .debug))]),
        .target(name: "FaceSealCrypto", dependencies: ["COpenSSL", "COpenSSLShims", "CSodium", "CFaceSealPQ", "CFaceSealCurves"],
                swiftSettings: swiftSettings),
        // The default OpenBLAS (the pthread build): the sequential build is not safe for concurrent callers (`BLAS`).
        // FaceSeal's own direct convolution kernel (AVX2 / AVX-512, run-time CPU dispatch; im2col + OpenBLAS stays).
        // Optimised in debug builds too: unoptimised, its intrinsics run ~60× slower and the tests that detect faces crawl.
        .target(name: "CFaceSealConv", exclude: ["conv_body.h", "narrow_body.h"], cSettings: [.unsafeFlags(["-O2"], .when(configuration: .debug))]),
        .target(name: "FaceSealFace", dependencies: ["COpenBLAS", "CJPEG", "CPNG", "CImageShims", "CFaceSealConv"], swiftSettings: swiftSettings),
        .target(name: "FaceSealWire", dependencies: ["FaceSealCrypto"], swiftSettings: swiftSettings),
        // HTTP in three targets, cut along what they link: the message types (no C library), the libcurl client, and
        // the libmicrohttpd server with its router. The SDK and the relying-party library link no server.
        .target(name: "FaceSealHTTPTypes", swiftSettings: swiftSettings),
        .target(name: "FaceSealHTTPClient", dependencies: ["FaceSealHTTPTypes", "CCurl"], swiftSettings: swiftSettings),
        .target(name: "FaceSealHTTP", dependencies: ["FaceSealHTTPTypes", "FaceSealHTTPClient", "CMicroHTTPD", "CMicroHTTPDShims"],
                swiftSettings: swiftSettings),
        .target(
            name: "FaceSealAuthority",
            dependencies: ["FaceSealWire", "FaceSealCrypto", "FaceSealHTTP", "CSQLite", "CSQLiteShims", "CLibPQ", "CQREncode"],
            // The pages' static files, compiled in as byte arrays (`PackageResources`).
            resources: [.embedInCode("Web/Assets")],
            swiftSettings: swiftSettings
        ),
        .target(name: "FaceSealSDK", dependencies: ["FaceSealWire", "FaceSealCrypto", "FaceSealFace", "FaceSealHTTPClient"], swiftSettings: swiftSettings),
        .target(name: "FaceSealRelyingParty", dependencies: ["FaceSealWire", "FaceSealCrypto", "FaceSealHTTPClient"], swiftSettings: swiftSettings),
        // The management API's client (`faceseal admin`): the messages and an HTTP client, not the authority.
        .target(name: "FaceSealAdmin", dependencies: ["FaceSealWire", "FaceSealHTTPClient"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "faceseal",
            dependencies: [
                "FaceSealCrypto", "FaceSealFace", "FaceSealWire", "FaceSealHTTP",
                "FaceSealAuthority", "FaceSealSDK", "FaceSealRelyingParty", "FaceSealAdmin",
            ],
            swiftSettings: swiftSettings
        ),

        // The harnesses every test target shares (docs/ARCHITECTURE.md, "Tests"): the databases under test, an authority
        // on loopback or as the built binary, an application's client and endpoints, child processes.
        .target(name: "FaceSealTestSupport", dependencies: ["FaceSealAuthority", "FaceSealHTTP", "FaceSealHTTPClient", "FaceSealWire", "FaceSealCrypto"],
                path: "Tests/FaceSealTestSupport", swiftSettings: swiftSettings),
        .testTarget(name: "FaceSealCryptoTests", dependencies: ["FaceSealCrypto"], exclude: ["Fixtures"], swiftSettings: swiftSettings),
        .testTarget(name: "FaceSealFaceTests", dependencies: ["FaceSealFace"], exclude: ["Fixtures"], swiftSettings: swiftSettings),
        .testTarget(name: "FaceSealWireTests", dependencies: ["FaceSealWire"], swiftSettings: swiftSettings),
        .testTarget(name: "FaceSealHTTPTests", dependencies: ["FaceSealHTTP", "FaceSealHTTPClient", "FaceSealHTTPTypes", "FaceSealTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "FaceSealAuthorityTests", dependencies: ["FaceSealAuthority", "FaceSealHTTP", "FaceSealWire", "FaceSealTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "FaceSealSDKTests", dependencies: ["FaceSealSDK", "FaceSealAuthority", "FaceSealTestSupport"], swiftSettings: swiftSettings),
        // The `faceseal` binary as child processes: its command line, configuration, deploy/ files and the README walkthrough.
        .testTarget(name: "FaceSealCLITests", dependencies: ["FaceSealTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "FaceSealRelyingPartyTests", dependencies: ["FaceSealRelyingParty", "FaceSealAuthority", "FaceSealTestSupport"], swiftSettings: swiftSettings),
    ],
    swiftLanguageModes: [.v6]
)
