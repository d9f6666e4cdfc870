import AsyncHTTPClient
import Foundation
import KioskCore
import KioskSQL
import KioskSigning
import KioskStorage
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization

/// What a notification says, beyond the app and environment it is for.
public struct NotificationContent: Sendable {
    /// Apple's `notificationType` (`SUBSCRIBED`, `RENEWAL_EXTENDED`, `TEST`, …).
    public var type: NotificationType
    public var subtype: NotificationSubtype?
    /// The transaction it is about; its JWS goes into `data.signedTransactionInfo`.
    public var transaction: StoreTransaction?
    public var signedRenewalInfo: String?
    /// Subscription status 1…5.
    public var status: Int?
    /// For `RENEWAL_EXTENSION` / `SUMMARY`: sent instead of `data`.
    public var summary: NotificationSummary?
    /// For `CONSUMPTION_REQUEST`: why the customer asked for a refund (`UNINTENDED_PURCHASE`, …).
    public var consumptionRequestReason: String?
    /// For `RESCIND_CONSENT`: the customer's app transaction, signed into `appData`, which is sent instead of `data`.
    public var appTransaction: StoreAppTransaction?

    public init(
        type: NotificationType, subtype: NotificationSubtype? = nil, transaction: StoreTransaction? = nil,
        signedRenewalInfo: String? = nil,
        status: Int? = nil, summary: NotificationSummary? = nil, consumptionRequestReason: String? = nil,
        appTransaction: StoreAppTransaction? = nil
    ) {
        self.type = type
        self.subtype = subtype
        self.transaction = transaction
        self.signedRenewalInfo = signedRenewalInfo
        self.status = status
        self.summary = summary
        self.consumptionRequestReason = consumptionRequestReason
        self.appTransaction = appTransaction
    }
}

/// App Store Server Notifications V2, as an outbox.
///
/// ``create(_:app:environment:testToken:now:in:)`` makes a notification and inserts it, pending and due now, in
/// the database transaction of the change it reports, so a notification exists exactly when its change does.
/// After that transaction commits, ``deliver(_:)`` asks for its first attempt at once. An attempt signs the
/// notification's payload and POSTs `{"signedPayload":"…"}` to each of the app's URLs for the environment that has
/// not yet answered 200–206 within five seconds; every attempt is recorded with Apple's `sendAttemptResult`. A
/// notification that failed is retried 1, 12, 24, 48 and 72 hours after the previous attempt (`next_attempt_at`, on
/// its environment's clock; sandbox apps can turn retries off), then stays failed. A background loop delivers what is
/// due every second; ``deliverDue(_:)`` does so on demand.
public struct NotificationService: Service {
    let database: any KioskDatabase
    /// Each notification's attempts are timed by its environment's clock.
    let clocks: StoreClocks
    let signing: StoreSigning
    let metrics: StoreMetrics
    let logger: Logger
    /// POSTs the notifications (one that trusts the Kiosk TLS root when the store was given it).
    let http: HTTPClient
    /// Where notifications may go (`--outbound-urls`).
    let policy: OutboundURLPolicy
    private let due: AsyncStream<StoreEnvironment>
    private let dueContinuation: AsyncStream<StoreEnvironment>.Continuation
    /// One delivery round per environment at a time in this process, so ``deliverDue(_:)`` returns only after
    /// every due attempt, including one the background loop had started, is recorded.
    let rounds: [StoreEnvironment: AsyncSerialLock]
    /// Environments whose next round is already asked for and not yet started: one waiting round covers every request
    /// made before it starts, so a burst of commits asks for one round, not one each. (One task per request piled
    /// up behind the round lock under load: 5 KB of memory per purchase that was never given back while it lasted.)
    private let requested = RequestedRounds()

    /// How long an app's server has to answer a notification.
    static let timeout: TimeAmount = .seconds(5)
    /// How long a store process holds the notifications it claimed while it POSTs them (base clock); another
    /// replica may take them over after that, if the process died.
    static let lease: TimeInterval = 120
    /// How many due notifications one claim takes.
    static let claimLimit = 50
    /// `bundleVersion` in `data`: Kiosk does not know the installed build (as in receipts).
    static let bundleVersion = StoreLedger.applicationVersion

    public init(
        database: any KioskDatabase, clocks: StoreClocks, signing: StoreSigning, metrics: StoreMetrics,
        logger: Logger, http: HTTPClient = .shared, policy: OutboundURLPolicy = .any
    ) {
        self.database = database
        self.metrics = metrics
        self.clocks = clocks
        self.signing = signing
        self.logger = logger
        self.http = http
        self.policy = policy
        (due, dueContinuation) = AsyncStream.makeStream(of: StoreEnvironment.self)
        rounds = Dictionary(uniqueKeysWithValues: StoreEnvironment.allCases.map { ($0, AsyncSerialLock()) })
    }

    /// Makes a notification and inserts it as pending and due now (`unconfigured`, with nothing to attempt, when the
    /// app has no URL for the environment), in `tx`: the database transaction of the change it reports. Pass the
    /// result to ``deliver(_:)`` once `tx` committed. Its payload is fixed now and signed when it is sent or listed
    /// (``StoreSigning/sign(_:)``), not while the change's writer waits.
    public func create(
        _ content: NotificationContent, app: App, environment: StoreEnvironment, testToken: String? = nil, now: Date,
        in tx: any StorageTransaction
    ) async throws -> ServerNotification {
        let notification = try make(content, app: app, environment: environment, testToken: testToken, now: now)
        try await tx.insertNotification(notification)
        return notification
    }

    /// The notification ``create(_:app:environment:testToken:now:in:)`` inserts, not yet stored: for work that
    /// inserts many at once.
    func make(
        _ content: NotificationContent, app: App, environment: StoreEnvironment, testToken: String? = nil, now: Date
    ) throws -> ServerNotification {
        let uuid = UUID.timeOrdered(at: now).uuidString.lowercased()
        // With nowhere to send it, it is born `unconfigured`: a delivery round would only write that state later,
        // in a durable commit of its own (a second fsync per purchase when one client buys).
        let configured = !app.notificationURLs(for: environment).isEmpty
        let appData = try content.appTransaction.map { appTransaction in
            NotificationAppData(
                appAppleId: app.id, bundleId: app.bundleId, environment: environment.appleName,
                signedAppTransactionInfo: try signing.sign(
                    AppTransactionPayload(appTransaction, app: app, now: now), environment: environment))
        }
        let data: NotificationData? =
            if content.summary == nil, appData == nil {
                NotificationData(
                    appAppleId: app.id, bundleId: app.bundleId,
                    bundleVersion: content.transaction == nil ? nil : Self.bundleVersion,
                    environment: environment.appleName, signedTransactionInfo: content.transaction?.signedTransaction,
                    signedRenewalInfo: content.signedRenewalInfo, status: content.status,
                    consumptionRequestReason: content.consumptionRequestReason)
            } else { nil }
        let payload = NotificationPayload(
            notificationType: content.type, subtype: content.subtype, notificationUUID: uuid,
            signedDate: now.millisecondsSince1970, data: data, summary: content.summary, appData: appData)
        return ServerNotification(
            uuid: uuid, environment: environment, appId: app.id, notificationType: content.type,
            subtype: content.subtype, transactionId: content.transaction?.id,
            originalTransactionId: content.transaction?.originalTransactionId,
            payload: String(decoding: try JWSSigner.payloadJSON(payload), as: UTF8.self), testToken: testToken,
            state: configured ? .pending : .unconfigured, nextAttemptAt: configured ? now : nil, createdAt: now)
    }

    /// Asks for the first attempt of committed notifications that have somewhere to go; returns at once.
    public func deliver(_ notifications: [ServerNotification]) {
        for environment in Set(notifications.filter { $0.state == .pending }.map(\.environment)) {
            dueContinuation.yield(environment)
        }
    }

    /// Delivers what is due, when ``deliver(_:)`` asks and every second, until the store shuts down; then waits
    /// for deliveries under way.
    public func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask {
                while (try? await cancelWhenGracefulShutdown({ try await Task.sleep(for: .seconds(1)) })) != nil {
                    for environment in StoreEnvironment.allCases { dueContinuation.yield(environment) }
                }
                dueContinuation.finish()
            }
            for await environment in due.cancelOnGracefulShutdown() {
                guard requested.ask(environment) else { continue }
                group.addTask { await deliverDue(environment) }
            }
        }
    }

    /// Attempts now every notification of `environment` due by that environment's clock, retries that fall due
    /// meanwhile included, and returns when all are recorded. A sandbox attempt is recorded at the time it was
    /// scheduled for, so one the sandbox clock jumped past shows when it would have happened.
    public func deliverDue(_ environment: StoreEnvironment) async {
        let round = rounds[environment]!
        await round.acquire()
        defer { round.release() }
        // From here on this round claims whatever is due, so a request made after this line needs a round of its own.
        requested.started(environment)
        while true {
            let claimed: [ServerNotification]
            do {
                claimed = try await database.transaction { tx in
                    let now = clocks.base.now()
                    return try await tx.claimDueNotifications(
                        environment: environment, dueBy: clocks.now(environment), now: now,
                        leaseUntil: now.addingTimeInterval(Self.lease), limit: Self.claimLimit)
                }
            } catch {
                logger.error(
                    "Due notifications could not be claimed",
                    metadata: ["environment": "\(environment.rawValue)", "error": "\(error)"])
                return
            }
            if claimed.isEmpty { return }
            let deliveries: [Delivery]
            do {
                deliveries = try await prepare(claimed, environment: environment)
            } catch {
                logger.error(
                    "Claimed notifications could not be prepared; they stay pending",
                    metadata: ["environment": "\(environment.rawValue)", "error": "\(error)"])
                return
            }
            await withDiscardingTaskGroup { group in
                for delivery in deliveries {
                    group.addTask { await attempt(delivery.notification, app: delivery.app, earlier: delivery.earlier) }
                }
            }
        }
    }

    /// A claimed notification that has somewhere to go, with its app and its attempts so far.
    struct Delivery {
        var notification: ServerNotification
        var app: App
        var earlier: [NotificationAttempt]
    }

    /// Reads the apps and earlier attempts of a claimed round in one transaction, and ends at once (`unconfigured`)
    /// the notifications whose app has no URL for their environment: a few statements per round, not per
    /// notification. A notification whose app is gone is left to its lease.
    private func prepare(_ claimed: [ServerNotification], environment: StoreEnvironment) async throws -> [Delivery] {
        try await database.transaction { tx in
            var apps: [App.ID: App] = [:]
            for id in Set(claimed.map(\.appId)) { apps[id] = try await tx.app(id: id) }
            let earlier = Dictionary(
                grouping: try await tx.notificationAttempts(uuids: claimed.map(\.uuid)), by: \.notificationUUID)
            var deliveries: [Delivery] = []
            var unconfigured: [String] = []
            for notification in claimed {
                guard let app = apps[notification.appId] else { continue }
                if app.notificationURLs(for: environment).isEmpty {
                    unconfigured.append(notification.uuid)
                } else {
                    deliveries.append(
                        Delivery(notification: notification, app: app, earlier: earlier[notification.uuid] ?? []))
                }
            }
            try await tx.endNotifications(uuids: unconfigured, in: .unconfigured)
            if !unconfigured.isEmpty {
                logger.debug(
                    "Notifications not sent: their app has no notification URL for the environment",
                    metadata: ["count": "\(unconfigured.count)", "environment": "\(environment.rawValue)"])
            }
            return deliveries
        }
    }

    /// Sends a claimed notification to every URL of its environment that has not yet taken it (`earlier` holds its
    /// attempts so far), records how it went and schedules the next retry, if any.
    func attempt(_ notification: ServerNotification, app: App, earlier: [NotificationAttempt]) async {
        let uuid = notification.uuid
        do {
            let urls = app.notificationURLs(for: notification.environment)
            let attemptedAt =
                notification.environment == .sandbox
                ? notification.nextAttemptAt ?? clocks.sandbox.now() : clocks.base.now()
            let answered = Set(earlier.filter { $0.result == .success }.map(\.url))
            let attempts = try await post(
                notification, to: urls.filter { !answered.contains($0) }, at: attemptedAt, after: earlier)
            if attempts.contains(where: { $0.result == .success }) { CrashPoint.notificationDelivered.reach() }
            let attemptCount = notification.attemptCount + 1
            let retries = notification.environment == .production || app.sandboxNotificationRetries
            let delivered = attempts.allSatisfy { $0.result == .success }
            let next =
                delivered || !retries ? nil : ServerNotification.retryDate(afterAttempt: attemptCount, at: attemptedAt)
            let state: ServerNotification.State = delivered ? .delivered : next == nil ? .failed : .pending
            try await database.transaction { [attempts] tx in
                for attempt in attempts { try await tx.insertNotificationAttempt(attempt) }
                try await tx.updateNotificationState(
                    uuid: uuid, state: state, nextAttemptAt: next, attemptCount: attemptCount)
            }
            logFailures(attempts, of: notification, next: next)
            metrics.attempted(attempts, environment: notification.environment)
        } catch {
            logger.error(
                "Notification could not be signed, or its delivery recorded; it stays pending",
                metadata: ["uuid": "\(uuid)", "error": "\(error)"])
        }
    }

    /// Signs a notification and POSTs it to each URL in turn; answers the attempts, numbered per URL after
    /// `earlier`.
    func post(
        _ notification: ServerNotification, to urls: [String], at date: Date, after earlier: [NotificationAttempt]
    )
        async throws -> [NotificationAttempt]
    {
        let signedPayload = try signing.sign(notification)
        var attempts: [NotificationAttempt] = []
        for url in urls {
            let (result, status) = await post(signedPayload, to: url)
            attempts.append(
                NotificationAttempt(
                    notificationUUID: notification.uuid, attempt: earlier.filter { $0.url == url }.count + 1, url: url,
                    attemptedAt: date, result: result, httpStatus: status))
        }
        return attempts
    }

    func logFailures(_ attempts: [NotificationAttempt], of notification: ServerNotification, next: Date?) {
        for failed in attempts where failed.result != .success {
            logger.warning(
                "Notification delivery failed",
                metadata: [
                    "uuid": "\(notification.uuid)", "type": "\(notification.notificationType)",
                    "url": "\(failed.url)", "result": "\(failed.result.rawValue)",
                    "httpStatus": "\(failed.httpStatus.map(String.init) ?? "-")",
                    "nextAttempt": "\(next.map { "\($0)" } ?? "none")",
                ])
        }
    }

    /// POSTs `{"signedPayload":"…"}` to `url`; returns Apple's `sendAttemptResult` and the HTTP status, if any.
    private func post(_ signedPayload: String, to url: String) async -> (NotificationAttempt.Result, Int?) {
        switch await SignedPayloadPost.send(
            signedPayload, to: url, with: http, policy: policy, deadline: .now() + Self.timeout)
        {
        case .answered(let status, _), .tooLarge(let status):
            return ((200...206).contains(status) ? .success : .unsuccessfulHTTPResponseCode, status)
        case .failed(let result):
            return (result, nil)
        case .refused(let reason):
            logger.warning("Notification not sent", metadata: ["url": "\(url)", "reason": "\(reason)"])
            return (.other, nil)
        }
    }
}

/// The environments whose next delivery round is asked for and not yet started.
private final class RequestedRounds: Sendable {
    private let environments = Mutex<Set<StoreEnvironment>>([])

    /// Asks for a round of `environment`; false when one is already asked for and will cover this request.
    func ask(_ environment: StoreEnvironment) -> Bool {
        environments.withLock { $0.insert(environment).inserted }
    }

    /// A round of `environment` holds the round lock and is about to claim what is due.
    func started(_ environment: StoreEnvironment) {
        _ = environments.withLock { $0.remove(environment) }
    }
}
