import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// OpenSSL 4.0 as bundled (statically, symbols hidden) in PyPI's `cryptography` 50 wheel, called directly
/// through its EVP API from this process: no Python in the timed path.
///
/// The wheel has no separate libcrypto: OpenSSL is linked into `cryptography/hazmat/bindings/_rust.abi3.so`,
/// whose only exported symbols are the Python module entry points. The module is loaded with `dlopen`
/// (after the Python runtime library it links against, which is loaded but never initialised or called),
/// its load address follows from an exported symbol's address and table value, and each EVP function is found by
/// name in the file's ELF symbol table (.symtab, present in the wheel). Benchmark use only.
final class BenchOpenSSL {
    struct LoadError: Error, CustomStringConvertible {
        let description: String
    }

    let version: String
    private let base: UnsafeMutableRawPointer
    private let symbols: [String: UInt64]

    init(modulePath: String, pythonLibraryPath: String) throws {
        guard dlopen(pythonLibraryPath, RTLD_NOW | RTLD_GLOBAL) != nil else {
            throw LoadError(description: "cannot load \(pythonLibraryPath): \(Self.lastError())")
        }
        guard let handle = dlopen(modulePath, RTLD_NOW | RTLD_LOCAL) else {
            throw LoadError(description: "cannot load \(modulePath): \(Self.lastError())")
        }
        guard let exported = dlsym(handle, "PyInit__rust") else {
            throw LoadError(description: "\(modulePath) has no PyInit__rust; not the cryptography wheel's module")
        }
        // The load address: where the exported entry point is, less its value in the symbol table.
        symbols = try Self.functionSymbols(in: modulePath)
        guard let entryOffset = symbols["PyInit__rust"], UInt(bitPattern: exported) >= UInt(entryOffset) else {
            throw LoadError(description: "\(modulePath): PyInit__rust is not in its symbol table")
        }
        base = exported - Int(entryOffset)
        let versionFunction = try Self.lookup(symbols, base, "OpenSSL_version", as: VersionFunction.self)
        version = String(cString: versionFunction(0))
        guard version.hasPrefix("OpenSSL 4.") else {
            throw LoadError(description: "\(modulePath) bundles \(version), not OpenSSL 4.x")
        }
    }

    typealias VersionFunction = @convention(c) (Int32) -> UnsafePointer<CChar>

    /// The bundled function `name`, typed as `type` (its C ABI).
    func function<F>(_ name: String, as type: F.Type) throws -> F {
        try Self.lookup(symbols, base, name, as: type)
    }

    private static func lookup<F>(_ symbols: [String: UInt64], _ base: UnsafeMutableRawPointer, _ name: String, as: F.Type) throws -> F {
        guard let offset = symbols[name], offset != 0 else {
            throw LoadError(description: "the bundled OpenSSL has no function \(name)")
        }
        return unsafeBitCast(base + Int(offset), to: F.self)
    }

    private static func lastError() -> String {
        dlerror().map { String(cString: $0) } ?? "unknown error"
    }

    /// Name → value of every defined function symbol in the ELF64 file's .symtab (checked bounds throughout).
    private static func functionSymbols(in path: String) throws -> [String: UInt64] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LoadError(description: "cannot read \(path)")
        }
        return try data.withUnsafeBytes { (file: UnsafeRawBufferPointer) throws -> [String: UInt64] in
            func read<T: FixedWidthInteger>(_ offset: UInt64, _: T.Type) throws -> T {
                guard offset <= UInt64(file.count), UInt64(MemoryLayout<T>.size) <= UInt64(file.count) - offset else {
                    throw LoadError(description: "\(path): truncated ELF file")
                }
                return T(littleEndian: file.loadUnaligned(fromByteOffset: Int(offset), as: T.self))
            }
            guard file.count > 64, file[0] == 0x7F, file[1] == 0x45, file[2] == 0x4C, file[3] == 0x46, file[4] == 2,
                file[5] == 1
            else { throw LoadError(description: "\(path) is not a little-endian ELF64 file") }
            let sectionTable = try read(0x28, UInt64.self)
            let sectionSize = UInt64(try read(0x3A, UInt16.self))
            let sectionCount = UInt64(try read(0x3C, UInt16.self))
            var symbols: [String: UInt64] = [:]
            for index in 0..<sectionCount {
                let header = sectionTable + index * sectionSize
                guard try read(header + 4, UInt32.self) == 2 else { continue }  // SHT_SYMTAB
                let offset = try read(header + 0x18, UInt64.self)
                let size = try read(header + 0x20, UInt64.self)
                let link = UInt64(try read(header + 0x28, UInt32.self))
                let entrySize = try read(header + 0x38, UInt64.self)
                guard entrySize >= 24, link < sectionCount else { throw LoadError(description: "\(path): bad .symtab") }
                let strings = try read(sectionTable + link * sectionSize + 0x18, UInt64.self)
                let stringsSize = try read(sectionTable + link * sectionSize + 0x20, UInt64.self)
                for entry in 0..<(size / entrySize) {
                    let symbol = offset + entry * entrySize
                    let info = try read(symbol + 4, UInt8.self)
                    let sectionIndex = try read(symbol + 6, UInt16.self)
                    guard info & 0xF == 2, sectionIndex != 0 else { continue }  // STT_FUNC, defined
                    let nameOffset = UInt64(try read(symbol, UInt32.self))
                    guard nameOffset < stringsSize else { continue }
                    let start = Int(strings + nameOffset)
                    guard start < file.count else { continue }
                    var end = start
                    while end < file.count, file[end] != 0 { end += 1 }
                    let name = String(decoding: UnsafeRawBufferPointer(rebasing: file[start..<end]), as: UTF8.self)
                    symbols[name] = try read(symbol + 8, UInt64.self)
                }
            }
            guard !symbols.isEmpty else { throw LoadError(description: "\(path) has no symbol table") }
            return symbols
        }
    }
}

/// OSSL_PARAM arrays built in Swift memory (layout: key, data_type, data, data_size, return_size), built
/// once per operation and re-pointed at each iteration's input, so the peer pays no allocation for them.
final class BenchOSSLParams {
    private static let entrySize = 40
    let pointer: UnsafeMutableRawPointer
    private let storage: UnsafeMutableRawPointer
    private var keys: [UnsafeMutablePointer<CChar>] = []

    enum Value {
        /// An octet string, re-pointed with `setOctets` before use.
        case octets
        case int(Int32)
    }

    init(_ entries: [(String, Value)]) {
        pointer = .allocate(byteCount: (entries.count + 1) * Self.entrySize, alignment: 8)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: (entries.count + 1) * Self.entrySize)
        storage = .allocate(byteCount: 8 * entries.count, alignment: 8)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: 8 * entries.count)
        for (index, (key, value)) in entries.enumerated() {
            let entry = pointer + index * Self.entrySize
            let name = strdup(key)!
            keys.append(name)
            entry.storeBytes(of: UnsafePointer(name), as: UnsafePointer<CChar>.self)
            let data = storage + 8 * index
            entry.storeBytes(of: UnsafeRawPointer(data), toByteOffset: 16, as: UnsafeRawPointer.self)
            switch value {
            case .octets:
                entry.storeBytes(of: UInt32(5), toByteOffset: 8, as: UInt32.self)  // OSSL_PARAM_OCTET_STRING
            case .int(let value):
                data.storeBytes(of: value, as: Int32.self)
                entry.storeBytes(of: UInt32(1), toByteOffset: 8, as: UInt32.self)  // OSSL_PARAM_INTEGER
                entry.storeBytes(of: 4, toByteOffset: 24, as: Int.self)
            }
            entry.storeBytes(of: UInt.max, toByteOffset: 32, as: UInt.self)  // OSSL_PARAM_UNMODIFIED
        }
    }

    deinit {
        keys.forEach { free($0) }
        pointer.deallocate()
        storage.deallocate()
    }

    /// Points octet-string entry `index` at `count` bytes (an empty string still gets a valid pointer).
    func setOctets(_ index: Int, _ bytes: UnsafeRawBufferPointer) {
        let entry = pointer + index * Self.entrySize
        let data = bytes.baseAddress ?? UnsafeRawPointer(storage + 8 * index)
        entry.storeBytes(of: data, toByteOffset: 16, as: UnsafeRawPointer.self)
        entry.storeBytes(of: bytes.count, toByteOffset: 24, as: Int.self)
    }
}

/// The EVP functions the benchmark calls, resolved once. Opaque OpenSSL objects are raw pointers.
struct BenchEVP {
    typealias Pointer = OpaquePointer
    let newFromName: @convention(c) (Pointer?, UnsafePointer<CChar>, UnsafePointer<CChar>?) -> Pointer?
    let newFromKey: @convention(c) (Pointer?, Pointer, UnsafePointer<CChar>?) -> Pointer?
    let freeContext: @convention(c) (Pointer?) -> Void
    let freeKey: @convention(c) (Pointer?) -> Void
    let keygenInit: @convention(c) (Pointer) -> Int32
    let setParams: @convention(c) (Pointer, UnsafeRawPointer) -> Int32
    let keygen: @convention(c) (Pointer, UnsafeMutablePointer<Pointer?>) -> Int32
    let getOctets: @convention(c) (Pointer, UnsafePointer<CChar>, UnsafeMutablePointer<UInt8>, Int, UnsafeMutablePointer<Int>) -> Int32
    let newPublicKey: @convention(c) (Pointer?, UnsafePointer<CChar>, UnsafePointer<CChar>?, UnsafePointer<UInt8>, Int) -> Pointer?
    let newPrivateKey: @convention(c) (Pointer?, UnsafePointer<CChar>, UnsafePointer<CChar>?, UnsafePointer<UInt8>, Int) -> Pointer?
    let encapsulateInit: @convention(c) (Pointer, UnsafeRawPointer?) -> Int32
    let encapsulate: @convention(c) (Pointer, UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<Int>, UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<Int>) -> Int32
    let decapsulateInit: @convention(c) (Pointer, UnsafeRawPointer?) -> Int32
    let decapsulate: @convention(c) (Pointer, UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<Int>, UnsafePointer<UInt8>, Int) -> Int32
    let fetchSignature: @convention(c) (Pointer?, UnsafePointer<CChar>, UnsafePointer<CChar>?) -> Pointer?
    let signMessageInit: @convention(c) (Pointer, Pointer, UnsafeRawPointer?) -> Int32
    let sign: @convention(c) (Pointer, UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<Int>, UnsafePointer<UInt8>?, Int) -> Int32
    let verifyMessageInit: @convention(c) (Pointer, Pointer, UnsafeRawPointer?) -> Int32
    let verify: @convention(c) (Pointer, UnsafePointer<UInt8>, Int, UnsafePointer<UInt8>?, Int) -> Int32

    init(_ library: BenchOpenSSL) throws {
        newFromName = try library.function("EVP_PKEY_CTX_new_from_name", as: type(of: newFromName))
        newFromKey = try library.function("EVP_PKEY_CTX_new_from_pkey", as: type(of: newFromKey))
        freeContext = try library.function("EVP_PKEY_CTX_free", as: type(of: freeContext))
        freeKey = try library.function("EVP_PKEY_free", as: type(of: freeKey))
        keygenInit = try library.function("EVP_PKEY_keygen_init", as: type(of: keygenInit))
        setParams = try library.function("EVP_PKEY_CTX_set_params", as: type(of: setParams))
        keygen = try library.function("EVP_PKEY_keygen", as: type(of: keygen))
        getOctets = try library.function("EVP_PKEY_get_octet_string_param", as: type(of: getOctets))
        newPublicKey = try library.function("EVP_PKEY_new_raw_public_key_ex", as: type(of: newPublicKey))
        newPrivateKey = try library.function("EVP_PKEY_new_raw_private_key_ex", as: type(of: newPrivateKey))
        encapsulateInit = try library.function("EVP_PKEY_encapsulate_init", as: type(of: encapsulateInit))
        encapsulate = try library.function("EVP_PKEY_encapsulate", as: type(of: encapsulate))
        decapsulateInit = try library.function("EVP_PKEY_decapsulate_init", as: type(of: decapsulateInit))
        decapsulate = try library.function("EVP_PKEY_decapsulate", as: type(of: decapsulate))
        fetchSignature = try library.function("EVP_SIGNATURE_fetch", as: type(of: fetchSignature))
        signMessageInit = try library.function("EVP_PKEY_sign_message_init", as: type(of: signMessageInit))
        sign = try library.function("EVP_PKEY_sign", as: type(of: sign))
        verifyMessageInit = try library.function("EVP_PKEY_verify_message_init", as: type(of: verifyMessageInit))
        verify = try library.function("EVP_PKEY_verify", as: type(of: verify))
    }

    /// Key generation with `params` = [seed] (ML-KEM d‖z or ML-DSA ξ): the encoded public key and the
    /// expanded private key into the output slots. False on any failure.
    func generate(
        _ algorithm: String, params: BenchOSSLParams,
        publicKey: UnsafeMutablePointer<UInt8>, publicCount: Int, privateKey: UnsafeMutablePointer<UInt8>, privateCount: Int
    ) -> Bool {
        guard let context = newFromName(nil, algorithm, nil) else { return false }
        defer { freeContext(context) }
        var key: Pointer?
        guard keygenInit(context) == 1, setParams(context, params.pointer) == 1, keygen(context, &key) == 1,
            let key
        else { return false }
        defer { freeKey(key) }
        var length = 0
        guard getOctets(key, "pub", publicKey, publicCount, &length) == 1, length == publicCount,
            getOctets(key, "priv", privateKey, privateCount, &length) == 1, length == privateCount
        else { return false }
        return true
    }

    /// Encapsulation with `params` = [ikme: the 32-byte randomness m].
    func encapsulate(
        key: Pointer, params: BenchOSSLParams, ciphertext: UnsafeMutablePointer<UInt8>, ciphertextCount: Int,
        secret: UnsafeMutablePointer<UInt8>
    ) -> Bool {
        guard let context = newFromKey(nil, key, nil) else { return false }
        defer { freeContext(context) }
        var ctLength = ciphertextCount, secretLength = 32
        return encapsulateInit(context, params.pointer) == 1
            && encapsulate(context, ciphertext, &ctLength, secret, &secretLength) == 1
            && ctLength == ciphertextCount && secretLength == 32
    }

    func decapsulate(key: Pointer, ciphertext: UnsafePointer<UInt8>, ciphertextCount: Int, secret: UnsafeMutablePointer<UInt8>) -> Bool {
        guard let context = newFromKey(nil, key, nil) else { return false }
        defer { freeContext(context) }
        var secretLength = 32
        return decapsulateInit(context, nil) == 1
            && decapsulate(context, secret, &secretLength, ciphertext, ciphertextCount) == 1 && secretLength == 32
    }

    /// Pure ML-DSA signature with `params` = [deterministic: 1, context-string].
    func sign(
        key: Pointer, algorithm: Pointer, params: BenchOSSLParams, message: UnsafeRawBufferPointer,
        signature: UnsafeMutablePointer<UInt8>, signatureCount: Int
    ) -> Bool {
        guard let context = newFromKey(nil, key, nil) else { return false }
        defer { freeContext(context) }
        var length = signatureCount
        return signMessageInit(context, algorithm, params.pointer) == 1
            && sign(context, signature, &length, message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count) == 1
            && length == signatureCount
    }

    /// Pure ML-DSA verification with `params` = [context-string].
    func verify(
        key: Pointer, algorithm: Pointer, params: BenchOSSLParams, message: UnsafeRawBufferPointer,
        signature: UnsafePointer<UInt8>, signatureCount: Int
    ) -> Bool {
        guard let context = newFromKey(nil, key, nil) else { return false }
        defer { freeContext(context) }
        return verifyMessageInit(context, algorithm, params.pointer) == 1
            && verify(context, signature, signatureCount, message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count) == 1
    }
}
