import Foundation
import KioskCore
import KioskProtocol
import KioskSQL
import KioskSigning
import KioskStorage

// The ledger's writes inside a change: charging (a new signed transaction), signing again after a change, and
// queue records with their wire form. Each runs inside the caller's ``StoreLedger/commit(reaching:_:)``.

/// A queue record and the rows its wire form shows, read in a database transaction; ``StoreLedger/entry(_:)`` makes
/// the wire form.
struct QueueEntryRows: Sendable {
    var record: QueueRecord
    var payment: Payment?
    /// The record's transaction, with the bundle id of its app, which its receipt names.
    var transaction: (row: StoreTransaction, bundleId: String)?
}

/// What a new transaction is, before it has identifiers and signatures.
struct TransactionTerms {
    var environment: StoreEnvironment
    var app: App
    var accountId: UUID
    var product: Product
    var storefront: Storefront
    /// The subscription's first transaction, which a renewal, resubscription or upgrade continues.
    var original: (transactionId: Int64, purchaseDate: Date)?
    var purchaseDate: Date
    var quantity: Int
    var priceMinorUnits: Int
    var applicationUsername: String?
    var appAccountToken: UUID?
    var expiresDate: Date?
    var reason: TransactionReason
    var offer: AppliedOffer?
    /// A billing period of the monthly plan: its place in the commitment.
    var commitment: TransactionCommitment?
}

extension StoreLedger {
    /// Records the charge of `payment` as a signed, durable transaction and returns it. A resubscription or
    /// upgrade continues the subscription's `original` transaction (id and purchase date); an `offer` sets what
    /// the first period costs and how long it lasts. Under the `monthly` plan the charge is the first monthly payment
    /// of a new 12-month commitment (no offer applies): it lasts a month, and the commitment a year.
    func charge(
        _ payment: Payment, product: Product, client: ClientSession, now: Date,
        original: (transactionId: Int64, purchaseDate: Date)? = nil, offer: OfferTerms? = nil,
        plan: BillingPlanType = .billedUpFront, in tx: any StorageTransaction
    ) async throws -> StoreTransaction {
        let rules = client.account.renewalRules
        let commitment = plan == .monthly ? try Self.newCommitment(of: product, client: client, from: now) : nil
        guard let unitPrice = commitment?.periodPriceMinorUnits ?? product.pricing.price(in: client.storefront) else {
            throw KioskError(
                .noPriceInStorefront, "The product \(product.productId) has no price in \(client.storefront.code).",
                fix: "Price the product for the storefront.")
        }
        let id = try await tx.nextIdentifier(
            client.environment == .production ? .productionTransactionId : .sandboxTransactionId)
        // An auto-renewable's first period (at the tester's rate in the sandbox, like its renewals): its expiry, and a
        // line item id for the period.
        let periodEnd: Date? =
            if product.type != .autoRenewable {
                nil
            } else if let commitment {
                rules.periodEnd(of: commitment)
            } else {
                product.duration.map { rules.periodEnd($0, from: now) }
            }
        let webOrderLineItemId: Int64? =
            if periodEnd != nil { try await tx.nextIdentifier(.webOrderLineItemId) } else { nil }
        let transaction = try mint(
            TransactionTerms(
                environment: client.environment, app: client.app, accountId: client.account.id, product: product,
                storefront: client.storefront, original: original, purchaseDate: now, quantity: payment.quantity,
                priceMinorUnits: (commitment == nil ? offer?.priceMinorUnits : nil) ?? unitPrice * payment.quantity,
                applicationUsername: payment.applicationUsername,
                appAccountToken: payment.appAccountToken
                    ?? payment.applicationUsername.flatMap(UUID.init(uuidString:)),
                expiresDate: product.type != .autoRenewable || commitment != nil
                    ? periodEnd : offer?.end(from: now, environment: client.environment) ?? periodEnd,
                reason: .purchase, offer: commitment == nil ? offer?.applied : nil, commitment: commitment),
            id: id, webOrderLineItemId: webOrderLineItemId)
        try await tx.insertTransaction(transaction)
        try await SalesLedger.recordSale(transaction, kind: .purchase, in: tx)
        return transaction
    }

    /// The first billing period of a commitment to `product`'s monthly plan that starts at `start`
    /// (``RenewalRules/newCommitment(to:in:from:)``, at the tester's rate in the sandbox). Throws
    /// `billing_plan_not_offered` when the product has no monthly plan priced in the client's storefront.
    static func newCommitment(of product: Product, client: ClientSession, from start: Date) throws
        -> TransactionCommitment
    {
        guard
            let commitment = client.account.renewalRules.newCommitment(
                to: product, in: client.storefront, from: start)
        else { throw PurchaseService.billingPlanNotOffered(product, storefront: client.storefront) }
        return commitment
    }

    /// The one place a transaction is made, for a purchase or a renewal: its fields, an order id and its first
    /// signatures. The caller inserts it and records the sale.
    func mint(_ terms: TransactionTerms, id: Int64, webOrderLineItemId: Int64?) throws -> StoreTransaction {
        var transaction = Self.unsignedTransaction(terms, id: id, webOrderLineItemId: webOrderLineItemId)
        try sign(&transaction, bundleId: terms.app.bundleId, now: terms.purchaseDate)
        return transaction
    }

    /// A new transaction's fields and order id, not yet signed (revision 0): ``mint(_:id:webOrderLineItemId:)``
    /// signs it at once; a renewal batch signs it beside its statements (``signingPayload(for:bundleId:now:)``).
    static func unsignedTransaction(_ terms: TransactionTerms, id: Int64, webOrderLineItemId: Int64?)
        -> StoreTransaction
    {
        StoreTransaction(
            id: id, environment: terms.environment, appId: terms.app.id, accountId: terms.accountId,
            productId: terms.product.productId, productType: terms.product.type,
            originalTransactionId: terms.original?.transactionId ?? id, purchaseDate: terms.purchaseDate,
            originalPurchaseDate: terms.original?.purchaseDate ?? terms.purchaseDate, quantity: terms.quantity,
            priceMinorUnits: terms.priceMinorUnits, currency: terms.storefront.currency.code,
            storefront: terms.storefront.code, storefrontId: terms.storefront.appleId,
            applicationUsername: terms.applicationUsername, appAccountToken: terms.appAccountToken,
            orderId: orderId(), subscriptionGroupId: terms.product.subscription?.groupId,
            webOrderLineItemId: webOrderLineItemId, expiresDate: terms.expiresDate, transactionReason: terms.reason,
            offer: terms.offer, commitment: terms.commitment, signedTransaction: "")
    }

    /// Makes the transaction's JWS: when the transaction is created, and again when it changes (a new app account
    /// token, a refund, an extension…). Each signing is a new revision. Its iOS 6-style receipt is signed only when
    /// asked for (``receipt(of:bundleId:signing:)``), outside the database transaction where it can be: signing it
    /// inside took a sixth of a renewal's CPU and a tenth of a purchase's time on SQLite's one writer.
    func sign(_ transaction: inout StoreTransaction, bundleId: String, now: Date) throws {
        let payload = Self.signingPayload(for: &transaction, bundleId: bundleId, now: now)
        transaction.signedTransaction = try context.signing.sign(payload, environment: transaction.environment)
    }

    /// Starts the transaction's next revision and returns the JWS payload (Apple's `JWSTransactionDecodedPayload`)
    /// that signs it as of `now`.
    static func signingPayload(for transaction: inout StoreTransaction, bundleId: String, now: Date)
        -> JWSTransactionDecodedPayload
    {
        transaction.revision += 1
        let currency = Storefront.named(transaction.storefront)?.currency
        return JWSTransactionDecodedPayload(
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
            offerDiscountType: transaction.offer?.discountType, offerPeriod: transaction.offer?.period,
            appTransactionId: String(
                PurchaseService.appTransactionId(
                    environment: transaction.environment, appId: transaction.appId, accountId: transaction.accountId)),
            revocationType: transaction.revocationType,
            revocationPercentage: Self.revocationPercentage(of: transaction),
            billingPlanType: transaction.billingPlanType?.rawValue,
            commitmentInfo: transaction.commitment.map {
                TransactionCommitmentInfo(
                    billingPeriodNumber: $0.billingPeriodNumber,
                    commitmentExpiresDate: $0.expiresDate.millisecondsSince1970,
                    commitmentPrice: Self.milliunits($0.priceMinorUnits, exponent: currency?.minorUnitExponent ?? 2),
                    totalBillingPeriods: $0.totalBillingPeriods)
            }, kioskRevision: transaction.revision)
    }

    /// The transaction's iOS 6-style receipt, signed now. Its fields come from the transaction alone, so every copy
    /// says the same; only the signature's bytes differ.
    static func receipt(of transaction: StoreTransaction, bundleId: String, signing: StoreSigning) throws -> String {
        try signing.sign(transactionReceipt(of: transaction, bundleId: bundleId))
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
        // Ten letters of a 32-letter alphabet are 50 random bits: one number from the system's generator, five bits a
        // letter, instead of one system call per letter.
        var bits = UInt64.random(in: 0...UInt64.max)
        var letters: [Character] = []
        for _ in 0..<10 {
            letters.append(orderIdAlphabet[Int(bits & 31)])
            bits >>= 5
        }
        return String(letters)
    }

    private static let orderIdAlphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")

    // The two places queue records are made: for a payment, and about a transaction no payment asked for (a
    // renewal, a restore, a revocation or its reversal).

    /// A new queue record for `payment`, with the next sequence. A promoted entry belongs to no payment: nothing is
    /// paid until the app's delegate agrees.
    func queueRecord(
        _ state: QueueRecord.State, for payment: Payment, transactionId: Int64? = nil, now: Date,
        finished: Bool = false,
        in tx: any StorageTransaction
    ) async throws -> QueueRecord {
        QueueRecord(
            sequence: try await tx.nextIdentifier(.queueEntry), environment: payment.environment,
            accountId: payment.accountId, appId: payment.appId, state: state,
            paymentId: state == .promoted ? nil : payment.id,
            productId: payment.productId, quantity: payment.quantity, transactionId: transactionId,
            errorCode: state == .failed ? payment.errorCode : nil,
            errorReason: state == .failed ? payment.errorReason : nil,
            createdAt: now, finishedAt: finished ? now : nil)
    }

    /// A new queue record telling the account's devices of `transaction`, numbered `sequence`; a restore names the
    /// identifier the restored transaction gets.
    static func queueRecord(
        _ state: QueueRecord.State, about transaction: StoreTransaction, sequence: Int64,
        restoreTransactionId: Int64? = nil, now: Date, finished: Bool = false
    ) -> QueueRecord {
        QueueRecord(
            sequence: sequence, environment: transaction.environment, accountId: transaction.accountId,
            appId: transaction.appId, state: state, paymentId: nil, productId: transaction.productId,
            quantity: transaction.quantity, transactionId: transaction.id,
            restoreTransactionId: restoreTransactionId, createdAt: now, finishedAt: finished ? now : nil)
    }

    /// The rows of `payment`'s latest queue entry: what a repeated request with its idempotency key answers.
    func latestEntryRows(of payment: Payment, in tx: any StorageTransaction) async throws -> QueueEntryRows {
        guard let record = try await tx.queueRecords(paymentId: payment.id).last else {
            throw StorageError.engine(message: "payment \(payment.id) has no queue entry")
        }
        return try await entryRows(for: record, in: tx)
    }

    /// What the wire form of `record` is made of (``entry(_:)``), read in `tx`. `written` are rows the caller wrote in
    /// `tx`: those that are the record's are used as they are instead of being read back.
    func entryRows(
        for record: QueueRecord, written: (payment: Payment?, transaction: StoreTransaction?) = (nil, nil),
        in tx: any StorageTransaction
    ) async throws -> QueueEntryRows {
        var payment = written.payment.flatMap { $0.id == record.paymentId ? $0 : nil }
        if payment == nil, let id = record.paymentId { payment = try await tx.payment(id: id) }
        var transaction = written.transaction.flatMap {
            $0.id == record.transactionId && $0.environment == record.environment ? $0 : nil
        }
        if transaction == nil, let id = record.transactionId {
            transaction = try await tx.transaction(id: id, environment: record.environment)
        }
        let sold = try await transaction.asyncMap { transaction in
            guard let app = try await tx.app(id: transaction.appId) else {
                throw StorageError.engine(message: "transaction \(transaction.id) lost its app \(transaction.appId)")
            }
            return (row: transaction, bundleId: app.bundleId)
        }
        return QueueEntryRows(record: record, payment: payment, transaction: sold)
    }

    /// The wire form of a record whose rows were read, with its transaction's iOS 6-style receipt signed now. Callers
    /// make it once their database transaction ended, so that SQLite's one writer does not wait for the signature.
    func entry(_ rows: QueueEntryRows) throws -> QueueEntry {
        let record = rows.record
        let payment = rows.payment
        let transaction = rows.transaction?.row
        let info = try rows.transaction.map { transaction, bundleId in
            let receipt = try Self.receipt(of: transaction, bundleId: bundleId, signing: context.signing)
            return record.restoreTransactionId.map {
                Self.info(transaction, receipt: receipt, restoredAs: $0, at: record.createdAt)
            } ?? Self.info(transaction, receipt: receipt)
        }
        let error = record.errorCode.map { code in
            StoreKitErrorInfo(
                skErrorCode: code, code: record.errorReason?.rawValue ?? "failed",
                message: Self.failureMessage(record.errorReason, code: code))
        }
        return QueueEntry(
            sequence: record.sequence, state: Self.wireState(record.state),
            paymentId: record.paymentId, idempotencyKey: payment?.idempotencyKey, productId: record.productId,
            quantity: record.quantity,
            applicationUsername: payment?.applicationUsername ?? transaction?.applicationUsername,
            appAccountToken: payment?.appAccountToken ?? transaction?.appAccountToken, transaction: info, error: error,
            date: record.createdAt.millisecondsSince1970, finished: record.finishedAt != nil)
    }

    static func wireState(_ state: QueueRecord.State) -> QueueEntryState {
        switch state {
        case .purchased: .purchased
        case .failed: .failed
        case .deferred: .deferred
        case .restored: .restored
        case .promoted: .promoted
        case .revoked: .revoked
        }
    }

    /// The wire form of a transaction, with its `receipt` (``receipt(of:bundleId:signing:)``).
    static func info(_ transaction: StoreTransaction, receipt: String) -> TransactionInfo {
        TransactionInfo(
            transactionId: String(transaction.id), originalTransactionId: String(transaction.originalTransactionId),
            purchaseDate: transaction.purchaseDate.millisecondsSince1970,
            originalPurchaseDate: transaction.originalPurchaseDate.millisecondsSince1970,
            signedTransaction: transaction.signedTransaction, transactionReceipt: receipt)
    }

    /// A restored transaction: a new identifier and date; the original is the restored purchase. Its signed forms
    /// are the original purchase's (StoreKit 2 has no restored transactions of its own).
    static func info(_ transaction: StoreTransaction, receipt: String, restoredAs id: Int64, at date: Date)
        -> TransactionInfo
    {
        TransactionInfo(
            transactionId: String(id), originalTransactionId: String(transaction.id),
            purchaseDate: date.millisecondsSince1970,
            originalPurchaseDate: transaction.purchaseDate.millisecondsSince1970,
            signedTransaction: transaction.signedTransaction, transactionReceipt: receipt)
    }

    static func failureMessage(_ reason: ErrorCode?, code: Int) -> String {
        switch reason {
        case .purchaseInterrupted:
            "The purchase was interrupted (the sandbox tester has interrupted purchases on); it completes once resolved."
        case .paymentDeclined: "The account's payment method was declined."
        case .insufficientFunds: "The account's payment method has insufficient funds."
        case .askToBuyDeclined: "The parent declined the Ask to Buy request."
        case .injectedFailure: "The sandbox test controls made this purchase fail."
        case .alreadySubscribed: "The account is already subscribed to this product; nothing was charged."
        case .missingOfferParams:
            "The promotional offer lacks an identifier, key identifier, nonce, signature or timestamp."
        case .unknownOffer, .offerNotApplicable: "The product has no such offer."
        case .ineligibleForOffer: "Promotional offers are for customers who have or had a subscription in the group."
        case .unknownOfferKey: "The promotional offer was signed with a key that is not an active key of the app."
        case .offerSignatureExpired: "The promotional offer's signature is more than 24 hours old."
        case .invalidOfferSignature: "The promotional offer's signature does not verify."
        case .offerNonceReused: "The promotional offer's nonce was already redeemed."
        case .noOfferPrice: "The offer has no price in the account's storefront."
        case .winBackOfferInactive: "The win-back offer is not running now."
        case .winBackStillSubscribed:
            "Win-back offers are for customers whose subscription in the group ended; the account is still subscribed."
        case .winBackPaidTooLittle: "The account paid for too few months in the group for this win-back offer."
        case .winBackNothingEnded: "The account has no ended subscription in the group to win back."
        case .winBackTooSoon: "The account's subscription ended too recently for this win-back offer."
        case .winBackTooLate: "The account's subscription ended too long ago for this win-back offer."
        case .winBackWaitBetweenOffers: "The account redeemed a win-back offer in the group too recently."
        case .productNotAvailable, .unknownProduct: "The product is not available for purchase."
        default: "The payment failed (SKError code \(code))."
        }
    }
}
