import Foundation
import KioskCore
import KioskProtocol
import KioskSigning

/// A charged (or restored) transaction, decoded from its signed form, as in StoreKit 2.
///
/// Deliver the content of a verified transaction, then call ``finish()``.
public struct Transaction: Identifiable, Sendable, Hashable {
    /// The store's transaction id.
    public let id: UInt64
    /// The first purchase this transaction renews or restores.
    public let originalID: UInt64
    public let productID: String
    public let productType: Product.ProductType
    public let appBundleID: String
    public let purchaseDate: Date
    public let originalPurchaseDate: Date
    /// When an auto-renewable subscription's period ends.
    public let expirationDate: Date?
    public let purchasedQuantity: Int
    /// The `appAccountToken` purchase option the app gave.
    public let appAccountToken: UUID?
    public let environment: AppStore.Environment
    /// What the customer paid, exact (the signed price is in milliunits).
    public let price: Decimal
    /// ISO 4217 code of ``price``.
    public let currencyCode: String
    /// ISO 3166-1 alpha-3 of the storefront.
    public let storefrontCountryCode: String
    public let signedDate: Date
    public let revocationDate: Date?
    /// An auto-renewable's billing plan: `.upFront`, or `.monthly` for a billing period of a 12-month commitment.
    public let billingPlanType: Product.SubscriptionInfo.BillingPlanType?
    /// A `.monthly` transaction's place in its commitment. Use ``expirationDate`` for access; the commitment's
    /// expiration date only shows progress (Apple's "Supporting monthly subscriptions with a 12-month commitment").
    public let commitmentInfo: CommitmentInfo?
    /// The compact JWS this transaction was decoded from, for the app's server.
    public let jwsRepresentation: String
    private let client: KioskStoreClient

    /// Nil when the ids are not numbers or a date is outside `Date.kioskRange`: such a payload cannot be decoded.
    init?(payload: JWSTransactionDecodedPayload, jws: String, client: KioskStoreClient) {
        guard let id = UInt64(payload.transactionId), let originalID = UInt64(payload.originalTransactionId),
            let purchaseDate = Date(checkedMillisecondsSince1970: payload.purchaseDate),
            let originalPurchaseDate = Date(checkedMillisecondsSince1970: payload.originalPurchaseDate),
            let signedDate = Date(checkedMillisecondsSince1970: payload.signedDate),
            let expirationDate = Self.optionalDate(payload.expiresDate),
            let revocationDate = Self.optionalDate(payload.revocationDate),
            let commitmentExpiration = Self.optionalDate(payload.commitmentInfo?.commitmentExpiresDate)
        else {
            return nil
        }
        self.id = id
        self.originalID = originalID
        productID = payload.productId
        productType = Product.ProductType(rawValue: payload.type)
        appBundleID = payload.bundleId
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expirationDate = expirationDate
        purchasedQuantity = payload.quantity
        appAccountToken = payload.appAccountToken.flatMap(UUID.init(uuidString:))
        environment = AppStore.Environment(rawValue: payload.environment)
        price = PriceFormatting.decimal(milliunits: payload.price)
        currencyCode = payload.currency
        storefrontCountryCode = payload.storefront
        self.signedDate = signedDate
        self.revocationDate = revocationDate
        billingPlanType = payload.billingPlanType.map(Product.SubscriptionInfo.BillingPlanType.init)
        commitmentInfo = payload.commitmentInfo.flatMap { info in
            commitmentExpiration.map {
                CommitmentInfo(
                    billingPeriodNumber: info.billingPeriodNumber, totalBillingPeriods: info.totalBillingPeriods,
                    expirationDate: $0, price: PriceFormatting.decimal(milliunits: info.commitmentPrice))
            }
        }
        jwsRepresentation = jws
        self.client = client
    }

    /// Where a billing period of the monthly plan stands in its 12-month commitment (StoreKit's
    /// `Transaction.CommitmentInfo`).
    public struct CommitmentInfo: Sendable, Hashable {
        /// This period's number, 1 to ``totalBillingPeriods``.
        public let billingPeriodNumber: Int
        public let totalBillingPeriods: Int
        /// When the commitment ends (a late billing recovery moves it).
        public let expirationDate: Date
        /// The commitment's total price, exact.
        public let price: Decimal
    }

    /// Tells the store the content is delivered; the transaction stops coming back. Finishing twice is harmless.
    public func finish() async {
        client.paymentQueue.finish(transactionId: String(id))
    }

    public static func == (lhs: Transaction, rhs: Transaction) -> Bool {
        lhs.jwsRepresentation == rhs.jwsRepresentation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(jwsRepresentation)
    }
}

extension Transaction {
    /// An optional date of the payload, checked: `.some(nil)` when absent, nil when outside `Date.kioskRange`.
    private static func optionalDate(_ milliseconds: Int64?) -> Date?? {
        guard let milliseconds else { return .some(nil) }
        return Date(checkedMillisecondsSince1970: milliseconds).map { .some($0) }
    }
}

// MARK: - Sequences

extension Transaction {
    /// Transactions that arrive outside a `purchase()` call: approved Ask to Buy, other devices, purchases
    /// re-sent after a crash, restores; the first listener also gets the unfinished ones once. Start listening
    /// at launch.
    public static var updates: Updates { Updates(client: KioskKit.sharedClient) }

    /// ``updates`` of an explicit client.
    public static func updates(client: KioskStoreClient) -> Updates { Updates(client: client) }

    /// The purchased and restored transactions not finished yet.
    public static var unfinished: Transactions { unfinished(client: KioskKit.sharedClient) }

    /// ``unfinished`` of an explicit client.
    public static func unfinished(client: KioskStoreClient) -> Transactions {
        Transactions {
            await client.verifiedTransactions(
                client.paymentQueue.unfinishedTransactionEntries.compactMap(\.transaction))
        }
    }

    /// What the account owns now: non-consumables and active subscriptions, fetched from the store. Empty if the
    /// store cannot be reached (the failure is logged).
    public static var currentEntitlements: Transactions { currentEntitlements(client: KioskKit.sharedClient) }

    /// ``currentEntitlements`` of an explicit client.
    public static func currentEntitlements(client: KioskStoreClient) -> Transactions {
        Transactions {
            do {
                return await client.verifiedTransactions(try client.entitlements().transactions)
            } catch {
                client.configuration.logger.warning(
                    "Could not fetch entitlements.", metadata: ["error": "\(error)"])
                return []
            }
        }
    }

    /// The endless sequence behind ``updates``.
    public struct Updates: AsyncSequence, Sendable {
        public typealias Element = VerificationResult<Transaction>
        let client: KioskStoreClient

        public func makeAsyncIterator() -> Iterator {
            Iterator(client: client, entries: client.paymentQueue.transactionEntries().makeAsyncIterator())
        }

        public struct Iterator: AsyncIteratorProtocol {
            let client: KioskStoreClient
            var entries: AsyncStream<QueueEntry>.Iterator

            public mutating func next() async -> VerificationResult<Transaction>? {
                while let entry = await entries.next() {
                    guard let info = entry.transaction else { continue }
                    if let result = await client.verifiedTransaction(info.signedTransaction) { return result }
                }
                return nil
            }
        }
    }

    /// A finite sequence of transactions fetched when iteration starts.
    public struct Transactions: AsyncSequence, Sendable {
        public typealias Element = VerificationResult<Transaction>
        let fetch: @Sendable () async -> [VerificationResult<Transaction>]

        public func makeAsyncIterator() -> Iterator { Iterator(fetch: fetch) }

        public struct Iterator: AsyncIteratorProtocol {
            let fetch: @Sendable () async -> [VerificationResult<Transaction>]
            var fetched: IndexingIterator<[VerificationResult<Transaction>]>?

            public mutating func next() async -> VerificationResult<Transaction>? {
                if fetched == nil { fetched = await fetch().makeIterator() }
                return fetched?.next()
            }
        }
    }
}

extension KioskStoreClient {
    /// Verifies a signed transaction; nil (and a log line) when it cannot even be decoded.
    func verifiedTransaction(_ jws: String) async -> VerificationResult<Transaction>? {
        guard let (payload, error) = await verifier.verify(jws),
            let transaction = Transaction(payload: payload, jws: jws, client: self)
        else {
            configuration.logger.error("A signed transaction could not be decoded; ignoring it.")
            return nil
        }
        return error.map { .unverified(transaction, $0) } ?? .verified(transaction)
    }

    func verifiedTransactions(_ infos: [TransactionInfo]) async -> [VerificationResult<Transaction>] {
        var results: [VerificationResult<Transaction>] = []
        for info in infos {
            if let result = await verifiedTransaction(info.signedTransaction) { results.append(result) }
        }
        return results
    }
}
