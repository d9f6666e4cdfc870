import Crypto
import Foundation
import KioskCore
import KioskProtocol
import KioskStorage

/// The offer a payment asks for: a signed promotional offer, an offer code or a win-back offer; a payment that
/// names several is refused when it is bought (`offer_conflict`).
struct RequestedOffer: Sendable {
    var discount: PaymentDiscount?
    var offerCode: String?
    var winBackOfferId: String?

    static let none = RequestedOffer()

    init(discount: PaymentDiscount? = nil, offerCode: String? = nil, winBackOfferId: String? = nil) {
        self.discount = discount
        self.offerCode = offerCode
        self.winBackOfferId = winBackOfferId
    }

    /// The offers `request` names.
    init(_ request: PaymentRequest) {
        self.init(
            discount: request.paymentDiscount, offerCode: request.offerCode, winBackOfferId: request.winBackOfferId)
    }

    /// How many offers are named.
    var count: Int {
        [discount != nil, offerCode != nil, winBackOfferId != nil].filter { $0 }.count
    }
}

extension PurchaseService {
    /// How long a promotional offer signature stays valid after its timestamp (Apple: 24 hours).
    static let promotionalOfferValidity: TimeInterval = 24 * 3600

    /// The terms of the promotional offer a payment carries, once Apple's checks pass: the offer exists in the
    /// product, the account has (or had) a subscription in the group, the signature verifies with an unrevoked
    /// In-App Purchase key of the app, its timestamp is within 24 hours of the environment's clock, its nonce is
    /// new (the nonce is then used up) and the offer has a price in the storefront. Any failure is a
    /// ``PurchaseRefusal`` with the `SKError` code Apple gives.
    func promotionalTerms(
        _ discount: PaymentDiscount, product: Product, payment: Payment, client: ClientSession, now: Date,
        in tx: any StorageTransaction
    ) async throws -> OfferTerms {
        if discount.identifier.isEmpty || discount.keyIdentifier.isEmpty || discount.signature.isEmpty {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .missingOfferParams, .missingOfferParams,
                    "The promotional offer needs an identifier, a key identifier, a nonce, a signature and a timestamp."
                ))
        }
        guard let offer = product.promotionalOffers.first(where: { $0.identifier == discount.identifier }) else {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .invalidOfferIdentifier, .unknownOffer,
                    "\(product.productId) has no promotional offer '\(discount.identifier)'."))
        }
        if let group = product.subscription?.groupId,
            try await isEligibleForIntroOffer(group: group, client: client, in: tx)
        {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .ineligibleForOffer, .ineligibleForOffer,
                    "Promotional offers are for customers who have or had a subscription in the group; this account "
                        + "never subscribed."))
        }
        guard let key = try await tx.key(id: discount.keyIdentifier), key.appId == client.app.id,
            key.revokedAt == nil
        else {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .invalidSignature, .unknownOfferKey,
                    "'\(discount.keyIdentifier)' is not an active In-App Purchase key of \(client.app.bundleId)."))
        }
        guard let signedAt = Date(checkedMillisecondsSince1970: discount.timestamp),
            abs(now.timeIntervalSince(signedAt)) <= Self.promotionalOfferValidity
        else {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .invalidSignature, .offerSignatureExpired,
                    "The promotional offer's timestamp \(discount.timestamp) (milliseconds since 1970) is more than "
                        + "24 hours from now."))
        }
        let message = Self.promotionalOfferMessage(
            bundleId: client.app.bundleId, keyIdentifier: discount.keyIdentifier, productId: product.productId,
            offerIdentifier: discount.identifier,
            applicationUsername: payment.applicationUsername ?? payment.appAccountToken?.uuidString ?? "",
            nonce: discount.nonce, timestamp: discount.timestamp)
        guard Self.verifies(discount.signature, message: message, publicKeyPEM: key.publicKeyPEM) else {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .invalidSignature, .invalidOfferSignature,
                    "The promotional offer's signature does not verify with key \(discount.keyIdentifier)."))
        }
        guard
            try await tx.useOfferNonce(
                discount.nonce, appId: client.app.id, environment: client.environment, at: now)
        else {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .invalidSignature, .offerNonceReused,
                    "The nonce \(discount.nonce.uuidString.lowercased()) was already redeemed; sign each offer with a "
                        + "new nonce."))
        }
        guard let terms = offer.schedule.terms(.promotional, identifier: offer.identifier, in: client.storefront) else {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .invalidOfferPrice, .noOfferPrice,
                    "The promotional offer '\(offer.identifier)' has no price in \(client.storefront.code)."))
        }
        return terms
    }

    /// The terms of the win-back offer `identifier` of `product`, once Apple's rules pass for the account's history
    /// in the product's group at `now` (``KioskCore/WinBackOffer/refusal(for:now:environment:)``) and the offer has
    /// a price in the storefront. An unknown offer is SKError `invalidOfferIdentifier`, an ineligible account
    /// `ineligibleForOffer`, a missing price `invalidOfferPrice`, each a ``PurchaseRefusal``.
    func winBackTerms(
        _ identifier: String, product: Product, client: ClientSession, now: Date, in tx: any StorageTransaction
    ) async throws -> OfferTerms {
        guard let offer = product.winBackOffers.first(where: { $0.identifier == identifier }),
            let group = product.subscription?.groupId
        else {
            throw PurchaseRefusal(
                error: Self.winBackRefusal(
                    .invalidOfferIdentifier, .unknownOffer,
                    "\(product.productId) has no win-back offer '\(identifier)'."))
        }
        let history = try await Self.winBackHistory(
            group: group, accountId: client.account.id, appId: client.app.id, environment: client.environment, in: tx)
        if let refusal = offer.refusal(for: history, now: now, environment: client.environment) {
            throw PurchaseRefusal(
                error: Self.winBackRefusal(.ineligibleForOffer, refusal.code, refusal.message))
        }
        guard let terms = offer.schedule.terms(.winBack, identifier: offer.identifier, in: client.storefront) else {
            throw PurchaseRefusal(
                error: Self.winBackRefusal(
                    .invalidOfferPrice, .noOfferPrice,
                    "The win-back offer '\(identifier)' has no price in \(client.storefront.code)."))
        }
        return terms
    }

    /// The account's history in `group` of the app in `environment`, for win-back eligibility.
    static func winBackHistory(
        group: SubscriptionGroup.ID, accountId: UUID, appId: App.ID, environment: StoreEnvironment,
        in tx: any StorageTransaction
    ) async throws -> WinBackHistory {
        WinBackHistory(
            group: group,
            subscriptions: try await tx.subscriptions(accountId: accountId, appId: appId, environment: environment),
            transactions: try await tx.transactions(accountId: accountId, appId: appId, environment: environment),
            products: try await tx.products(appId: appId))
    }

    /// Apple's `eligibleWinBackOfferIds` for the account's ended subscription in `group`: the win-back offers of
    /// the group's products it may redeem at `now` in `storefront` (free, or priced there), high priority first,
    /// then by identifier; nil when there are none.
    static func eligibleWinBackOfferIds(
        group: SubscriptionGroup.ID, accountId: UUID, appId: App.ID, environment: StoreEnvironment,
        storefront: Storefront?, now: Date, in tx: any StorageTransaction
    ) async throws -> [String]? {
        let offers = try await tx.products(appId: appId).filter {
            $0.subscription?.groupId == group && $0.deletedAt == nil
        }.flatMap(\.winBackOffers).filter {
            storefront.flatMap($0.schedule.price(in:)) != nil
        }
        guard !offers.isEmpty else { return nil }
        let history = try await Self.winBackHistory(
            group: group, accountId: accountId, appId: appId, environment: environment, in: tx)
        let eligible = offers.filter { $0.refusal(for: history, now: now, environment: environment) == nil }
            .sorted { ($0.priority == .high ? 0 : 1, $0.identifier) < ($1.priority == .high ? 0 : 1, $1.identifier) }
        return eligible.isEmpty ? nil : eligible.map(\.identifier)
    }

    /// Redeems a one-time offer code for `product`: the code exists in the app, is for this product and was never
    /// redeemed; it is then marked redeemed by the account in the purchase's database transaction. Any failure is
    /// a ``PurchaseRefusal`` with `SKError` `invalidOfferIdentifier` (`invalidOfferPrice` when the offer has no
    /// price in the storefront).
    func offerCodeTerms(
        _ text: String, product: Product, client: ClientSession, now: Date, in tx: any StorageTransaction
    ) async throws -> OfferTerms {
        let text = Self.normalizedOfferCode(text)
        guard let code = try await tx.offerCode(text), code.appId == client.app.id else {
            throw PurchaseRefusal(
                error: Self.offerCodeRefusal(
                    .invalidOfferIdentifier, .offerCodeUnknown, "\(client.app.bundleId) has no offer code '\(text)'."
                ))
        }
        guard code.productId == product.productId else {
            throw PurchaseRefusal(
                error: Self.offerCodeRefusal(
                    .invalidOfferIdentifier, .offerCodeWrongProduct,
                    "The offer code '\(text)' is for \(code.productId), not \(product.productId)."))
        }
        guard let terms = code.schedule.terms(.offerCode, identifier: code.referenceName, in: client.storefront) else {
            throw PurchaseRefusal(
                error: Self.offerCodeRefusal(
                    .invalidOfferPrice, .noOfferPrice,
                    "The offer code '\(text)' has no price in \(client.storefront.code)."))
        }
        guard try await tx.redeemOfferCode(text, accountId: client.account.id, at: now) else {
            throw PurchaseRefusal(
                error: Self.offerCodeRefusal(
                    .invalidOfferIdentifier, .offerCodeRedeemed, "The offer code '\(text)' was already redeemed."))
        }
        return terms
    }

    /// Codes are typed by people: spaces around them and lower case do not matter.
    static func normalizedOfferCode(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespaces).uppercased()
    }

    static func offerCodeRefusal(_ code: StoreKitErrorCode, _ reason: ErrorCode, _ message: String) -> KioskError {
        KioskError(
            reason, message, field: "offerCode",
            fix: "Nothing was charged; check the code, each code can be redeemed once.",
            storeKitCode: code.rawValue)
    }

    /// What the merchant signs: the fields joined by U+2063, the application username and nonce lower-cased.
    static func promotionalOfferMessage(
        bundleId: String, keyIdentifier: String, productId: String, offerIdentifier: String,
        applicationUsername: String, nonce: UUID, timestamp: Int64
    ) -> Data {
        let fields = [
            bundleId, keyIdentifier, productId, offerIdentifier, applicationUsername.lowercased(),
            nonce.uuidString.lowercased(), String(timestamp),
        ]
        return Data(fields.joined(separator: "\u{2063}").utf8)
    }

    /// Whether base64 DER `signature` is a P-256 ECDSA-SHA256 signature of `message` by the key.
    static func verifies(_ signature: String, message: Data, publicKeyPEM: String) -> Bool {
        guard let der = Data(base64Encoded: signature),
            let parsed = try? P256.Signing.ECDSASignature(derRepresentation: der),
            let key = try? P256.Signing.PublicKey(pemRepresentation: publicKeyPEM)
        else { return false }
        return key.isValidSignature(parsed, for: message)
    }

    static func offerRefusal(_ code: StoreKitErrorCode, _ reason: ErrorCode, _ message: String) -> KioskError {
        KioskError(
            reason, message, field: "paymentDiscount",
            fix: "Nothing was charged; sign the offer again on your server with an active In-App Purchase key.",
            storeKitCode: code.rawValue)
    }

    static func winBackRefusal(_ code: StoreKitErrorCode, _ reason: ErrorCode, _ message: String) -> KioskError {
        KioskError(
            reason, message, field: "winBackOfferId",
            fix: "Nothing was charged; offer the customer only the ids in the renewal info's eligibleWinBackOfferIds.",
            storeKitCode: code.rawValue)
    }
}
