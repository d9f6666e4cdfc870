import AsyncHTTPClient
import KioskSigning
import ServiceLifecycle
import X509

/// The HTTP client the store calls out with (notifications to the apps' servers): the shared one, or, when the
/// store was given roots to trust (the Kiosk TLS root of a merchant served over HTTPS), one of its own that trusts
/// them besides the system's, shut down when the store stops.
struct OutboundHTTPClient: Service {
    let client: HTTPClient
    private let owned: Bool

    init(trusting roots: [Certificate]) throws {
        guard !roots.isEmpty else {
            client = .shared
            owned = false
            return
        }
        var configuration = HTTPClient.Configuration()
        try configuration.trust(roots)
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        owned = true
    }

    func run() async throws {
        try? await gracefulShutdown()
        try await shutdown()
    }

    /// Shuts an own client down (the shared one stays).
    func shutdown() async throws {
        if owned { try await client.shutdown() }
    }
}
