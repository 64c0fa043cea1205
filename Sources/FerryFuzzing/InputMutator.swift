import FerryTestSupport
import Foundation

/// A small, seeded, structure-blind mutator (the kinds of edits libFuzzer makes), for the
/// bounded fuzz pass that runs in `make test` where a sanitizer build would take too long.
public struct InputMutator: Sendable {
    private var random: DeterministicBytes
    private let dictionary: [[UInt8]]

    public init(seed: UInt64, dictionary: [String]) {
        random = DeterministicBytes(seed: seed)
        self.dictionary = dictionary.map { Array($0.utf8) }
    }

    /// The same sequence for the same seed on every machine.
    public mutating func next() -> UInt64 { random.next() }

    mutating func below(_ bound: Int) -> Int { bound <= 1 ? 0 : Int(next() % UInt64(bound)) }

    /// One to four edits of `input`, keeping it at most `maxLength` bytes; `other` is a
    /// second corpus entry to splice from.
    public mutating func mutate(_ input: [UInt8], splicing other: [UInt8], maxLength: Int) -> [UInt8] {
        var bytes = input
        for _ in 0..<(1 + below(4)) {
            let at = below(bytes.count + 1)
            switch below(7) {
            case 0 where !bytes.isEmpty:
                bytes[min(at, bytes.count - 1)] ^= UInt8(truncatingIfNeeded: 1 << below(8))
            case 1:
                bytes.insert(UInt8(truncatingIfNeeded: next()), at: at)
            case 2 where !bytes.isEmpty:
                let start = min(at, bytes.count - 1)
                bytes.removeSubrange(start..<min(bytes.count, start + 1 + below(32)))
            case 3 where !bytes.isEmpty:
                let start = min(at, bytes.count - 1)
                let chunk = Array(bytes[start..<min(bytes.count, start + 1 + below(64))])
                for _ in 0..<(1 + below(8)) { bytes.insert(contentsOf: chunk, at: below(bytes.count + 1)) }
            case 4 where !dictionary.isEmpty:
                bytes.insert(contentsOf: dictionary[below(dictionary.count)], at: at)
            case 5 where !other.isEmpty:
                let start = below(other.count)
                bytes.insert(contentsOf: other[start..<min(other.count, start + 1 + below(256))], at: at)
            default:
                bytes.insert(contentsOf: Array("\n".utf8), at: at)
            }
        }
        return bytes.count > maxLength ? Array(bytes.prefix(maxLength)) : bytes
    }
}
