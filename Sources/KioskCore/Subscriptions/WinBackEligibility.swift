import Foundation

/// What an account's history in one subscription group says about win-back offers, and Apple's rules on it.
public struct WinBackHistory: Sendable, Hashable {
    /// The account has a subscription in the group that is active, in billing retry or in its grace period.
    public var isSubscribed: Bool
    /// The months the account paid for in the group: the nominal length of each charged, unrefunded period
    /// (an offer's period, else the product's duration; a day counts 1/30 of a month, a week 7/30, a year 12),
    /// summed and rounded down. Nominal lengths count the same in the accelerated sandbox as in production.
    public var paidMonths: Int
    /// When the account's latest ended subscription in the group ended; nil when none ended.
    public var lastEndedAt: Date?
    /// When the account last bought a period with a win-back offer in the group; nil when never.
    public var lastWinBackAt: Date?

    public init(isSubscribed: Bool, paidMonths: Int, lastEndedAt: Date?, lastWinBackAt: Date?) {
        self.isSubscribed = isSubscribed
        self.paidMonths = paidMonths
        self.lastEndedAt = lastEndedAt
        self.lastWinBackAt = lastWinBackAt
    }

    /// The history in `group` from the account's subscriptions and transactions (of any group) and the app's
    /// products (for the durations of periods bought without an offer).
    public init(
        group: SubscriptionGroup.ID, subscriptions: [StoreSubscription], transactions: [StoreTransaction],
        products: [Product]
    ) {
        let inGroup = subscriptions.filter { $0.groupId == group }
        let ended = inGroup.filter { $0.state == .expired || $0.state == .revoked }
        let periods = transactions.filter { $0.subscriptionGroupId == group && $0.productType == .autoRenewable }
        let durations = Dictionary(
            products.compactMap { product in product.duration.map { (product.productId, $0.rawValue) } },
            uniquingKeysWith: { first, _ in first })
        let paidDays = periods.filter { $0.priceMinorUnits > 0 && $0.revocationDate == nil }.reduce(0) {
            days, period in
            let text = period.offer?.period ?? durations[period.productId]
            return days.saturatingAdding(text.flatMap(OfferPeriod.init(iso8601:)).map(Self.nominalDays) ?? 0)
        }
        self.init(
            isSubscribed: inGroup.count > ended.count, paidMonths: paidDays / 30,
            lastEndedAt: ended.map(\.expiresAt).max(),
            lastWinBackAt: periods.filter { $0.offer?.type == .winBack }.map(\.purchaseDate).max())
    }

    /// A period's nominal length in days: 30 a month and 360 a year, so 12 monthly periods make 12 months.
    private static func nominalDays(_ period: OfferPeriod) -> Int {
        let days = [OfferPeriod.Unit.day: 1, .week: 7, .month: 30, .year: 360][period.unit] ?? 0
        return period.count.saturatingMultiplied(by: days)
    }

    /// Whole months from `start` to `end` as the environment counts time: calendar months in UTC in production,
    /// accelerated sandbox months (5 minutes, as a one-month subscription lasts there) in the sandbox.
    public static func monthsElapsed(from start: Date, to end: Date, environment: StoreEnvironment) -> Int {
        guard end > start else { return 0 }
        switch environment {
        case .sandbox:
            return Int(
                exactly: (end.timeIntervalSince(start) / SubscriptionDuration.oneMonth.sandboxSeconds)
                    .rounded(.down)) ?? .max
        case .production:
            let calendar = Calendar.utc
            return calendar.dateComponents([.month], from: start, to: end).month ?? 0
        }
    }
}

/// Why an account may not redeem a win-back offer now: a stable code and a sentence for the customer's developer.
public struct WinBackRefusal: Error, Sendable, Hashable {
    public var code: ErrorCode
    public var message: String
}

extension WinBackOffer {
    /// Apple's rules for redeeming this offer at `now` with `history`: the offer is active, the account has no
    /// active subscription in the group, paid at least ``paidSubscriptionDurationInMonths`` there, its last
    /// subscription there ended within ``timeSinceLastSubscribedInMonths``, and (when set) its last win-back offer
    /// in the group is at least ``waitBetweenOffersInMonths`` old. Nil when eligible, else the first rule broken.
    public func refusal(for history: WinBackHistory, now: Date, environment: StoreEnvironment) -> WinBackRefusal? {
        let months = { (since: Date) in WinBackHistory.monthsElapsed(from: since, to: now, environment: environment) }
        if !isActive(at: now) {
            return WinBackRefusal(
                code: .winBackOfferInactive, message: "The win-back offer '\(identifier)' is not running now.")
        }
        if history.isSubscribed {
            return WinBackRefusal(
                code: .winBackStillSubscribed,
                message: "Win-back offers are for customers whose subscription in the group ended; this account "
                    + "is still subscribed.")
        }
        if history.paidMonths < paidSubscriptionDurationInMonths {
            return WinBackRefusal(
                code: .winBackPaidTooLittle,
                message: "The win-back offer '\(identifier)' needs \(paidSubscriptionDurationInMonths) paid month(s) "
                    + "in the group; this account paid for \(history.paidMonths).")
        }
        let range = timeSinceLastSubscribedInMonths
        guard let ended = history.lastEndedAt else {
            return WinBackRefusal(
                code: .winBackNothingEnded,
                message: "This account has no ended subscription in the group to win back.")
        }
        let since = months(ended)
        if since < range.minimum {
            return WinBackRefusal(
                code: .winBackTooSoon,
                message: "The win-back offer '\(identifier)' is for subscriptions that ended at least "
                    + "\(range.minimum) month(s) ago; this account's ended \(since) month(s) ago.")
        }
        if let maximum = range.maximum, since > maximum {
            return WinBackRefusal(
                code: .winBackTooLate,
                message: "The win-back offer '\(identifier)' is for subscriptions that ended at most \(maximum) "
                    + "month(s) ago; this account's ended \(since) month(s) ago.")
        }
        if let wait = waitBetweenOffersInMonths, let last = history.lastWinBackAt, months(last) < wait {
            return WinBackRefusal(
                code: .winBackWaitBetweenOffers,
                message: "This account redeemed a win-back offer in the group \(months(last)) month(s) ago; the "
                    + "offer '\(identifier)' needs \(wait) month(s) between offers.")
        }
        return nil
    }
}
