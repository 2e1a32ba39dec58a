import FaceSealCrypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `faceseal bench crypto [--all] [--peer DIR] [--batches N]`: FaceSeal's pure-Swift post-quantum code
/// against the portable C inside pycryptodome 4.4.0, side by side in one process (notes/pq-crypto.md).
///
/// Method: the same bytes-in/bytes-out work for both (fixed inputs, the C library called directly through
/// `dlopen`), batches interleaved FaceSeal, peer, FaceSeal, peer…, one `ContinuousClock`, the median of
/// the batches per side, and every output of every iteration compared byte for byte with the reference
/// the peer produced before timing. One line per operation, containing `ratio=<FaceSeal/peer>`.
///
/// The table of operations is `BenchCrypto.operations`: a new algorithm adds a function returning
/// `[BenchOperation]` there.
enum BenchCrypto {
    struct Options {
        var all = false
        var peerDirectory: String?
        var batches = 9
    }

    static let usage = "usage: faceseal bench crypto [--all] [--peer DIR] [--batches N (≥ 1, default 9)]"

    static func run(_ arguments: [String]) async -> Int32 {
        let options: Options
        switch parse(arguments) {
        case .success(let parsed): options = parsed
        case .failure(let error):
            printError("faceseal bench crypto: \(error.message)\n\(usage)")
            return 64
        }
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
        do {
            table = try operations(options: options, peerDirectory: directory)
        } catch {
            printError("faceseal bench crypto: \(error)")
            return 1
        }
        if options.batches < 7 {
            printError("faceseal bench crypto: note: \(options.batches) batches; the method asks for at least 7")
        }
        print("faceseal bench crypto: FaceSeal (pure Swift) vs pycryptodome 4.4.0 portable C at \(directory)")
        print("median of \(options.batches) interleaved batches per side; µs per operation; ratio = FaceSeal/peer")
        let runner = BenchRunner(batches: options.batches)
        var totalMismatches = 0
        for operation in table {
            let result = runner.measure(operation)
            totalMismatches += result.faceSealMismatches + result.peerMismatches
            print(result.line)
        }
        print("output mismatches: \(totalMismatches)")
        return totalMismatches == 0 ? 0 : 1
    }

    /// Every benchmarked operation, in print order. ML-KEM-768 and ML-DSA-65 by default; all parameter sets with `--all`.
    static func operations(options: Options, peerDirectory: String) throws -> [BenchOperation] {
        let mlkem = try BenchPeerLibrary(path: peerDirectory + "/_mlkem.abi3.so")
        let kemSets: [MLKEMParameters] = options.all ? [.mlkem512, .mlkem768, .mlkem1024] : [.mlkem768]
        var table: [BenchOperation] = []
        for set in kemSets {
            table += try BenchMLKEM.operations(set, peer: mlkem)
        }
        let mldsa = try BenchPeerLibrary(path: peerDirectory + "/_mldsa.abi3.so")
        let dsaSets: [MLDSAParameters] = options.all ? [MLDSA44.parameters, MLDSA65.parameters, MLDSA87.parameters] : [MLDSA65.parameters]
        for set in dsaSets {
            table += try BenchMLDSA.operations(set, peer: mldsa, includeReusedKeys: set == MLDSA65.parameters)
        }
        return table
    }

    struct UsageError: Error {
        let message: String
    }

    static func parse(_ arguments: [String]) -> Result<Options, UsageError> {
        var options = Options()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--all":
                options.all = true
            case "--peer":
                guard index + 1 < arguments.count else { return .failure(UsageError(message: "--peer needs a directory")) }
                index += 1
                options.peerDirectory = arguments[index]
            case "--batches":
                guard index + 1 < arguments.count, let n = Int(arguments[index + 1]), (1...1000).contains(n) else {
                    return .failure(UsageError(message: "--batches needs a number from 1 to 1000"))
                }
                index += 1
                options.batches = n
            default:
                return .failure(UsageError(message: "unknown option '\(argument)'"))
            }
            index += 1
        }
        return .success(options)
    }
}

// MARK: - The measurement

/// One row of the benchmark: an operation run by FaceSeal and by the peer on input `i` (taken modulo
/// the operation's own input count). Each closure returns whether its output equalled the reference
/// output byte for byte, so the comparison is part of every iteration on both sides.
struct BenchOperation {
    /// E.g. "ML-KEM-768 keygen".
    let name: String
    let faceSeal: (Int) -> Bool
    let peer: (Int) -> Bool
}

/// Interleaved batches on one clock; medians per side.
struct BenchRunner {
    let batches: Int
    let clock = ContinuousClock()
    /// Wall time of one batch, long enough to dwarf clock resolution and scheduling noise.
    let batchTarget = Duration.milliseconds(40)

    struct Result {
        let name: String
        let faceSealMicroseconds: Double
        let peerMicroseconds: Double
        let faceSealMismatches: Int
        let peerMismatches: Int
        let iterations: Int
        let batches: Int

        var ratio: Double { faceSealMicroseconds / peerMicroseconds }

        var line: String {
            let mismatches = faceSealMismatches + peerMismatches
            return "\(name.padding(toLength: 22, withPad: " ", startingAt: 0)) faceseal=\(format(faceSealMicroseconds)) µs/op  "
                + "peer=\(format(peerMicroseconds)) µs/op  ratio=\(String(format: "%.3f", ratio))  "
                + "mismatches=\(mismatches) (faceseal \(faceSealMismatches), peer \(peerMismatches); \(batches) batches of ~\(iterations) iterations)"
        }

        private func format(_ value: Double) -> String {
            let text = String(format: "%.2f", value)
            return String(repeating: " ", count: max(0, 8 - text.count)) + text
        }
    }

    func measure(_ operation: BenchOperation) -> Result {
        // Warm-up: caches, lazy globals, page faults.
        var faceSealMismatches = 0, peerMismatches = 0
        for i in 0..<8 {
            if !operation.faceSeal(i) { faceSealMismatches += 1 }
            if !operation.peer(i) { peerMismatches += 1 }
        }
        var faceSealTimes: [Double] = [], peerTimes: [Double] = []
        var iterations = 0
        for _ in 0..<batches {
            let ours = timeBox(operation.faceSeal)
            let theirs = timeBox(operation.peer)
            faceSealTimes.append(ours.elapsed.microseconds / Double(ours.iterations))
            peerTimes.append(theirs.elapsed.microseconds / Double(theirs.iterations))
            faceSealMismatches += ours.mismatches
            peerMismatches += theirs.mismatches
            iterations += ours.iterations + theirs.iterations
        }
        return Result(
            name: operation.name, faceSealMicroseconds: median(faceSealTimes), peerMicroseconds: median(peerTimes),
            faceSealMismatches: faceSealMismatches, peerMismatches: peerMismatches,
            iterations: iterations / (2 * batches), batches: batches)
    }

    /// Runs `body` on successive inputs for `batchTarget` of wall time (at least 8 iterations), so a
    /// batch has the same length on both sides whatever the load; reading the clock costs the same to both.
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

    static func operations(_ p: MLKEMParameters, peer: BenchPeerLibrary) throws -> [BenchOperation] {
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

        let keygenOperation = BenchOperation(
            name: "\(name) keygen",
            faceSeal: { i in
                guard (try? MLKEM.keyGenInternal(
                    p, seed: UnsafeRawBufferPointer(seeds[i]), encapsulationKey: ourEK[0], decapsulationKey: ourDK[0])) != nil
                else { return false }
                return ourEK.equals(0, eks, i) && ourDK.equals(0, dks, i)
            },
            peer: { i in
                keypair(level, peerEK.bytes(0), ekSize, peerDK.bytes(0), dkSize, seeds.bytes(i), 64) == 0
                    && peerEK.equals(0, eks, i) && peerDK.equals(0, dks, i)
            })
        let encapsOperation = BenchOperation(
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
            peer: { i in
                encaps(level, peerCT.bytes(0), ctSize, peerKey.bytes(0), 32, eks.bytes(i), ekSize, coins.bytes(i), 32) == 0
                    && peerCT.equals(0, cts, i) && peerKey.equals(0, keys, i)
            })
        let decapsOperation = BenchOperation(
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
            peer: { i in
                decaps(level, peerKey.bytes(0), 32, decapsCiphertexts.bytes(i), ctSize, dks.bytes(i), dkSize) == 0
                    && peerKey.equals(0, decapsKeys, i)
            })
        return [keygenOperation, encapsOperation, decapsOperation]
    }
}
