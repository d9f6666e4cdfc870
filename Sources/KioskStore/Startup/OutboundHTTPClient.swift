import AsyncHTTPClient
import KioskSigning
import ServiceLifecycle
import X509

/// The HTTP client the store calls out with (notifications and real-time requests to the apps' servers), its own,
/// shut down when the store stops. It follows no redirect, as Apple does not: a followed 3xx would turn the POST into
/// a GET to an address no one configured. With roots to trust (the Kiosk TLS root of a merchant served over HTTPS),
/// it trusts them besides the system's.
struct OutboundHTTPClient: Service {
    let client: HTTPClient

    init(trusting roots: [Certificate]) throws {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        if !roots.isEmpty { try configuration.trust(roots) }
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func run() async throws {
        try? await gracefulShutdown()
        try await shutdown()
    }

    func shutdown() async throws { try await client.shutdown() }
}
