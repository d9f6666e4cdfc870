import AsyncHTTPClient
import Foundation
import KioskCore
import KioskSigning
import KioskStorage
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// What a notification says, beyond the app and environment it is for.
public struct NotificationContent: Sendable {
    /// Apple's `notificationType` (`SUBSCRIBED`, `RENEWAL_EXTENDED`, `TEST`, …).
    public var type: String
    public var subtype: String?
    /// The transaction it is about; its JWS goes into `data.signedTransactionInfo`.
    public var transaction: StoreTransaction?
    public var signedRenewalInfo: String?
    /// Subscription status 1…5.
    public var status: Int?
    /// For `RENEWAL_EXTENSION` / `SUMMARY`: sent instead of `data`.
    public var summary: NotificationSummary?

    public init(
        type: String, subtype: String? = nil, transaction: StoreTransaction? = nil, signedRenewalInfo: String? = nil,
        status: Int? = nil, summary: NotificationSummary? = nil
    ) {
        self.type = type
        self.subtype = subtype
        self.transaction = transaction
        self.signedRenewalInfo = signedRenewalInfo
        self.status = status
        self.summary = summary
    }
}

/// App Store Server Notifications V2, as an outbox.
///
/// ``create(_:app:environment:testToken:now:in:)`` signs a notification and inserts it, pending, in the database
/// transaction of the change it reports, so a notification exists exactly when its change does. After that
/// transaction commits, ``deliver(_:)`` hands it to this service, which POSTs `{"signedPayload":"…"}` to each of
/// the app's URLs for the environment off the request's path: an answer of 200–206 within five seconds is a
/// success. Every attempt is recorded with Apple's `sendAttemptResult`; failures are logged and stay in the
/// notification history (`onlyFailures`). Each notification gets one attempt now; retries come later, from
/// `next_attempt_at`.
public struct NotificationService: Service {
    let database: any KioskDatabase
    /// Each notification's attempts are timed by its environment's clock.
    let clocks: StoreClocks
    let signing: StoreSigning
    let logger: Logger
    private let due: AsyncStream<String>
    private let dueContinuation: AsyncStream<String>.Continuation

    /// How long an app's server has to answer a notification.
    static let timeout: TimeAmount = .seconds(5)
    /// `bundleVersion` in `data`: Kiosk does not know the installed build (as in receipts).
    static let bundleVersion = PurchaseService.applicationVersion

    public init(database: any KioskDatabase, clocks: StoreClocks, signing: StoreSigning, logger: Logger) {
        self.database = database
        self.clocks = clocks
        self.signing = signing
        self.logger = logger
        (due, dueContinuation) = AsyncStream.makeStream(of: String.self)
    }

    /// Signs a notification and inserts it as pending, in `tx`: the database transaction of the change it
    /// reports. Pass the result to ``deliver(_:)`` once `tx` committed.
    public func create(
        _ content: NotificationContent, app: App, environment: StoreEnvironment, testToken: String? = nil, now: Date,
        in tx: any StorageTransaction
    ) async throws -> ServerNotification {
        let uuid = UUID().uuidString.lowercased()
        let data: NotificationData? =
            if content.summary == nil {
                NotificationData(
                    appAppleId: app.id, bundleId: app.bundleId,
                    bundleVersion: content.transaction == nil ? nil : Self.bundleVersion,
                    environment: environment.appleName, signedTransactionInfo: content.transaction?.signedTransaction,
                    signedRenewalInfo: content.signedRenewalInfo, status: content.status)
            } else { nil }
        let payload = NotificationPayload(
            notificationType: content.type, subtype: content.subtype, notificationUUID: uuid,
            signedDate: now.millisecondsSince1970, data: data, summary: content.summary)
        let notification = ServerNotification(
            uuid: uuid, environment: environment, appId: app.id, notificationType: content.type,
            subtype: content.subtype, transactionId: content.transaction?.id,
            originalTransactionId: content.transaction?.originalTransactionId,
            signedPayload: try signing.sign(payload, environment: environment), testToken: testToken,
            state: .pending, createdAt: now)
        try await tx.insertNotification(notification)
        return notification
    }

    /// Queues committed notifications for delivery; returns at once.
    public func deliver(_ notifications: [ServerNotification]) {
        for notification in notifications { dueContinuation.yield(notification.uuid) }
    }

    /// Delivers what ``deliver(_:)`` queues, each notification concurrently, until the store shuts down; then
    /// waits for deliveries under way.
    public func run() async throws {
        await withDiscardingTaskGroup { group in
            for await uuid in due.cancelOnGracefulShutdown() {
                group.addTask { await attempt(uuid) }
            }
        }
    }

    /// Sends one notification to every URL its app has for its environment and records how it went.
    func attempt(_ uuid: String) async {
        do {
            let found = try await database.transaction { tx -> (ServerNotification, App, [NotificationAttempt])? in
                guard let notification = try await tx.notification(uuid: uuid),
                    let app = try await tx.app(id: notification.appId)
                else { return nil }
                return (notification, app, try await tx.notificationAttempts(uuids: [uuid]))
            }
            guard let (notification, app, earlier) = found, notification.state == .pending else { return }
            let urls = app.notificationURLs(for: notification.environment)
            guard !urls.isEmpty else {
                try await database.transaction { tx in
                    try await tx.updateNotificationState(uuid: uuid, state: .unconfigured, nextAttemptAt: nil)
                }
                logger.debug(
                    "Notification not sent: the app has no notification URL for the environment",
                    metadata: ["uuid": "\(uuid)", "bundleId": "\(app.bundleId)",
                               "environment": "\(notification.environment.rawValue)"])
                return
            }
            var attempts: [NotificationAttempt] = []
            for url in urls {
                let (result, status) = await post(notification.signedPayload, to: url)
                attempts.append(
                    NotificationAttempt(
                        notificationUUID: uuid, attempt: earlier.filter { $0.url == url }.count + 1, url: url,
                        attemptedAt: clocks.now(notification.environment), result: result, httpStatus: status))
            }
            let state: ServerNotification.State =
                attempts.allSatisfy { $0.result == .success } ? .delivered : .failed
            try await database.transaction { [attempts] tx in
                for attempt in attempts { try await tx.insertNotificationAttempt(attempt) }
                try await tx.updateNotificationState(uuid: uuid, state: state, nextAttemptAt: nil)
            }
            for failed in attempts where failed.result != .success {
                logger.warning(
                    "Notification delivery failed",
                    metadata: ["uuid": "\(uuid)", "type": "\(notification.notificationType)", "url": "\(failed.url)",
                               "result": "\(failed.result.rawValue)", "httpStatus": "\(failed.httpStatus.map(String.init) ?? "-")"])
            }
        } catch {
            logger.error(
                "Notification delivery could not be recorded; it stays pending",
                metadata: ["uuid": "\(uuid)", "error": "\(error)"])
        }
    }

    /// POSTs `{"signedPayload":"…"}` to `url`; returns Apple's `sendAttemptResult` and the HTTP status, if any.
    private func post(_ signedPayload: String, to url: String) async -> (NotificationAttempt.Result, Int?) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        let body = (try? JSONEncoder().encode(["signedPayload": signedPayload])) ?? Data()
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await HTTPClient.shared.execute(request, deadline: .now() + Self.timeout)
            for try await _ in response.body {}
            let status = Int(response.status.code)
            return ((200...206).contains(status) ? .success : .unsuccessfulHTTPResponseCode, status)
        } catch {
            return (Self.result(for: error), nil)
        }
    }

    /// Apple's name for why a POST failed.
    static func result(for error: any Error) -> NotificationAttempt.Result {
        switch error {
        case let error as HTTPClientError:
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout: .timedOut
            case .remoteConnectionClosed: .prematureClose
            case .redirectCycleDetected, .redirectLimitReached: .circularRedirect
            case .invalidURL, .emptyHost, .emptyScheme: .other
            default: .invalidResponse
            }
        case ChannelError.connectTimeout: .timedOut
        case is IOError, is ChannelError: .noResponse
        case is HTTPParserError: .invalidResponse
        default: String(reflecting: type(of: error)).contains("NIOSSL") ? .tlsIssue : .other
        }
    }
}
