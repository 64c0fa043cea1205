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

    /// Seconds of CPU this thread has used: a hang is judged by the work an input costs,
    /// which other processes on a loaded machine do not change, not by wall-clock time.
    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Runs one input; a description of the problem (with a file to reproduce it) when it is slow.
    static func check(_ target: FuzzTarget, _ input: [UInt8]) -> String? {
        let started = threadCPUSeconds()
        target.run(Data(input))
        let elapsed = threadCPUSeconds() - started
        if elapsed > 5 {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-slow-\(target.rawValue)-\(UUID().uuidString)")
            try? Data(input).write(to: path)
            return "\(target.rawValue): one input took \(elapsed) s of CPU; saved to \(path.path)"
        }
        return nil
    }

    @Test("saved crash inputs and the corpus parse without crashing", arguments: FuzzTarget.allCases)
    func regressions(_ target: FuzzTarget) throws {
        let corpus = try Self.inputs("corpus", target)
        #expect(!corpus.isEmpty, "no corpus for \(target.rawValue) in Fuzz/corpus")
        for input in try Self.inputs("regressions", target) + corpus {
            if let problem = Self.check(target, input) { Issue.record(Comment(rawValue: problem)) }
        }
    }

    @Test("4,000 seeded mutations of the corpus: no crash, no hang", arguments: FuzzTarget.allCases)
    func mutations(_ target: FuzzTarget) async throws {
        let corpus = try Self.inputs("corpus", target)
        try #require(!corpus.isEmpty)
        // Seconds of CPU: off the cooperative pool, which other tests need.
        let problems = await withCheckedContinuation { (continuation: CheckedContinuation<[String], Never>) in
            DispatchQueue.global().async {
                continuation.resume(returning: Self.mutate(target, corpus: corpus))
            }
        }
        for problem in problems { Issue.record(Comment(rawValue: problem)) }
    }

    static func mutate(_ target: FuzzTarget, corpus: [[UInt8]]) -> [String] {
        var problems: [String] = []
        var mutator = InputMutator(seed: 0xF3_22 &+ UInt64(target.rawValue.utf8.count), dictionary: target.dictionary)
        var pool = corpus
        // 4,000 a target in make test (10,000 were 12.5 s of CPU for the six); `make fuzz`
        // runs libFuzzer for as long as it is given.
        for round in 0..<4_000 {
            let base = pool[Int(mutator.next() % UInt64(pool.count))]
            let other = corpus[Int(mutator.next() % UInt64(corpus.count))]
            let input = mutator.mutate(base, splicing: other, maxLength: 64 * 1024)
            if let problem = Self.check(target, input) { problems.append(problem) }
            // Keep some mutants as bases, so edits stack up over the run.
            if round % 8 == 0 { pool.append(input) }
            if pool.count > 256 { pool.removeFirst(pool.count - 256) }
        }
        return problems
    }
}
