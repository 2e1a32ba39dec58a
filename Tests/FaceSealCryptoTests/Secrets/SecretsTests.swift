import Foundation
import Synchronization
import Testing
@testable import FaceSealCrypto

@Suite struct SecretBytesTests {
    @Test func descriptionsNeverShowContent() {
        let secret = SecretBytes(Array("hunter2-very-secret".utf8))
        for text in [secret.description, secret.debugDescription, "\(secret)", String(reflecting: secret)] {
            #expect(!text.contains("hunter2"))
            #expect(!text.contains("68"))  // hex of "h"
            #expect(text.contains("redacted"))
        }
        var dumped = ""
        dump(secret, to: &dumped)
        #expect(!dumped.contains("hunter2") && !dumped.contains("104"))
        let key = SymmetricKey(data: Array("hunter2".utf8))
        #expect(!"\(key)".contains("hunter2"))
    }

    @Test func holdsTheBytes() {
        let bytes: [UInt8] = [1, 2, 3, 250]
        let secret = SecretBytes(bytes)
        #expect(secret.count == 4)
        #expect(secret.withUnsafeBytes { Array($0) } == bytes)
        #expect(secret == SecretBytes(Data(bytes)))
        #expect(secret != SecretBytes([1, 2, 3, 251] as [UInt8]))
        #expect(secret == secret)
    }

    @Test func randomSecretsDiffer() {
        let a = SecretBytes(randomCount: 32)
        let b = SecretBytes(randomCount: 32)
        #expect(a.count == 32)
        #expect(a != b)
    }

    @Test func explicitZeroWipesContent() {
        let secret = SecretBytes([9, 9, 9] as [UInt8])
        secret.zero()
        #expect(secret.count == 3)
        #expect(secret.copyBytes() == [0, 0, 0])
    }

    @Test func deinitWipesStorage() {
        let observed = Mutex<[Bool]>([])
        do {
            let secret = SecretBytes(count: 64, releaseObserver: { allZero, sameBuffer in
                observed.withLock { $0 += [allZero, sameBuffer] }
            }) { buffer in
                for i in buffer.indices { buffer[i] = UInt8(truncatingIfNeeded: i &+ 1) }
            }
            #expect(secret.withUnsafeBytes { $0.contains(64) })
            _ = secret.copyBytes()
            _ = secret == SecretBytes(randomCount: 64)
        }
        // Wiped, and wiped in the buffer the secret was first written to (reads made no hidden copy).
        #expect(observed.withLock { $0 } == [true, true])
    }

    @Test func failingInitializerPropagatesError() {
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try SecretBytes(count: 8) { (_: UnsafeMutableBufferPointer<UInt8>) throws(Boom) in throw Boom() }
        }
    }

    @Test func crossComparisonsFromManyTasksDoNotDeadlock() async {
        let a = SecretBytes(randomCount: 32)
        let b = SecretBytes(a.copyBytes())
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<200 {
                group.addTask { index.isMultiple(of: 2) ? a == b : b == a }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 200 && results.allSatisfy { $0 })
        #expect(a != SecretBytes(randomCount: 32))
        #expect(a != SecretBytes(randomCount: 31))
    }

    @Test func emptySecret() {
        let secret = SecretBytes([UInt8]())
        #expect(secret.count == 0)
        secret.zero()
        #expect(secret.copyBytes().isEmpty)
    }
}

@Suite struct ConstantTimeTests {
    @Test func comparesContentAndLength() {
        #expect(constantTimeEquals([UInt8](), [UInt8]()))
        #expect(constantTimeEquals([1, 2, 3] as [UInt8], Data([1, 2, 3])))
        #expect(!constantTimeEquals([1, 2, 3] as [UInt8], [1, 2] as [UInt8]))
        #expect(!constantTimeEquals([1, 2] as [UInt8], [1, 2, 3] as [UInt8]))
        // Every single-bit difference at every position is detected.
        let base = [UInt8](repeating: 0xA5, count: 16)
        for index in base.indices {
            for bit in 0..<8 {
                var other = base
                other[index] ^= UInt8(1) << bit
                #expect(!constantTimeEquals(base, other))
            }
        }
    }
}

@Suite struct SecureRandomTests {
    @Test func producesRequestedLengthsAndVaries() {
        #expect(SecureRandom.bytes(count: 0).isEmpty)
        let a = SecureRandom.bytes(count: 32)
        let b = SecureRandom.bytes(count: 32)
        #expect(a.count == 32 && b.count == 32)
        #expect(a != b)
        var generator = SecureRandomNumberGenerator()
        #expect(generator.next() != generator.next())
    }
}
