import ExecBackend
import FerryPluginAPI
import HTTPBackend
import LocalBackend
import S3Backend
import WebDAVBackend

/// The backend plugins compiled into this ferry binary, and `exec:NAME` for external ones.
enum BuiltinBackends {
    static var registry: BackendRegistry {
        BackendRegistry([LocalBackend.plugin, WebDAVBackend.plugin, HTTPBackend.plugin, S3Backend.plugin], families: [ExecBackend.family])
    }
}
