import Foundation
import Hummingbird
import KioskCore
import KioskSigning
import KioskTesting
import Logging
import ServiceLifecycle
import Testing
import X509

/// A merchant's notification endpoint for tests: a small Hummingbird server on 127.0.0.1 and a free port that
/// records every `signedPayload` POSTed to `/notifications` and answers `status`; `/moved` answers a 307 to
/// `/notifications`; `/slow` records the payload too but answers only when the receiver stops.
struct NotificationReceiver: Sendable {
    let url: String
    /// The URL that redirects to ``url``.
    var movedURL: String { url.replacingOccurrences(of: "/notifications", with: "/moved") }
    /// The URL that takes each notification and never answers while the test runs: the store's deadline decides.
    var slowURL: String { url.replacingOccurrences(of: "/notifications", with: "/slow") }
    private let received: Received

    /// What arrived, in order.
    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var payloads: [String] = []
        private var contentTypes: [String] = []
        /// How many of `payloads` Apple's verifier has seen.
        private var checked = 0

        func append(_ payload: String, contentType: String) {
            lock.withLock {
                payloads.append(payload)
                contentTypes.append(contentType)
            }
        }

        var all: [String] { lock.withLock { payloads } }

        /// The payloads Apple's verifier has not seen yet, marked as seen.
        func takeUnchecked() -> [String] {
            lock.withLock {
                defer { checked = payloads.count }
                return Array(payloads[checked...])
            }
        }

        private var stopped = false
        /// Whether the receiver stopped (a held answer may go now).
        var isStopped: Bool { lock.withLock { stopped } }
        func stop() { lock.withLock { stopped = true } }

        func removeAll() {
            lock.withLock {
                payloads.removeAll()
                contentTypes.removeAll()
                checked = 0
            }
        }
        var allContentTypes: [String] { lock.withLock { contentTypes } }
    }

    /// The signed payloads received so far.
    var payloads: [String] { received.all }
    var contentTypes: [String] { received.allContentTypes }

    /// Has `store` attempt every notification of `environment` that is due, waiting for attempts its background loop
    /// has under way, and answers everything this receiver got so far: what is delivered is then known, not waited for.
    /// Each payload not checked before goes through Apple's own verifier (``AppleVerifier``), nested transaction and
    /// renewal info included, and must decode to exactly what Kiosk signed.
    func payloads(
        from store: TestStore, _ environment: StoreEnvironment = .sandbox,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String] {
        await store.built.context.notifications.deliverDue(environment)
        let all = received.all
        let unchecked = received.takeUnchecked()
        try await AppleVerifier.expectAccepts(
            unchecked, kind: .notification, store: store, environment: environment, sourceLocation: sourceLocation)
        return all
    }

    /// Delivers what is due and checks it is the `count` notifications a test does not look at (a purchase's,
    /// before the life cycle it checks), then forgets everything received, so `payloads(from:)` answers only what
    /// comes later.
    func drain(_ count: Int, from store: TestStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let arrived = try await payloads(from: store, sourceLocation: sourceLocation)
        #expect(
            arrived.count == count, "expected \(count) notifications to drain, got \(arrived.count)",
            sourceLocation: sourceLocation)
        received.removeAll()
    }

    fileprivate init(url: String, received: Received) {
        self.url = url
        self.received = received
    }
}

private struct SignedPayloadBody: Decodable {
    var signedPayload: String
}

/// Runs `body` with a receiver answering `status` to every notification.
func withNotificationReceiver<T: Sendable>(
    status: HTTPResponse.Status = .ok, _ body: @Sendable (NotificationReceiver) async throws -> T
) async throws -> T {
    try await withNotificationReceiver(answering: { status }, body)
}

/// Runs `body` with a receiver answering each notification what `answering` says when it arrives.
func withNotificationReceiver<T: Sendable>(
    answering: @escaping @Sendable () -> HTTPResponse.Status, _ body: @Sendable (NotificationReceiver) async throws -> T
) async throws -> T {
    let received = NotificationReceiver.Received()
    let router = Router()
    router.post("notifications") { request, context -> Response in
        let decoded = try await request.decode(as: SignedPayloadBody.self, context: context)
        received.append(decoded.signedPayload, contentType: request.headers[.contentType] ?? "")
        return Response(status: answering())
    }
    router.post("slow") { request, context -> Response in
        let decoded = try await request.decode(as: SignedPayloadBody.self, context: context)
        received.append(decoded.signedPayload, contentType: request.headers[.contentType] ?? "")
        while !received.isStopped { try? await Task.sleep(for: .milliseconds(20)) }
        return Response(status: .ok)
    }
    // A URL that moved: a receiver that follows redirects would deliver here to /notifications.
    router.post("moved") { _, _ -> Response in
        Response(status: .temporaryRedirect, headers: [.location: "/notifications"])
    }
    var logger = Logger(label: "notification-receiver")
    logger.logLevel = .warning
    return try await withLoopbackServer(port: .ephemeral, logger: logger, name: "notification receiver") {
        port, onServerRunning in
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { await onServerRunning($0.localAddress?.port ?? 0) }, logger: logger)
        return ((), application)
    } _: { _, port in
        defer { received.stop() }
        return try await body(
            NotificationReceiver(url: "http://127.0.0.1:\(port)/notifications", received: received))
    }
}

/// Decodes the payload of a JWS after checking it against `root` (the store's root of its environment).
func verifiedPayload<T: Decodable>(_ jws: String, as type: T.Type, root: Certificate, clock: any KioskClock)
    async throws -> T
{
    let result = await JWSVerifier(rootCertificates: [root], clock: clock).verify(jws)
    let json = try #require(result.payloadJSON, "JWS did not verify: \(String(describing: result.failure))")
    return try JSONDecoder().decode(type, from: Data(json))
}
