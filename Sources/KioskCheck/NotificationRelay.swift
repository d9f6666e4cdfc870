import AsyncHTTPClient
import Foundation
import Hummingbird
import KioskCore
import KioskProtocol
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// What the relay does with a notification the store sends it.
enum RelayMode: String, Sendable {
    /// Passes it on and answers the store what the server answered.
    case forward
    /// Passes it on twice, one after the other (the same `notificationUUID`).
    case duplicate
    /// Passes it on twice at once.
    case concurrentDuplicate = "concurrent-duplicate"
    /// Answers the store 200 and keeps it until the story releases it (reordering, delay).
    case hold
    /// Answers the store 200 and never passes it on: lost on the way.
    case drop
    /// Answers the store 503 without passing it on: the server is down.
    case down
}

/// A notification the relay took from the store (or a forged one the kit made).
struct RelayedNotification: Sendable {
    var uuid: String
    var type: NotificationType
    var subtype: NotificationSubtype?
    /// The app account token of the transaction it carries, if any: whose story it belongs to.
    var appAccountToken: String?
    /// The app it is for (`data.bundleId`).
    var bundleId: String?
    /// The request body as the store sent it: `{"signedPayload": …}`.
    var body: Data
    /// The decoded JWS payload (not verified: the relay only reads it).
    var payload: Data
}

/// A loopback HTTP server the store delivers the app's sandbox notifications to during a check; it passes each on
/// to the developer's server as its ``RelayMode`` says, and records every answer and how long it took.
final class NotificationRelay: Sendable {
    private struct State {
        var defaultMode = RelayMode.forward
        var modes: [NotificationType: RelayMode] = [:]
        var received: [RelayedNotification] = []
        var held: [RelayedNotification] = []
        var deliveries: [Delivery] = []
        var url = ""
    }

    private let state = Mutex(State())
    private let target: String
    private let http: HTTPClient
    private let answerWithin: TimeAmount
    /// The app under check: a notification of another app that reaches the relay is passed on as a forgery.
    private let bundleId: String

    init(target: String, bundleId: String, http: HTTPClient, answerWithin: TimeAmount) {
        self.target = target
        self.bundleId = bundleId
        self.http = http
        self.answerWithin = answerWithin
    }

    /// How notifications of `types` (every type when nil) are handled from now on; `forward` for the rest.
    func set(_ mode: RelayMode, for types: Set<NotificationType>? = nil) {
        state.withLock {
            if let types {
                for type in types { $0.modes[type] = mode }
            } else {
                $0.defaultMode = mode
                $0.modes = [:]
            }
        }
    }

    /// Back to passing everything on; what was held is dropped.
    func reset(to mode: RelayMode = .forward) {
        state.withLock {
            $0.defaultMode = mode
            $0.modes = [:]
            $0.held = []
        }
    }

    /// Where the store sends notifications to the relay, while it serves.
    var url: String { state.withLock { $0.url } }

    /// Every notification taken from the store so far, in order of arrival.
    var received: [RelayedNotification] { state.withLock { $0.received } }

    /// Every POST to the server so far.
    var deliveries: [Delivery] { state.withLock { $0.deliveries } }

    /// Passes on what was held, in `order` of types (the rest after, as they came), and forgets it.
    func release(order: [NotificationType] = []) async {
        let held = state.withLock { state in
            defer { state.held = [] }
            return state.held
        }
        let ranked = held.enumerated().sorted { left, right in
            let leftRank = order.firstIndex(of: left.element.type) ?? order.count
            let rightRank = order.firstIndex(of: right.element.type) ?? order.count
            return (leftRank, left.offset) < (rightRank, right.offset)
        }
        for (_, notification) in ranked { _ = await post(notification, handling: "held, then released") }
    }

    /// Sends a notification the kit made (forged) straight to the server.
    func sendForged(_ body: Data, type: NotificationType, uuid: String, appAccountToken: String?) async -> Delivery {
        await post(
            RelayedNotification(
                uuid: uuid, type: type, subtype: nil, appAccountToken: appAccountToken, bundleId: bundleId, body: body,
                payload: Data()),
            handling: "forward", forged: true)
    }

    /// The store's POST: decide, pass on, answer.
    func take(_ body: Data) async -> HTTPResponse.Status {
        guard let notification = Self.read(body) else { return .badRequest }
        let mode = state.withLock { state -> RelayMode in
            state.received.append(notification)
            let mode = state.modes[notification.type] ?? state.defaultMode
            if mode == .hold { state.held.append(notification) }
            return mode
        }
        if notification.bundleId != bundleId {
            return Self.status(await post(notification, handling: "of another app", forged: true))
        }
        switch mode {
        case .forward:
            return Self.status(await post(notification, handling: mode.rawValue))
        case .duplicate:
            let first = await post(notification, handling: mode.rawValue)
            _ = await post(notification, handling: mode.rawValue)
            return Self.status(first)
        case .concurrentDuplicate:
            async let first = post(notification, handling: mode.rawValue)
            async let second = post(notification, handling: mode.rawValue)
            let answers = await [first, second]
            return Self.status(answers[0])
        case .hold, .drop:
            return .ok
        case .down:
            state.withLock {
                $0.deliveries.append(
                    Delivery(
                        notificationUUID: notification.uuid, type: notification.type, subtype: notification.subtype,
                        appAccountToken: notification.appAccountToken, status: nil, milliseconds: 0,
                        error: "the server was down (the relay answered the store 503)",
                        forged: false, handling: "down"))
            }
            return .serviceUnavailable
        }
    }

    private static func status(_ delivery: Delivery) -> HTTPResponse.Status {
        guard let status = delivery.status else { return .gatewayTimeout }
        return HTTPResponse.Status(code: status)
    }

    private func post(_ notification: RelayedNotification, handling: String, forged: Bool = false) async -> Delivery {
        var request = HTTPClientRequest(url: target)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: notification.body))
        let started = ContinuousClock.now
        var status: Int?
        var failure: String?
        do {
            let response = try await http.execute(request, timeout: answerWithin)
            _ = try await response.body.collect(upTo: 1 << 20)
            status = Int(response.status.code)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            failure = "no answer within \(answerWithin.nanoseconds / 1_000_000) ms"
        } catch {
            failure = "\(error)"
        }
        let elapsed = started.duration(to: .now)
        let milliseconds =
            Int(elapsed.components.seconds) * 1000 + Int(elapsed.components.attoseconds / 1_000_000_000_000_000)
        let delivery = Delivery(
            notificationUUID: notification.uuid, type: notification.type, subtype: notification.subtype,
            appAccountToken: notification.appAccountToken, status: status, milliseconds: milliseconds, error: failure,
            forged: forged, handling: handling)
        state.withLock { $0.deliveries.append(delivery) }
        return delivery
    }

    /// The notification's uuid, type and subtype, read from the JWS payload without verifying it.
    static func read(_ body: Data) -> RelayedNotification? {
        struct Body: Decodable { var signedPayload: String }
        struct Payload: Decodable {
            struct Content: Decodable {
                var signedTransactionInfo: String?
                var bundleId: String?
            }
            var notificationUUID: String
            var notificationType: NotificationType
            var subtype: NotificationSubtype?
            var data: Content?
        }
        struct Transaction: Decodable { var appAccountToken: String? }
        guard let signed = try? JSONDecoder().decode(Body.self, from: body),
            let payloadData = JWSPayload.decode(signed.signedPayload),
            let payload = try? JSONDecoder().decode(Payload.self, from: payloadData)
        else { return nil }
        let transaction = payload.data?.signedTransactionInfo.flatMap(JWSPayload.decode).flatMap {
            try? JSONDecoder().decode(Transaction.self, from: $0)
        }
        return RelayedNotification(
            uuid: payload.notificationUUID, type: payload.notificationType, subtype: payload.subtype,
            appAccountToken: transaction?.appAccountToken?.lowercased(), bundleId: payload.data?.bundleId, body: body,
            payload: payloadData)
    }

    /// Serves the relay on 127.0.0.1 (any free port) while `body` runs.
    func serve<T: Sendable>(_ body: @Sendable (_ url: String) async throws -> T) async throws -> T {
        let router = Router()
        router.post("notifications") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            return Response(status: await self.take(Data(bytes.readableBytesView)))
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "kiosk.check.relay")
        logger.logLevel = .critical
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            }, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await application.runService(gracefulShutdownSignals: []) }
            defer { group.cancelAll() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else {
                throw CheckError("The check's notification relay could not listen on 127.0.0.1.")
            }
            let url = "http://127.0.0.1:\(port)/notifications"
            state.withLock { $0.url = url }
            return try await body(url)
        }
    }
}

/// A check that could not run at all (the store or the check file), as opposed to a story that failed.
public struct CheckError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
