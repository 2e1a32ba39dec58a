import FaceSealCrypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `faceseal bench crypto [--all] [--peer DIR] [--openssl MODULE --python-library LIB] [--batches N]`:
/// FaceSeal's ML-KEM/ML-DSA against the portable C inside pycryptodome 4.4.0 and, when given, OpenSSL 4.0
/// as bundled in PyPI's `cryptography` 50 (notes/pq-crypto.md), side by side in one process; FaceSeal's
/// own portable path is measured as a third column. Ed25519 (libsodium) is measured beside the system's OpenSSL 3.0
/// (`BenchEd25519`). The ceremony's ES256/RS256 signatures, its JWS device-request and answer signatures and the
/// wire JSON are measured on FaceSeal's side alone (`BenchSignatures`).
///
/// Method: the same bytes-in/bytes-out work for every side (fixed inputs, the C libraries called directly,
/// no Python), batches interleaved FaceSeal, peer, peer…, FaceSeal, …, one `ContinuousClock`, the median
/// of the batches per side, and every output of every iteration compared byte for byte with the reference
/// pycryptodome produced before timing. Lines containing `ratio=<FaceSeal/peer>`, one per operation and
/// peer, and cycles per operation beside the published AVX2 figures.
///
/// The table of operations is `BenchCrypto.operations`: a new algorithm adds a function returning
/// `[BenchOperation]` there.
enum BenchCrypto {
    struct Options {
        var all = false
        var peerDirectory: String?
        var opensslModule: String?
        var pythonLibrary: String?
        var batches = 9
        /// Only the rows whose name contains this, and (`--profile`) only FaceSeal's side: for profiling one operation.
        var only: String?
        var profile = false
    }

    static func run(_ options: Options) async -> Int32 {
        guard let directory = options.peerDirectory else {
            printError("faceseal bench crypto: no peer given; pass --peer DIR (the directory of pycryptodome 4.4.0's Crypto/PublicKey/_mlkem.abi3.so), or run `make bench-crypto`, which installs it")
            return 1
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            printError("faceseal bench crypto: peer directory \(directory) does not exist")
            return 1
        }
        let table: [BenchOperation]
        let openssl: BenchOpenSSL?
        do {
            if let module = options.opensslModule, let python = options.pythonLibrary {
                openssl = try BenchOpenSSL(modulePath: module, pythonLibraryPath: python)
            } else {
                openssl = nil
            }
            table = try operations(options: options, peerDirectory: directory, openssl: openssl)
        } catch {
            printError("faceseal bench crypto: \(error)")
            return 1
        }
        if options.batches < 7 {
            printError("faceseal bench crypto: note: \(options.batches) batches; the method asks for at least 7")
        }
        let clock = BenchClock.detect()
        print("faceseal bench crypto: FaceSeal (\(PQKernels.supported)) vs pycryptodome 4.4.0 portable C at \(directory)")
        if let openssl {
            print("                       and \(openssl.version) (bundled in cryptography 50), EVP API called directly")
        } else {
            print("                       (no OpenSSL peer: pass --openssl and --python-library, as `make bench-crypto` does)")
        }
        print("                       Ed25519: FaceSeal (libsodium) vs the system's OpenSSL 3.0 libcrypto (the implementation it replaced)")
        print("median of \(options.batches) interleaved batches per side; µs per operation; ratio = FaceSeal/peer")
        print("cycles = µs × \(String(format: "%.3f", clock.gigahertz)) GHz (\(clock.source))")
        let runner = BenchRunner(batches: options.batches)
        var totalMismatches = 0
        for operation in table {
            let result = runner.measure(operation)
            totalMismatches += result.mismatches.reduce(0, +)
            print(result.lines(clock: clock).joined(separator: "\n"))
        }
        print("output mismatches: \(totalMismatches)")
        return totalMismatches == 0 ? 0 : 1
    }

    /// Every benchmarked operation, in print order. ML-KEM-768 and ML-DSA-65 by default; all parameter sets with `--all`.
    static func operations(options: Options, peerDirectory: String, openssl: BenchOpenSSL?) throws -> [BenchOperation] {
        let evp = try openssl.map { try BenchEVP($0) }
        let mlkem = try BenchPeerLibrary(path: peerDirectory + "/_mlkem.abi3.so")
        let kemSets: [MLKEMParameters] = options.all ? [.mlkem512, .mlkem768, .mlkem1024] : [.mlkem768]
        var table: [BenchOperation] = []
        for set in kemSets {
            table += try BenchMLKEM.operations(set, peer: mlkem, openssl: evp)
        }
        let mldsa = try BenchPeerLibrary(path: peerDirectory + "/_mldsa.abi3.so")
        let dsaSets: [MLDSAParameters] = options.all ? [MLDSA44.parameters, MLDSA65.parameters, MLDSA87.parameters] : [MLDSA65.parameters]
        for set in dsaSets {
            table += try BenchMLDSA.operations(set, peer: mldsa, openssl: evp, includeReusedKeys: set == MLDSA65.parameters)
        }
        table = table.map { $0.withPortableColumn() } + (try BenchEd25519.operations()) + (try BenchSignatures.operations())
        let rows = table.filter { options.only.map($0.name.contains) ?? true }
        return options.profile ? rows.map { BenchOperation(name: $0.name, faceSeal: $0.faceSeal, peers: []) } : rows
    }

    static func parse(_ arguments: ParsedArguments) throws(ArgumentError) -> Options {
        var options = Options()
        options.all = arguments.flag("all")
        options.peerDirectory = arguments.string("peer")
        options.opensslModule = arguments.string("openssl")
        options.pythonLibrary = arguments.string("python-library")
        options.profile = arguments.flag("profile")
        options.only = arguments.string("only")
        options.batches = try arguments.integer("batches", in: 1...1000) ?? options.batches
        if (options.opensslModule == nil) != (options.pythonLibrary == nil) {
            throw .invalid("--openssl and --python-library go together.")
        }
        return options
    }
}

// MARK: - The measurement

/// One side of a row other than FaceSeal's: a peer library (or FaceSeal's portable path) by name.
struct BenchSide {
    let name: String
    let run: (Int) -> Bool
}

/// One row of the benchmark: an operation run by FaceSeal and by each peer on input `i` (taken modulo
/// the operation's own input count). Each closure returns whether its output equalled the reference
/// output byte for byte, so the comparison is part of every iteration on every side.
struct BenchOperation {
    /// E.g. "ML-KEM-768 keygen".
    let name: String
    let faceSeal: (Int) -> Bool
    var peers: [BenchSide]
    /// Published AVX2 cycles per operation (mlkem-native / mldsa-native), when known.
    var referenceCycles: Int? = nil

    /// Adds FaceSeal's portable path as a column, when this CPU runs vector kernels.
    func withPortableColumn() -> BenchOperation {
        guard PQKernels.supported > .portable else { return self }
        var copy = self
        let body = faceSeal
        copy.peers.append(BenchSide(name: "faceseal-portable") { i in
            PQKernels.$limit.withValue(.portable) { body(i) }
        })
        return copy
    }
}

/// How µs become cycles: perf has no cycle counter in this VM, so the nominal clock is used.
struct BenchClock {
    let gigahertz: Double
    let source: String

    /// The first "cpu MHz" of /proc/cpuinfo (the TSC rate under a hypervisor); 1 GHz when unknown.
    static func detect() -> BenchClock {
        if let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu MHz") }),
            let value = line.split(separator: ":").last.flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }),
            value > 100, value < 10_000
        {
            return BenchClock(gigahertz: value / 1000, source: "the CPU's clock from /proc/cpuinfo; no hardware cycle counter under this hypervisor")
        }
        return BenchClock(gigahertz: 1, source: "clock unknown: cycles shown at 1 GHz")
    }
}

/// Interleaved batches on one clock; medians per side.
struct BenchRunner {
    let batches: Int
    let clock = ContinuousClock()
    /// Wall time of one batch, long enough to dwarf clock resolution and scheduling noise.
    let batchTarget = Duration.milliseconds(40)

    struct Result {
        let name: String
        /// FaceSeal first, then the peers in order.
        let names: [String]
        let microseconds: [Double]
        let mismatches: [Int]
        let iterations: Int
        let batches: Int
        let referenceCycles: Int?

        func lines(clock: BenchClock) -> [String] {
            let cycles = microseconds[0] * clock.gigahertz * 1000
            let reference = referenceCycles.map { "  (mlkem/mldsa-native AVX2: \(kilo(Double($0))) cycles)" } ?? ""
            var lines = ["\(name.padding(toLength: 22, withPad: " ", startingAt: 0)) faceseal=\(format(microseconds[0])) µs/op  "
                + "cycles=\(kilo(cycles))\(reference)"]
            for index in 1..<names.count {
                lines.append("\(name.padding(toLength: 22, withPad: " ", startingAt: 0)) vs \(names[index].padding(toLength: 20, withPad: " ", startingAt: 0)) "
                    + "peer=\(format(microseconds[index])) µs/op  ratio=\(String(format: "%.3f", microseconds[0] / microseconds[index]))")
            }
            let counts = zip(names, mismatches).map { "\($0) \($1)" }.joined(separator: ", ")
            lines.append("\(name.padding(toLength: 22, withPad: " ", startingAt: 0)) mismatches=\(mismatches.reduce(0, +)) (\(counts); \(batches) batches of ~\(iterations) iterations)")
            return lines
        }

        private func kilo(_ value: Double) -> String { String(format: "%.1fk", value / 1000) }

        private func format(_ value: Double) -> String {
            let text = String(format: "%.2f", value)
            return String(repeating: " ", count: max(0, 8 - text.count)) + text
        }
    }

    func measure(_ operation: BenchOperation) -> Result {
        let sides = [operation.faceSeal] + operation.peers.map(\.run)
        var mismatches = [Int](repeating: 0, count: sides.count)
        // Warm-up: caches, lazy globals, page faults.
        for i in 0..<8 {
            for (index, side) in sides.enumerated() where !side(i) { mismatches[index] += 1 }
        }
        var times = [[Double]](repeating: [], count: sides.count)
        var iterations = 0
        for _ in 0..<batches {
            for (index, side) in sides.enumerated() {
                let box = timeBox(side)
                times[index].append(box.elapsed.microseconds / Double(box.iterations))
                mismatches[index] += box.mismatches
                iterations += box.iterations
            }
        }
        return Result(
            name: operation.name, names: ["faceseal"] + operation.peers.map(\.name), microseconds: times.map(median),
            mismatches: mismatches, iterations: iterations / (sides.count * batches), batches: batches,
            referenceCycles: operation.referenceCycles)
    }

    /// Runs `body` on successive inputs for `batchTarget` of wall time (at least 8 iterations), so a
    /// batch has the same length on every side whatever the load; reading the clock costs the same to all.
    private func timeBox(_ body: (Int) -> Bool) -> (elapsed: Duration, iterations: Int, mismatches: Int) {
        var mismatches = 0, iterations = 0
        let start = clock.now
        var elapsed = Duration.zero
        repeat {
            if !body(iterations) { mismatches += 1 }
            iterations += 1
            elapsed = clock.now - start
        } while elapsed < batchTarget || iterations < 8
        return (elapsed, iterations, mismatches)
    }

    private func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

extension Duration {
    fileprivate var microseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e6 + Double(attoseconds) / 1e12
    }
}

// MARK: - Byte buffers and the peer library

/// `count` fixed-size byte slots in one allocation, for inputs, reference outputs and scratch outputs.
/// A class so the operation closures can share it without copying; freed with the operation.
final class BenchSlots {
    let count: Int
    let size: Int
    private let base: UnsafeMutableRawPointer

    init(count: Int, size: Int) {
        self.count = count
        self.size = size
        base = .allocate(byteCount: max(1, count * size), alignment: 16)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: max(1, count * size))
    }

    deinit { base.deallocate() }

    /// Slot `i` modulo `count`.
    @inline(__always)
    subscript(i: Int) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: base + (i % count) * size, count: size)
    }

    /// Typed start of slot `i`.
    @inline(__always)
    func bytes(_ i: Int) -> UnsafeMutablePointer<UInt8> {
        (base + (i % count) * size).assumingMemoryBound(to: UInt8.self)
    }

    /// Whether slot `i` of `self` equals slot `j` of `other` (same size) byte for byte.
    @inline(__always)
    func equals(_ i: Int, _ other: BenchSlots, _ j: Int) -> Bool {
        memcmp(base + (i % count) * size, other.base + (j % other.count) * other.size, size) == 0
    }

    /// Fills every slot with bytes from a fixed-seed SplitMix64 stream (reproducible across runs).
    func fillDeterministic(seed: UInt64) {
        var state = seed
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        for i in 0..<(count * size) {
            if i % 8 == 0 {
                state &+= 0x9E37_79B9_7F4A_7C15
            }
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            bytes[i] = UInt8(truncatingIfNeeded: z >> (8 * UInt64(i % 8)))
        }
    }
}

/// A peer shared library opened with `dlopen`; its functions are looked up by name with `dlsym`.
/// The handle is never closed: the function pointers live as long as the process.
final class BenchPeerLibrary {
    let path: String
    private let handle: UnsafeMutableRawPointer

    struct LoadError: Error, CustomStringConvertible {
        let description: String
    }

    init(path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw LoadError(description: "peer library \(path) not found")
        }
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw LoadError(description: "cannot load peer library \(path): \(reason)")
        }
        self.path = path
        self.handle = handle
    }

    /// The C function `name`, typed as `type` (a `@convention(c)` function type matching its ABI).
    func function<F>(_ name: String, as type: F.Type) throws -> F {
        guard let symbol = dlsym(handle, name) else {
            throw LoadError(description: "peer library \(path) has no symbol \(name)")
        }
        return unsafeBitCast(symbol, to: type)
    }
}

// MARK: - ML-KEM

/// ML-KEM keygen / encaps / decaps against pycryptodome's `_mlkem` (mlkem-native, portable C).
/// The peer's encaps runs the §7.2 modulus check and its decaps the §7.3 hash check on every call, so
/// the FaceSeal side does the same (what `MLKEMPublicKey(rawRepresentation:)` and
/// `MLKEMPrivateKey(integrityCheckedRepresentation:)` do on import).
enum BenchMLKEM {
    typealias Keypair = @convention(c) (
        UInt32, UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int
    ) -> Int32
    typealias Encaps = @convention(c) (
        UInt32, UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?, Int,
        UnsafePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int
    ) -> Int32
    typealias Decaps = @convention(c) (
        UInt32, UnsafeMutablePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int
    ) -> Int32

    /// Distinct inputs per operation, cycled through by the iterations.
    static let inputCount = 16

    struct SetupError: Error, CustomStringConvertible {
        let description: String
    }

    static func operations(_ p: MLKEMParameters, peer: BenchPeerLibrary, openssl: BenchEVP?) throws -> [BenchOperation] {
        let keypair = try peer.function("mlkem_keypair", as: Keypair.self)
        let encaps = try peer.function("mlkem_encaps", as: Encaps.self)
        let decaps = try peer.function("mlkem_decaps", as: Decaps.self)
        let level = UInt32(p.k == 2 ? 512 : p.k == 3 ? 768 : 1024)
        let name = "ML-KEM-\(level)"
        let n = inputCount
        let ekSize = p.encapsulationKeyByteCount, dkSize = p.decapsulationKeyByteCount, ctSize = p.ciphertextByteCount

        // Fixed inputs, and the peer's outputs as the references.
        let seeds = BenchSlots(count: n, size: 64)
        seeds.fillDeterministic(seed: UInt64(level) &* 1_000_003)
        let coins = BenchSlots(count: n, size: 32)
        coins.fillDeterministic(seed: UInt64(level) &* 7_000_001)
        let eks = BenchSlots(count: n, size: ekSize), dks = BenchSlots(count: n, size: dkSize)
        let cts = BenchSlots(count: n, size: ctSize), keys = BenchSlots(count: n, size: 32)
        let decapsKeys = BenchSlots(count: n, size: 32)
        for i in 0..<n {
            guard keypair(level, eks.bytes(i), ekSize, dks.bytes(i), dkSize, seeds.bytes(i), 64) == 0,
                encaps(level, cts.bytes(i), ctSize, keys.bytes(i), 32, eks.bytes(i), ekSize, coins.bytes(i), 32) == 0
            else { throw SetupError(description: "\(name): the peer failed on a fixed input") }
        }
        // Every fourth ciphertext is tampered with, so implicit rejection is part of the decaps work.
        let decapsCiphertexts = BenchSlots(count: n, size: ctSize)
        for i in 0..<n {
            decapsCiphertexts[i].copyMemory(from: UnsafeRawBufferPointer(cts[i]))
            if i % 4 == 3 { decapsCiphertexts.bytes(i)[i * 37 % ctSize] ^= 0x10 }
            guard decaps(level, decapsKeys.bytes(i), 32, decapsCiphertexts.bytes(i), ctSize, dks.bytes(i), dkSize) == 0 else {
                throw SetupError(description: "\(name): the peer failed to decapsulate a fixed input")
            }
        }

        // Output slots, one set per side (single slot each: written and compared every iteration).
        let ourEK = BenchSlots(count: 1, size: ekSize), ourDK = BenchSlots(count: 1, size: dkSize)
        let peerEK = BenchSlots(count: 1, size: ekSize), peerDK = BenchSlots(count: 1, size: dkSize)
        let ourCT = BenchSlots(count: 1, size: ctSize), peerCT = BenchSlots(count: 1, size: ctSize)
        let ourKey = BenchSlots(count: 1, size: 32), peerKey = BenchSlots(count: 1, size: 32)

        let pycryptodome = "pycryptodome-4.4.0"
        var keygenOperation = BenchOperation(
            name: "\(name) keygen",
            faceSeal: { i in
                guard (try? MLKEM.keyGenInternal(
                    p, seed: UnsafeRawBufferPointer(seeds[i]), encapsulationKey: ourEK[0], decapsulationKey: ourDK[0])) != nil
                else { return false }
                return ourEK.equals(0, eks, i) && ourDK.equals(0, dks, i)
            },
            peers: [BenchSide(name: pycryptodome) { i in
                keypair(level, peerEK.bytes(0), ekSize, peerDK.bytes(0), dkSize, seeds.bytes(i), 64) == 0
                    && peerEK.equals(0, eks, i) && peerDK.equals(0, dks, i)
            }],
            referenceCycles: level == 768 ? 21_000 : nil)
        var encapsOperation = BenchOperation(
            name: "\(name) encaps",
            faceSeal: { i in
                let ek = UnsafeRawBufferPointer(eks[i])
                guard (try? MLKEM.checkEncapsulationKey(p, ek)) != nil,
                    (try? MLKEM.encapsulateInternal(
                        p, encapsulationKey: ek, randomness: UnsafeRawBufferPointer(coins[i]),
                        ciphertext: ourCT[0], sharedSecret: ourKey[0])) != nil
                else { return false }
                return ourCT.equals(0, cts, i) && ourKey.equals(0, keys, i)
            },
            peers: [BenchSide(name: pycryptodome) { i in
                encaps(level, peerCT.bytes(0), ctSize, peerKey.bytes(0), 32, eks.bytes(i), ekSize, coins.bytes(i), 32) == 0
                    && peerCT.equals(0, cts, i) && peerKey.equals(0, keys, i)
            }],
            referenceCycles: level == 768 ? 22_000 : nil)
        var decapsOperation = BenchOperation(
            name: "\(name) decaps",
            faceSeal: { i in
                let dk = UnsafeRawBufferPointer(dks[i])
                guard (try? MLKEM.checkDecapsulationKey(p, dk)) != nil,
                    (try? MLKEM.decapsulateInternal(
                        p, decapsulationKey: dk, ciphertext: UnsafeRawBufferPointer(decapsCiphertexts[i]),
                        sharedSecret: ourKey[0])) != nil
                else { return false }
                return ourKey.equals(0, decapsKeys, i)
            },
            peers: [BenchSide(name: pycryptodome) { i in
                decaps(level, peerKey.bytes(0), 32, decapsCiphertexts.bytes(i), ctSize, dks.bytes(i), dkSize) == 0
                    && peerKey.equals(0, decapsKeys, i)
            }],
            referenceCycles: level == 768 ? 28_000 : nil)

        // For ML-KEM-768, the same work with key objects built once: FaceSeal's public API against OpenSSL's
        // EVP_PKEY (pycryptodome has no key objects: its byte-level call again).
        var keptRows: [BenchOperation] = []
        if p == .mlkem768 {
            let publicKeys = try (0..<n).map { i in try MLKEMPublicKey<MLKEM768>(rawRepresentation: UnsafeRawBufferPointer(eks[i])) }
            let privateKeys = try (0..<n).map { i in
                try MLKEMPrivateKey<MLKEM768>(integrityCheckedRepresentation: UnsafeRawBufferPointer(dks[i]))
            }
            keptRows.append(BenchOperation(
                name: "\(name) encaps kept",
                faceSeal: { i in
                    guard let result = try? publicKeys[i % n].encapsulate(randomness: UnsafeRawBufferPointer(coins[i])) else {
                        return false
                    }
                    return result.encapsulated.withUnsafeBytes { memcmp($0.baseAddress!, cts.bytes(i), ctSize) == 0 }
                        && result.sharedSecret.withUnsafeBytes { memcmp($0.baseAddress!, keys.bytes(i), 32) == 0 }
                },
                peers: encapsOperation.peers))
            keptRows.append(BenchOperation(
                name: "\(name) decaps kept",
                faceSeal: { i in
                    guard let secret = try? privateKeys[i % n].decapsulate(Data(UnsafeRawBufferPointer(decapsCiphertexts[i])))
                    else { return false }
                    return secret.withUnsafeBytes { memcmp($0.baseAddress!, decapsKeys.bytes(i), 32) == 0 }
                },
                peers: decapsOperation.peers))
        }
        guard let openssl else { return [keygenOperation, encapsOperation, decapsOperation] + keptRows }

        let algorithm = name
        let seedParams = BenchOSSLParams([("seed", .octets)])
        let opensslName = "openssl-4.0"
        let sslEK = BenchSlots(count: 1, size: ekSize), sslDK = BenchSlots(count: 1, size: dkSize)
        let sslCT = BenchSlots(count: 1, size: ctSize), sslKey = BenchSlots(count: 1, size: 32)
        keygenOperation.peers.append(BenchSide(name: opensslName) { i in
            seedParams.setOctets(0, UnsafeRawBufferPointer(seeds[i]))
            return openssl.generate(
                algorithm, params: seedParams, publicKey: sslEK.bytes(0), publicCount: ekSize,
                privateKey: sslDK.bytes(0), privateCount: dkSize)
                && sslEK.equals(0, eks, i) && sslDK.equals(0, dks, i)
        })
        let randomnessParams = BenchOSSLParams([("ikme", .octets)])
        let encapsulate: (OpaquePointer, Int) -> Bool = { key, i in
            randomnessParams.setOctets(0, UnsafeRawBufferPointer(coins[i]))
            return openssl.encapsulate(
                key: key, params: randomnessParams, ciphertext: sslCT.bytes(0), ciphertextCount: ctSize, secret: sslKey.bytes(0))
                && sslCT.equals(0, cts, i) && sslKey.equals(0, keys, i)
        }
        let decapsulate: (OpaquePointer, Int) -> Bool = { key, i in
            openssl.decapsulate(key: key, ciphertext: decapsCiphertexts.bytes(i), ciphertextCount: ctSize, secret: sslKey.bytes(0))
                && sslKey.equals(0, decapsKeys, i)
        }
        // From bytes, like the other sides: import (the §7.2 / §7.3 checks), then the operation.
        encapsOperation.peers.append(BenchSide(name: opensslName) { i in
            guard let key = openssl.newPublicKey(nil, algorithm, nil, eks.bytes(i), ekSize) else { return false }
            defer { openssl.freeKey(key) }
            return encapsulate(key, i)
        })
        decapsOperation.peers.append(BenchSide(name: opensslName) { i in
            guard let key = openssl.newPrivateKey(nil, algorithm, nil, dks.bytes(i), dkSize) else { return false }
            defer { openssl.freeKey(key) }
            return decapsulate(key, i)
        })
        if !keptRows.isEmpty {
            let sslPublicKeys = try (0..<n).map { i in
                guard let key = openssl.newPublicKey(nil, algorithm, nil, eks.bytes(i), ekSize) else {
                    throw SetupError(description: "\(name): OpenSSL refused a public key")
                }
                return BenchEVPKey(key, openssl)
            }
            let sslPrivateKeys = try (0..<n).map { i in
                guard let key = openssl.newPrivateKey(nil, algorithm, nil, dks.bytes(i), dkSize) else {
                    throw SetupError(description: "\(name): OpenSSL refused a private key")
                }
                return BenchEVPKey(key, openssl)
            }
            keptRows[0].peers.append(BenchSide(name: opensslName) { i in encapsulate(sslPublicKeys[i % n].key, i) })
            keptRows[1].peers.append(BenchSide(name: opensslName) { i in decapsulate(sslPrivateKeys[i % n].key, i) })
        }
        return [keygenOperation, encapsOperation, decapsOperation] + keptRows
    }
}
/// An EVP_PKEY kept for the "kept" rows, freed with the operation table.
final class BenchEVPKey {
    let key: OpaquePointer
    private let free: @convention(c) (OpaquePointer?) -> Void

    init(_ key: OpaquePointer, _ evp: BenchEVP) {
        self.key = key
        free = evp.freeKey
    }

    deinit { free(key) }
}
