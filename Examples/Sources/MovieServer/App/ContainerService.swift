import ServiceLifecycle
import Strata

/// Keeps a container open while the server runs, and closes it once the server has stopped.
///
/// Listed before the HTTP server among the application's services, it is shut down after it:
/// the last request has been answered (and every live stream ended) before the stores close.
struct ContainerService: Service, CustomStringConvertible {
    let container: PersistentContainer

    var description: String { "ContainerService(\(container.name))" }

    func run() async throws {
        // Returns at graceful shutdown, or throws when the service group is cancelled.
        try? await gracefulShutdown()
        try container.close()
    }
}
