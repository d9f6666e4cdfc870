import Foundation
import KioskTesting
import Testing

@testable import KioskKit

/// KioskKit's monthly plan with a 12-month commitment against a real store: the product's pricing terms (Apple asks
/// apps to show the monthly and the total price before the purchase), the `billingPlanType(.monthly)` purchase
/// option, and the transaction's billing plan and commitment information.
@Suite struct CommitmentPlanKitTests {
    static let annual = "com.example.shop.annual"

    @Test func theMonthlyPlanAsAPurchaseOption() async throws {
        try await ShopStore.with { shop in
            let store = shop.store
            let group = try await store.request(
                .POST, "/admin/v1/apps/\(ShopStore.bundleId)/subscription-groups",
                json: ["referenceName": "Club", "localizations": [["locale": "en-US", "name": "Club"]]])
            #expect(group.status == 201, "\(group.text)")
            let created = try await store.request(
                .POST, "/admin/v1/apps/\(ShopStore.bundleId)/products",
                json: [
                    "productId": Self.annual, "type": "auto_renewable", "referenceName": "Annual",
                    "pricing": ["customPrices": ["USA": 5999]], "subscription": ["group": "Club", "level": 1],
                    "duration": "P1Y", "monthlyPlan": ["pricing": ["customPrices": ["USA": 599]]],
                    "localizations": [["locale": "en_US", "displayName": "Club", "description": "The club"]],
                ])
            #expect(created.status == 201, "\(created.text)")
            let device = try await shop.signedInDevice()
            let product = try #require(try await Product.products(for: [Self.annual], client: device).first)
            let terms = try #require(product.subscription?.pricingTerms)
            #expect(terms.map(\.billingPlanType) == [.upFront, .monthly])
            let monthly = try #require(terms.last)
            #expect(monthly.billingPrice == Decimal(string: "5.99"))
            #expect(monthly.billingDisplayPrice == "$5.99")
            #expect(monthly.billingPeriod == "P1M")
            #expect(monthly.commitmentInfo.price == Decimal(string: "71.88"))
            #expect(monthly.commitmentInfo.displayPrice == "$71.88")
            #expect(monthly.commitmentInfo.period == "P1Y")
            #expect(monthly.commitmentInfo.billingPeriodCount == 12)

            guard
                case .success(.verified(let first)) = try await product.purchase(options: [.billingPlanType(.monthly)])
            else {
                Issue.record("the monthly plan was not bought")
                return await device.close()
            }
            #expect(first.billingPlanType == .monthly)
            #expect(first.price == Decimal(string: "5.99"))
            #expect(first.expirationDate == first.purchaseDate + 5 * 60, "a sandbox month")
            let commitment = try #require(first.commitmentInfo)
            #expect(commitment.billingPeriodNumber == 1)
            #expect(commitment.totalBillingPeriods == 12)
            #expect(commitment.price == Decimal(string: "71.88"))
            #expect(commitment.expirationDate == first.purchaseDate + 60 * 60, "a sandbox year")
            await first.finish()
            await device.close()
        }
    }
}
