import KioskStorage
import ServiceLifecycle

/// Keeps the database open while the store runs and closes it after the HTTP server has stopped
/// (services stop in reverse order, and this one is added before the server).
struct DatabaseLifecycleService: Service {
    let database: any KioskDatabase

    func run() async throws {
        try? await gracefulShutdown()
        try await database.close()
    }
}
