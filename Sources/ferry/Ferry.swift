import ArgumentParser
import ArchiveCodec
import CurlTransport
import FerryCore

/// `ferry`: sync media folders with remotes, in priority order, resumably.
struct Ferry: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "Sync media folders with remotes, thumbnails first, resumably.",
        discussion: """
            Exit codes: 0 all done, 1 some files failed or conflicted, 2 usage or configuration error, \
            130 stopped by Ctrl-C (run the same command to continue).

            Configuration: --config PATH, else ./config.yml, else $XDG_CONFIG_HOME/ferry/config.yml. \
            `ferry init` writes a commented one; docs/config.md lists every key.
            """,
        subcommands: [Init.self, Push.self, Pull.self, Sync.self, Resolve.self, Verify.self, Status.self, Forget.self, Retry.self, Doctor.self,
                      List.self, Find.self, Plugins.self, PluginTest.self, Watch.self, Daemon.self, Keygen.self, APIKeyCommand.self, Versions.self]
    )

    @Flag(name: .long, help: "Print the version and exit.")
    var version = false

    // Not -v/--verbose: a flag of the root command takes that name from every subcommand.
    @Flag(name: .long, help: "With --version: also the versions of the linked libraries.")
    var libraries = false

    func run() async throws {
        guard version else {
            throw CleanExit.helpRequest(self)
        }
        StandardStreams.output("ferry \(Self.version)")
        if libraries {
            StandardStreams.output("libcurl: \(CurlLibrary.versionDescription)")
            StandardStreams.output("libarchive: \(ArchiveLibrary.versionDescription)")
            StandardStreams.output("backends: \(BuiltinBackends.registry.typeNames.joined(separator: ", "))")
        }
    }
}
