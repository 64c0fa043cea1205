import ArgumentParser
import FerryCore
import FerryPluginAPI
import FerrySystem
import Foundation

extension Ferry {
    struct Init: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init",
            abstract: "Write a commented starting config.yml.",
            discussion: """
                Writes PATH (default ./config.yml; --config PATH is the same) and never overwrites a file. \
                Edit its remote and folder, then try `ferry push --dry-run`. docs/config.md lists every key.
                """)

        @Argument(help: "Where to write it (default: ./config.yml).")
        var path: String?

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let target = LocalFileSystem.absolute(path ?? global.config ?? "config.yml",
                                                  relativeTo: LocalFileSystem.currentDirectory)
            guard (try? LocalFileSystem.metadataFollowingLinks(target)) == nil else {
                throw CommandFailure.usage("\(target) already exists; edit it, or give another path: ferry init PATH")
            }
            do {
                try Data(ConfigTemplate.text.utf8).write(to: URL(fileURLWithPath: target), options: .withoutOverwriting)
            } catch {
                throw CommandFailure.runtime("cannot write \(target): \(error.localizedDescription)")
            }
            StandardStreams.output("wrote \(target); edit the remote and the folder in it, then: ferry push --dry-run")
        }
    }
}

/// What `ferry init` writes: a small working config with every section a person starts
/// with, commented. docs/config.md has the rest.
enum ConfigTemplate {
    static let text = """
        # Ferry's configuration. Every key is described in docs/config.md (`man ferry` too).
        # Relative paths are relative to this file's folder. Sizes: 512k, 4M, 1G.
        # Durations: 500ms, 30s, 10m, 4h, 1d. Unknown keys are errors, so typos show.

        # Where Ferry keeps its journal. Without this: ~/.local/state/ferry.
        # state:
        #   path: ~/.local/state/ferry

        # Remotes: named places files go to (`ferry plugins` lists the types).
        remotes:
          # A folder on this machine: another disk, a mounted NAS share.
          backup:
            type: local
            path: ~/ferry-backup
          # A WebDAV server. Passwords never go in this file: name an environment
          # variable (password_env) or a file of mode 0600 (password_file).
          # nas:
          #   type: webdav
          #   url: https://nas.local/dav/photos
          #   user: me
          #   password_env: NAS_PASSWORD

        # Folders: a local folder paired with a place on a remote.
        folders:
          photos:
            path: ~/Pictures
            remote: backup          # a name under remotes:
            remote_path: photos     # where on the remote (default: its root)
            # push: local → remote. pull: remote → local. sync: both ways (deletions go
            # to a trash folder; conflicts are kept as both versions by default).
            mode: push

        # Limits on transfers (--transfers and --bwlimit override them for one run).
        transfers:
          max: 4                    # transfers at once
          bandwidth: off            # e.g. 10M for 10 MiB/s
          max_delete: 50%           # a run may delete at most this share of a side

        # Retries of transient failures, and how long a push waits for a remote that is down.
        retry:
          attempts: 5
          offline_wait: 10m

        # ferry watch / ferry daemon: a file is sent once it has been quiet this long.
        watch:
          quiet_period: 3s

        # Runs the daemon starts by itself.
        # schedule:
        #   - every: 4h
        #     run: push photos

        """
}
