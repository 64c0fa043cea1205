import FerryPluginAPI
import HTTPBackend
import LocalBackend
import WebDAVBackend

/// The backend plugins compiled into this ferry binary.
enum BuiltinBackends {
    static var registry: BackendRegistry {
        BackendRegistry([LocalBackend.plugin, WebDAVBackend.plugin, HTTPBackend.plugin])
    }
}
