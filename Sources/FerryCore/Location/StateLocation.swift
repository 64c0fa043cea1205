import FerryConfig
import FerryPluginAPI
import FerrySystem

/// Where the journal and locks live: `--state DIR`, else `state.path` from config.yml,
/// else `$XDG_STATE_HOME/ferry`, else `~/.local/state/ferry`.
public enum StateLocation {
    public static func directory(commandLine: String?, config: Config, environment: [String: String],
                                 currentDirectory: String) -> String {
        if let commandLine { return LocalFileSystem.absolute(commandLine, relativeTo: currentDirectory) }
        if let configured = config.statePath { return configured }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            return LocalFileSystem.join(xdg, "ferry")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? currentDirectory
        return LocalFileSystem.join(home, ".local/state/ferry")
    }
}
