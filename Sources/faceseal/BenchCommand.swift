import Foundation

/// `faceseal bench …`: each benchmark prints its figures beside a peer measured in the same run.
enum BenchCommand {
    static let spec = CommandSpec(
        name: "bench", summary: "Benchmarks against a peer, each measured in the same run and printed as a ratio.",
        synopsis: "SUBCOMMAND [options]",
        subcommands: [
            CommandSpec(name: "crypto", summary: "ML-KEM and ML-DSA beside pycryptodome (and OpenSSL)", options: [
                .flag("all", "every parameter set, not only ML-KEM-768 and ML-DSA-65"),
                .value("peer", "DIR", "the directory of pycryptodome 4.4.0's Crypto/PublicKey/_mlkem.abi3.so (`make bench-crypto` installs it)"),
                .value("openssl", "MODULE", "OpenSSL as bundled in PyPI's cryptography (with --python-library)"),
                .value("python-library", "LIB", "the libpython the OpenSSL module needs"),
                .value("batches", "N", "interleaved batches per side, 1…1000 (default 9)"),
                .value("only", "TEXT", "only the rows whose name contains TEXT"),
                .flag("profile", "only FaceSeal's side (for a profiler)"),
            ]),
            CommandSpec(name: "face", summary: "the face pipeline's stages beside dlib", options: [
                .value("peer", "HARNESS", "the dlib harness scripts/bench-face.sh builds (without it only FaceSeal is timed)"),
                .value("models", "DIR", "the dlib .dat files (default $FACESEAL_CACHE/models)"),
                .value("images", "DIR", "the test images (default $FACESEAL_CACHE/images)"),
                .value("work", "DIR", "scratch folder for the frames handed to the harness (default a temporary one)"),
                .value("iterations", "N", "timed rounds per input, 1…1000 (default 15)"),
                .value("stages", "LIST", "only these stages, e.g. embed,align (no summary, no memory run)"),
                .flag("verification-memory", "only run a 5-frame verification and print its peak resident memory"),
            ]),
            CommandSpec(name: "auth", summary: "client authentication at the token endpoint", options: [
                .value("requests", "N", "requests per method, 1…100000 (default 2000)"),
            ]),
            CommandSpec(name: "wait", summary: "CPU of clients waiting on a silent server, beside curl", options: [
                .value("seconds", "N", "how long each client waits, 1…3600 (default 30)"),
                .value("peer", "PATH", "the peer client (default /usr/bin/curl)"),
                .value("role", "ROLE", "internal: run as a measured child (client, ping or idle)"),
                .value("url", "URL", "internal: the silent server of a measured child"),
            ]),
            CommandSpec(name: "authority", summary: "full sign-in ceremonies per second against `faceseal serve`", details: """
                postgres: the URL in FACESEAL_TEST_POSTGRES_URL (scripts/with-postgres.sh sets it).
                --instances: that many `faceseal serve` processes on the one database; each device talks to another
                instance than its application, so every link crosses processes.
                """, options: BenchAuthority.options + [
                .value("devices", "N", "enrolled devices, at least --concurrency (default: concurrency)"),
                .value("pending", "N", "requests left pending during the run, 0…100000 (default 0)"),
                .value("seconds", "N", "1…3600 (default 10)"),
                .value("modes", "LIST", "poll,ping (default both)"),
                .value("peer", "PATH", "a C libmicrohttpd responder (scripts/bench-authority.sh builds one), a second ceiling"),
                .value("instances", "N", "1…8 (default 1; PostgreSQL only)"),
                .value("rate", "N", "fixed rate (soak): start N ceremonies a second, 1…10000, for --seconds; figures per window"),
                .value("report-every", "S", "with --rate: seconds per printed window, 1…3600 (default 300, at most --seconds)"),
                .value("id-token-alg", "ALG", "the applications' id_token_signed_response_alg: RS256 (default), ES256, EdDSA or ML-DSA-65"),
                .flag("serve-trivial", "internal: run as the trivial-handler ceiling server"),
            ]),
            CommandSpec(name: "chaos", summary: "the authority killed with SIGKILL during ceremonies (or restarted in turn); nothing may be lost",
                        options: BenchAuthority.options + [.value("kills", "N", "1…1000 (default 50)"),
                                                           .value("rolling-restarts", "N", "1…1000: two instances on PostgreSQL, SIGTERM to each in turn")]),
        ])

    static func run(_ parsed: ParsedArguments) async throws(ArgumentError) -> Int32 {
        switch parsed.path[2] {
        case "crypto": return await BenchCrypto.run(try BenchCrypto.parse(parsed))
        case "face": return BenchFace.run(try BenchFace.parse(parsed))
        case "auth": return await BenchAuth.run(requests: try parsed.integer("requests", in: 1...100_000) ?? 2000)
        case "wait": return await BenchWait.run(try BenchWait.parse(parsed))
        case "authority": return await BenchAuthority.run(try BenchAuthority.parse(parsed))
        default: return await BenchChaos.run(try BenchChaos.parse(parsed))
        }
    }
}
