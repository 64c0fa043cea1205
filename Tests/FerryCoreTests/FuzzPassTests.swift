import FerryFuzzing
import Foundation
import Testing

/// The bounded fuzz pass of `make test`: a few thousand seeded mutations of the corpus per
/// parser (the deep, coverage-guided search is `make fuzz`, with libFuzzer). A crash ends
/// the test process; an input that takes seconds is a hang. Saved crashes in
/// Fuzz/regressions run first, as regression tests.
@Suite("bounded fuzzing of the parsers of untrusted input")
struct FuzzPassTests {
    static let fuzzRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    static func inputs(_ folder: String, _ target: FuzzTarget) throws -> [[UInt8]] {
        let directory = fuzzRoot.appendingPathComponent(folder).appendingPathComponent(target.rawValue)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return try names.sorted().filter { !$0.hasPrefix(".") }.map {
            [UInt8](try Data(contentsOf: directory.appendingPathComponent($0)))
        }
    }

    /// Runs one input, and reports it (as a file to reproduce with) when it is slow.
    static func check(_ target: FuzzTarget, _ input: [UInt8]) {
        let clock = ContinuousClock()
        let started = clock.now
        target.run(Data(input))
        let elapsed = started.duration(to: clock.now)
        if elapsed > .seconds(5) {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-slow-\(target.rawValue)-\(UUID().uuidString)")
            try? Data(input).write(to: path)
            Issue.record("\(target.rawValue): one input took \(elapsed); saved to \(path.path)")
        }
    }

    @Test("saved crash inputs and the corpus parse without crashing", arguments: FuzzTarget.allCases)
    func regressions(_ target: FuzzTarget) throws {
        let corpus = try Self.inputs("corpus", target)
        #expect(!corpus.isEmpty, "no corpus for \(target.rawValue) in Fuzz/corpus")
        for input in try Self.inputs("regressions", target) + corpus { Self.check(target, input) }
    }

    @Test("20,000 seeded mutations of the corpus: no crash, no hang", arguments: FuzzTarget.allCases)
    func mutations(_ target: FuzzTarget) throws {
        let corpus = try Self.inputs("corpus", target)
        try #require(!corpus.isEmpty)
        var mutator = InputMutator(seed: 0xF3_22 &+ UInt64(target.rawValue.utf8.count), dictionary: target.dictionary)
        var pool = corpus
        for round in 0..<20_000 {
            let base = pool[Int(mutator.next() % UInt64(pool.count))]
            let other = corpus[Int(mutator.next() % UInt64(corpus.count))]
            let input = mutator.mutate(base, splicing: other, maxLength: 64 * 1024)
            Self.check(target, input)
            // Keep some mutants as bases, so edits stack up over the run.
            if round % 8 == 0 { pool.append(input) }
            if pool.count > 256 { pool.removeFirst(pool.count - 256) }
        }
    }
}
