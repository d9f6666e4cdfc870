import Foundation

/// A signature a merchant's server makes for StoreKit to carry to the store, as Apple's
/// `PromotionalOfferV2SignatureCreator` and `IntroductoryOfferEligibilitySignatureCreator` write them: a compact JWS
/// signed ES256 with an In-App Purchase key (`kid`), claims `iss`, `bid`, `aud`, `iat` (seconds), `nonce` and the
/// feature's own (`Product.PurchaseOption.promotionalOffer(_:compactJWS:)`,
/// `introductoryOfferEligibility(compactJWS:)`).
public typealias SignedOfferJWS = DeveloperJWT<SignedOfferClaims>

/// The claims of a ``SignedOfferJWS``. Every field is optional here; the store refuses a signature without the
/// ones its audience needs.
public struct SignedOfferClaims: Codable, Sendable, Hashable {
    /// What a signature is for: its `aud`.
    public enum Audience: String, Sendable, CaseIterable {
        case promotionalOffer = "promotional-offer"
        case introductoryOfferEligibility = "introductory-offer-eligibility"
    }

    public var iss: String?
    public var bid: String?
    public var aud: String?
    public var iat: Double?
    /// A UUID, used once.
    public var nonce: String?
    public var productId: String?
    /// A promotional offer's identifier in the product.
    public var offerIdentifier: String?
    /// Any transaction of the customer (or their `appTransactionId`); required for introductory-offer eligibility.
    public var transactionId: String?
    /// Whether the customer may have the product's introductory offer, whatever the store would decide.
    public var allowIntroductoryOffer: Bool?

    public init(
        iss: String?, bid: String?, aud: Audience, iat: Date, nonce: UUID = UUID(), productId: String,
        offerIdentifier: String? = nil, transactionId: String? = nil, allowIntroductoryOffer: Bool? = nil
    ) {
        self.iss = iss
        self.bid = bid
        self.aud = aud.rawValue
        self.iat = iat.timeIntervalSince1970.rounded(.down)
        self.nonce = nonce.uuidString.lowercased()
        self.productId = productId
        self.offerIdentifier = offerIdentifier
        self.transactionId = transactionId
        self.allowIntroductoryOffer = allowIntroductoryOffer
    }
}
