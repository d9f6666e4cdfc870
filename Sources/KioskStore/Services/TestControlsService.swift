import Foundation
import KioskCore
import KioskProtocol
import KioskSQL
import KioskStorage

/// The sandbox test controls: SKTestSession's powers over a store that is running, for testers only.
public struct TestControlsService: Sendable {
    let context: StoreContext
    /// The purchase rules a test purchase follows as an app's purchase does (availability, offers, receipts).
    private let purchases: PurchaseService

    init(context: StoreContext, purchases: PurchaseService) {
        self.context = context
        self.purchases = purchases
    }

    private var database: any KioskDatabase { context.database }
    var ledger: StoreLedger { context.ledger }
    /// Test controls act in the sandbox, on its clock.
    private var clock: any KioskClock { context.clocks.sandbox }

    /// Buys a product for a tester as if started outside the app: charged at once, or (`promoted`) offered to
    /// the app's delegate as a promoted purchase. The same payment path as an app's payment: one idempotency rule,
    /// the same checks and errors.
    public func purchase(bundleId: String, _ request: TestPurchaseRequest) async throws -> QueueEntry {
        let order = try PaymentOrder(request)
        let client = try await database.transaction { tx in
            try await testerClient(bundleId: bundleId, tester: request.tester, in: tx)
        }
        return try await purchases.place(order, client: client)
    }

    /// Payments of the app's testers, optionally of one tester and in one state.
    public func payments(bundleId: String, tester: String?, state: PaymentState?) async throws -> TestPaymentsResponse {
        try await database.transaction { tx in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            let only = try await tester.asyncMap { try await AccountService.requireAccount($0, .sandbox, in: tx) }
            let payments = try await tx.payments(
                appId: app.id, environment: .sandbox, accountId: only?.id, state: state)
            var emails: [UUID: String] = [:]
            var answer: [TestPaymentInfo] = []
            for payment in payments {
                if emails[payment.accountId] == nil {
                    emails[payment.accountId] =
                        try await tx.account(id: payment.accountId, environment: .sandbox)?.email ?? "(deleted)"
                }
                answer.append(
                    TestPaymentInfo(
                        paymentId: payment.id, tester: emails[payment.accountId] ?? "", productId: payment.productId,
                        quantity: payment.quantity, state: payment.state.rawValue,
                        transactionId: payment.transactionId.map(String.init),
                        createdDate: payment.createdAt.millisecondsSince1970))
            }
            return TestPaymentsResponse(payments: answer)
        }
    }

    /// What a parent or the tester does with a waiting payment.
    public enum Decision: String, Sendable, CaseIterable {
        /// Ask to Buy approved: charged, `purchased`.
        case approve
        /// Ask to Buy declined: `failed`.
        case decline
        /// An interrupted purchase completed: charged, `purchased`.
        case resolve
    }

    /// Idempotent: the same decision again answers the same entry; a different one is a conflict.
    public func decide(bundleId: String, paymentId: UUID, _ decision: Decision) async throws -> QueueEntry {
        let now = clock.now()
        let rows = try await ledger.commit { tx, effects in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            guard var payment = try await tx.payment(id: paymentId), payment.appId == app.id,
                payment.environment == .sandbox
            else {
                throw KioskError(
                    .paymentNotFound, "The app \(bundleId) has no sandbox payment \(paymentId).", field: "paymentId",
                    fix: "List waiting payments with `kiosk test payments --app \(bundleId)`.")
            }
            let records = try await tx.queueRecords(paymentId: payment.id)
            if Self.alreadyDecided(payment, records: records, as: decision), let latest = records.last {
                // A retried decision (its answer was lost) answers the same and changes nothing.
                return try await ledger.entryRows(for: latest, in: tx)
            }
            let expected: PaymentState = decision == .resolve ? .interrupted : .deferred
            guard payment.state == expected else {
                throw KioskError(
                    .paymentNotWaiting,
                    "The payment \(paymentId) is \(payment.state.rawValue); only \(expected.rawValue) payments can be "
                        + "\(decision.rawValue)d.", field: "paymentId",
                    fix: decision == .resolve
                        ? "Resolve payments of testers with interrupted purchases on."
                        : "Approve or decline payments of testers with Ask to Buy on.")
            }
            guard let tester = try await tx.account(id: payment.accountId, environment: .sandbox) else {
                throw KioskError(.testerNotFound, "The payment's tester was deleted.")
            }
            let client = try Self.client(tester: tester, app: app)
            payment.updatedAt = now
            let record: QueueRecord
            var charged = Charged()
            if decision == .decline {
                payment.state = .failed
                payment.errorCode = StoreKitErrorCode.paymentNotAllowed.rawValue
                payment.errorReason = .askToBuyDeclined
                record = try await ledger.queueRecord(.failed, for: payment, now: now, in: tx)
            } else {
                let product = try await purchases.sellableProduct(payment.productId, client: client, in: tx)
                do {
                    record = try await purchases.charge(
                        &payment, product: product, client: client, now: now, charged: &charged, in: tx)
                } catch let refusal as PurchaseRefusal {
                    // Approved, but the account subscribed meanwhile: the payment fails as a new one would.
                    record = try await purchases.fail(&payment, refusal.error, now: now, in: tx)
                }
            }
            try await tx.updatePayment(payment)
            try await tx.insertQueueRecord(record)
            effects.deliver(charged.notifications)
            effects.wake(client.feedKey)
            return try await ledger.entryRows(for: record, written: (payment, charged.transaction), in: tx)
        }
        return try ledger.entry(rows)
    }

    /// Whether `decision` is what already happened to the payment: approved (deferred, then purchased), declined
    /// (deferred, then failed) or resolved (interrupted, then purchased).
    private static func alreadyDecided(_ payment: Payment, records: [QueueRecord], as decision: Decision) -> Bool {
        guard let first = records.first else { return false }
        let wasDeferred = first.state == .deferred
        let wasInterrupted = first.state == .failed && first.errorReason == .purchaseInterrupted
        switch decision {
        case .approve: return wasDeferred && payment.state == .purchased
        case .decline: return wasDeferred && payment.state == .failed
        case .resolve: return wasInterrupted && payment.state == .purchased
        }
    }

    /// A tester's transactions in the app, oldest first.
    public func transactions(bundleId: String, tester: String) async throws -> TestTransactionsResponse {
        try await database.transaction { tx in
            let client = try await testerClient(bundleId: bundleId, tester: tester, in: tx)
            let unfinished = Set(
                try await tx.unfinishedQueueRecords(
                    accountId: client.account.id, appId: client.app.id, environment: .sandbox
                )
                .compactMap(\.transactionId))
            let transactions = try await tx.transactions(
                accountId: client.account.id, appId: client.app.id, environment: .sandbox)
            return TestTransactionsResponse(
                transactions: transactions.map {
                    TestTransactionInfo(
                        transactionId: String($0.id), originalTransactionId: String($0.originalTransactionId),
                        tester: client.account.email, productId: $0.productId, quantity: $0.quantity,
                        purchaseDate: $0.purchaseDate.millisecondsSince1970, price: $0.priceMinorUnits,
                        currency: $0.currency, storefront: $0.storefront, finished: !unfinished.contains($0.id),
                        signedTransaction: $0.signedTransaction)
                })
        }
    }

    /// Deletes every transaction, payment and queue entry of a tester in the app.
    public func clearTransactions(bundleId: String, tester: String) async throws -> TestDeletedResponse {
        try await database.transaction { tx in
            let client = try await testerClient(bundleId: bundleId, tester: tester, in: tx)
            return TestDeletedResponse(
                deleted: try await tx.deleteTransactions(
                    accountId: client.account.id, appId: client.app.id, environment: .sandbox))
        }
    }

    /// Deletes one sandbox transaction of the app (and the queue entries showing it).
    public func deleteTransaction(bundleId: String, transactionId: Int64) async throws -> TestDeletedResponse {
        try await database.transaction { tx in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            guard let transaction = try await tx.transaction(id: transactionId, environment: .sandbox),
                transaction.appId == app.id
            else {
                throw KioskError(
                    .transactionNotFound, "The app \(bundleId) has no sandbox transaction \(transactionId).",
                    field: "transactionId", fix: "List them with `kiosk test transactions`.")
            }
            return TestDeletedResponse(
                deleted: try await tx.deleteTransaction(id: transactionId, environment: .sandbox))
        }
    }

    /// Arms (or with `count` 0 disarms) a failure of one client API in the app.
    public func setFailure(bundleId: String, _ request: TestFailureRequest) async throws -> TestFailureResponse {
        guard let api = ArmedFailure.API(rawValue: request.api) else {
            throw KioskError(
                .unknownApi, "'\(request.api)' is not an API the test controls can fail.", field: "api",
                fix: "Use one of: \(ArmedFailure.API.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        let code = try Self.errorCode(request.error, for: api)
        guard (0...1000).contains(request.count) else {
            throw KioskError(.invalidCount, "count must be from 0 to 1000.", field: "count", fix: "Use 0 to disarm.")
        }
        return try await database.transaction { tx in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            try await tx.setArmedFailure(
                ArmedFailure(appId: app.id, api: api, remaining: request.count, errorCode: code))
            return try await Self.failures(of: app, in: tx)
        }
    }

    /// The code to fail with: an `SKError` code name for client APIs, a `verifyReceipt` status for `verifyReceipt`.
    private static func errorCode(_ error: String, for api: ArmedFailure.API) throws -> Int {
        if api == .verifyReceipt {
            guard let status = Int(error), VerifyReceiptStatus.isArmable(status) else {
                throw KioskError(
                    .unknownError, "'\(error)' is not a temporary verifyReceipt status.", field: "error",
                    fix: "Use 21005, 21009 or a status from 21100 to 21199.")
            }
            return status
        }
        guard let code = StoreKitErrorCode(name: error) else {
            throw KioskError(
                .unknownError, "'\(error)' is not an SKError code name.", field: "error",
                fix: "Use a name such as \(StoreKitErrorCode.allCases.prefix(8).map(\.name).joined(separator: ", ")).")
        }
        return code.rawValue
    }

    public func failures(bundleId: String) async throws -> TestFailureResponse {
        try await database.transaction { tx in
            try await Self.failures(of: try await CatalogService.requireApp(bundleId, in: tx), in: tx)
        }
    }

    private static func failures(of app: App, in tx: any StorageTransaction) async throws -> TestFailureResponse {
        TestFailureResponse(
            failures: try await tx.armedFailures(appId: app.id).map {
                TestFailureRequest(
                    api: $0.api.rawValue, count: $0.remaining,
                    error: StoreKitErrorCode(rawValue: $0.errorCode)?.name ?? String($0.errorCode))
            })
    }

    /// A tester's app receipt for the app, as a device with `deviceId` (all zeros when nil) would get it.
    public func receipt(bundleId: String, tester: String, deviceId: UUID?) async throws -> ReceiptResponse {
        let client = try await database.transaction { tx in
            try await testerClient(bundleId: bundleId, tester: tester, in: tx)
        }
        return try await purchases.receipt(for: client, deviceId: deviceId ?? client.session.deviceId)
    }

    /// A parent withdraws consent for the tester's use of the app: the app's server gets `RESCIND_CONSENT`, whose
    /// `appData` carries the tester's signed app transaction. Withdrawn once, a repeat changes nothing and answers
    /// the first notification.
    public func rescindConsent(bundleId: String, _ request: TestConsentRequest) async throws -> TestConsentResponse {
        let now = clock.now()
        while true {
            let outcome: (notification: ServerNotification, appTransaction: StoreAppTransaction, rescinded: Bool)
            do {
                outcome = try await database.transaction { tx in
                    let client = try await testerClient(bundleId: bundleId, tester: request.tester, in: tx)
                    let appTransaction = try await PurchaseService.ensureAppTransaction(
                        environment: .sandbox, appId: client.app.id, accountId: client.account.id, now: now, in: tx)
                    if let uuid = appTransaction.consentRescindedBy, let first = try await tx.notification(uuid: uuid) {
                        return (first, appTransaction, false)
                    }
                    let notification = try await context.notifications.create(
                        NotificationContent(type: .rescindConsent, appTransaction: appTransaction), app: client.app,
                        environment: .sandbox, now: now, in: tx)
                    // Another request recorded it first: this one's notification is rolled back, and the next round
                    // answers that one.
                    guard try await tx.rescindConsent(appTransaction, notificationUUID: notification.uuid) else {
                        throw ConsentRace()
                    }
                    return (notification, appTransaction, true)
                }
            } catch is ConsentRace {
                continue
            }
            let (notification, appTransaction, rescinded) = outcome
            if rescinded { context.notifications.deliver([notification]) }
            let attempts = try await database.transaction { tx in
                try await tx.notificationAttempts(uuids: [notification.uuid]).count
            }
            return TestConsentResponse(
                tester: request.tester, appTransactionId: String(appTransaction.id), rescinded: rescinded,
                notification: NotificationService.info(notification, attempts: attempts))
        }
    }

    private func testerClient(bundleId: String, tester: String, in tx: any StorageTransaction) async throws
        -> ClientSession
    {
        let app = try await CatalogService.requireApp(bundleId, in: tx)
        return try Self.client(tester: try await AccountService.requireAccount(tester, .sandbox, in: tx), app: app)
    }

    /// The test controls act as a session of the tester with no device of its own.
    static func client(tester: Account, app: App) throws -> ClientSession {
        let account = StoreAccount(tester)
        return ClientSession(
            session: StoreSession(
                tokenHash: "", environment: .sandbox, accountId: tester.id, appId: app.id,
                deviceId: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), createdAt: tester.createdAt),
            account: account, app: app, storefront: try PurchaseService.storefront(of: account))
    }
}

/// Two withdrawals of one tester's consent met; the one that lost starts over and finds the other's.
private struct ConsentRace: Error {}
