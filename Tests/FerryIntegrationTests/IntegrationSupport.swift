import FerryTestSupport
import Foundation
import Testing

/// A scratch workspace with `src/`, `dst/` and `state/` for one end-to-end test.
struct Workspace {
    let directory = TemporaryDirectory("ferry-e2e")
    var source: String { directory.child("src") }
    var destination: String { directory.child("dst") }
    var state: String { directory.child("state") }

    func ferry(_ arguments: [String]) async throws -> FerryProcess.Result {
        try await FerryProcess.run(arguments, in: directory.path)
    }

    func push(_ extra: [String] = []) async throws -> FerryProcess.Result {
        try await ferry(["push", source, "--to", destination, "--state", state, "--json"] + extra)
    }

    /// Names of files that Ferry writes while a transfer is in progress.
    func temporaryFiles(in root: String) throws -> [String] {
        try TreeComparison.files(in: root).keys.filter { $0.hasSuffix(".ferry-part") }.sorted()
    }
}

extension FerryProcess.Result {
    func int(_ key: String) -> Int? {
        (summary?[key] as? NSNumber)?.intValue
    }

    var transferredPaths: [String] {
        events(named: "transferred").compactMap { $0["path"] as? String }
    }

    /// For messages when an expectation fails.
    var diagnostics: String {
        "exit \(status)\nstderr: \(standardError.suffix(2000))\nstdout: \(standardOutput.suffix(2000))"
    }
}
