import ArgumentParser
import FerryControl
import FerryCore
import Foundation

extension Ferry {
    struct APIKeyCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "api-key",
            abstract: "Add, list and revoke the control API's keys, each with a role.",
            discussion: """
                Keys are needed on the daemon's TCP address (`daemon.listen`); the Unix socket needs none. \
                Roles: read (status, files, history, events, metrics, the page), control (also run, pause, \
                resume, rescan, retry, resolve), admin (also reload). The first key (`api-key` in the state \
                folder) is admin. Keys count at once: no reload is needed. See docs/api.md.
                """,
            subcommands: [Add.self, List.self, Revoke.self])

        static func keyring(_ global: GlobalOptions) throws -> APIKeyring {
            let context = try CommandContext.load(global)
            return APIKeyring(stateDirectory: context.stateDirectory, primaryFile: context.config.control.apiKeyFile)
        }

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Make a key; it is printed once (store it where the client reads it).")

            @OptionGroup var global: GlobalOptions

            @Argument(help: "The key's name: letters, digits, '.', '_', '-' (e.g. grafana).")
            var name: String

            @Option(help: "read, control or admin.")
            var role: String = "read"

            func run() async throws {
                guard let role = APIRole(rawValue: role) else {
                    throw CommandFailure.usage("--role must be read, control or admin, not '\(role)'")
                }
                let secret: String
                do {
                    secret = try APIKeyCommand.keyring(global).add(name: name, role: role)
                } catch let error as ControlServerError {
                    throw CommandFailure.usage(error.message)
                }
                if global.json {
                    var object = JSONObject()
                    object.add("name", name)
                    object.add("role", role.rawValue)
                    object.add("key", secret)
                    StandardStreams.output(object.text)
                } else {
                    StandardStreams.output(secret)
                    StandardStreams.error("key \(name) (\(role.rawValue)) made; it is not shown again. Send it as X-API-Key or Authorization: Bearer")
                }
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "The keys, their roles and when they were made (never the keys).")

            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let (keys, problems) = try APIKeyCommand.keyring(global).keys()
                if global.json {
                    var object = JSONObject()
                    object.add("keys", keys.map { key in
                        var entry = JSONObject()
                        entry.add("name", key.name)
                        entry.add("role", key.role.rawValue)
                        entry.add("created", Date(timeIntervalSince1970: key.created).ISO8601Format())
                        return entry
                    })
                    object.add("problems", problems)
                    StandardStreams.output(object.text)
                } else {
                    if keys.isEmpty { StandardStreams.output("no keys yet: the daemon makes the first when it listens on TCP") }
                    for key in keys {
                        let made = StatusWords.time(Date(timeIntervalSince1970: key.created))
                        StandardStreams.output("\(key.name)  \(key.role.rawValue)  made \(made)")
                    }
                    for problem in problems { StandardStreams.error(problem) }
                }
            }
        }

        struct Revoke: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove a key; requests with it are refused from now on.")

            @OptionGroup var global: GlobalOptions

            @Argument(help: "The key's name.")
            var name: String

            func run() async throws {
                let removed: Bool
                do {
                    removed = try APIKeyCommand.keyring(global).revoke(name: name)
                } catch let error as ControlServerError {
                    throw CommandFailure.usage(error.message)
                }
                guard removed else { throw CommandFailure.usage("no key named \(name); ferry api-key list shows them") }
                StandardStreams.output("key \(name) revoked")
            }
        }
    }
}
