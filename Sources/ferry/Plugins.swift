import ArgumentParser
import ExecBackend
import FerryCore
import FerryPluginAPI
import Foundation
import S3Backend
import WebDAVBackend

extension Ferry {
    struct Plugins: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "plugins",
            abstract: "List the backend plugins, their options and capabilities.",
            discussion: """
                A plugin's capabilities are what every remote of its type has. Some depend on the \
                server (a WebDAV server may or may not continue partial uploads or keep \
                modification times): --probe REMOTE asks one, by writing and removing a small \
                scratch file in its root, as the first upload of a run does.

                External plugins (`type: exec:NAME`) are the executables ferry-backend-NAME \
                found in the plugin_dir of configured exec remotes, $FERRY_PLUGIN_PATH, \
                ~/.config/ferry/plugins and $PATH; each is started briefly to read what it \
                says about itself.
                """)

        @Option(name: .long, help: ArgumentHelp(
            "Probe a remote (a configured name, name:path or URL) and show what it supports.", valueName: "remote"))
        var probe: String?

        @OptionGroup var global: GlobalOptions

        var json: Bool { global.json }

        func run() async throws {
            if let probe {
                try await probeRemote(probe)
                return
            }
            for plugin in BuiltinBackends.registry.plugins {
                if json { printJSON(plugin) } else { printText(plugin) }
            }
            if !json { printFamilies() }
            await listExternalPlugins()
        }

        private func printJSON(_ plugin: BackendPlugin) {
            var object = JSONObject()
            object.add("type", plugin.type)
            object.add("kind", "built-in")
            object.add("summary", plugin.summary)
            object.add("url_schemes", plugin.urlSchemes)
            object.add("capabilities", plugin.capabilities.enabledNames)
            object.add("options", plugin.options.map { option in
                var item = JSONObject()
                item.add("name", option.name)
                item.add("kind", option.kind.rawValue)
                item.add("required", option.isRequired)
                item.add("summary", option.summary)
                return item
            })
            StandardStreams.output(object.text)
        }

        private func printText(_ plugin: BackendPlugin) {
            StandardStreams.output("\(plugin.type) (built-in): \(plugin.summary)")
            if !plugin.urlSchemes.isEmpty {
                StandardStreams.output("  ad-hoc: " + plugin.urlSchemes.map { "\($0)://" }.joined(separator: ", ")
                    + (plugin.acceptsBarePaths ? ", bare paths" : ""))
            }
            StandardStreams.output("  capabilities: \(plugin.capabilities.enabledNames.joined(separator: ", "))")
            for option in plugin.options {
                StandardStreams.output("  \(option.name)\(option.isRequired ? " (required)" : ""): \(option.summary)")
            }
        }

        /// Plugin families (`exec:NAME`): one entry for every name.
        private func printFamilies() {
            for family in BuiltinBackends.registry.families {
                StandardStreams.output("\(family.prefix)NAME: \(family.summary)")
                if let example = family.plugin("NAME") {
                    for option in example.options { StandardStreams.output("  \(option.name): \(option.summary)") }
                    if example.acceptsOtherOptions { StandardStreams.output("  (any other key goes to the plugin)") }
                }
            }
        }

        /// Every `ferry-backend-NAME` found, with what its hello says (or why it has none).
        func listExternalPlugins() async {
            let context = try? CommandContext.load(global)
            let pluginDirs = context?.config.remotes.filter { $0.type.hasPrefix("exec:") }.compactMap { $0.options["plugin_dir"] } ?? []
            let folders = PluginExecutable.searchFolders(extra: pluginDirs, environment: ProcessInfo.processInfo.environment)
            for found in PluginExecutable.discover(in: folders) {
                let outcome: Result<PluginHello, BackendError>
                do throws(BackendError) {
                    // As long as a run gives a hello: an interpreter on a busy machine can take
                    // seconds to start, and a plugin listed as broken for that misleads.
                    outcome = .success(try await ExecBackend.introduce(executable: found.path, timeout: .seconds(30)))
                } catch {
                    outcome = .failure(error)
                }
                if json {
                    var object = JSONObject()
                    object.add("type", "exec:" + found.name)
                    object.add("kind", "external")
                    object.add("executable", found.path)
                    switch outcome {
                    case let .success(hello):
                        object.add("plugin", hello.name)
                        object.add("version", hello.version)
                        object.add("protocol", "\(hello.protocolVersions.lowerBound)-\(hello.protocolVersions.upperBound)")
                        object.add("capabilities", hello.capabilities.enabledNames)
                        object.add("max_concurrency", hello.maxConcurrency)
                    case let .failure(error):
                        object.add("error", error.description)
                    }
                    StandardStreams.output(object.text)
                } else {
                    StandardStreams.output("exec:\(found.name) (external): \(found.path)")
                    switch outcome {
                    case let .success(hello):
                        let speaks = hello.protocolVersions.lowerBound == hello.protocolVersions.upperBound
                            ? "\(hello.protocolVersions.lowerBound)"
                            : "\(hello.protocolVersions.lowerBound)–\(hello.protocolVersions.upperBound)"
                        StandardStreams.output("  \(hello.name) \(hello.version), protocol \(speaks), up to \(hello.maxConcurrency) requests at once")
                        StandardStreams.output("  capabilities: \(hello.capabilities.enabledNames.joined(separator: ", "))"
                            + (hello.unknownCapabilities.isEmpty ? "" : " (unknown to this ferry: \(hello.unknownCapabilities.joined(separator: ", ")))"))
                    case let .failure(error):
                        StandardStreams.output("  cannot start: \(error.description)")
                    }
                }
            }
        }

        /// Runs the backend's capability discovery and prints the outcome, with the
        /// server's answers for WebDAV.
        func probeRemote(_ text: String) async throws {
            let context = try CommandContext.load(global)
            let selection = FolderSelection(config: context.config, registry: context.registry,
                                            currentDirectory: context.currentDirectory)
            let backend: any Backend
            do {
                (backend, _) = try selection.adHocRemote(text)
            } catch {
                throw CommandFailure.usage(error.message)
            }
            var capabilities: BackendCapabilities
            var details: WebDAVServerFeatures?
            var store: S3StoreFeatures?
            do {
                capabilities = try await backend.discoverCapabilities()
                if let dav = backend as? WebDAVBackend { details = try await dav.serverFeatures() }
                if let s3 = backend as? S3Backend {
                    store = try await s3.storeFeatures()
                    if store?.userMetadata == false { capabilities.preservesModificationTime = false }
                }
            } catch {
                throw CommandFailure.runtime("cannot probe \(text): \(error.description)")
            }
            let concurrency = ConcurrentWriteReport.lines(for: backend, capabilities: capabilities,
                                                          conditionalWrites: store?.conditionalWrites)
            if json {
                var object = JSONObject()
                object.add("remote", backend.displayName)
                object.add("capabilities", capabilities.enabledNames)
                if let details {
                    object.add("ranged_put", details.rangedPut.description)
                    object.add("mtime_property", details.modificationTimeProperty.description)
                    object.add("x_oc_mtime", details.honoursOCMtime)
                    object.add("atomic_put", details.atomicPut.description)
                }
                if let store {
                    object.add("list_objects_v2", store.listObjectsV2)
                    object.add("conditional_writes", store.conditionalWrites)
                    object.add("multipart_etags", store.multipartETags)
                    object.add("user_metadata", store.userMetadata)
                }
                var devices = JSONObject()
                for line in concurrency { devices.add(line.key, line.text) }
                object.add("several_devices", devices)
                StandardStreams.output(object.text)
            } else {
                StandardStreams.output("\(backend.displayName)")
                StandardStreams.output("  capabilities: \(capabilities.enabledNames.joined(separator: ", "))")
                if let details {
                    StandardStreams.output("  ranged PUT (resumable uploads): \(details.rangedPut)")
                    StandardStreams.output("  mtime property (PROPPATCH): \(details.modificationTimeProperty)")
                    StandardStreams.output("  X-OC-Mtime honoured: \(details.honoursOCMtime ? "yes" : "no")")
                    StandardStreams.output("  atomic PUT (a cut-off PUT leaves the old file; one PUT per replaced file): \(details.atomicPut)")
                }
                if let store {
                    StandardStreams.output("  ListObjectsV2: \(store.listObjectsV2 ? "yes" : "no")")
                    StandardStreams.output("  conditional writes (If-None-Match: *): \(store.conditionalWrites ? "yes" : "no")")
                    StandardStreams.output("  multipart ETags checkable: \(store.multipartETags ? "yes" : "no")")
                    StandardStreams.output("  user metadata kept (x-amz-meta-mtime): \(store.userMetadata ? "yes" : "no: modification times are lost, pulls set the upload time")")
                }
                StandardStreams.output("  several devices at once:")
                for line in concurrency {
                    StandardStreams.output("    \(line.key.replacingOccurrences(of: "_", with: " ")): \(line.text)")
                }
            }
        }
    }
}
