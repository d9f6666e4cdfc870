import Foundation

/// A win-back offer of an auto-renewable product, as App Store Connect models it: terms like a promotional
/// offer's, for customers who paid for a subscription in the product's group and whose subscription ended within
/// a window of months. StoreKit shows it to eligible customers without a signature.
public struct WinBackOffer: ScheduledOffer, Codable, Sendable, Hashable {
    /// Whether App Store surfaces an offer before the product's others (`high`) or not (`normal`).
    public enum Priority: String, Codable, Sendable, CaseIterable, Hashable {
        case high, normal
    }

    /// The months since the customer's last subscription in the group ended: at least `minimum`, and at most
    /// `maximum` when it is set.
    public struct MonthRange: Codable, Sendable, Hashable {
        public var minimum: Int
        public var maximum: Int?

        public init(minimum: Int, maximum: Int? = nil) {
            self.minimum = minimum
            self.maximum = maximum
        }
    }

    /// Unique among the product's win-back and promotional offers; what apps pass as the offer identifier.
    public var identifier: String
    public var referenceName: String
    public var schedule: OfferSchedule
    /// The fewest months the customer must have paid for subscriptions in the group.
    public var paidSubscriptionDurationInMonths: Int
    public var timeSinceLastSubscribedInMonths: MonthRange
    /// When set, the months that must pass after a customer redeemed a win-back offer in the group before another.
    public var waitBetweenOffersInMonths: Int?
    /// The offer is redeemable from `startDate` (when set) until before `endDate` (when set).
    public var startDate: Date?
    public var endDate: Date?
    public var priority: Priority

    public init(
        identifier: String, referenceName: String, schedule: OfferSchedule, paidSubscriptionDurationInMonths: Int = 1,
        timeSinceLastSubscribedInMonths: MonthRange = MonthRange(minimum: 1), waitBetweenOffersInMonths: Int? = nil,
        startDate: Date? = nil, endDate: Date? = nil, priority: Priority = .normal
    ) {
        self.identifier = identifier
        self.referenceName = referenceName
        self.schedule = schedule
        self.paidSubscriptionDurationInMonths = paidSubscriptionDurationInMonths
        self.timeSinceLastSubscribedInMonths = timeSinceLastSubscribedInMonths
        self.waitBetweenOffersInMonths = waitBetweenOffersInMonths
        self.startDate = startDate
        self.endDate = endDate
        self.priority = priority
    }

    private enum CodingKeys: String, CodingKey {
        case identifier, referenceName, paidSubscriptionDurationInMonths, timeSinceLastSubscribedInMonths,
            waitBetweenOffersInMonths
        case startDate, endDate, priority
    }

    /// The schedule's fields beside the offer's own; `paidSubscriptionDurationInMonths` and
    /// `timeSinceLastSubscribedInMonths.minimum` default to 1 and `priority` to normal.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        identifier = try container.decode(String.self, forKey: .identifier)
        referenceName = try container.decode(String.self, forKey: .referenceName)
        schedule = try OfferSchedule(from: decoder)
        paidSubscriptionDurationInMonths =
            try container.decodeIfPresent(Int.self, forKey: .paidSubscriptionDurationInMonths) ?? 1
        timeSinceLastSubscribedInMonths =
            try container.decodeIfPresent(MonthRange.self, forKey: .timeSinceLastSubscribedInMonths)
            ?? MonthRange(minimum: 1)
        waitBetweenOffersInMonths = try container.decodeIfPresent(Int.self, forKey: .waitBetweenOffersInMonths)
        startDate = try container.decodeIfPresent(Date.self, forKey: .startDate)
        endDate = try container.decodeIfPresent(Date.self, forKey: .endDate)
        priority = try container.decodeIfPresent(Priority.self, forKey: .priority) ?? .normal
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(referenceName, forKey: .referenceName)
        try schedule.encode(to: encoder)
        try container.encode(paidSubscriptionDurationInMonths, forKey: .paidSubscriptionDurationInMonths)
        try container.encode(timeSinceLastSubscribedInMonths, forKey: .timeSinceLastSubscribedInMonths)
        try container.encodeIfPresent(waitBetweenOffersInMonths, forKey: .waitBetweenOffersInMonths)
        try container.encodeIfPresent(startDate, forKey: .startDate)
        try container.encodeIfPresent(endDate, forKey: .endDate)
        try container.encode(priority, forKey: .priority)
    }

    /// Whether the offer is redeemable at `now` by its start and end dates.
    public func isActive(at now: Date) -> Bool {
        (startDate.map { $0 <= now } ?? true) && (endDate.map { now < $0 } ?? true)
    }
}
