import Foundation
import KioskCore
import KioskProtocol
import KioskSQL
import Logging

/// The merchant's work, below HTTP: orders, deliveries, entitlements. Notifications, reconciliation and content
/// are in the extensions beside this file. Every change is one database transaction.
public struct MerchantService: Sendable {
    public let configuration: LoadedMerchantConfiguration
    let database: any SQLDatabaseEngine
    let checks: SignedDataChecks
    let clock: any KioskClock
    let logger: Logger
    let calculator: EntitlementCalculator

    init(
        configuration: LoadedMerchantConfiguration, database: any SQLDatabaseEngine, clock: any KioskClock,
        logger: Logger
    ) throws {
        self.configuration = configuration
        self.database = database
        self.checks = try SignedDataChecks(configuration: configuration, clock: clock)
        self.clock = clock
        self.logger = logger
        self.calculator = EntitlementCalculator(
            products: configuration.apps.values.reduce(into: [:]) { $0.merge($1.products) { first, _ in first } })
    }

    // MARK: Orders

    /// Opens an order for `userId`: the app pays with its `appAccountToken`.
    func createOrder(userId: String, request: MerchantOrderRequest) async throws -> MerchantOrder {
        let app = try configuration.app(request.bundleId)
        _ = try product(request.productId, of: app, field: "productId")
        let quantity = request.quantity ?? 1
        guard (1...10).contains(quantity) else {
            throw KioskError(
                .invalidQuantity, "quantity must be 1–10; it is \(quantity).", field: "quantity",
                fix: "Ask for 1 to 10 units, as the store allows per payment.")
        }
        let order = OrderRecord(
            id: "ord_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""),
            bundleId: app.bundleId, userId: userId, productId: request.productId, quantity: quantity,
            appAccountToken: UUID(), createdAt: clock.now())
        try await database.withSession { session in
            try await session.run(
                """
                INSERT INTO orders (id, bundle_id, user_id, product_id, quantity, app_account_token, state, created_at)
                VALUES (\(bind: order.id), \(bind: order.bundleId), \(bind: order.userId), \(bind: order.productId),
                    \(bind: Int64(order.quantity)), \(bind: order.appAccountToken.uuidString.lowercased()),
                    \(bind: order.state), \(bind: order.createdAt.millisecondsSince1970))
                """)
        }
        return order.message
    }

    /// One of the user's orders.
    func order(id: String, userId: String) async throws -> MerchantOrder {
        let order = try await database.withSession { session in
            try await Orders(session: session).order(id: id)
        }
        guard let order, order.userId == userId else {
            throw KioskError(.unknownOrder, "You have no order \(id).", field: "orderId", fix: "Create one first.")
        }
        return order.message
    }

    // MARK: Deliveries

    /// Verifies what the app sent, grants each transaction once to the user, and answers with what the user owns
    /// now. Only after this answer may the app finish its transactions.
    func deliver(userId: String, request: MerchantDeliveryRequest) async throws -> MerchantDeliveryResponse {
        let deliveries: [MerchantDelivery]
        switch (request.signedTransaction, request.receiptData) {
        case (let signed?, nil):
            deliveries = [try await deliverSignedTransaction(signed, orderId: request.orderId, userId: userId)]
        case (nil, let receipt?):
            deliveries = try await deliverReceipt(receipt, orderId: request.orderId, userId: userId)
        default:
            throw KioskError(
                .missingField, "Send exactly one of signedTransaction and receiptData.", field: "signedTransaction",
                fix: "Send the transaction's jwsRepresentation as signedTransaction, or the app receipt as receiptData."
            )
        }
        CrashPoint.deliveryCommitted.reach()
        return MerchantDeliveryResponse(deliveries: deliveries, entitlements: try await entitlements(userId: userId))
    }

    private func deliverSignedTransaction(_ signed: String, orderId: String?, userId: String) async throws
        -> MerchantDelivery
    {
        let (app, sent) = try await checks.transaction(signed)
        let facts = app.settings.confirmWithServerAPI == true ? try await confirmed(sent, app: app) : sent
        let product = try product(facts.productId, of: app, field: "signedTransaction")
        let now = clock.now()
        let (outcome, owner) = try await database.withSession { session in
            let owner = try await Orders(session: session).ownerForApp(
                facts, userId: userId, requestedOrderId: orderId, bundleId: app.bundleId)
            let outcome = try await GrantLedger(session: session).apply(
                facts, owner: owner, product: product, source: "app", now: now)
            return (outcome, owner)
        }
        if case .grantedToAnotherUser = outcome {
            throw KioskError(
                .transactionOfAnotherUser,
                "Transaction \(facts.transactionId) was granted to another user; nothing changed.",
                field: "signedTransaction", fix: "Sign in as the user who bought it.")
        }
        logger.info(
            "delivery",
            metadata: ["transaction": "\(facts.transactionId)", "user": "\(userId)", "outcome": "\(outcome)"])
        return MerchantDelivery(
            transactionId: facts.transactionId, productId: facts.productId, outcome: outcome.deliveryOutcome,
            orderId: owner.orderId, environment: facts.environment.appleName)
    }

    /// The state the store holds now (Get Transaction Info), verified like the app's copy.
    private func confirmed(_ facts: PurchaseFacts, app: LoadedMerchantConfiguration.LoadedApp) async throws
        -> PurchaseFacts
    {
        let connection = StoreConnection(app: app, clock: clock)
        guard let current = try await connection.transactionInfo(facts.transactionId, environment: facts.environment)
        else {
            throw KioskError(
                .unknownTransaction, "The store does not know transaction \(facts.transactionId); nothing was granted.",
                field: "signedTransaction", fix: "Send a transaction the store made.")
        }
        var store = try await checks.transaction(current).facts
        store.provenance = .present
        return facts.supersedes(store.asHeld) ? facts : store
    }

    private func deliverReceipt(_ receipt: String, orderId: String?, userId: String) async throws
        -> [MerchantDelivery]
    {
        var deliveries: [MerchantDelivery] = []
        for app in configuration.apps.values.sorted(by: { $0.bundleId < $1.bundleId }) {
            // A receipt names its app only once validated; with one app (the usual case) there is one call.
            let verified: StoreConnection.VerifiedReceipt
            do {
                verified = try await StoreConnection(app: app, clock: clock).verifyReceipt(receipt)
            } catch let error as KioskError where error.code == .wrongApp && configuration.apps.count > 1 {
                continue
            }
            let now = clock.now()
            deliveries = try await database.withSession { session in
                let orders = Orders(session: session)
                let ledger = GrantLedger(session: session)
                // The order goes with the newest transaction of its product not granted yet.
                var orderTransaction: String?
                if let orderId {
                    let order = try await orders.ownedOrder(id: orderId, userId: userId, bundleId: app.bundleId)
                    var candidates: [PurchaseFacts] = []
                    for facts in verified.transactions where facts.productId == order.productId {
                        if try await ledger.grant(transactionId: facts.transactionId, environment: facts.environment)
                            == nil
                        {
                            candidates.append(facts)
                        }
                    }
                    orderTransaction =
                        order.transactionId ?? candidates.max { $0.purchaseDate < $1.purchaseDate }?.transactionId
                }
                var deliveries: [MerchantDelivery] = []
                for facts in verified.transactions {
                    guard let product = app.products[facts.productId] else {
                        deliveries.append(
                            MerchantDelivery(
                                transactionId: facts.transactionId, productId: facts.productId,
                                outcome: "product_not_configured", orderId: nil,
                                environment: facts.environment.appleName))
                        continue
                    }
                    let owner = GrantOwner(
                        userId: userId, orderId: facts.transactionId == orderTransaction ? orderId : nil)
                    let outcome = try await ledger.apply(
                        facts, owner: owner, product: product, source: "receipt", now: now)
                    deliveries.append(
                        MerchantDelivery(
                            transactionId: facts.transactionId, productId: facts.productId,
                            outcome: outcome.deliveryOutcome, orderId: owner.orderId,
                            environment: facts.environment.appleName))
                }
                return deliveries
            }
            return deliveries
        }
        throw KioskError(
            .wrongApp, "The receipt is for none of this merchant's apps.", field: "receiptData",
            fix: "Send the receipt of one of: \(configuration.apps.keys.sorted().joined(separator: ", ")).")
    }

    // MARK: Entitlements

    /// What the user owns now: entitlements and balances (restore through the server).
    func entitlements(userId: String) async throws -> MerchantEntitlements {
        let now = clock.now()
        let (grants, renewals, balances) = try await userLedger(userId: userId)
        return calculator.entitlements(
            userId: userId, grants: grants, renewals: renewals, balances: balances, now: now)
    }

    /// What the user an app account token names holds at `date` (default: now): the user of the token's order, or
    /// the token itself for an app whose users are their tokens. The contract of `kiosk check`'s probe.
    func probe(appAccountToken: UUID, at date: Date?) async throws -> CheckProbe {
        let order = try await database.withSession {
            try await Orders(session: $0).order(appAccountToken: appAccountToken)
        }
        let userId = order?.userId ?? appAccountToken.uuidString.lowercased()
        let (grants, renewals, balances) = try await userLedger(userId: userId)
        let held = calculator.entitlements(
            userId: userId, grants: grants, renewals: renewals, balances: balances, now: date ?? clock.now())
        return CheckProbe(
            entitlements: held.entitlements.filter(\.active).map(\.name).sorted(),
            balances: Dictionary(held.balances.map { ($0.name, $0.amount) }, uniquingKeysWith: +))
    }

    /// Why the user owns what they own, and the history behind it.
    func explain(userId: String) async throws -> MerchantExplanation {
        let now = clock.now()
        let (grants, renewals, balances) = try await userLedger(userId: userId)
        let (events, spends) = try await database.withSession { session in
            (
                try await GrantLedger(session: session).events(userId: userId),
                try await session.all("SELECT * FROM balance_spends WHERE user_id = \(bind: userId) ORDER BY spent_at")
                    .map(SpendRecord.init(row:))
            )
        }
        return calculator.explanation(
            userId: userId, grants: grants, renewals: renewals, balances: balances, events: events, spends: spends,
            now: now)
    }

    /// The user's entitlement grants, their subscriptions' renewal states and balances, read in one read session
    /// (beside deliveries that write, not after them; on SQLite one snapshot).
    private func userLedger(userId: String) async throws -> ([GrantRecord], [RenewalState], [BalanceSummary]) {
        try await database.withReadSession { session in
            let ledger = GrantLedger(session: session)
            let grants = try await ledger.entitlementGrants(userId: userId)
            var renewals: [RenewalState] = []
            for environment in StoreEnvironment.allCases {
                let originals = Set(
                    grants.filter { $0.environment == environment && $0.productKind == .autoRenewable }
                        .map(\.originalTransactionId))
                renewals += try await ledger.renewalStates(
                    originalTransactionIds: Array(originals), environment: environment)
            }
            return (grants, renewals, try await ledger.balances(userId: userId))
        }
    }

    // MARK: Helpers

    func product(_ productId: String, of app: LoadedMerchantConfiguration.LoadedApp, field: String) throws
        -> MerchantConfiguration.ProductSettings
    {
        guard let product = app.products[productId] else {
            throw KioskError(
                .productNotConfigured, "\(productId) is not in the merchant's configuration of \(app.bundleId).",
                field: field, fix: "Add it to the app's products (what it grants), then send it again.")
        }
        return product
    }
}

extension OrderRecord {
    var message: MerchantOrder {
        MerchantOrder(
            orderId: id, appAccountToken: appAccountToken, bundleId: bundleId, userId: userId, productId: productId,
            quantity: quantity, state: state, transactionId: transactionId, createdDate: createdAt)
    }
}
