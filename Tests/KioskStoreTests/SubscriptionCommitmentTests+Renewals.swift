import Foundation
import KioskCore
import KioskSigning
import KioskTestSupport
import KioskTesting
import Testing

/// How a commitment's months follow one another: at the tester's renewal rate, through a late recovery, a
/// renewal-date extension, a downgrade and a plan that stopped being sold; and how its payments show in the Sales
/// report.
extension SubscriptionCommitmentTests {
    /// Checks `period` is billing period `number` of the commitment to pro that ends at `commitmentEnd`, starting at
    /// `start` and lasting one `month`.
    static func expectPeriod(
        _ period: JWSTransactionDecodedPayload?, number: Int, start: Int64, month: Int64, commitmentEnd: Int64
    ) {
        #expect(period?.productId == pro)
        #expect(period?.billingPlanType == "MONTHLY")
        #expect(period?.price == 5990)
        #expect(period?.purchaseDate == start, "period \(number) starts where the last ended, not before")
        #expect(period?.expiresDate == start + month, "period \(number) lasts one month")
        #expect(
            period?.commitmentInfo
                == TransactionCommitmentInfo(
                    billingPeriodNumber: number, commitmentExpiresDate: commitmentEnd, commitmentPrice: 71880,
                    totalBillingPeriods: 12))
    }

    /// A commitment's payment retries for all of Apple's 90 days: a payment method fixed after day 45 still recovers
    /// at the next retry (day 60), the commitment's end moving by the delay.
    @Test(arguments: TestDatabase.available)
    func aPaymentFixedAfterDay45StillRecovers(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await Self.prepare(store, receiver: receiver)
                let token = try await store.signIn()
                let bought = try await Self.buy(Self.pro, plan: "MONTHLY", store: store, token: token)
                #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
                let purchased = try #require(try await Self.transactions(store, clock: clock).first).purchaseDate
                for (outcome, advance, field, count) in [
                    ("decline", "5m", "billingRetries", 1),
                    // A sandbox day is 10 seconds: day 50, after the retries of days 1 to 45.
                    ("decline", "500s", "billingRetries", 7),
                    ("approve", "100s", "recovered", 1),
                ] {
                    let changed = try await store.request(
                        .PATCH, "/admin/v1/testers/\(TestStore.testerEmail)", json: ["paymentOutcome": outcome])
                    #expect(changed.status == 200, "\(changed.text)")
                    let advanced = try await store.advanceSandboxClock(advance)
                    #expect(advanced.json[field] as? Int == count, "\(advance): \(advanced.text)")
                    #expect(advanced.json["expired"] as? Int == 0, "\(advance): \(advanced.text)")
                }
                let delay: Int64 = 600_000
                Self.expectPeriod(
                    try await Self.transactions(store, clock: clock).last, number: 2,
                    start: purchased + Self.month + delay, month: Self.month,
                    commitmentEnd: purchased + 12 * Self.month + delay)
            }
        }
    }
}
