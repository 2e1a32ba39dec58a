/// One thing the user is asked to do during a liveness capture.
public enum LivenessAction: String, Sendable, Hashable, Codable, CaseIterable {
    /// Close and reopen both eyes.
    case blink
    /// Turn the head to the user's own left (the nose moves toward the image's right in an unmirrored frame).
    case turnLeft
    /// Turn the head to the user's own right.
    case turnRight
    /// Open the mouth, then close it.
    case openMouth
}

/// The randomised challenge of one liveness capture: an ordered list of actions drawn from a nonce.
///
/// The nonce is the request's (the authority's fresh random bytes), so each request asks for its own
/// sequence, and evaluation re-derives it from the nonce: a capture performed for another request
/// answers another challenge. Derivation ("FaceSeal liveness challenge v1") is deterministic so every
/// party computes the same steps: a SplitMix64 generator seeded by folding the nonce's 8-byte
/// little-endian words (zero-padded, length mixed in), drawing uniformly with rejection; consecutive
/// steps differ. The generator need not be cryptographic: the unpredictability is the nonce's.
public struct LivenessChallenge: Sendable, Hashable, Codable {
    /// The request nonce the steps were drawn from.
    public let nonce: [UInt8]
    /// The actions, in the order they must be performed.
    public let steps: [LivenessAction]

    /// Shortest accepted nonce, in bytes.
    public static let minimumNonceLength = 16
    /// Longest accepted nonce, in bytes.
    public static let maximumNonceLength = 1024

    /// Why a challenge could not be drawn.
    public enum ChallengeError: Error, Equatable, Sendable {
        /// The nonce is shorter than `minimumNonceLength` or longer than `maximumNonceLength`.
        case nonceLength(Int)
        /// Fewer than two actions to draw from, or a step count outside 1…8.
        case invalidParameters
    }

    /// Draws `stepCount` actions from `actions` (each different from the previous one) for `nonce`.
    public init(nonce: [UInt8], stepCount: Int = 3, actions: [LivenessAction] = LivenessAction.allCases) throws(ChallengeError) {
        guard nonce.count >= Self.minimumNonceLength, nonce.count <= Self.maximumNonceLength else {
            throw .nonceLength(nonce.count)
        }
        let pool = actions.reduce(into: [LivenessAction]()) { if !$0.contains($1) { $0.append($1) } }
        guard pool.count >= 2, (1...8).contains(stepCount) else { throw .invalidParameters }
        var generator = SplitMix64(nonce: nonce)
        var steps: [LivenessAction] = []
        for _ in 0..<stepCount {
            let candidates = pool.filter { $0 != steps.last }
            steps.append(candidates[generator.uniform(below: candidates.count)])
        }
        self.nonce = nonce
        self.steps = steps
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014), seeded from arbitrary bytes.
struct SplitMix64 {
    private var state: UInt64

    init(nonce: [UInt8]) {
        state = 0x4661_6365_5365_616C ^ UInt64(nonce.count)   // "FaceSeal"
        var index = 0
        while index < nonce.count {
            var word: UInt64 = 0
            for k in 0..<8 where index + k < nonce.count {
                word |= UInt64(nonce[index + k]) << (8 * UInt64(k))
            }
            state ^= word
            _ = next()
            index += 8
        }
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in 0..<bound, without modulo bias.
    mutating func uniform(below bound: Int) -> Int {
        let b = UInt64(bound)
        let limit = UInt64.max - UInt64.max % b
        while true {
            let v = next()
            if v < limit { return Int(v % b) }
        }
    }
}
