import KioskTestSupport
import KioskTesting

/// Runs the `kiosk` CLI against `store` (its URL and admin token appended), as a user types it.
func kiosk(_ store: TestStore, _ arguments: String...) async throws -> KioskProcess.Result {
    try await kiosk(store, arguments)
}

/// Runs the `kiosk` CLI against `store` with `arguments` (its URL and admin token appended).
func kiosk(_ store: TestStore, _ arguments: [String]) async throws -> KioskProcess.Result {
    try await KioskProcess.run(arguments + ["--server", store.baseURL, "--token", store.adminToken])
}
