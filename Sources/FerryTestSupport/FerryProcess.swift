import Foundation
import Synchronization

/// Runs the built `ferry` binary as a child process, the way a user does.
public final class FerryProcess: Sendable {
    public struct Result: Sendable {
        public var status: Int32
        public var standardOutput: String
        public var standardError: String

        /// stdout's lines parsed as JSON objects (lines that are not JSON are skipped).
        public var events: [[String: Any]] {
            standardOutput.split(separator: "\n").compactMap { line in
                try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            }
        }

        public func events(named name: String) -> [[String: Any]] {
            events.filter { $0["event"] as? String == name }
        }

        public var summary: [String: Any]? { events(named: "summary").last }
    }

    /// The ferry executable: `$FERRY_BIN`, else the one beside the running test binary.
    public static var executable: String {
        if let configured = ProcessInfo.processInfo.environment["FERRY_BIN"] { return configured }
        let running = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var folder = (running as NSString).deletingLastPathComponent
        // The test runner lives inside FerryPackageTests.xctest/ on some layouts.
        while !folder.isEmpty && folder != "/" {
            let candidate = folder + "/ferry"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            folder = (folder as NSString).deletingLastPathComponent
        }
        return "ferry"
    }

    /// Bytes read from one pipe by a reader thread, and whether it reached the end.
    final class PipeBuffer: Sendable {
        let data = Mutex<Data>(Data())
        let finished = Mutex<Bool>(false)
    }

    private let process: Process
    private let output = PipeBuffer()
    private let errorOutput = PipeBuffer()

    /// Starts `ferry ARGUMENTS` in `directory` (or another program: `executable`, e.g. a
    /// shell running a README line).
    public init(_ arguments: [String], in directory: String, environment: [String: String] = [:],
                executable: String? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable ?? Self.executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var env = ChildEnvironment.variables
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let outPipe = Pipe()
        let errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = FileHandle.nullDevice
        self.process = process
        let outHandle = outPipe.fileHandleForReading
        let errHandle = errPipe.fileHandleForReading
        let output = self.output
        let errorOutput = self.errorOutput
        try process.run()
        Thread.detachNewThread { Self.drain(outHandle, into: output) }
        Thread.detachNewThread { Self.drain(errHandle, into: errorOutput) }
    }

    private static func drain(_ handle: FileHandle, into buffer: PipeBuffer) {
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            buffer.data.withLock { $0.append(chunk) }
        }
        buffer.finished.withLock { $0 = true }
    }

    public var processIdentifier: Int32 { process.processIdentifier }

    /// stdout so far.
    public var outputSoFar: String {
        output.data.withLock { String(decoding: $0, as: UTF8.self) }
    }

    /// Sends SIGKILL: the process gets no chance to clean up.
    public func killHard() {
        kill(process.processIdentifier, SIGKILL)
    }

    /// Sends `signal` (SIGTERM, SIGINT, SIGHUP): what a service manager or a person does.
    public func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// SIGKILL if it still runs: for a test's `defer`, so a failed expectation never leaves
    /// a long-running `ferry watch` or `ferry daemon` behind.
    public func stopIfRunning() {
        if process.isRunning { killHard() }
    }

    /// stderr so far.
    public var errorSoFar: String {
        errorOutput.data.withLock { String(decoding: $0, as: UTF8.self) }
    }

    /// Waits for the process to end and returns what it printed. `guardSeconds` only guards
    /// against a hang (a run waiting forever on something the test failed to give it): the
    /// process is then killed, the result says so, and the suite goes on instead of hanging.
    public func wait(guardSeconds: Double = 600) async -> Result {
        let deadline = ContinuousClock.now + .seconds(guardSeconds)
        var killedByGuard = false
        while process.isRunning {
            if ContinuousClock.now > deadline && !killedByGuard {
                killedByGuard = true
                killHard()
                errorOutput.data.withLock { $0.append(contentsOf: Array("\n[test guard: killed after \(Int(guardSeconds)) s]\n".utf8)) }
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        process.waitUntilExit()
        // Let the reader threads drain the pipes: they reach end of file now that the
        // process is gone (5 minutes is only a guard against a hang, not a timing).
        for _ in 0..<30_000 where !(output.finished.withLock { $0 } && errorOutput.finished.withLock { $0 }) {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return Result(
            status: process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus,
            standardOutput: output.data.withLock { String(decoding: $0, as: UTF8.self) },
            standardError: errorOutput.data.withLock { String(decoding: $0, as: UTF8.self) })
    }

    /// Runs `ferry ARGUMENTS` to the end.
    public static func run(_ arguments: [String], in directory: String, environment: [String: String] = [:],
                           executable: String? = nil) async throws -> Result {
        try await FerryProcess(arguments, in: directory, environment: environment, executable: executable).wait()
    }
}
