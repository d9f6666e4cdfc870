import Foundation

/// An offer code as App Store Connect models it (a "subscription offer code"): the terms of an offer for an
/// auto-renewable product, the customers it is for, and the codes that redeem it — batches of one-time codes
/// (``OfferCodeBatch`` with no custom code) and custom codes that many customers type. Its terms cannot change once
/// created, as at Apple; it can be turned off.
public struct OfferCodeCampaign: Codable, Sendable, Hashable {
    public typealias ID = Int64

    /// Whom the codes are for, by their history in the product's group (Apple's `customerEligibilities`).
    public enum Eligibility: String, Codable, Sendable, CaseIterable, Hashable {
        /// Never subscribed in the group.
        case new = "NEW"
        /// Subscribed in the group now.
        case existing = "EXISTING"
        /// Subscribed in the group before; nothing active now.
        case expired = "EXPIRED"
        /// An in-app purchase's offer code: never paid for anything in the app.
        case nonSpender = "NON_SPENDER"
        /// Paid for something in the app within ``OfferCodeCampaign/activeSpenderDays``.
        case activeSpender = "ACTIVE_SPENDER"
        /// Paid for something in the app, longer ago than that.
        case churnedSpender = "CHURNED_SPENDER"

        /// The kinds of customer an auto-renewable's offer code is for; the others are an in-app purchase's.
        public static let subscriberKinds: Set<Eligibility> = [.new, .existing, .expired]
    }

    /// Whether a new customer also gets the introductory offer (Apple's `offerEligibility`). Kiosk keeps the
    /// choice; a redeemed code's terms price the period either way.
    public enum IntroductoryOfferRule: String, Codable, Sendable, CaseIterable, Hashable {
        case stackWithIntroductoryOffers = "STACK_WITH_INTRO_OFFERS"
        case replaceIntroductoryOffers = "REPLACE_INTRO_OFFERS"
    }

    public var id: ID
    public var appId: App.ID
    public var productId: String
    /// The reference name; a redeemed transaction's `offerIdentifier`, as for Kiosk's one-time codes.
    public var name: String
    public var eligibilities: Set<Eligibility>
    public var introductoryOfferRule: IntroductoryOfferRule
    public var schedule: OfferSchedule
    public var active: Bool
    public var createdAt: Date

    public init(
        id: ID, appId: App.ID, productId: String, name: String, eligibilities: Set<Eligibility>,
        introductoryOfferRule: IntroductoryOfferRule, schedule: OfferSchedule, active: Bool = true, createdAt: Date
    ) {
        self.id = id
        self.appId = appId
        self.productId = productId
        self.name = name
        self.eligibilities = eligibilities
        self.introductoryOfferRule = introductoryOfferRule
        self.schedule = schedule
        self.active = active
        self.createdAt = createdAt
    }

    /// How recently a customer paid to count as an active spender. Apple does not publish its window; Kiosk uses a
    /// year of the environment's clock.
    public static let activeSpenderDays = 365

    /// The spender an account is, from its transactions in the app: paid (a price above zero, not revoked) never,
    /// within ``activeSpenderDays`` of `now`, or before that.
    public static func spender(of transactions: [StoreTransaction], now: Date) -> Eligibility {
        let paid = transactions.filter { $0.priceMinorUnits > 0 && $0.revocationDate == nil }.map(\.purchaseDate)
        guard let latest = paid.max() else { return .nonSpender }
        return now.timeIntervalSince(latest) <= TimeInterval(activeSpenderDays) * 86_400
            ? .activeSpender : .churnedSpender
    }

    /// The eligibility of an account with `history` in the product's group.
    public static func eligibility(of history: WinBackHistory) -> Eligibility {
        if history.isSubscribed { return .existing }
        return history.lastEndedAt == nil ? .new : .expired
    }
}

/// Codes of an ``OfferCodeCampaign``: `numberOfCodes` one-time codes (each an ``OfferCode`` with this batch's id),
/// or one custom code that up to `numberOfCodes` customers redeem, once each.
public struct OfferCodeBatch: Codable, Sendable, Hashable {
    public typealias ID = Int64

    public var id: ID
    public var campaignId: OfferCodeCampaign.ID
    public var appId: App.ID
    /// The code customers type, for a custom code; nil for a batch of one-time codes.
    public var customCode: String?
    public var numberOfCodes: Int
    /// The last day (UTC) the codes can be redeemed; nil for no end (custom codes only).
    public var expirationDate: Date?
    /// Where one-time codes are redeemed; custom codes work in both environments.
    public var environment: StoreEnvironment?
    public var active: Bool
    /// Customers who redeemed the custom code (one-time codes count their own redemptions).
    public var redemptions: Int
    public var createdAt: Date

    public init(
        id: ID, campaignId: OfferCodeCampaign.ID, appId: App.ID, customCode: String?, numberOfCodes: Int,
        expirationDate: Date?, environment: StoreEnvironment?, active: Bool = true, redemptions: Int = 0,
        createdAt: Date
    ) {
        self.id = id
        self.campaignId = campaignId
        self.appId = appId
        self.customCode = customCode
        self.numberOfCodes = numberOfCodes
        self.expirationDate = expirationDate
        self.environment = environment
        self.active = active
        self.redemptions = redemptions
        self.createdAt = createdAt
    }

    /// How many codes one batch may hold, as App Store Connect allows per request.
    public static let maximumCodes = 1...25_000

    /// A custom code: 1–64 letters and digits (Apple allows no spaces or symbols), kept upper case.
    public static func isValidCustomCode(_ code: String) -> Bool {
        (1...64).contains(code.count) && code.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }

    /// Whether the codes can be redeemed on `now` (through their expiration day, UTC) in `environment`.
    public func isRedeemable(at now: Date, in environment: StoreEnvironment) -> Bool {
        guard active, self.environment.map({ $0 == environment }) ?? true else { return false }
        guard let expirationDate else { return true }
        return now < expirationDate.addingTimeInterval(86_400)
    }
}
