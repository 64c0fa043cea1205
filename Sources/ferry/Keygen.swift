import ArgumentParser
import FerryEncryption
import FerrySystem

extension Ferry {
    struct Keygen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "keygen",
            abstract: "Write a new random key for an encrypted remote (mode 0600).",
            discussion: """
                Never overwrites a file. Name the file in a remote's `encryption: { key_file: PATH }`; \
                keep a copy somewhere safe: without it, the remote's files cannot be read. See docs/encryption.md.
                """)

        @Argument(help: "Where to write the key.")
        var path: String

        func run() async throws {
            let target = LocalFileSystem.absolute(path, relativeTo: LocalFileSystem.currentDirectory)
            do {
                try MasterKey.generate(at: target)
            } catch {
                throw CommandFailure.usage("cannot write the key to \(target): \(error.description)")
            }
            StandardStreams.output("wrote a new key to \(target) (mode 0600); keep a copy: without it the remote cannot be read")
        }
    }
}
