import Foundation
import KioskCore
import KioskProtocol
import KioskSQL
import KioskSigning
import KioskStorage

/// A payment asked for: by an app (`SKPaymentQueue.add`) or by the test controls, as a purchase started outside the
/// app. Both go through ``PurchaseService/place(_:client:)``: one idempotency rule, one set of checks and errors, one
/// charge.
struct PaymentOrder: Sendable {
    /// Where a payment comes from, which decides the rules it meets besides the common ones.
    enum Origin: Sendable {
        /// An app's payment queue: the sandbox account's settings (Ask to Buy, interrupted purchases, its card) and
        /// armed failures apply, and a refusal is a failed queue entry the app sees.
        case app(askToBuy: Bool)
        /// The test controls: charged at once, and a refusal is an error answered to the caller.
        case outsideApp
        /// The test controls' promoted purchase: offered to the app's delegate, nothing charged yet.
        case promoted
    }

    var idempotencyKey: String?
    var productId: String
    var quantity: Int
    var applicationUsername: String?
    var appAccountToken: UUID?
    var offer: RequestedOffer
    var origin: Origin
    /// The billing plan named (StoreKit's `billingPlanType` purchase option); nil: billed up front.
    var billingPlan: BillingPlanType?

    /// An app's payment request, checked.
    init(_ request: PaymentRequest) throws {
        try self.init(
            idempotencyKey: request.idempotencyKey, productId: request.productId, quantity: request.quantity,
            applicationUsername: request.applicationUsername, appAccountToken: request.appAccountToken,
            offer: RequestedOffer(request), origin: .app(askToBuy: request.simulatesAskToBuyInSandbox == true),
            billingPlan: try Self.billingPlan(request.billingPlanType))
    }

    /// A test controls' purchase, checked.
    init(_ request: TestPurchaseRequest) throws {
        try self.init(
            idempotencyKey: request.idempotencyKey, productId: request.productId, quantity: request.quantity ?? 1,
            applicationUsername: nil, appAccountToken: request.appAccountToken,
            offer: RequestedOffer(
                discount: request.paymentDiscount, offerCode: request.offerCode,
                winBackOfferId: request.winBackOfferId),
            origin: request.promoted == true ? .promoted : .outsideApp,
            billingPlan: try Self.billingPlan(request.billingPlanType))
    }

    /// The plan a payment names: Apple's `BILLED_UPFRONT` or `MONTHLY`; any other name is refused.
    static func billingPlan(_ name: String?) throws -> BillingPlanType? {
        guard let name else { return nil }
        guard let plan = BillingPlanType(rawValue: name) else {
            throw KioskError(
                .billingPlanNotSupported,
                "'\(name.prefix(64))' is not a billing plan: Apple's are \(BillingPlanType.billedUpFront.rawValue) "
                    + "(the whole period up front) and \(BillingPlanType.monthly.rawValue) (a one-year "
                    + "subscription paid monthly through a 12-month commitment).",
                field: "billingPlanType",
                fix: "Name \(BillingPlanType.billedUpFront.rawValue) or \(BillingPlanType.monthly.rawValue), or "
                    + "leave billingPlanType out; nothing was charged.",
                storeKitCode: StoreKitErrorCode.paymentInvalid.rawValue)
        }
        return plan
    }

    private init(
        idempotencyKey: String?, productId: String, quantity: Int, applicationUsername: String?,
        appAccountToken: UUID?, offer: RequestedOffer, origin: Origin, billingPlan: BillingPlanType?
    ) throws {
        self.idempotencyKey = idempotencyKey
        self.productId = productId
        self.quantity = quantity
        self.applicationUsername = applicationUsername
        self.appAccountToken = appAccountToken
        self.offer = offer
        self.origin = origin
        self.billingPlan = billingPlan
        if let idempotencyKey, !(1...128).contains(idempotencyKey.count) { throw Self.invalidIdempotencyKey }
        if productId.isEmpty {
            throw Self.invalid(.missingProductId, "The payment names no product.", field: "productId")
        }
        if !(1...10).contains(quantity) {
            throw Self.invalid(
                .invalidQuantity, "The quantity must be from 1 to 10; it was \(quantity).", field: "quantity")
        }
        if let name = applicationUsername, name.count > 255 {
            throw Self.invalid(
                .applicationUsernameTooLong,
                "applicationUsername may have at most 255 characters; it has \(name.count).",
                field: "applicationUsername")
        }
    }

    /// Only consumables come more than one to a payment.
    func checkQuantity(of product: Product) throws {
        if product.type != .consumable, quantity != 1 {
            throw Self.invalid(
                .quantityNotAllowed,
                "Only consumables can be bought more than once per payment; \(product.productId) is "
                    + "\(product.type.appleName).", field: "quantity")
        }
    }

    private static let invalidIdempotencyKey = invalid(
        .invalidIdempotencyKey, "The idempotency key must have 1 to 128 characters.", field: "idempotencyKey")

    static func invalid(_ code: ErrorCode, _ message: String, field: String) -> KioskError {
        KioskError(
            code, message, field: field, fix: "Correct the payment; nothing was charged.",
            storeKitCode: StoreKitErrorCode.paymentInvalid.rawValue)
    }
}

extension PurchaseService {
    /// `SKPaymentQueue.add(_:)`: charges the account once per idempotency key and answers the queue entry that
    /// says how it went. A repeated key answers the first outcome (the latest entry of that payment) and charges
    /// nothing.
    public func pay(_ request: PaymentRequest, for client: ClientSession) async throws -> QueueEntry {
        try await place(try PaymentOrder(request), client: client)
    }

    /// Places a payment, once per idempotency key: a repeated key answers the latest entry of the first payment
    /// and changes nothing.
    func place(_ order: PaymentOrder, client: ClientSession) async throws -> QueueEntry {
        do {
            return try await placeOnce(order, client: client)
        } catch StorageError.uniqueViolation(let constraint) where constraint == "payments.idempotency_key" {
            // Another request with the same key committed first: answer what it did.
            return try await placeOnce(order, client: client)
        }
    }

    private func placeOnce(_ order: PaymentOrder, client: ClientSession) async throws -> QueueEntry {
        let now = clocks.now(client.environment)
        // The answer's receipt is signed once the payment committed (`entry`), not while the writer waits.
        let rows = try await ledger.commit(reaching: .paymentCommitted) { tx, effects in
            if let key = order.idempotencyKey,
                let existing = try await tx.payment(
                    accountId: client.account.id, appId: client.app.id, idempotencyKey: key)
            {
                return try await ledger.latestEntryRows(of: existing, in: tx)
            }
            var payment = Payment(
                id: UUID.timeOrdered(at: now), environment: client.environment, accountId: client.account.id,
                appId: client.app.id,
                idempotencyKey: order.idempotencyKey, productId: order.productId, quantity: order.quantity,
                applicationUsername: order.applicationUsername, appAccountToken: order.appAccountToken,
                state: .deferred, createdAt: now, updatedAt: now, billingPlan: order.billingPlan)
            var charged = Charged()
            let record = try await decide(&payment, order, client: client, now: now, charged: &charged, in: tx)
            if case .promoted = order.origin {
                // Nothing is paid until the app's delegate agrees: the entry offers the product.
            } else {
                try await tx.insertPayment(payment)
                effects.count(payment)
            }
            try await tx.insertQueueRecord(record)
            effects.deliver(charged.notifications)
            effects.wake(client.feedKey)
            return try await ledger.entryRows(for: record, written: (payment, charged.transaction), in: tx)
        }
        return try ledger.entry(rows)
    }

    /// Decides a new payment's fate and makes the queue record that tells the client; charges when it is due, into
    /// `charged`.
    private func decide(
        _ payment: inout Payment, _ order: PaymentOrder, client: ClientSession, now: Date,
        charged: inout Charged, in tx: any StorageTransaction
    ) async throws -> QueueRecord {
        let account = client.account
        let fromApp: Bool
        var askToBuy = false
        switch order.origin {
        case .app(let asked):
            fromApp = true
            askToBuy = asked
        case .outsideApp, .promoted:
            fromApp = false
        }
        if fromApp, client.environment == .sandbox,
            let code = try await tx.consumeArmedFailure(appId: client.app.id, api: .purchase)
        {
            return try await fail(&payment, Self.injectedFailure(.purchase, code: code), now: now, in: tx)
        }
        let product: Product
        do {
            product = try await sellableProduct(payment.productId, client: client, in: tx)
        } catch let error as KioskError where fromApp {
            return try await fail(&payment, error, now: now, in: tx)
        }
        try order.checkQuantity(of: product)
        if case .promoted = order.origin {
            return try await ledger.queueRecord(.promoted, for: payment, now: now, in: tx)
        }
        if !fromApp {
            try await Self.ensureAppTransaction(
                environment: client.environment, appId: client.app.id, accountId: account.id, now: now, in: tx)
        }
        let owned =
            product.type == .nonConsumable
            ? try await ownedTransaction(of: product.productId, client: client, in: tx)?.id : nil
        switch PaymentDecision.decide(
            account: account, environment: client.environment, inApp: fromApp, askToBuy: askToBuy,
            ownedTransactionId: owned)
        {
        case .deliverOwned(let transactionId):
            payment.state = .purchased
            payment.transactionId = transactionId
            return try await ledger.queueRecord(
                .purchased, for: payment, transactionId: transactionId, now: now, in: tx)
        case .askParent:
            payment.state = .deferred
            return try await ledger.queueRecord(.deferred, for: payment, now: now, finished: true, in: tx)
        case .interrupt:
            payment.state = .interrupted
            payment.errorCode = StoreKitErrorCode.unknown.rawValue
            payment.errorReason = .purchaseInterrupted
            return try await ledger.queueRecord(.failed, for: payment, now: now, in: tx)
        case .refuse(let code):
            let declined = code == .paymentDeclined
            return try await fail(
                &payment,
                KioskError(
                    code,
                    declined
                        ? "The account's payment method was declined."
                        : "The account's payment method has insufficient funds.",
                    storeKitCode: declined
                        ? StoreKitErrorCode.paymentNotAllowed.rawValue : StoreKitErrorCode.paymentInvalid.rawValue),
                now: now, in: tx)
        case .charge:
            do {
                return try await charge(
                    &payment, product: product, client: client, now: now, offer: order.offer, charged: &charged,
                    in: tx)
            } catch let refusal as PurchaseRefusal where fromApp {
                return try await fail(&payment, refusal.error, now: now, in: tx)
            } catch let refusal as PurchaseRefusal {
                throw refusal.error
            }
        }
    }

    /// Charges an approved payment: the purchase is made, the payment is `purchased` and its record says so, and
    /// `charged` holds its transaction and the notifications it caused. Throws ``PurchaseRefusal`` when the store
    /// refuses it (already subscribed, an offer that does not apply), having charged nothing.
    func charge(
        _ payment: inout Payment, product: Product, client: ClientSession, now: Date, offer: RequestedOffer = .none,
        charged: inout Charged, in tx: any StorageTransaction
    ) async throws -> QueueRecord {
        let purchase = try await self.purchase(
            payment, product: product, client: client, now: now, offer: offer, in: tx)
        charged.transaction = purchase.transaction
        charged.notifications += purchase.notifications
        payment.state = .purchased
        payment.transactionId = purchase.transaction.id
        payment.errorCode = nil
        payment.errorReason = nil
        return try await ledger.queueRecord(
            .purchased, for: payment, transactionId: purchase.transaction.id, now: now, in: tx)
    }

    /// The product, if this account may buy it now; else a `storeProductNotAvailable` error naming why.
    func sellableProduct(_ productId: String, client: ClientSession, in tx: any StorageTransaction) async throws
        -> Product
    {
        guard let product = try await tx.product(appId: client.app.id, productId: productId) else {
            throw KioskError(
                .unknownProduct, "The app \(client.app.bundleId) has no product '\(productId)'.", field: "productId",
                fix: "Request products first and only sell valid ones.",
                storeKitCode: StoreKitErrorCode.storeProductNotAvailable.rawValue)
        }
        let availability = ProductAvailability.evaluate(
            product: product, app: client.app, agreement: try await CatalogService.agreement(in: tx),
            environment: client.environment, storefront: client.storefront)
        if let reason = availability.reasons.first {
            throw KioskError(
                .productNotAvailable, reason.message, field: "productId", fix: reason.fix,
                storeKitCode: StoreKitErrorCode.storeProductNotAvailable.rawValue)
        }
        return product
    }

    /// The account's unrevoked purchase of a non-consumable, if it has one.
    func ownedTransaction(of productId: String, client: ClientSession, in tx: any StorageTransaction) async throws
        -> StoreTransaction?
    {
        try await visibleTransactions(client: client, in: tx).first {
            $0.productId == productId && $0.revocationDate == nil
        }
    }

    /// The account's transactions in the app, minus those hidden by a cleared purchase history.
    func visibleTransactions(client: ClientSession, in tx: any StorageTransaction) async throws -> [StoreTransaction] {
        let all = try await tx.transactions(
            accountId: client.account.id, appId: client.app.id, environment: client.environment)
        guard let cleared = client.account.historyClearedAt else { return all }
        return all.filter { $0.purchaseDate >= cleared }
    }

    func fail(_ payment: inout Payment, _ error: KioskError, now: Date, in tx: any StorageTransaction)
        async throws -> QueueRecord
    {
        payment.state = .failed
        payment.errorCode = error.storeKitCode ?? StoreKitErrorCode.unknown.rawValue
        payment.errorReason = error.code
        return try await ledger.queueRecord(.failed, for: payment, now: now, in: tx)
    }

}

/// What charging a payment made besides its queue record: its transaction, which answers the request without being
/// read back, and the notifications to deliver after commit.
struct Charged {
    var transaction: StoreTransaction?
    var notifications: [ServerNotification] = []
}

extension ClientSession {
    var feedKey: QueueFeed.Key {
        QueueFeed.Key(environment: environment, accountId: account.id, appId: app.id)
    }
}
