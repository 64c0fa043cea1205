import ArgumentParser
import FerryCore
import FerryPluginAPI

/// Options every command takes: where the config and the journal are, output format, logging.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The config file (default: ./config.yml, then $XDG_CONFIG_HOME/ferry/config.yml).", valueName: "path"))
    var config: String?

    @Option(name: .long, help: ArgumentHelp("Where the journal lives for this run (default: state.path in the config, else $XDG_STATE_HOME/ferry).", valueName: "dir"))
    var state: String?

    @Flag(name: .long, help: "Print JSON lines on stdout, for scripts.")
    var json = false

    @Flag(name: .shortAndLong, help: "More detail: -v lists each file, -vv adds debug logs on stderr.")
    var verbose: Int
}

/// `--delete`, for the one-way commands only: a two-way sync always carries deletions over
/// (into the trash), so its help does not offer it.
struct MirrorOption: ParsableArguments {
    @Flag(name: .long, help: "Delete files on the target that the source lacks (limited by --max-delete).")
    var delete = false
}

/// Options of the commands that move files.
struct TransferOptions: ParsableArguments {
    @Flag(name: .long, help: "Print the plan and change nothing.")
    var dryRun = false

    @Option(name: .long, help: ArgumentHelp("Most transfers at once (default: transfers.max in the config).", valueName: "n"))
    var transfers: Int?

    @Option(name: .long, help: ArgumentHelp("Bandwidth limit in bytes per second, e.g. 10M; 0 for none (default: transfers.bandwidth).", valueName: "rate"))
    var bwlimit: String?

    @Option(name: .long, help: ArgumentHelp("With --delete, or in a sync: most files to delete (default: transfers.max_delete of the target's files).", valueName: "n"))
    var maxDelete: Int?

    @Flag(name: .long, help: "With --delete, or in a sync: skip the deletion limit.")
    var forceDelete = false

    @Flag(name: .long, help: "Go on with a run that was held because it would change too much (most files replaced or deleted, or changed files that look encrypted).")
    var acceptChanges = false

    @Flag(name: .long, help: "pull and sync: on a server that hides names starting with '.', take what it shows without failing for the rest.")
    var ignoreHiddenNames = false

    @Flag(name: .long, help: "push: list the whole remote, even when the journal's view of it is recent enough to trust (remote_check); and probe a WebDAV server again rather than trust what the last day's probe found.")
    var full = false

    @Flag(name: .long, help: "Run even when the folder's run conditions (when: network, power, battery) do not hold.")
    var now = false

    func validate() throws {
        if let transfers, !(1...256).contains(transfers) {
            throw ValidationError("--transfers must be from 1 to 256")
        }
        if let maxDelete, maxDelete < 0 {
            throw ValidationError("--max-delete must not be negative")
        }
    }

    /// push and pull delete only with --delete (`mirror`), so the deletion limits go with
    /// it; a two-way sync always carries deletions over and takes the limits alone.
    func validateDeleteLimits(mirror: Bool) throws {
        if (maxDelete != nil || forceDelete) && !mirror {
            throw ValidationError("--max-delete and --force-delete go with --delete")
        }
    }
}

extension TransferOptions {
    /// The run options these flags give (`--dry-run` included); `mirror` is push's and
    /// pull's `--delete`.
    func runOptions(mirror: Bool) throws -> RunOptions {
        var options = RunOptions()
        options.dryRun = dryRun
        options.mirror = mirror
        options.maxDeletes = maxDelete
        options.forceDeletes = forceDelete
        options.acceptChanges = acceptChanges
        options.ignoresHiddenNames = ignoreHiddenNames
        options.fullListing = full
        options.transfers = transfers
        if let text = bwlimit {
            guard let rate = Quantity.bytes(text) else {
                throw CommandFailure.usage("--bwlimit takes a rate such as 500k, 10M or 0, not '\(text)'")
            }
            options.bandwidthLimit = rate
        }
        return options
    }
}
