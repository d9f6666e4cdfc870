import Foundation
import KioskCore
import KioskProtocol
import KioskSQL
import KioskSigning
import KioskStorage

extension PurchaseService {
    /// `SKPaymentQueue.add(_:)`: charges the account once per idempotency key and answers the queue entry that
    /// says how it went. A repeated key answers the first outcome (the latest entry of that payment) and charges
    /// nothing.
    public func pay(_ request: PaymentRequest, for client: ClientSession) async throws -> QueueEntry {
        try Self.validate(request)
        do {
            return try await payOnce(request, client: client)
        } catch StorageError.uniqueViolation(let constraint) where constraint == "payments.idempotency_key" {
            // Another request with the same key committed first: answer what it did.
            return try await payOnce(request, client: client)
        }
    }

    private func payOnce(_ request: PaymentRequest, client: ClientSession) async throws -> QueueEntry {
        let now = clocks.now(client.environment)
        return try await ledger.commit(reaching: .paymentCommitted) { tx, effects in
            if let existing = try await tx.payment(
                accountId: client.account.id, appId: client.app.id, idempotencyKey: request.idempotencyKey)
            {
                return try await ledger.latestEntry(of: existing, in: tx)
            }
            var payment = Payment(
                id: UUID(), environment: client.environment, accountId: client.account.id, appId: client.app.id,
                idempotencyKey: request.idempotencyKey, productId: request.productId, quantity: request.quantity,
                applicationUsername: request.applicationUsername, appAccountToken: request.appAccountToken,
                state: .deferred, createdAt: now, updatedAt: now)
            var caused: [ServerNotification] = []
            let record = try await decide(
                &payment, askToBuy: request.simulatesAskToBuyInSandbox == true,
                offer: RequestedOffer(request), client: client, now: now, created: &caused, in: tx)
            try await tx.insertPayment(payment)
            try await tx.insertQueueRecord(record)
            effects.count(payment)
            effects.deliver(caused)
            effects.wake(client.feedKey)
            return try await ledger.entry(for: record, in: tx)
        }
    }

    /// Decides a new payment's fate and makes the queue record that tells the client; charges when it is due and
    /// adds the notifications the purchase caused to `created` (deliver them after commit).
    private func decide(
        _ payment: inout Payment, askToBuy: Bool, offer: RequestedOffer, client: ClientSession, now: Date,
        created: inout [ServerNotification], in tx: any StorageTransaction
    ) async throws -> QueueRecord {
        let account = client.account
        if client.environment == .sandbox,
            let code = try await tx.consumeArmedFailure(appId: client.app.id, api: .purchase)
        {
            return try await fail(&payment, Self.injectedFailure(.purchase, code: code), now: now, in: tx)
        }
        let product: Product
        do {
            product = try await sellableProduct(payment.productId, client: client, in: tx)
        } catch let error as KioskError {
            return try await fail(&payment, error, now: now, in: tx)
        }
        if product.type != .consumable, payment.quantity != 1 {
            throw Self.paymentInvalid(
                "quantity_not_allowed",
                "Only consumables can be bought more than once per payment; \(product.productId) is "
                    + "\(product.type.appleName).", field: "quantity")
        }
        if product.type == .nonConsumable,
            let owned = try await ownedTransaction(of: product.productId, client: client, in: tx)
        {
            // Seed 000: buying again what is already owned charges nothing and delivers the same entitlement.
            payment.state = .purchased
            payment.transactionId = owned.id
            return try await ledger.queueRecord(.purchased, for: payment, transactionId: owned.id, now: now, in: tx)
        }
        if client.environment == .sandbox, account.askToBuy || askToBuy {
            payment.state = .deferred
            return try await ledger.queueRecord(.deferred, for: payment, now: now, finished: true, in: tx)
        }
        if client.environment == .sandbox, account.interruptPurchases {
            payment.state = .interrupted
            payment.errorCode = StoreKitErrorCode.unknown.rawValue
            payment.errorReason = "purchase_interrupted"
            return try await ledger.queueRecord(.failed, for: payment, now: now, in: tx)
        }
        switch account.paymentOutcome {
        case .approve:
            let purchase: CompletedPurchase
            do {
                purchase = try await self.purchase(
                    payment, product: product, client: client, now: now, offer: offer, in: tx)
            } catch let refusal as PurchaseRefusal {
                return try await fail(&payment, refusal.error, now: now, in: tx)
            }
            created += purchase.notifications
            payment.state = .purchased
            payment.transactionId = purchase.transaction.id
            return try await ledger.queueRecord(
                .purchased, for: payment, transactionId: purchase.transaction.id, now: now, in: tx)
        case .decline:
            return try await fail(
                &payment,
                KioskError(
                    .conflict, code: "payment_declined", message: "The account's payment method was declined.",
                    storeKitCode: StoreKitErrorCode.paymentNotAllowed.rawValue), now: now, in: tx)
        case .insufficientFunds:
            return try await fail(
                &payment,
                KioskError(
                    .conflict, code: "insufficient_funds",
                    message: "The account's payment method has insufficient funds.",
                    storeKitCode: StoreKitErrorCode.paymentInvalid.rawValue), now: now, in: tx)
        }
    }

    /// The product, if this account may buy it now; else a `storeProductNotAvailable` error naming why.
    func sellableProduct(_ productId: String, client: ClientSession, in tx: any StorageTransaction) async throws
        -> Product
    {
        guard let product = try await tx.product(appId: client.app.id, productId: productId) else {
            throw KioskError(
                .notFound, code: "unknown_product",
                message: "The app \(client.app.bundleId) has no product '\(productId)'.", field: "productId",
                fix: "Request products first and only sell valid ones.",
                storeKitCode: StoreKitErrorCode.storeProductNotAvailable.rawValue)
        }
        let availability = ProductAvailability.evaluate(
            product: product, app: client.app, agreement: try await CatalogService.agreement(in: tx),
            environment: client.environment, storefront: client.storefront)
        if let reason = availability.reasons.first {
            throw KioskError(
                .conflict, code: "product_not_available", message: reason.message, field: "productId", fix: reason.fix,
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

    private func fail(_ payment: inout Payment, _ error: KioskError, now: Date, in tx: any StorageTransaction)
        async throws -> QueueRecord
    {
        payment.state = .failed
        payment.errorCode = error.storeKitCode ?? StoreKitErrorCode.unknown.rawValue
        payment.errorReason = error.code
        return try await ledger.queueRecord(.failed, for: payment, now: now, in: tx)
    }

    /// The most recent entry of a payment: what a repeated request with its idempotency key answers.
    static func validate(_ request: PaymentRequest) throws {
        if request.idempotencyKey.isEmpty || request.idempotencyKey.count > 128 {
            throw paymentInvalid(
                "invalid_idempotency_key", "The idempotency key must have 1 to 128 characters.",
                field: "idempotencyKey")
        }
        if request.productId.isEmpty {
            throw paymentInvalid("missing_product_id", "The payment names no product.", field: "productId")
        }
        if !(1...10).contains(request.quantity) {
            throw paymentInvalid(
                "invalid_quantity", "The quantity must be from 1 to 10; it was \(request.quantity).", field: "quantity")
        }
        if let plan = request.billingPlanType, plan != StoreKitConfiguration.upFrontPlan {
            throw KioskError(
                .invalidInput, code: "billing_plan_not_supported",
                message: "The billing plan '\(plan.prefix(64))' cannot be bought: Kiosk charges only billed-up-front "
                    + "plans (\(StoreKitConfiguration.upFrontPlan)). Plans with a commitment, such as MONTHLY (paid "
                    + "monthly for 12 months), are kept from the .storekit file but not sold.",
                field: "billingPlanType",
                fix: "Buy without billingPlanType, or with \(StoreKitConfiguration.upFrontPlan); nothing was charged.",
                storeKitCode: StoreKitErrorCode.paymentInvalid.rawValue)
        }
        if let name = request.applicationUsername, name.count > 255 {
            throw paymentInvalid(
                "application_username_too_long",
                "applicationUsername may have at most 255 characters; it has \(name.count).",
                field: "applicationUsername")
        }
    }

    static func paymentInvalid(_ code: String, _ message: String, field: String) -> KioskError {
        KioskError(
            .invalidInput, code: code, message: message, field: field,
            fix: "Correct the payment; nothing was charged.", storeKitCode: StoreKitErrorCode.paymentInvalid.rawValue)
    }
}

extension ClientSession {
    var feedKey: QueueFeed.Key {
        QueueFeed.Key(environment: environment, accountId: account.id, appId: app.id)
    }
}
