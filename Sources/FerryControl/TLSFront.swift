import FerryCore
import Logging

/// TLS for a `daemon.listen` address other than loopback. Placeholder until the
/// terminator lands: refuses to serve rather than serve in the clear.
struct TLSFront: Sendable {
    let address: ListenAddress
    let certificate: String
    let privateKey: String
    let stateDirectory: String
    let handler: ControlHandler
    let logger: Logger

    func run() async throws {
        throw ControlServerError("TLS is not available in this build; serve on loopback and use a TLS proxy")
    }
}
