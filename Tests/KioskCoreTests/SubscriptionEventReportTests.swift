import Foundation
import KioskCore
import Testing

/// App Store Connect's Subscription Event report from server notifications: Apple's event names for each
/// notification type and subtype, the offer columns, cancellation reasons, identical rows counted in Quantity, and
/// notifications that are no subscription event left out.
@Suite struct SubscriptionEventReportTests {
    static let day = Date(timeIntervalSince1970: 1_795_478_400)  // 2026-11-24

    static func occurrence(
        _ type: NotificationType, _ subtype: NotificationSubtype? = nil, offer: AppliedOffer? = nil,
        previous: AppliedOffer? = nil,
        storefront: String = "USA", paidPeriods: Int = 1
    ) -> SubscriptionEventReport.Occurrence {
        SubscriptionEventReport.Occurrence(
            date: day + 3_600, notificationType: type, subtype: subtype, appName: "Coin Game",
            appAppleId: 1_400_000_001, subscriptionName: "Club monthly", subscriptionAppleId: 43, groupId: 21_000_001,
            duration: .oneMonth, offer: offer, previousOffer: previous, offerName: nil, proceedsReason: nil,
            consecutivePaidPeriods: paidPeriods, originalStartDate: day - 40 * 86_400, storefront: storefront)
    }

    static let trial = AppliedOffer(type: .introductory, paymentMode: .freeTrial, period: "P1W")

    @Test func notificationsBecomeApplesEvents() {
        let cases: [(SubscriptionEventReport.Occurrence, String, String)] = [
            (Self.occurrence(.subscribed, .initialBuy), "Subscribe", ""),
            (Self.occurrence(.subscribed, .initialBuy, offer: Self.trial), "Start Introductory Offer", ""),
            (
                Self.occurrence(
                    .subscribed, .initialBuy,
                    offer: AppliedOffer(type: .offerCode, identifier: "FALL", paymentMode: .payUpFront, period: "P1M")),
                "Start Offer Code", ""
            ),
            (
                Self.occurrence(
                    .subscribed, .initialBuy,
                    offer: AppliedOffer(type: .promotional, identifier: "half", paymentMode: .payAsYouGo, period: "P1M")
                ),
                "Subscribe", ""
            ),
            (Self.occurrence(.subscribed, .resubscribe), "Reactivate", ""),
            (Self.occurrence(.didRenew), "Renew", ""),
            (Self.occurrence(.didRenew, previous: Self.trial), "Paid Subscription from Introductory Offer", ""),
            (Self.occurrence(.didRenew, .billingRecovery), "Renewal from Billing Retry", ""),
            (Self.occurrence(.didFailToRenew), "Billing Retry from Paid Subscription", ""),
            (
                Self.occurrence(.didFailToRenew, .gracePeriod, offer: Self.trial),
                "Billing Retry from Introductory Offer", ""
            ),
            (Self.occurrence(.expired, .voluntary), "Cancel", "Canceled"),
            (Self.occurrence(.expired, .billingRetry), "Canceled from Billing Retry", "Billing issue"),
            (Self.occurrence(.expired, .priceIncrease), "Cancel", "Price increase"),
            (Self.occurrence(.expired, .productNotForSale), "Cancel", "Removed from Sale"),
            (Self.occurrence(.didChangeRenewalPref, .upgrade), "Upgrade", ""),
            (Self.occurrence(.didChangeRenewalPref, .downgrade), "Downgrade", ""),
            (Self.occurrence(.refund), "Refund", ""),
        ]
        for (occurrence, name, reason) in cases {
            let event = SubscriptionEventReport.event(occurrence)
            #expect(event?.name == name && event?.cancellationReason == reason, "\(occurrence.notificationType)")
        }
        for type: NotificationType in [
            .oneTimeCharge, .consumptionRequest, .test, .refundDeclined, .didChangeRenewalStatus,
        ] {
            #expect(SubscriptionEventReport.event(Self.occurrence(type)) == nil, "\(type) is no subscription event")
        }
    }

    @Test func rowsCountIdenticalEventsInApplesColumns() {
        let (text, rows) = SubscriptionEventReport.make([
            Self.occurrence(.subscribed, .initialBuy, offer: Self.trial, paidPeriods: 0),
            Self.occurrence(.subscribed, .initialBuy, offer: Self.trial, paidPeriods: 0),
            Self.occurrence(.expired, .voluntary, storefront: "GBR", paidPeriods: 3),
            Self.occurrence(.oneTimeCharge),
        ])
        let lines = text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false) }
        #expect(rows == 2 && lines.count == 3)
        #expect(lines.allSatisfy { $0.count == SubscriptionEventReport.columns.count })
        let table = lines.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(SubscriptionEventReport.columns, $0)) }
        let cancel = table.first { $0["Event"] == "Cancel" }
        #expect(cancel?["Country"] == "GB" && cancel?["Cancellation Reason"] == "Canceled")
        #expect(cancel?["Consecutive Paid Periods"] == "3" && cancel?["Quantity"] == "1")
        let trials = table.first { $0["Event"] == "Start Introductory Offer" }
        #expect(trials?["Quantity"] == "2" && trials?["Subscription Offer Type"] == "Free Trial")
        #expect(trials?["Subscription Offer Duration"] == "7 Days" && trials?["Event Date"] == "2026-11-24")
        #expect(
            trials?["Original Start Date"] == "2026-10-15" && trials?["Standard Subscription Duration"] == "1 Month")
        #expect(trials?["App Apple ID"] == "1400000001" && trials?["Subscription Group ID"] == "21000001")
        #expect(SubscriptionEventReport.make([]).text == SubscriptionEventReport.columns.joined(separator: "\t") + "\n")
    }
}
