import KioskCore
import Testing

@Suite("Price table")
struct PriceTableTests {
    // Proves Apple's classic tier 1 exactly: tier 1 is ¥6.00 in China, HK$8.00 in Hong Kong, US$0.99 in the US.
    @Test(arguments: [("CHN", 600), ("HKG", 800), ("USA", 99)])
    func seed004TierOne(code: String, minorUnits: Int) throws {
        let storefront = try #require(Storefront.named(code))
        #expect(PriceTable.price(tier: 1, in: storefront) == minorUnits)
    }

    // Proves USD tier N costs exactly N dollars minus one cent for every tier.
    @Test(arguments: PriceTable.tiers)
    func usdTierIsNMinusOneCent(tier: Int) throws {
        let usa = try #require(Storefront.named("USA"))
        #expect(PriceTable.price(tier: tier, in: usa) == tier * 100 - 1)
    }

    // Proves the explicit CNY, JPY, EUR and GBP ladders hold the historic values.
    @Test func explicitLadders() throws {
        let china = try #require(Storefront.named("CHN"))
        let japan = try #require(Storefront.named("JPN"))
        let france = try #require(Storefront.named("FRA"))
        let britain = try #require(Storefront.named("GBR"))
        let yuan = [6, 12, 18, 25, 30, 40, 45, 50, 60, 68, 73, 78, 88, 93, 98, 108, 113, 118, 123, 128]
        let yen = [
            120, 250, 370, 490, 610, 730, 860, 980, 1100, 1200, 1300, 1500, 1600, 1700, 1800, 1900, 2000, 2200,
            2300, 2400,
        ]
        #expect(PriceTable.tiers.map { PriceTable.price(tier: $0, in: china) } == yuan.map { $0 * 100 })
        #expect(PriceTable.tiers.map { PriceTable.price(tier: $0, in: japan) } == yen)
        #expect(
            PriceTable.tiers.prefix(10).map { PriceTable.price(tier: $0, in: france) } == [
                109, 229, 349, 449, 549, 699, 799, 899, 999, 1099,
            ])
        #expect(PriceTable.price(tier: 3, in: britain) == 299)
    }

    // Proves every storefront has a positive price for every tier, strictly increasing, each mapping back to its tier.
    @Test(arguments: Storefront.all)
    func everyStorefrontLadderIsPositiveAndIncreasing(storefront: Storefront) throws {
        var previous = 0
        for tier in PriceTable.tiers {
            let price = try #require(PriceTable.price(tier: tier, in: storefront), "tier \(tier)")
            #expect(price > previous, "tier \(tier) in \(storefront.code)")
            #expect(PriceTable.tier(matching: price, in: storefront) == tier)
            previous = price
        }
    }

    // Proves tiers outside 1...20 have no price and amounts no tier costs have no tier.
    @Test func outOfRange() throws {
        let usa = try #require(Storefront.named("USA"))
        #expect(PriceTable.tiers == 1...20)
        #expect(PriceTable.price(tier: 0, in: usa) == nil)
        #expect(PriceTable.price(tier: 21, in: usa) == nil)
        #expect(PriceTable.price(tier: -1, in: usa) == nil)
        #expect(PriceTable.tier(matching: 100, in: usa) == nil)
        #expect(PriceTable.tier(matching: 0, in: usa) == nil)
    }

    // Proves a custom price wins in its storefront (key case ignored), the tier applies elsewhere, and no price is nil.
    @Test func pricingResolution() throws {
        let usa = try #require(Storefront.named("USA"))
        let china = try #require(Storefront.named("CHN"))
        let japan = try #require(Storefront.named("JPN"))
        let pricing = Pricing(tier: 1, customPrices: ["CHN": 100, "jpn": 150])
        #expect(pricing.price(in: china) == 100)
        #expect(pricing.price(in: japan) == 150)
        #expect(pricing.price(in: usa) == 99)
        let customOnly = Pricing(customPrices: ["CHN": 100])
        #expect(customOnly.price(in: china) == 100)
        #expect(customOnly.price(in: usa) == nil)
        #expect(Pricing().price(in: usa) == nil)
        #expect(Pricing(tier: 42).price(in: usa) == nil)
        #expect(Pricing(tier: 1, customPrices: ["USA": 0]).price(in: usa) == nil)
    }
}
