import FerrySystem
import Foundation

/// The environment of the programs a test starts (server scripts, Python servers, `ferry`
/// and the plugins it runs): this process's, with the Python interpreter's own folder
/// first in PATH.
///
/// Where `python3` is a pyenv shim, every run of it (a port chosen, a proxy, moto, a
/// plugin written in Python) first ran a dozen bash scripts and helpers: 742 shims made
/// about 12,000 processes in one `make test` (perf, exec events). The interpreter the shim
/// would pick is asked for once; where `python3` is /usr/bin/python3 nothing changes.
public enum ChildEnvironment {
    public static let variables: [String: String] = {
        var variables = ProcessInfo.processInfo.environment
        if let folder = interpreterFolder() {
            variables["PATH"] = folder + ":" + (variables["PATH"] ?? "/usr/bin:/bin")
        }
        return variables
    }()

    /// The folder of the interpreter `python3` runs, nil when there is none.
    private static func interpreterFolder() -> String? {
        let scratch = TemporaryDirectory("ferry-python")
        let output = scratch.child("out")
        guard let child = try? SpawnedProcess.spawn(
            ["/usr/bin/env", "python3", "-c", "import os, sys; print(os.path.dirname(sys.executable))"],
            standardOutput: .file(output), standardError: .file(scratch.child("err"))) else { return nil }
        guard SpawnedProcess.waitForExit(child.pid) == 0,
              let text = try? String(contentsOfFile: output, encoding: .utf8) else { return nil }
        let folder = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return folder.hasPrefix("/") ? folder : nil
    }
}
