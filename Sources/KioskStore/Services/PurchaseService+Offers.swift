import Crypto
import Foundation
import KioskCore
import KioskProtocol
import KioskSigning
import KioskStorage

/// The offer a payment asks for: a signed promotional offer (either signature scheme), an offer code or a win-back
/// offer; a payment that names several is refused when it is bought (`offer_conflict`). Beside it, the merchant's
/// signed introductory-offer eligibility, which replaces the store's own decision.
struct RequestedOffer: Sendable {
    var discount: PaymentDiscount?
    var signedPromotion: PromotionalOfferJWS?
    var offerCode: String?
    var winBackOfferId: String?
    var introductoryEligibilityJWS: String?

    static let none = RequestedOffer()

    init(
        discount: PaymentDiscount? = nil, signedPromotion: PromotionalOfferJWS? = nil, offerCode: String? = nil,
        winBackOfferId: String? = nil, introductoryEligibilityJWS: String? = nil
    ) {
        self.discount = discount
        self.signedPromotion = signedPromotion
        self.offerCode = offerCode
        self.winBackOfferId = winBackOfferId
        self.introductoryEligibilityJWS = introductoryEligibilityJWS
    }

    /// The offers `request` names.
    init(_ request: PaymentRequest) {
        self.init(
            discount: request.paymentDiscount, signedPromotion: request.promotionalOfferJWS,
            offerCode: request.offerCode, winBackOfferId: request.winBackOfferId,
            introductoryEligibilityJWS: request.introductoryOfferEligibilityJWS)
    }

    /// The request fields that name an offer or an eligibility, in the payment request's names.
    var fields: [String] {
        [
            (discount != nil, "paymentDiscount"), (signedPromotion != nil, "promotionalOfferJWS"),
            (offerCode != nil, "offerCode"), (winBackOfferId != nil, "winBackOfferId"),
            (introductoryEligibilityJWS != nil, "introductoryOfferEligibilityJWS"),
        ].filter(\.0).map(\.1)
    }

    /// How many offers are named (an introductory-offer eligibility is not one).
    var count: Int {
        [discount != nil, signedPromotion != nil, offerCode != nil, winBackOfferId != nil].filter { $0 }.count
    }
}

extension PurchaseService {
    /// How long a promotional offer signature stays valid after its timestamp (Apple: 24 hours).
    static let promotionalOfferValidity: TimeInterval = 24 * 3600

    /// The terms of the promotional offer a payment carries with Apple's first signature scheme
    /// (`SKPaymentDiscount`): the signature verifies with an unrevoked In-App Purchase key of the app and its
    /// timestamp is within 24 hours of the environment's clock; then the checks every promotional offer passes
    /// (``promotionalTerms(_:field:product:client:now:in:nonce:)``).
    func promotionalTerms(
        _ discount: PaymentDiscount, product: Product, payment: Payment, client: ClientSession, now: Date,
        in tx: any StorageTransaction
    ) async throws -> OfferTerms {
        let field = "paymentDiscount"
        if discount.identifier.isEmpty || discount.keyIdentifier.isEmpty || discount.signature.isEmpty {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .missingOfferParams, .missingOfferParams,
                    "The promotional offer needs an identifier, a key identifier, a nonce, a signature and a timestamp.",
                    field: field))
        }
        return try await promotionalTerms(
            discount.identifier, field: field, product: product, client: client, now: now, in: tx
        ) {
            let key = try await Self.offerKey(discount.keyIdentifier, client: client, field: field, in: tx)
            guard let signedAt = Date(checkedMillisecondsSince1970: discount.timestamp),
                abs(now.timeIntervalSince(signedAt)) <= Self.promotionalOfferValidity
            else {
                throw PurchaseRefusal(
                    error: Self.offerRefusal(
                        .invalidSignature, .offerSignatureExpired,
                        "The promotional offer's timestamp \(discount.timestamp) (milliseconds since 1970) is more "
                            + "than 24 hours from now.", field: field))
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
                        "The promotional offer's signature does not verify with key \(discount.keyIdentifier).",
                        field: field))
            }
            return discount.nonce
        }
    }

    /// The terms of a promotional offer signed as a compact JWS (`promotionalOffer(_:compactJWS:)`, Apple's
    /// `PromotionalOfferV2SignatureCreator`): the signature passes ``verifiedSignedOffer(_:audience:field:product:client:now:in:)``
    /// and names the offer the app asked for; then the checks every promotional offer passes.
    func promotionalTerms(
        _ signed: PromotionalOfferJWS, product: Product, client: ClientSession, now: Date, in tx: any StorageTransaction
    ) async throws -> OfferTerms {
        let field = "promotionalOfferJWS"
        return try await promotionalTerms(
            signed.offerId, field: field, product: product, client: client, now: now, in: tx
        ) {
            let (claims, nonce) = try await verifiedSignedOffer(
                signed.compactJWS, audience: .promotionalOffer, field: field, product: product, client: client,
                now: now, in: tx)
            guard claims.offerIdentifier == signed.offerId else {
                throw PurchaseRefusal(
                    error: Self.offerRefusal(
                        .invalidSignature, .offerSignatureMismatch,
                        "The signature is for the offer '\(claims.offerIdentifier?.prefix(64) ?? "")', not "
                            + "'\(signed.offerId.prefix(64))'.", field: field))
            }
            return nonce
        }
    }

    /// The checks every promotional offer passes, however it was signed: the offer exists in the product, the
    /// account has (or had) a subscription in the group, `verify` accepts the signature and gives its nonce, the
    /// nonce is new (it is then used up) and the offer has a price in the storefront. Any failure is a
    /// ``PurchaseRefusal`` with the `SKError` code Apple gives, naming `field`.
    private func promotionalTerms(
        _ identifier: String, field: String, product: Product, client: ClientSession, now: Date,
        in tx: any StorageTransaction, nonce verify: () async throws -> UUID
    ) async throws -> OfferTerms {
        guard let offer = product.promotionalOffers.first(where: { $0.identifier == identifier }) else {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .invalidOfferIdentifier, .unknownOffer,
                    "\(product.productId) has no promotional offer '\(identifier.prefix(64))'.", field: field))
        }
        if let group = product.subscription?.groupId,
            try await isEligibleForIntroOffer(group: group, client: client, in: tx)
        {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .ineligibleForOffer, .ineligibleForOffer,
                    "Promotional offers are for customers who have or had a subscription in the group; this account "
                        + "never subscribed.", field: field))
        }
        let nonce = try await verify()
        guard try await tx.useOfferNonce(nonce, appId: client.app.id, environment: client.environment, at: now) else {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .invalidSignature, .offerNonceReused,
                    "The nonce \(nonce.uuidString.lowercased()) was already redeemed; sign each offer with a new nonce.",
                    field: field))
        }
        guard let terms = offer.schedule.terms(.promotional, identifier: offer.identifier, in: client.storefront) else {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .invalidOfferPrice, .noOfferPrice,
                    "The promotional offer '\(offer.identifier)' has no price in \(client.storefront.code).",
                    field: field))
        }
        return terms
    }

    /// Whether the merchant's introductory-offer-eligibility signature (`introductoryOfferEligibility(compactJWS:)`,
    /// Apple's `IntroductoryOfferEligibilitySignatureCreator`) lets the customer have the introductory offer of
    /// `product`: it passes ``verifiedSignedOffer(_:audience:field:product:client:now:in:)`` (its nonce is then used
    /// up), names a transaction of the customer and says `allowIntroductoryOffer`.
    func signedIntroductoryEligibility(
        _ jws: String, product: Product, client: ClientSession, now: Date, in tx: any StorageTransaction
    ) async throws -> Bool {
        let field = "introductoryOfferEligibilityJWS"
        let (claims, nonce) = try await verifiedSignedOffer(
            jws, audience: .introductoryOfferEligibility, field: field, product: product, client: client, now: now,
            in: tx)
        guard let allowed = claims.allowIntroductoryOffer, claims.transactionId != nil else {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .missingOfferParams, .missingOfferParams,
                    "An introductory-offer eligibility signature needs allowIntroductoryOffer and transactionId.",
                    field: field))
        }
        guard try await tx.useOfferNonce(nonce, appId: client.app.id, environment: client.environment, at: now) else {
            throw PurchaseRefusal(
                error: Self.offerRefusal(
                    .invalidSignature, .offerNonceReused,
                    "The nonce \(nonce.uuidString.lowercased()) was already used; sign each purchase with a new nonce.",
                    field: field))
        }
        return allowed
    }

    /// The claims and nonce of a signed offer once they hold as StoreKit checks them: a compact JWS of at most
    /// ``signedOfferMaxLength`` characters, ES256 by an unrevoked In-App Purchase key of the app (`kid`), `iss` the
    /// store's issuer id, `bid` the app, `aud` `audience`, `productId` the product bought, `iat` within 24 hours
    /// (and at most ``signedOfferClockSkew`` ahead) of the environment's clock, `nonce` a UUID, and `transactionId`,
    /// when given, a transaction (or the app transaction) of this customer in this app. The nonce is not used up
    /// here. Any failure is a ``PurchaseRefusal`` with StoreKit's `invalidSignature` (`missingOfferParams` for a
    /// missing claim), naming `field`.
    func verifiedSignedOffer(
        _ jws: String, audience: SignedOfferClaims.Audience, field: String, product: Product, client: ClientSession,
        now: Date, in tx: any StorageTransaction
    ) async throws -> (SignedOfferClaims, UUID) {
        func refuse(_ reason: ErrorCode, _ message: String, _ code: StoreKitErrorCode = .invalidSignature) -> any Error
        {
            PurchaseRefusal(error: Self.offerRefusal(code, reason, message, field: field))
        }
        guard jws.utf8.count <= Self.signedOfferMaxLength, let parsed = try? SignedOfferJWS(parsing: jws) else {
            throw refuse(.invalidOfferSignature, "The signature is not a compact JWS Apple's signature creators make.")
        }
        let claims = parsed.claims
        guard let keyId = parsed.header.kid, let issuedAt = claims.iat, let nonceText = claims.nonce,
            let productId = claims.productId
        else {
            throw refuse(
                .missingOfferParams, "The signature needs kid, iat, nonce and productId.", .missingOfferParams)
        }
        let key = try await Self.offerKey(keyId, client: client, field: field, in: tx)
        guard let publicKey = try? P256.Signing.PublicKey(pemRepresentation: key.publicKeyPEM),
            parsed.hasValidSignature(by: publicKey)
        else {
            throw refuse(.invalidOfferSignature, "The signature does not verify with key \(keyId.prefix(64)).")
        }
        let issuer = try await CatalogService.issuerId(in: tx)
        let mismatch: String? =
            if claims.aud != audience.rawValue {
                "aud is '\(claims.aud?.prefix(64) ?? "")', not '\(audience.rawValue)'"
            } else if claims.bid != client.app.bundleId {
                "bid is '\(claims.bid?.prefix(128) ?? "")', not \(client.app.bundleId)"
            } else if claims.iss != issuer {
                "iss is not this store's issuer id"
            } else if productId != product.productId {
                "productId is '\(productId.prefix(128))', not \(product.productId)"
            } else {
                nil
            }
        if let mismatch {
            throw refuse(.offerSignatureMismatch, "The signature does not fit this purchase: \(mismatch).")
        }
        let age = now.timeIntervalSince1970 - issuedAt
        guard age <= Self.promotionalOfferValidity, age >= -Self.signedOfferClockSkew else {
            throw refuse(
                .offerSignatureExpired,
                "The signature's iat is not within the 24 hours before the store's clock (a minute ahead allowed); "
                    + "sign it again just before the purchase.")
        }
        guard let nonce = UUID(uuidString: nonceText) else {
            throw refuse(.invalidOfferSignature, "The signature's nonce is not a UUID.")
        }
        if let transactionId = claims.transactionId,
            try await !isCustomersTransaction(transactionId, client: client, in: tx)
        {
            throw refuse(
                .offerTransactionNotCustomers,
                "The signature's transactionId \(transactionId.prefix(32)) is not a transaction of this customer in "
                    + "\(client.app.bundleId).")
        }
        return (claims, nonce)
    }

    /// The longest signed offer the store reads; Apple's are under 1 KiB.
    static let signedOfferMaxLength = 8192
    /// How far ahead of the store's clock a signature's `iat` may be.
    static let signedOfferClockSkew: TimeInterval = 60

    /// Whether `text` is the id of a transaction or of the app transaction of the session's customer in its app.
    private func isCustomersTransaction(_ text: String, client: ClientSession, in tx: any StorageTransaction)
        async throws -> Bool
    {
        guard let id = Int64(text), id > 0 else { return false }
        if let transaction = try await tx.transaction(id: id, environment: client.environment) {
            return transaction.accountId == client.account.id && transaction.appId == client.app.id
        }
        let appTransaction = try await tx.appTransaction(
            accountId: client.account.id, appId: client.app.id, environment: client.environment)
        return appTransaction?.id == id
    }

    /// The unrevoked In-App Purchase key `keyId` of the session's app, else a refusal naming `field`.
    private static func offerKey(
        _ keyId: String, client: ClientSession, field: String, in tx: any StorageTransaction
    ) async throws -> InAppPurchaseKey {
        guard let key = try await tx.key(id: keyId), key.appId == client.app.id, key.revokedAt == nil else {
            throw PurchaseRefusal(
                error: offerRefusal(
                    .invalidSignature, .unknownOfferKey,
                    "'\(keyId.prefix(64))' is not an active In-App Purchase key of \(client.app.bundleId).",
                    field: field))
        }
        return key
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

    /// Redeems an offer code for `product`: a one-time code of the app, for this product and never redeemed, or a
    /// custom code of the app with redemptions left that this account never redeemed. A code of an App Store
    /// Connect offer code (``OfferCodeCampaign``) must also be active, unexpired, for this environment (one-time
    /// codes) and for customers with the account's history in the group. The redemption is recorded in the
    /// purchase's database transaction. Any failure is a ``PurchaseRefusal`` with `SKError`
    /// `invalidOfferIdentifier` (`invalidOfferPrice` when the offer has no price in the storefront).
    func offerCodeTerms(
        _ text: String, product: Product, client: ClientSession, now: Date, in tx: any StorageTransaction
    ) async throws -> OfferTerms {
        let text = Self.normalizedOfferCode(text)
        if let code = try await tx.offerCode(text), code.appId == client.app.id {
            try Self.checkOfferCodeProduct(text, code.productId, product)
            if let batchId = code.batchId {
                // A code of an App Store Connect offer code answers to its batch and campaign; one without them is
                // no code at all, never a code free of their rules.
                guard let batch = try await tx.offerCodeBatch(id: batchId) else {
                    throw Self.unknownOfferCode(text, client: client)
                }
                _ = try await redeemableCampaign(batch, code: text, product: product, client: client, now: now, in: tx)
            }
            let terms = try Self.offerCodeTerms(
                text, code.schedule, identifier: code.referenceName, product: product, client: client)
            guard try await tx.redeemOfferCode(text, accountId: client.account.id, at: now) else {
                throw PurchaseRefusal(
                    error: Self.offerCodeRefusal(
                        .invalidOfferIdentifier, .offerCodeRedeemed, "The offer code '\(text)' was already redeemed."))
            }
            return terms
        }
        guard let batch = try await tx.customCodeBatch(appId: client.app.id, code: text) else {
            throw Self.unknownOfferCode(text, client: client)
        }
        let campaign = try await redeemableCampaign(
            batch, code: text, product: product, client: client, now: now, in: tx)
        let terms = try Self.offerCodeTerms(
            text, campaign.schedule, identifier: campaign.name, product: product, client: client)
        switch try await tx.redeemCustomCode(batchId: batch.id, accountId: client.account.id, at: now) {
        case .redeemed:
            return terms
        case .alreadyRedeemed:
            throw PurchaseRefusal(
                error: Self.offerCodeRefusal(
                    .invalidOfferIdentifier, .offerCodeRedeemed,
                    "This account already redeemed the offer code '\(text)'; each customer redeems it once."))
        case .noneLeft:
            throw PurchaseRefusal(
                error: Self.offerCodeRefusal(
                    .invalidOfferIdentifier, .offerCodeRedeemed,
                    "The offer code '\(text)' was redeemed by as many customers as it has codes "
                        + "(\(batch.numberOfCodes))."))
        }
    }

    /// The campaign of a batch whose code the account may redeem now: campaign and batch active, the codes
    /// unexpired and for this environment, and the account one of the customers the campaign is for.
    private func redeemableCampaign(
        _ batch: OfferCodeBatch, code: String, product: Product, client: ClientSession, now: Date,
        in tx: any StorageTransaction
    ) async throws -> OfferCodeCampaign {
        guard let campaign = try await tx.offerCodeCampaign(id: batch.campaignId) else {
            throw Self.unknownOfferCode(code, client: client)
        }
        try Self.checkOfferCodeProduct(code, campaign.productId, product)
        guard campaign.active, batch.isRedeemable(at: now, in: client.environment) else {
            let reason =
                !campaign.active || !batch.active
                ? "was turned off"
                : batch.environment.map { $0 != client.environment } ?? false
                    ? "is for the \(batch.environment?.rawValue ?? "") environment" : "has expired"
            throw PurchaseRefusal(
                error: Self.offerCodeRefusal(
                    .invalidOfferIdentifier, .offerCodeInactive, "The offer code '\(code)' \(reason)."))
        }
        let status: OfferCodeCampaign.Eligibility
        if product.type == .autoRenewable {
            status = OfferCodeCampaign.eligibility(
                of: try await Self.winBackHistory(
                    group: product.subscription?.groupId ?? 0, accountId: client.account.id, appId: client.app.id,
                    environment: client.environment, in: tx))
        } else {
            status = OfferCodeCampaign.spender(
                of: try await tx.transactions(
                    accountId: client.account.id, appId: client.app.id, environment: client.environment),
                now: now)
        }
        guard campaign.eligibilities.contains(status) else {
            let wanted = campaign.eligibilities.map(\.rawValue).sorted().joined(separator: ", ")
            throw PurchaseRefusal(
                error: Self.offerCodeRefusal(
                    .invalidOfferIdentifier, .offerCodeIneligible,
                    "The offer code '\(code)' is for \(wanted) customers; this account is \(status.rawValue)"
                        + (product.type == .autoRenewable ? " in the subscription group." : " in the app.")))
        }
        return campaign
    }

    private static func checkOfferCodeProduct(_ code: String, _ productId: String, _ product: Product) throws {
        guard productId == product.productId else {
            throw PurchaseRefusal(
                error: offerCodeRefusal(
                    .invalidOfferIdentifier, .offerCodeWrongProduct,
                    "The offer code '\(code)' is for \(productId), not \(product.productId)."))
        }
    }

    /// The terms a code of `schedule` gets: a subscription's offer period, or one price for a one-time purchase.
    private static func offerCodeTerms(
        _ code: String, _ schedule: OfferSchedule, identifier: String, product: Product, client: ClientSession
    ) throws -> OfferTerms {
        let terms =
            product.type == .autoRenewable
            ? schedule.terms(.offerCode, identifier: identifier, in: client.storefront)
            : schedule.pricing.price(in: client.storefront).map {
                OfferTerms.oneTime(identifier: identifier, priceMinorUnits: $0)
            }
        guard let terms else {
            throw PurchaseRefusal(
                error: offerCodeRefusal(
                    .invalidOfferPrice, .noOfferPrice,
                    "The offer code '\(code)' has no price in \(client.storefront.code)."))
        }
        return terms
    }

    private static func unknownOfferCode(_ code: String, client: ClientSession) -> PurchaseRefusal {
        PurchaseRefusal(
            error: offerCodeRefusal(
                .invalidOfferIdentifier, .offerCodeUnknown, "\(client.app.bundleId) has no offer code '\(code)'."))
    }

    /// Codes are typed by people: spaces around them and lower case do not matter.
    static func normalizedOfferCode(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespaces).uppercased()
    }

    static func offerCodeRefusal(_ code: StoreKitErrorCode, _ reason: ErrorCode, _ message: String) -> KioskError {
        KioskError(
            reason, message, field: "offerCode",
            fix: "Nothing was charged; check the code: each code is redeemed once, while its offer is active.",
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

    static func offerRefusal(_ code: StoreKitErrorCode, _ reason: ErrorCode, _ message: String, field: String)
        -> KioskError
    {
        KioskError(
            reason, message, field: field,
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
