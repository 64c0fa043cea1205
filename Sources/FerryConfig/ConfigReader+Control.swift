import FerryPluginAPI
import Yams

/// `daemon:` (the control API) and `history:` (the run history).
extension ConfigReader {
    mutating func readControl(_ node: Node) throws(ConfigError) {
        for entry in try mapping(node, key: "daemon", allowed: Self.keys("daemon")) {
            let key = "daemon." + entry.key
            switch entry.key {
            case "listen":
                let text = try string(entry.value, key: key)
                guard ListenAddress(text) != nil else {
                    throw error(entry.value, key, "expected HOST:PORT such as 127.0.0.1:8384 or [::1]:8384, found '\(text)'")
                }
                config.control.listen = text
            case "api_key_file": config.control.apiKeyFile = try path(entry.value, key: key)
            case "tls_certificate": config.control.tlsCertificate = try path(entry.value, key: key)
            case "tls_key": config.control.tlsKey = try path(entry.value, key: key)
            case "allow_non_loopback": config.control.allowNonLoopback = try boolean(entry.value, key: key)
            case "allowed_hosts":
                let nodes: [Node]
                switch entry.value {
                case let .sequence(sequence): nodes = Array(sequence)
                default: nodes = [entry.value]
                }
                var hosts: [String] = []
                for host in nodes { hosts.append(try string(host, key: key).lowercased()) }
                config.control.allowedHosts = hosts
            default: break
            }
        }
        if (config.control.tlsCertificate == nil) != (config.control.tlsKey == nil) {
            throw error(node, "daemon", "give both tls_certificate and tls_key, or neither")
        }
        if let text = config.control.listen, let address = ListenAddress(text), !address.isLoopback {
            guard config.control.allowNonLoopback else {
                throw error(node, "daemon.listen", "\(text) is reachable from other machines; set allow_non_loopback: true to mean it (with tls_certificate and tls_key)")
            }
            guard config.control.tlsCertificate != nil else {
                throw error(node, "daemon.listen", "an address other than loopback needs TLS: set tls_certificate and tls_key")
            }
        }
    }

    mutating func readHistory(_ node: Node) throws(ConfigError) {
        for entry in try mapping(node, key: "history", allowed: Self.keys("history")) {
            let key = "history." + entry.key
            switch entry.key {
            case "keep":
                let value = try duration(entry.value, key: key)
                guard value >= .seconds(3600) else { throw error(entry.value, key, "keep the history at least 1h") }
                config.history.keep = value
            case "offline_alert":
                let text = try string(entry.value, key: key)
                let number = text.hasSuffix("%") ? Double(text.dropLast()).map { $0 / 100 } : Double(text)
                guard let share = number, (0...1).contains(share) else {
                    throw error(entry.value, key, "expected a share such as 10% or 0.1, found '\(text)'")
                }
                config.history.offlineAlert = share
            default: break
            }
        }
    }
}
