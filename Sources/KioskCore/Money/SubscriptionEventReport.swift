import Foundation

/// App Store Connect's *Subscription Event* report (Sales and Trends, report type SUBSCRIPTION_EVENT, sub-type
/// SUMMARY, version 1_3, daily): tab-separated (names hold no control characters: the catalog's rules refuse them), one header line, one row per kind of lifecycle event with the same
/// subscription, offer and country, `Quantity` counting them. Built from the production server notifications the
/// store sent, so it tells the same story the merchant's server heard.
public enum SubscriptionEventReport {
    /// One lifecycle event, with what its row needs of the subscription it concerns.
    public struct Occurrence: Sendable {
        public var date: Date
        public var notificationType: NotificationType
        public var subtype: NotificationSubtype?
        public var appName: String
        public var appAppleId: Int64
        public var subscriptionName: String
        public var subscriptionAppleId: UInt32
        public var groupId: Int64
        public var duration: SubscriptionDuration?
        /// The offer of the period the event concerns, and of the period before it (a conversion to paid).
        public var offer: AppliedOffer?
        public var previousOffer: AppliedOffer?
        /// The offer's reference name (promotional offers and offer codes).
        public var offerName: String?
        public var proceedsReason: String?
        /// Paid periods so far without a cancellation (free trials not counted).
        public var consecutivePaidPeriods: Int
        public var originalStartDate: Date
        /// The customer's storefront, ISO 3166-1 alpha-3.
        public var storefront: String

        public init(
            date: Date, notificationType: NotificationType, subtype: NotificationSubtype?, appName: String,
            appAppleId: Int64,
            subscriptionName: String, subscriptionAppleId: UInt32, groupId: Int64, duration: SubscriptionDuration?,
            offer: AppliedOffer?, previousOffer: AppliedOffer?, offerName: String?, proceedsReason: String?,
            consecutivePaidPeriods: Int, originalStartDate: Date, storefront: String
        ) {
            self.date = date
            self.notificationType = notificationType
            self.subtype = subtype
            self.appName = appName
            self.appAppleId = appAppleId
            self.subscriptionName = subscriptionName
            self.subscriptionAppleId = subscriptionAppleId
            self.groupId = groupId
            self.duration = duration
            self.offer = offer
            self.previousOffer = previousOffer
            self.offerName = offerName
            self.proceedsReason = proceedsReason
            self.consecutivePaidPeriods = consecutivePaidPeriods
            self.originalStartDate = originalStartDate
            self.storefront = storefront
        }
    }

    /// Apple's columns for version 1_3, in Apple's order.
    public static let columns = [
        "Event Date", "Event", "App Name", "App Apple ID", "Subscription Name", "Subscription Apple ID",
        "Subscription Group ID", "Standard Subscription Duration", "Subscription Offer Type",
        "Subscription Offer Duration", "Marketing Opt-In", "Marketing Opt-In Duration", "Preserved Pricing",
        "Proceeds Reason", "Subscription Offer Name", "Promotional Offer ID", "Consecutive Paid Periods",
        "Original Start Date", "Device", "Client", "State", "Country", "Previous Subscription Name",
        "Previous Subscription Apple ID", "Days Before Canceling", "Cancellation Reason", "Days Canceled", "Quantity",
    ]

    /// Apple's name for the event a notification tells of, and the cancellation reason of a cancellation; nil for
    /// notifications that are no subscription event (a one-time charge, a consumption request, a test).
    public static func event(_ occurrence: Occurrence) -> (name: String, cancellationReason: String)? {
        switch (occurrence.notificationType, occurrence.subtype) {
        case (.subscribed, .resubscribe):
            return ("Reactivate", "")
        case (.subscribed, _):
            // Apple names starts with an introductory offer or an offer code; any other start is a Subscribe, its
            // offer in the offer columns.
            switch occurrence.offer?.type {
            case .introductory: return ("Start Introductory Offer", "")
            case .offerCode: return ("Start Offer Code", "")
            case .promotional, .winBack, .retention, nil: return ("Subscribe", "")
            }
        case (.didRenew, .billingRecovery):
            return ("Renewal from Billing Retry", "")
        case (.didRenew, _):
            let converted = occurrence.previousOffer?.type == .introductory && occurrence.offer == nil
            return (converted ? "Paid Subscription from Introductory Offer" : "Renew", "")
        case (.didFailToRenew, _):
            let fromOffer = occurrence.offer?.type == .introductory
            return (fromOffer ? "Billing Retry from Introductory Offer" : "Billing Retry from Paid Subscription", "")
        case (.expired, .billingRetry):
            return ("Canceled from Billing Retry", "Billing issue")
        case (.expired, .priceIncrease):
            return ("Cancel", "Price increase")
        case (.expired, .productNotForSale):
            return ("Cancel", "Removed from Sale")
        case (.expired, .voluntary):
            return ("Cancel", "Canceled")
        case (.expired, _):
            return ("Cancel", "Other")
        case (.didChangeRenewalPref, .upgrade):
            return ("Upgrade", "")
        case (.didChangeRenewalPref, .downgrade):
            return ("Downgrade", "")
        case (.refund, _):
            return ("Refund", "")
        default:
            return nil
        }
    }

    /// The report of `occurrences`: identical rows counted in `Quantity`, sorted, so one history always gives the
    /// same file.
    public static func make(_ occurrences: [Occurrence]) -> (text: String, rows: Int) {
        var quantities: [[String]: Int] = [:]
        for occurrence in occurrences {
            guard let (name, reason) = event(occurrence) else { continue }
            let offer = occurrence.offer
            let offerLength = offer?.period.map(offerDuration) ?? ""
            let row = [
                day(occurrence.date), name, occurrence.appName, String(occurrence.appAppleId),
                occurrence.subscriptionName, String(occurrence.subscriptionAppleId), String(occurrence.groupId),
                SalesSummaryReport.period(occurrence.duration), offer.map { offerType($0.paymentMode) } ?? "",
                offerLength, "", "", "", occurrence.proceedsReason ?? "",
                occurrence.offerName ?? "", offer?.type == .promotional ? offer?.identifier ?? "" : "",
                String(occurrence.consecutivePaidPeriods), day(occurrence.originalStartDate), "", "", "",
                SalesSummaryReport.countryCode(occurrence.storefront), "", "", "", reason, "",
            ]
            quantities[row, default: 0] += 1
        }
        let rows = quantities.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { row, quantity in
            SalesSummaryReport.line(row + [String(quantity)])
        }
        return (([columns.joined(separator: "\t")] + rows).joined(separator: "\n") + "\n", rows.count)
    }

    /// "Pay Up Front", "Pay As You Go" or "Free Trial".
    static func offerType(_ mode: OfferPaymentMode) -> String {
        switch mode {
        case .freeTrial: "Free Trial"
        case .payAsYouGo: "Pay As You Go"
        case .payUpFront: "Pay Up Front"
        }
    }

    /// An offer's period as Apple writes it: P3D "3 Days", P1W "7 Days", P2W "2 Weeks", P1M "1 Month", P1Y "1 Year".
    static func offerDuration(_ iso8601: String) -> String {
        guard let period = OfferPeriod(iso8601: iso8601) else { return "" }
        let count = period.count
        switch period.unit {
        case .day: return count == 1 ? "1 Day" : "\(count) Days"
        case .week: return count == 1 ? "7 Days" : "\(count) Weeks"
        case .month: return count == 1 ? "1 Month" : "\(count) Months"
        case .year: return count == 1 ? "1 Year" : "\(count) Years"
        }
    }

    /// Apple's date in this report: 2026-11-24.
    static func day(_ date: Date) -> String {
        let parts = Calendar.utc.dateComponents([.year, .month, .day], from: date)
        func two(_ value: Int?) -> String { (value ?? 0) < 10 ? "0\(value ?? 0)" : "\(value ?? 0)" }
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day))"
    }
}
