import ArgumentParser
import FerryPluginAPI

extension Ferry {
    struct Plugins: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the backend plugins, their options and capabilities.")

        @Flag(name: .long, help: "One JSON object per plugin per line.")
        var json = false

        func run() async throws {
            for plugin in BuiltinBackends.registry.plugins {
                if json {
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
                } else {
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
            }
        }
    }
}
