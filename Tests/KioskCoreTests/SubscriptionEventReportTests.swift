import Foundation
import KioskCore
import Testing

/// App Store Connect's Subscription Event report from server notifications: Apple's event names for each
/// notification type and subtype, the offer columns, cancellation reasons, identical rows counted in Quantity, and
/// notifications that are no subscription event left out.
@Suite struct SubscriptionEventReportTests {
    static let day = Date(timeIntervalSince1970: 1_795_478_400)  // 2026-11-24

    static func occurrence(
        _ type: String, _ subtype: String? = nil, offer: AppliedOffer? = nil, previous: AppliedOffer? = nil,
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
            (Self.occurrence("SUBSCRIBED", "INITIAL_BUY"), "Subscribe", ""),
            (Self.occurrence("SUBSCRIBED", "INITIAL_BUY", offer: Self.trial), "Start Introductory Offer", ""),
            (
                Self.occurrence(
                    "SUBSCRIBED", "INITIAL_BUY",
                    offer: AppliedOffer(type: .offerCode, identifier: "FALL", paymentMode: .payUpFront, period: "P1M")),
                "Start Offer Code", ""
            ),
            (
                Self.occurrence(
                    "SUBSCRIBED", "INITIAL_BUY",
                    offer: AppliedOffer(type: .promotional, identifier: "half", paymentMode: .payAsYouGo, period: "P1M")
                ),
                "Subscribe", ""
            ),
            (Self.occurrence("SUBSCRIBED", "RESUBSCRIBE"), "Reactivate", ""),
            (Self.occurrence("DID_RENEW"), "Renew", ""),
            (Self.occurrence("DID_RENEW", previous: Self.trial), "Paid Subscription from Introductory Offer", ""),
            (Self.occurrence("DID_RENEW", "BILLING_RECOVERY"), "Renewal from Billing Retry", ""),
            (Self.occurrence("DID_FAIL_TO_RENEW"), "Billing Retry from Paid Subscription", ""),
            (
                Self.occurrence("DID_FAIL_TO_RENEW", "GRACE_PERIOD", offer: Self.trial),
                "Billing Retry from Introductory Offer", ""
            ),
            (Self.occurrence("EXPIRED", "VOLUNTARY"), "Cancel", "Canceled"),
            (Self.occurrence("EXPIRED", "BILLING_RETRY"), "Canceled from Billing Retry", "Billing issue"),
            (Self.occurrence("EXPIRED", "PRICE_INCREASE"), "Cancel", "Price increase"),
            (Self.occurrence("EXPIRED", "PRODUCT_NOT_FOR_SALE"), "Cancel", "Removed from Sale"),
            (Self.occurrence("DID_CHANGE_RENEWAL_PREF", "UPGRADE"), "Upgrade", ""),
            (Self.occurrence("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE"), "Downgrade", ""),
            (Self.occurrence("REFUND"), "Refund", ""),
        ]
        for (occurrence, name, reason) in cases {
            let event = SubscriptionEventReport.event(occurrence)
            #expect(event?.name == name && event?.cancellationReason == reason, "\(occurrence.notificationType)")
        }
        for type in ["ONE_TIME_CHARGE", "CONSUMPTION_REQUEST", "TEST", "REFUND_DECLINED", "DID_CHANGE_RENEWAL_STATUS"] {
            #expect(SubscriptionEventReport.event(Self.occurrence(type)) == nil, "\(type) is no subscription event")
        }
    }

    @Test func rowsCountIdenticalEventsInApplesColumns() {
        let (text, rows) = SubscriptionEventReport.make([
            Self.occurrence("SUBSCRIBED", "INITIAL_BUY", offer: Self.trial, paidPeriods: 0),
            Self.occurrence("SUBSCRIBED", "INITIAL_BUY", offer: Self.trial, paidPeriods: 0),
            Self.occurrence("EXPIRED", "VOLUNTARY", storefront: "GBR", paidPeriods: 3),
            Self.occurrence("ONE_TIME_CHARGE"),
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
