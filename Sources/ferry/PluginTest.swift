import ArgumentParser
import ExecBackend
import FerryConformance
import FerryCore
import FerryPluginAPI
import FerrySystem
import Foundation

extension Ferry {
    struct PluginTest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "plugin-test",
            abstract: "Run the backend conformance suite against a plugin and print what passes.",
            discussion: """
                NAME is an external plugin (NAME or exec:NAME, run as ferry-backend-NAME) or a \
                built-in type. The plugin gets the options given with --option; when it takes \
                a `path` and none is given, a temporary folder is used and removed afterwards. \
                With --remote, a configured remote is tested instead, in a scratch folder that \
                is removed afterwards. Each check runs in an empty folder of its own. \
                Exit 0 when every check passes, 1 otherwise.
                """)

        @Argument(help: ArgumentHelp("The plugin: NAME or exec:NAME for ferry-backend-NAME, or a built-in type.", valueName: "name"))
        var name: String?

        @Option(name: .long, help: ArgumentHelp("An option for the plugin (repeatable).", valueName: "key=value"))
        var option: [String] = []

        @Option(name: .long, help: ArgumentHelp("Test a configured remote instead of NAME.", valueName: "remote"))
        var remote: String?

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if (name == nil) == (remote == nil) {
                throw ValidationError("give a plugin NAME or --remote REMOTE (one of them)")
            }
            for item in option where !item.contains("=") {
                throw ValidationError("--option takes key=value, got '\(item)'")
            }
        }

        func run() async throws {
            let context = try CommandContext.load(global)
            var scratchRoot: String?
            defer { if let scratchRoot { try? FileManager.default.removeItem(atPath: scratchRoot) } }
            let backend: any Backend
            if let remote {
                backend = try configuredBackend(remote, context: context)
            } else {
                backend = try pluginBackend(context: context, scratchRoot: &scratchRoot)
            }
            try await test(backend)
        }

        /// The backend of a remote in config.yml.
        private func configuredBackend(_ remote: String, context: CommandContext) throws -> any Backend {
            guard let configured = context.config.remote(named: remote) else {
                let known = context.config.remotes.map(\.name)
                throw CommandFailure.usage("no remote named '\(remote)'" + (known.isEmpty ? "" : " (remotes: \(known.joined(separator: ", ")))"))
            }
            let selection = FolderSelection(config: context.config, registry: context.registry,
                                            currentDirectory: context.currentDirectory)
            do {
                return try selection.backend(for: configured)
            } catch {
                throw CommandFailure.usage(error.message)
            }
        }

        /// The plugin NAME with the `--option`s given; a `path` it takes and was not given is
        /// a scratch folder, removed after the test (`scratchRoot`).
        private func pluginBackend(context: CommandContext, scratchRoot: inout String?) throws -> any Backend {
            let requested = name ?? ""
            guard let plugin = context.registry.plugin(forType: requested)
                ?? context.registry.plugin(forType: "exec:" + requested) else {
                throw CommandFailure.usage("no plugin '\(requested)': give NAME for ferry-backend-NAME, or one of "
                    + context.registry.plugins.map(\.type).joined(separator: ", "))
            }
            var options: [String: String] = [:]
            for item in option {
                let parts = item.split(separator: "=", maxSplits: 1)
                options[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
            }
            for declared in plugin.options where declared.kind == .path {
                if let value = options[declared.name] {
                    options[declared.name] = LocalFileSystem.absolute(value, relativeTo: context.currentDirectory)
                }
            }
            if options["path"] == nil, plugin.options.contains(where: { $0.name == "path" }) {
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-plugin-test-\(UUID().uuidString)").path
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                scratchRoot = folder
                options["path"] = folder
            }
            do {
                return try plugin.make(BackendSettings(remoteName: "plugin-test", options: options))
            } catch {
                throw CommandFailure.usage("\(plugin.type): \(error.description)")
            }
        }

        private func test(_ backend: any Backend) async throws {
            let json = global.json
            let capabilities: BackendCapabilities
            do {
                capabilities = try await backend.discoverCapabilities()
            } catch {
                throw CommandFailure.runtime("cannot start \(backend.displayName): \(error.description)")
            }
            if let exec = backend as? ExecBackend, let hello = try? await exec.pluginHello() {
                if json {
                    var object = JSONObject()
                    object.add("event", "plugin")
                    object.add("type", backend.displayName)
                    object.add("executable", exec.executable)
                    object.add("plugin", hello.name)
                    object.add("version", hello.version)
                    object.add("capabilities", capabilities.enabledNames)
                    object.add("max_concurrency", hello.maxConcurrency)
                    StandardStreams.output(object.text)
                } else {
                    StandardStreams.output("\(backend.displayName): \(exec.executable) (\(hello.name) \(hello.version), "
                        + "up to \(hello.maxConcurrency) requests at once)")
                    StandardStreams.output("capabilities: \(capabilities.enabledNames.joined(separator: ", "))")
                }
            } else if !json {
                StandardStreams.output("\(backend.displayName)")
                StandardStreams.output("capabilities: \(capabilities.enabledNames.joined(separator: ", "))")
            }
            let folder = try RelativePath("ferry-conformance-\(UUID().uuidString.prefix(8).lowercased())")
            let outcomes = await ConformanceRun(backend: backend, folder: folder).run { outcome in
                if json {
                    var object = JSONObject()
                    object.add("event", "check")
                    object.add("name", outcome.check)
                    object.add("passed", outcome.passed)
                    object.add("skipped", outcome.skipped != nil)
                    object.add("seconds", outcome.seconds)
                    object.add("message", outcome.failure ?? outcome.skipped)
                    StandardStreams.output(object.text)
                } else if let failure = outcome.failure {
                    StandardStreams.output("FAIL \(outcome.check): \(failure)")
                } else if let reason = outcome.skipped {
                    StandardStreams.output("skip \(outcome.check): \(reason)")
                } else {
                    StandardStreams.output("pass \(outcome.check) (\(String(format: "%.2f", outcome.seconds)) s)")
                }
            }
            let failed = outcomes.filter { $0.failure != nil }.count
            let skipped = outcomes.filter { $0.skipped != nil }.count
            let passed = outcomes.count - failed - skipped
            if json {
                var object = JSONObject()
                object.add("event", "summary")
                object.add("passed", passed)
                object.add("failed", failed)
                object.add("skipped", skipped)
                StandardStreams.output(object.text)
            } else {
                StandardStreams.output("\(passed) passed, \(failed) failed" + (skipped > 0 ? ", \(skipped) skipped" : ""))
            }
            if failed > 0 { throw ExitCodeFailure.someFilesFailed }
        }
    }
}
