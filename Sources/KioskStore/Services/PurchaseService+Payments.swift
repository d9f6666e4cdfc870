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
                return try await latestEntry(of: existing, in: tx)
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
            effects.deliver(caused)
            effects.wake(client.feedKey)
            return try await entry(for: record, in: tx)
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
            return try await queueRecord(.purchased, for: payment, transactionId: owned.id, now: now, in: tx)
        }
        if client.environment == .sandbox, account.askToBuy || askToBuy {
            payment.state = .deferred
            return try await queueRecord(.deferred, for: payment, now: now, finished: true, in: tx)
        }
        if client.environment == .sandbox, account.interruptPurchases {
            payment.state = .interrupted
            payment.errorCode = StoreKitErrorCode.unknown.rawValue
            payment.errorReason = "purchase_interrupted"
            return try await queueRecord(.failed, for: payment, now: now, in: tx)
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
            return try await queueRecord(
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

    /// Records the charge of `payment` as a signed, durable transaction and returns it. A resubscription or
    /// upgrade continues the subscription's `original` transaction (id and purchase date); an `offer` sets what
    /// the first period costs and how long it lasts.
    func charge(
        _ payment: Payment, product: Product, client: ClientSession, now: Date,
        original: (transactionId: Int64, purchaseDate: Date)? = nil, offer: OfferTerms? = nil,
        in tx: any StorageTransaction
    ) async throws -> StoreTransaction {
        guard let unitPrice = product.pricing.price(in: client.storefront) else {
            throw KioskError.conflict(
                "no_price_in_storefront", "The product \(product.productId) has no price in \(client.storefront.code).",
                fix: "Price the product for the storefront.")
        }
        let id = try await tx.nextIdentifier(
            client.environment == .production ? .productionTransactionId : .sandboxTransactionId)
        // An auto-renewable's first period: its expiry, and a line item id for the period.
        let period = product.type == .autoRenewable ? product.duration : nil
        let webOrderLineItemId: Int64? =
            if period != nil { try await tx.nextIdentifier(.webOrderLineItemId) } else { nil }
        var transaction = StoreTransaction(
            id: id, environment: client.environment, appId: client.app.id, accountId: client.account.id,
            productId: product.productId, productType: product.type,
            originalTransactionId: original?.transactionId ?? id, purchaseDate: now,
            originalPurchaseDate: original?.purchaseDate ?? now, quantity: payment.quantity,
            priceMinorUnits: offer?.priceMinorUnits ?? unitPrice * payment.quantity,
            currency: client.storefront.currency.code, storefront: client.storefront.code,
            storefrontId: client.storefront.appleId, applicationUsername: payment.applicationUsername,
            appAccountToken: payment.appAccountToken ?? payment.applicationUsername.flatMap(UUID.init(uuidString:)),
            orderId: Self.orderId(), subscriptionGroupId: product.subscription?.groupId,
            webOrderLineItemId: webOrderLineItemId,
            expiresDate: offer?.end(from: now, environment: client.environment)
                ?? period?.end(from: now, environment: client.environment),
            offer: offer?.applied, signedTransaction: "", transactionReceipt: "")
        try sign(&transaction, bundleId: client.app.bundleId, now: now)
        try await tx.insertTransaction(transaction)
        return transaction
    }

    /// Makes the transaction's JWS and iOS 6-style receipt: when the transaction is created, and again when it
    /// changes (a new app account token, a refund, an extension…). Each signing is a new revision.
    func sign(_ transaction: inout StoreTransaction, bundleId: String, now: Date) throws {
        transaction.revision += 1
        let currency = Storefront.named(transaction.storefront)?.currency
        let payload = JWSTransactionDecodedPayload(
            transactionId: String(transaction.id), originalTransactionId: String(transaction.originalTransactionId),
            webOrderLineItemId: transaction.webOrderLineItemId.map(String.init), bundleId: bundleId,
            productId: transaction.productId,
            subscriptionGroupIdentifier: transaction.subscriptionGroupId.map(String.init),
            purchaseDate: transaction.purchaseDate.millisecondsSince1970,
            originalPurchaseDate: transaction.originalPurchaseDate.millisecondsSince1970,
            expiresDate: transaction.expiresDate?.millisecondsSince1970, quantity: transaction.quantity,
            type: transaction.productType.appleName,
            appAccountToken: transaction.appAccountToken?.uuidString.lowercased(),
            signedDate: now.millisecondsSince1970, revocationReason: transaction.revocationReason,
            revocationDate: transaction.revocationDate?.millisecondsSince1970,
            isUpgraded: transaction.isUpgraded ? true : nil, offerType: transaction.offer?.type.rawValue,
            offerIdentifier: transaction.offer?.identifier,
            environment: transaction.environment.appleName, storefront: transaction.storefront,
            storefrontId: String(transaction.storefrontId), transactionReason: transaction.transactionReason.rawValue,
            currency: transaction.currency,
            price: Self.milliunits(transaction.priceMinorUnits, exponent: currency?.minorUnitExponent ?? 2),
            offerDiscountType: transaction.offer?.paymentMode.appleName, offerPeriod: transaction.offer?.period,
            appTransactionId: String(
                Self.appTransactionId(
                    environment: transaction.environment, appId: transaction.appId, accountId: transaction.accountId)),
            revocationType: transaction.revocationType,
            revocationPercentage: Self.revocationPercentage(of: transaction), kioskRevision: transaction.revision)
        transaction.signedTransaction = try signing.sign(payload, environment: transaction.environment)
        transaction.transactionReceipt = try signing.sign(Self.transactionReceipt(of: transaction, bundleId: bundleId))
    }

    /// Apple's `revocationPercentage` (milliunits of a percent) of a revoked transaction: how much of its price
    /// was refunded.
    static func revocationPercentage(of transaction: StoreTransaction) -> Int? {
        guard transaction.revocationDate != nil, transaction.priceMinorUnits > 0 else { return nil }
        return transaction.refundedMinorUnits * 100_000 / transaction.priceMinorUnits
    }

    /// The iOS 6-style receipt of a transaction, field by field.
    static func transactionReceipt(of transaction: StoreTransaction, bundleId: String) -> TransactionReceipt {
        TransactionReceipt(
            environment: transaction.environment, transactionId: String(transaction.id),
            originalTransactionId: String(transaction.originalTransactionId), productId: transaction.productId,
            itemId: String(itemId(appId: transaction.appId, productId: transaction.productId)),
            quantity: transaction.quantity, purchaseDate: transaction.purchaseDate,
            originalPurchaseDate: transaction.originalPurchaseDate, bundleId: bundleId,
            bundleVersion: applicationVersion, uniqueIdentifier: transaction.accountId.uuidString.lowercased(),
            expiresDate: transaction.expiresDate, webOrderLineItemId: transaction.webOrderLineItemId.map(String.init))
    }

    /// The app version receipts name: Kiosk does not know the installed build, so it writes what Apple's sandbox
    /// writes (`1.0`).
    static let applicationVersion = "1.0"

    /// A stable numeric App Store id for a product (`item-id`), derived from the app and product ids.
    static func itemId(appId: App.ID, productId: String) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in "\(appId)/\(productId)".utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return hash
    }

    /// Apple's `price`: thousandths of the currency's main unit.
    static func milliunits(_ minorUnits: Int, exponent: Int) -> Int64 {
        var value = Int64(minorUnits)
        for _ in 0..<max(0, 3 - exponent) { value *= 10 }
        return value
    }

    /// A 10-character invoice number like Apple's order ids (`MK5TTTVWJH`).
    static func orderId() -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        return String((0..<10).map { _ in alphabet.randomElement()! })
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
        return try await queueRecord(.failed, for: payment, now: now, in: tx)
    }

    /// A new queue record for `payment`, with the next sequence.
    func queueRecord(
        _ state: QueueRecord.State, for payment: Payment, transactionId: Int64? = nil, now: Date,
        finished: Bool = false,
        in tx: any StorageTransaction
    ) async throws -> QueueRecord {
        QueueRecord(
            sequence: try await tx.nextIdentifier(.queueEntry), environment: payment.environment,
            accountId: payment.accountId, appId: payment.appId, state: state, paymentId: payment.id,
            productId: payment.productId, quantity: payment.quantity, transactionId: transactionId,
            errorCode: state == .failed ? payment.errorCode : nil,
            errorReason: state == .failed ? payment.errorReason : nil,
            createdAt: now, finishedAt: finished ? now : nil)
    }

    /// The most recent entry of a payment: what a repeated request with its idempotency key answers.
    private func latestEntry(of payment: Payment, in tx: any StorageTransaction) async throws -> QueueEntry {
        guard let record = try await tx.queueRecords(paymentId: payment.id).last else {
            throw StorageError.engine(message: "payment \(payment.id) has no queue entry")
        }
        return try await entry(for: record, in: tx)
    }

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
