import Foundation
import Hummingbird
import KioskCore
import Logging
import ServiceLifecycle
import Synchronization
import Testing

/// A merchant's notification endpoint for tests of `kiosk serve` processes: a small server on 127.0.0.1 and a free
/// port that records the `notificationUUID` of every `signedPayload` POSTed to `/notifications` and answers 200.
/// (The store's own tests use `NotificationReceiver`, which asks an in-process store to deliver; these stores are
/// other processes, so a test waits for what they send.)
final class NotificationSink: Sendable {
    /// Where the app's notification URL should point.
    let url: String
    private let received = Mutex<[String]>([])

    fileprivate init(url: String) {
        self.url = url
    }

    /// The `notificationUUID` of every notification received, in arrival order, duplicates included.
    var uuids: [String] { received.withLock { $0 } }

    fileprivate func record(_ uuid: String) {
        received.withLock { $0.append(uuid) }
    }

    /// The `notificationUUID` inside a `signedPayload` (its JWS payload; this sink counts, the store's own tests
    /// check signatures).
    fileprivate static func uuid(ofBody body: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let jws = object["signedPayload"] as? String
        else { return nil }
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var base64 = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let payload = Data(base64Encoded: base64),
            let claims = try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
        else { return nil }
        return claims["notificationUUID"] as? String
    }
}

/// Runs `body` with a ``NotificationSink``; a POST whose body holds no notification answers 400 (and is not
/// recorded), so a store sending something else shows up as its failed attempt. Given the store's `clock`, the sink
/// also answers `POST /clock?seconds=N` by advancing it: the hand a browser test needs on time the store sees.
func withNotificationSink<T: Sendable>(
    advancing clock: ManualClock? = nil, _ body: @Sendable (NotificationSink) async throws -> T
) async throws -> T {
    var logger = Logger(label: "notification-sink")
    logger.logLevel = .critical
    let sinks = Mutex<NotificationSink?>(nil)
    let router = Router()
    router.post("notifications") { request, _ -> Response in
        let bytes = try await request.body.collect(upTo: 1024 * 1024)
        guard let sink = sinks.withLock({ $0 }), let uuid = NotificationSink.uuid(ofBody: Data(bytes.readableBytesView))
        else {
            return Response(status: .badRequest)
        }
        sink.record(uuid)
        return Response(status: .ok)
    }
    if let clock {
        router.post("clock") { request, _ -> Response in
            guard let seconds = request.uri.queryParameters.get("seconds").flatMap(Int.init), seconds >= 0 else {
                return Response(status: .badRequest)
            }
            clock.advance(by: TimeInterval(seconds))
            return Response(status: .ok)
        }
    }
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let application = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        }, logger: logger)
    let group = ServiceGroup(
        configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next(), "the notification sink did not start")
        let sink = NotificationSink(url: "http://127.0.0.1:\(port)/notifications")
        sinks.withLock { $0 = sink }
        do {
            let result = try await body(sink)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return result
        } catch {
            await group.triggerGracefulShutdown()
            try? await tasks.waitForAll()
            throw error
        }
    }
}
