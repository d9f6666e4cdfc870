import Foundation
import KioskCore
import KioskProtocol
import KioskStorage

/// Refunds and revocations: what Apple's support and Family Sharing do to a purchase, each reported to the app's
/// server by its notification. The sandbox's test controls use all of them; in production the store's operator
/// refunds and reverses refunds (the admin API, `kiosk accounts refund`, the console), through this same service.
/// Each is idempotent: repeated, it answers what it did the first time and sends nothing more.
public struct RefundService: Sendable {
    let context: StoreContext

    private var ledger: StoreLedger { context.ledger }

    /// The notifications the revocation actions send.
    static let revocationNotificationTypes = Set(Revocation.kinds.map(\.notificationType))
    /// Apple's `consumptionRequestReason` values.
    static let consumptionRequestReasons = [
        "UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER",
    ]

    /// Refunds a transaction of `environment`, in full or prorated → REFUND.
    public func refund(
        bundleId: String, transactionId: Int64, _ request: RefundRequest,
        environment: StoreEnvironment = .sandbox
    ) async throws -> TestRevocationResponse {
        let reason = request.reason ?? 0
        guard reason == 0 || reason == 1 else {
            throw KioskError(
                .invalidReason, "\(reason) is not a revocation reason.", field: "reason",
                fix: "Use 0 (other) or 1 (an issue in the app).")
        }
        if let percentage = request.percentage, !(1...100).contains(percentage) {
            throw KioskError(
                .invalidPercentage, "\(percentage) is not a share of the price that can be refunded.",
                field: "percentage", fix: "Send 1 to 100, or leave it out for a full refund.")
        }
        let prorated = request.percentage.flatMap { $0 == 100 ? nil : $0 }
        return try await apply(
            .refund(reason: reason, percentage: prorated), bundleId: bundleId, transactionId: transactionId,
            environment: environment)
    }

    /// Turns down a refund of a sandbox transaction → REFUND_DECLINED.
    public func declineRefund(bundleId: String, transactionId: Int64) async throws -> TestRevocationResponse {
        try await apply(.declineRefund, bundleId: bundleId, transactionId: transactionId)
    }

    /// Takes a refund back → REFUND_REVERSED; the transaction (and its subscription, within its period) counts again.
    public func reverseRefund(bundleId: String, transactionId: Int64, environment: StoreEnvironment = .sandbox)
        async throws -> TestRevocationResponse
    {
        try await apply(.reverseRefund, bundleId: bundleId, transactionId: transactionId, environment: environment)
    }

    /// Removes a purchase from a family member (Family Sharing stopped) → REVOKE, `FAMILY_REVOKE`.
    public func revoke(bundleId: String, transactionId: Int64) async throws -> TestRevocationResponse {
        try await apply(.revoke, bundleId: bundleId, transactionId: transactionId)
    }

    /// What the app's server sent with Send Consumption Information for the transaction, if it did.
    public func consumptionReport(bundleId: String, transactionId: Int64) async throws -> TestConsumptionReport {
        let report = try await context.database.transaction { tx -> ConsumptionReport? in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            guard let report = try await tx.consumptionReport(transactionId: transactionId, environment: .sandbox),
                report.appId == app.id
            else { return nil }
            return report
        }
        guard let report else {
            throw KioskError(
                .noConsumptionReport,
                "The app's server has sent no consumption information for sandbox transaction \(transactionId).",
                field: "transactionId",
                fix: "Answer CONSUMPTION_REQUEST with PUT /inApps/v2/transactions/consumption/\(transactionId).")
        }
        return TestConsumptionReport(
            transactionId: String(report.transactionId), apiVersion: report.apiVersion, body: report.body,
            receivedDate: report.receivedAt.millisecondsSince1970)
    }

    /// The customer asks for a refund of a consumable or auto-renewable → CONSUMPTION_REQUEST.
    public func requestRefund(bundleId: String, transactionId: Int64, _ request: TestRefundRequestRequest)
        async throws -> TestRevocationResponse
    {
        let reason = request.reason ?? "OTHER"
        guard Self.consumptionRequestReasons.contains(reason) else {
            throw KioskError(
                .invalidReason, "'\(reason)' is not a consumption request reason.", field: "reason",
                fix: "Use one of: \(Self.consumptionRequestReasons.joined(separator: ", ")).")
        }
        return try await apply(.requestRefund(reason: reason), bundleId: bundleId, transactionId: transactionId)
    }

    private func apply(
        _ action: Revocation, bundleId: String, transactionId: Int64, environment: StoreEnvironment = .sandbox
    ) async throws -> TestRevocationResponse {
        let now = context.clocks.now(environment)
        return try await ledger.commit { tx, effects in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            guard var transaction = try await tx.transaction(id: transactionId, environment: environment),
                transaction.appId == app.id
            else {
                throw KioskError(
                    .transactionNotFound,
                    "The app \(bundleId) has no \(environment.rawValue) transaction \(transactionId).",
                    field: "transactionId",
                    fix: environment == .sandbox
                        ? "List them with `kiosk test transactions`." : "Find it on the customer's page in the console."
                )
            }
            let about = try await Self.revocationNotifications(about: transaction, in: tx)
            if let earlier = action.earlierNotification(about: transaction, among: about) {
                return Self.response(transaction, earlier)
            }
            try action.checkAllowed(on: transaction)
            let revised = action.apply(to: &transaction, now: now)
            if revised {
                transaction.modifiedAt = now
                try ledger.sign(&transaction, bundleId: app.bundleId, now: now)
                try await tx.updateTransaction(transaction)
                try await SalesLedger.recordChange(transaction, at: now, in: tx)
                try await Self.updateSubscription(of: transaction, now: now, in: tx)
                try await Self.tellDevices(about: transaction, now: now, in: tx)
            }
            let notification = try await context.notifications.create(
                try await notificationContent(action, transaction, now: now, in: tx), app: app,
                environment: environment, now: now, in: tx)
            effects.deliver([notification])
            if revised {
                effects.wake(QueueFeed.Key(environment: environment, accountId: transaction.accountId, appId: app.id))
            }
            return Self.response(transaction, notification)
        }
    }

    /// The refund and revocation notifications about this very transaction, oldest first.
    private static func revocationNotifications(about transaction: StoreTransaction, in tx: any StorageTransaction)
        async throws -> [ServerNotification]
    {
        try await tx.notifications(
            NotificationHistoryQuery(
                environment: transaction.environment, appId: transaction.appId, start: .distantPast,
                end: .distantFuture, notificationType: nil, subtype: nil,
                originalTransactionId: transaction.originalTransactionId, onlyFailures: false, after: nil,
                limit: 10_000)
        ).filter { $0.transactionId == transaction.id && revocationNotificationTypes.contains($0.notificationType) }
    }

    /// Applies the action's change to the transaction; false when it changes nothing on it.

    /// The account's devices hear of the change through their queue: a revocation as a `revoked` entry (born
    /// finished), a reversed refund as a `purchased` one the app finishes once it delivered the content again.
    private static func tellDevices(about transaction: StoreTransaction, now: Date, in tx: any StorageTransaction)
        async throws
    {
        let revoked = transaction.revocationDate != nil
        try await tx.insertQueueRecord(
            StoreLedger.queueRecord(
                revoked ? .revoked : .purchased, about: transaction, sequence: try await tx.nextIdentifier(.queueEntry),
                now: now, finished: revoked))
    }

    /// A subscription whose current transaction is revoked is revoked and has nothing scheduled; a reversal
    /// makes it active again while its period lasts (its next event is then the end of the period).
    private static func updateSubscription(of transaction: StoreTransaction, now: Date, in tx: any StorageTransaction)
        async throws
    {
        guard transaction.productType == .autoRenewable,
            var subscription = try await tx.subscription(
                originalTransactionId: transaction.originalTransactionId, environment: transaction.environment),
            subscription.latestTransactionId == transaction.id
        else { return }
        if transaction.revocationDate != nil {
            subscription.state = .revoked
            subscription.nextEventAt = nil
        } else if subscription.state == .revoked {
            let running = subscription.expiresAt > now
            subscription.state = running ? .active : .expired
            subscription.nextEventAt = running ? subscription.expiresAt : nil
        } else {
            return
        }
        try await tx.updateSubscription(subscription)
    }

    /// The notification for `action`: subscription ones carry the renewal info and status.
    private func notificationContent(
        _ action: Revocation, _ transaction: StoreTransaction, now: Date, in tx: any StorageTransaction
    ) async throws -> NotificationContent {
        var content = NotificationContent(type: action.notificationType, transaction: transaction)
        if case .requestRefund(let reason) = action { content.consumptionRequestReason = reason }
        guard transaction.productType == .autoRenewable else { return content }
        let chain = try await tx.transactions(
            originalTransactionId: transaction.originalTransactionId, appId: transaction.appId,
            environment: transaction.environment)
        guard let latest = SubscriptionService.latestPerSubscription(chain).first else { return content }
        let subscriptions = SubscriptionService(context: context)
        content.signedRenewalInfo = try await subscriptions.signedRenewalInfo(
            for: latest, chain: chain, now: now, in: tx)
        let row = try await tx.subscription(
            originalTransactionId: transaction.originalTransactionId, environment: transaction.environment)
        content.status = row?.state.appleStatus ?? SubscriptionService.status(of: latest, at: now).rawValue
        return content
    }

    private static func response(_ transaction: StoreTransaction, _ notification: ServerNotification)
        -> TestRevocationResponse
    {
        TestRevocationResponse(
            transactionId: String(transaction.id), productId: transaction.productId,
            revocationDate: transaction.revocationDate?.millisecondsSince1970,
            revocationReason: transaction.revocationReason, revocationType: transaction.revocationType,
            refundedMinorUnits: transaction.refundedMinorUnits, currency: transaction.currency,
            signedTransaction: transaction.signedTransaction, notificationType: notification.notificationType,
            notificationUUID: notification.uuid, notificationState: notification.state.rawValue,
            notificationAttempts: notification.attemptCount)
    }
}
