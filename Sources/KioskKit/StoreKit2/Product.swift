import Foundation
import KioskProtocol

/// A product on sale to the signed-in account, as in StoreKit 2.
///
/// ```swift
/// let products = try await Product.products(for: ["com.example.coins"])
/// switch try await products[0].purchase(options: [.quantity(3)]) {
/// case .success(.verified(let transaction)): deliver(transaction); await transaction.finish()
/// case .success(.unverified(_, let error)): print("not trusted: \(error)")
/// case .pending: print("waiting for approval")
/// case .userCancelled: break
/// }
/// ```
public struct Product: Identifiable, Sendable {
    public let id: String
    public let type: ProductType
    public let displayName: String
    public let description: String
    /// The price in the storefront's currency, exact.
    public let price: Decimal
    /// The price written in the storefront's locale, e.g. `$0.99`.
    public let displayPrice: String
    /// Kiosk addition: ISO 4217 code of ``price``.
    public let currencyCode: String
    public let isFamilyShareable: Bool
    public let subscriptionGroupID: String?
    /// Auto-renewables only: the subscription's group and what the account may get in it.
    public let subscription: SubscriptionInfo?
    private let client: KioskStoreClient

    /// - Throws: ``KioskKitError`` `.invalidResponse` when the price is not a decimal number.
    init(_ info: ProductInfo, client: KioskStoreClient) throws {
        id = info.productId
        type = ProductType(wireType: info.type)
        displayName = info.localizedTitle
        description = info.localizedDescription
        price = try info.price.exactDecimal()
        currencyCode = info.price.currency
        displayPrice = PriceFormatting.format(
            price, currencyCode: currencyCode, locale: Locale(identifier: info.price.locale))
        isFamilyShareable = info.isFamilyShareable
        subscriptionGroupID = info.subscriptionGroupIdentifier
        let pricingTerms = try (info.pricingTerms ?? []).map(SubscriptionInfo.PricingTerms.init)
        subscription = info.subscriptionGroupIdentifier.map {
            SubscriptionInfo(
                subscriptionGroupID: $0, isEligibleForIntroOffer: info.isEligibleForIntroOffer ?? false,
                pricingTerms: pricingTerms)
        }
        self.client = client
    }

    /// An auto-renewable's subscription details, as `Product.SubscriptionInfo`.
    public struct SubscriptionInfo: Sendable, Hashable {
        public let subscriptionGroupID: String
        /// Whether the account gets the introductory offer (it never subscribed in the group), as the store
        /// said when the product was fetched.
        public let isEligibleForIntroOffer: Bool
        /// The billing plans on sale in the storefront: up front first, then, for a one-year subscription that has
        /// one, the monthly plan with a 12-month commitment (buy it with ``Product/PurchaseOption/billingPlanType(_:)``).
        public let pricingTerms: [PricingTerms]

        /// How a subscription bills (StoreKit's `Product.SubscriptionInfo.BillingPlanType`); the raw value is the
        /// signed transaction's `billingPlanType`.
        public struct BillingPlanType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
            public let rawValue: String

            public init(rawValue: String) {
                self.rawValue = rawValue
            }

            /// The whole period billed at its start.
            public static let upFront = BillingPlanType(rawValue: "BILLED_UPFRONT")
            /// Monthly payments through a 12-month commitment.
            public static let monthly = BillingPlanType(rawValue: "MONTHLY")

            public var description: String { rawValue }
        }

        /// One billing plan (StoreKit's `Product.SubscriptionInfo.PricingTerms`). Apple asks apps to show both the
        /// billing price and the commitment's total before a purchase of the monthly plan.
        public struct PricingTerms: Sendable, Hashable {
            public let billingPlanType: BillingPlanType
            /// What each billing period charges, exact.
            public let billingPrice: Decimal
            /// ``billingPrice`` written in the storefront's locale.
            public let billingDisplayPrice: String
            /// One billing period, ISO 8601 (`P1M` for the monthly plan).
            public let billingPeriod: String
            /// The commitment the billing periods make up.
            public let commitmentInfo: CommitmentInfo

            /// The commitment of a billing plan (StoreKit's `Product.SubscriptionInfo.CommitmentInfo`).
            public struct CommitmentInfo: Sendable, Hashable {
                /// The commitment's total: 12 monthly payments, or the period's price up front.
                public let price: Decimal
                public let displayPrice: String
                /// The commitment, ISO 8601 (`P1Y` for the monthly plan).
                public let period: String
                /// Billing periods in the commitment (12 for the monthly plan).
                public let billingPeriodCount: Int
            }

            init(_ info: PricingTermsInfo) throws {
                billingPlanType = BillingPlanType(rawValue: info.billingPlanType)
                billingPrice = try info.billingPrice.exactDecimal()
                billingDisplayPrice = PriceFormatting.format(
                    billingPrice, currencyCode: info.billingPrice.currency,
                    locale: Locale(identifier: info.billingPrice.locale))
                billingPeriod = info.billingPeriod
                let total = try info.commitmentPrice.exactDecimal()
                commitmentInfo = CommitmentInfo(
                    price: total,
                    displayPrice: PriceFormatting.format(
                        total, currencyCode: info.commitmentPrice.currency,
                        locale: Locale(identifier: info.commitmentPrice.locale)),
                    period: info.commitmentPeriod, billingPeriodCount: info.billingPeriodCount)
            }
        }
    }

    /// The products on sale among `identifiers`, through the shared client; unknown ones are left out.
    public static func products(for identifiers: some Collection<String>) async throws -> [Product] {
        try await products(for: identifiers, client: KioskKit.sharedClient)
    }

    /// ``products(for:)`` through an explicit client.
    ///
    /// - Throws: ``SKError`` when the store cannot answer.
    public static func products(
        for identifiers: some Collection<String>, client: KioskStoreClient
    ) async throws -> [Product] {
        do {
            return try await client.products(for: Array(identifiers)).products.map { try Product($0, client: client) }
        } catch {
            throw SKError(wrapping: error)
        }
    }

    /// Buys the product. The payment goes through the device's durable queue: if the app dies before the answer,
    /// the next launch re-sends it with the same key and the outcome arrives in `Transaction.updates`.
    ///
    /// - Returns: `.success` with the verified (or not) transaction, `.pending` for Ask to Buy (the outcome
    ///   arrives in `Transaction.updates`), or `.userCancelled`.
    /// - Throws: ``SKError`` when the store refuses the payment, or `CancellationError` if the client closed
    ///   before an answer.
    public func purchase(options: Set<PurchaseOption> = []) async throws -> PurchaseResult {
        var request = PaymentRequest(productId: id, idempotencyKey: UUID().uuidString)
        for option in options {
            switch option.base {
            case .quantity(let quantity): request.quantity = quantity
            case .appAccountToken(let token): request.appAccountToken = token
            case .simulatesAskToBuyInSandbox(let flag): request.simulatesAskToBuyInSandbox = flag
            case .promotionalOffer(let discount): request.paymentDiscount = discount
            case .signedPromotionalOffer(let signed): request.promotionalOfferJWS = signed
            case .introductoryOfferEligibility(let jws): request.introductoryOfferEligibilityJWS = jws
            case .winBackOffer(let offerID): request.winBackOfferId = offerID
            case .billingPlanType(let plan): request.billingPlanType = plan.rawValue
            }
        }
        switch await client.paymentQueue.purchase(request) {
        case .answered(let entry):
            switch entry.state {
            case .purchased, .restored:
                guard let info = entry.transaction,
                    let result = await client.verifiedTransaction(info.signedTransaction)
                else {
                    throw SKError(.unknown, message: "The store's transaction could not be decoded.")
                }
                return .success(result)
            case .deferred, .promoted:
                return .pending
            case .revoked:
                throw SKError(.unknown, message: "The store answered the purchase with a revocation.")
            case .failed:
                return try Self.failure(
                    entry.error ?? StoreKitErrorInfo(skErrorCode: 0, code: "unknown", message: "The payment failed."))
            }
        case .refused(let info):
            return try Self.failure(info)
        case .stopped:
            throw CancellationError()
        }
    }

    private static func failure(_ info: StoreKitErrorInfo) throws -> PurchaseResult {
        let error = SKError(info)
        if error.code == .paymentCancelled { return .userCancelled }
        throw error
    }

    /// How a purchase ended.
    public enum PurchaseResult: Sendable {
        case success(VerificationResult<Transaction>)
        case userCancelled
        case pending
    }

    /// An option of ``purchase(options:)``.
    public struct PurchaseOption: Hashable, Sendable {
        fileprivate enum Base: Hashable, Sendable {
            case quantity(Int)
            case appAccountToken(UUID)
            case simulatesAskToBuyInSandbox(Bool)
            case promotionalOffer(PaymentDiscount)
            case signedPromotionalOffer(PromotionalOfferJWS)
            case introductoryOfferEligibility(String)
            case winBackOffer(String)
            case billingPlanType(SubscriptionInfo.BillingPlanType)
        }

        fileprivate let base: Base

        /// How many to buy (consumables: 1–10).
        public static func quantity(_ quantity: Int) -> PurchaseOption { PurchaseOption(base: .quantity(quantity)) }
        /// The app's UUID for its user; it comes back in the signed transaction.
        public static func appAccountToken(_ token: UUID) -> PurchaseOption {
            PurchaseOption(base: .appAccountToken(token))
        }
        /// Sandbox only: defer the purchase as Ask to Buy does.
        public static func simulatesAskToBuyInSandbox(_ flag: Bool) -> PurchaseOption {
            PurchaseOption(base: .simulatesAskToBuyInSandbox(flag))
        }
        /// The billing plan to buy the subscription under (StoreKit's `billingPlanType` purchase option): `.monthly`
        /// buys a one-year subscription's monthly plan with a 12-month commitment (each monthly payment renews as its
        /// own transaction; cancelling stops the commitment's renewal, not its remaining payments).
        public static func billingPlanType(_ plan: SubscriptionInfo.BillingPlanType) -> PurchaseOption {
            PurchaseOption(base: .billingPlanType(plan))
        }
        /// A win-back offer of the subscription, by its identifier; the store checks the customer is eligible
        /// (else ``SKError`` `ineligibleForOffer`).
        public static func winBackOffer(offerID: String) -> PurchaseOption {
            PurchaseOption(base: .winBackOffer(offerID))
        }
        /// A promotional offer your server signed with an In-App Purchase key: `signature` is the DER ECDSA
        /// signature, `timestamp` milliseconds since 1970.
        public static func promotionalOffer(
            offerID: String, keyID: String, nonce: UUID, signature: Data, timestamp: Int
        ) -> PurchaseOption {
            PurchaseOption(
                base: .promotionalOffer(
                    PaymentDiscount(
                        identifier: offerID, keyIdentifier: keyID, nonce: nonce,
                        signature: signature.base64EncodedString(), timestamp: Int64(timestamp))))
        }
        /// A promotional offer your server signed as a compact JWS (Apple's `PromotionalOfferV2SignatureCreator`).
        public static func promotionalOffer(_ offerID: String, compactJWS: String) -> PurchaseOption {
            PurchaseOption(base: .signedPromotionalOffer(PromotionalOfferJWS(offerId: offerID, compactJWS: compactJWS)))
        }
        /// Your server's signed decision whether the customer may have the subscription's introductory offer
        /// (Apple's `IntroductoryOfferEligibilitySignatureCreator`); the store follows it instead of its own.
        public static func introductoryOfferEligibility(compactJWS: String) -> PurchaseOption {
            PurchaseOption(base: .introductoryOfferEligibility(compactJWS))
        }
    }

    /// A product's kind; raw values are the signed transaction's `type`.
    public struct ProductType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public static let consumable = ProductType(rawValue: "Consumable")
        public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
        public static let autoRenewable = ProductType(rawValue: "Auto-Renewable Subscription")
        public static let nonRenewable = ProductType(rawValue: "Non-Renewing Subscription")

        /// From the client protocol's `consumable`, `non_consumable`, `auto_renewable`, `non_renewing`.
        init(wireType: String) {
            switch wireType {
            case "consumable": self = .consumable
            case "non_consumable": self = .nonConsumable
            case "auto_renewable": self = .autoRenewable
            case "non_renewing": self = .nonRenewable
            default: self.init(rawValue: wireType)
            }
        }

        public var description: String { rawValue }
    }
}
