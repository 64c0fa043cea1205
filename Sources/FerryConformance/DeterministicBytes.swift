/// SplitMix64: reproducible pseudo-random bytes and numbers from a seed, so generated test
/// trees are the same on every run and every machine.
public struct DeterministicBytes: Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func int(below bound: Int) -> Int {
        Int(next() % UInt64(max(1, bound)))
    }

    public mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(count + 8)
        while result.count < count {
            withUnsafeBytes(of: next()) { result.append(contentsOf: $0) }
        }
        result.removeLast(result.count - count)
        return result
    }
}
