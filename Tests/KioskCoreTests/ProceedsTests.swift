import Foundation
import KioskCore
import Testing

/// What a sale is worth: tax in or on top of the price, the 30% and 15% commissions, integer minor units rounded
/// half up once per division, and the one-year subscription rule with its 60-day allowance.
@Suite struct ProceedsTests {
    static let day: TimeInterval = 86_400
    static let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01

    @Test func taxInclusiveStorefrontTakesTheTaxOutOfThePrice() {
        // £0.99 in the United Kingdom, 20% VAT in the price: 99 / 1.2 = 82.5 → 83 net, 16 tax; 30% of 83 = 24.9 → 25.
        let split = Proceeds.of(
            priceMinorUnits: 99, tax: TaxRule.inForce(for: "GBR", at: Self.start, among: []),
            commissionBasisPoints: Proceeds.standardCommission)
        #expect(split.taxMinorUnits == 16 && split.commissionMinorUnits == 25 && split.proceedsMinorUnits == 58)
        #expect(split.pricesIncludeTax && split.taxRateBasisPoints == 2_000)
        // ¥160 in Japan, 10% in the price (no minor units): 145.45 → 145 net, 15 tax; 43.5 → 44; 101 proceeds.
        let yen = Proceeds.of(
            priceMinorUnits: 160, tax: TaxRule.defaultRule(for: "JPN"),
            commissionBasisPoints: Proceeds.standardCommission)
        #expect(yen.taxMinorUnits == 15 && yen.commissionMinorUnits == 44 && yen.proceedsMinorUnits == 101)
    }

    @Test func taxExclusiveStorefrontAddsTheTaxOnTop() {
        // US$0.99: tax is added at checkout, so the price is already net: 30% of 99 = 29.7 → 30, 69 proceeds.
        let usa = Proceeds.of(
            priceMinorUnits: 99, tax: TaxRule.defaultRule(for: "USA"),
            commissionBasisPoints: Proceeds.standardCommission)
        #expect(!usa.pricesIncludeTax && usa.taxMinorUnits == 0 && usa.proceedsMinorUnits == 69)
        // An operator's 5% on top in Canada: 5% of 199 = 9.95 → 10 tax, paid by the customer beyond the price.
        let canada = Proceeds.of(
            priceMinorUnits: 199,
            tax: TaxRule(storefront: "CAN", effectiveFrom: Self.start, pricesIncludeTax: false, rateBasisPoints: 500),
            commissionBasisPoints: Proceeds.reducedCommission)
        #expect(canada.taxMinorUnits == 10 && canada.commissionMinorUnits == 30 && canada.proceedsMinorUnits == 169)
    }

    @Test func rulesApplyFromTheirEffectiveDate() {
        let later = TaxRule(
            storefront: "GBR", effectiveFrom: Self.start + 10 * Self.day, pricesIncludeTax: true, rateBasisPoints: 2_500
        )
        #expect(TaxRule.inForce(for: "GBR", at: Self.start, among: [later]).rateBasisPoints == 2_000)
        #expect(TaxRule.inForce(for: "GBR", at: Self.start + 10 * Self.day, among: [later]).rateBasisPoints == 2_500)
        #expect(TaxRule.inForce(for: "DEU", at: Self.start + 20 * Self.day, among: [later]).rateBasisPoints == 1_900)
        #expect(Storefront.all.allSatisfy { TaxRule.defaults[$0.code] != nil }, "every storefront has a default")
    }

    @Test func prorationAndNegationKeepThePartsAddingUp() {
        let sale = Proceeds.of(
            priceMinorUnits: 99, tax: TaxRule.defaultRule(for: "GBR"),
            commissionBasisPoints: Proceeds.standardCommission)
        let half = sale.scaled(by: 49, of: 99)
        #expect(half.customerPriceMinorUnits == 49)
        #expect(
            half.customerPriceMinorUnits - half.taxMinorUnits - half.commissionMinorUnits == half.proceedsMinorUnits)
        #expect(sale.scaled(by: 99, of: 99) == sale)
        #expect(sale.negated.negated == sale && sale.negated.proceedsMinorUnits == -58)
    }

    /// Twelve monthly periods of 30 days, starting at `from`.
    static func months(_ count: Int, from: Date) -> [DateInterval] {
        (0..<count).map { DateInterval(start: from + Double($0) * 30 * day, duration: 30 * day) }
    }

    @Test func aYearOfPaidServiceLowersTheCommission() {
        let year = Self.months(12, from: Self.start)  // 360 days
        #expect(Commission.paidDays(year, before: Self.start + 360 * Self.day) == 360)
        #expect(
            Commission.rate(at: Self.start + 360 * Self.day, smallBusinessSince: nil, paidPeriods: year).basisPoints
                == 3_000)
        let thirteen = Self.months(13, from: Self.start)
        let renewal = Commission.rate(at: Self.start + 390 * Self.day, smallBusinessSince: nil, paidPeriods: thirteen)
        #expect(renewal.basisPoints == 1_500 && renewal.reason == Proceeds.rateAfterOneYear)
    }

    @Test func aGapOfUpTo60DaysKeepsTheCountAndALongerOneStartsItOver() {
        // Seven months, a gap, then six more: 390 paid days in all.
        let first = Self.months(7, from: Self.start)
        let afterShortGap = Self.months(6, from: Self.start + (210 + 45) * Self.day)
        let shortGapEnd = Self.start + (210 + 45 + 180) * Self.day
        #expect(Commission.paidDays(first + afterShortGap, before: shortGapEnd) == 390)
        #expect(
            Commission.rate(at: shortGapEnd, smallBusinessSince: nil, paidPeriods: first + afterShortGap).basisPoints
                == 1_500)

        let afterLongGap = Self.months(6, from: Self.start + (210 + 75) * Self.day)
        let longGapEnd = Self.start + (210 + 75 + 180) * Self.day
        #expect(Commission.paidDays(first + afterLongGap, before: longGapEnd) == 180, "the count started over")
        #expect(
            Commission.rate(at: longGapEnd, smallBusinessSince: nil, paidPeriods: first + afterLongGap).basisPoints
                == 3_000)
        // A lapse of more than 60 days up to the sale itself starts over too.
        #expect(Commission.paidDays(Self.months(13, from: Self.start), before: Self.start + 500 * Self.day) == 0)
    }

    @Test func theSmallBusinessProgramAppliesFromItsDate() {
        let since = Self.start + 30 * Self.day
        #expect(Commission.rate(at: Self.start, smallBusinessSince: since, paidPeriods: nil).basisPoints == 3_000)
        let enrolled = Commission.rate(at: since, smallBusinessSince: since, paidPeriods: nil)
        #expect(enrolled.basisPoints == 1_500 && enrolled.reason == nil)
    }
}
