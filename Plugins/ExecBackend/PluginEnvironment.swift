import Foundation

/// The environment a plugin process starts with: what any program needs to run (the
/// search path, home, locale, time zone, temporary folder, proxies and CA bundles), plus
/// the variables its own remote names, and nothing else. A plugin used to inherit Ferry's
/// whole environment, so every remote's secret (`password_env: FERRY_NAS_PASSWORD`, a
/// cloud token) reached every plugin.
///
/// A remote names variables two ways: the value of any option whose key ends in `_env`
/// (`password_env: NAS_PASSWORD`, `token_env`, a plugin's own `secret_env`), and
/// `pass_env`, a comma- or space-separated list of names, where `NAME_*` stands for every
/// variable starting with `NAME_` (`pass_env: AWS_*`).
public enum PluginEnvironment {
    /// Passed to every plugin: nothing in them is a secret of one remote.
    static let baseNames: Set<String> = [
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
        "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
        "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE",
        "http_proxy", "https_proxy", "no_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    ]
    /// Prefixes passed to every plugin (the locale's categories).
    static let basePrefixes = ["LC_"]

    /// The option that lists extra variables; Ferry's own, not passed to the plugin.
    public static let passOption = "pass_env"

    /// The base set, for a plugin run without a remote (`ferry plugins`, `plugin-test`).
    public static func base(from environment: [String: String]) -> [String: String] {
        environment.filter { name, _ in baseNames.contains(name) || basePrefixes.contains { name.hasPrefix($0) } }
    }

    /// The base set plus what `options` (a remote's, as in config.yml) name.
    public static func forRemote(options: [String: String], from environment: [String: String]) -> [String: String] {
        var result = base(from: environment)
        var names: Set<String> = []
        var prefixes: [String] = []
        for (key, value) in options where key.hasSuffix("_env") {
            names.insert(value.trimmingCharacters(in: .whitespaces))
        }
        for item in (options[passOption] ?? "").split(whereSeparator: { $0 == "," || $0 == " " }) {
            if item.hasSuffix("*") {
                prefixes.append(String(item.dropLast()))
            } else {
                names.insert(String(item))
            }
        }
        for (name, value) in environment
            where names.contains(name) || prefixes.contains(where: { !$0.isEmpty && name.hasPrefix($0) }) {
            result[name] = value
        }
        return result
    }
}
