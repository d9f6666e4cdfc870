import Foundation
import KioskCore
import Testing

@Suite("Product metadata completeness")
struct ProductMetadataValidationTests {
    static let epoch = Date(timeIntervalSince1970: 1_767_225_600)

    // Proves a new product lacks a price, in readable words, and that texts are review's concern, not the sale's.
    @Test func newProductLacksAPrice() {
        let product = Product(
            appId: 1, productId: "coins", referenceName: "Coins", type: .consumable, createdAt: Self.epoch,
            updatedAt: Self.epoch)
        #expect(product.missingMetadata() == ["a price (a tier from 1 to 20 or custom prices)"])
        #expect(!product.hasCompleteMetadata())
        #expect(CatalogValidator.reviewFindings(of: product).map(\.code.rawValue) == ["missing_localization"])
    }

    // Proves a blank localization is a review finding, not missing metadata, and a described consumable has none.
    @Test func completeConsumable() {
        var product = Product(
            appId: 1, productId: "coins", referenceName: "Coins", type: .consumable, pricing: Pricing(tier: 3),
            localizations: [ProductLocalization(locale: "en_US", displayName: " ", description: "")],
            createdAt: Self.epoch, updatedAt: Self.epoch)
        #expect(product.missingMetadata() == [])
        #expect(
            CatalogValidator.reviewFindings(of: product).map(\.code.rawValue) == [
                "invalid_display_name", "invalid_description", "missing_localization",
            ])
        product.localizations = [ProductLocalization(locale: "ja_JP", displayName: "コイン", description: "100枚")]
        #expect(product.hasCompleteMetadata())
        #expect(CatalogValidator.reviewFindings(of: product).isEmpty)
    }

    // Proves an auto-renewable also needs a group with a level ≥ 1 and a duration.
    @Test func autoRenewableNeedsSubscriptionSettings() {
        var product = Product(
            appId: 1, productId: "pro", referenceName: "Pro", type: .autoRenewable, pricing: Pricing(tier: 5),
            localizations: [ProductLocalization(locale: "en_US", displayName: "Pro", description: "All features")],
            createdAt: Self.epoch, updatedAt: Self.epoch)
        #expect(product.missingMetadata() == ["a subscription group and level", "a subscription duration"])
        product.subscription = SubscriptionMembership(groupId: 7, level: 0)
        product.duration = .oneYear
        #expect(product.missingMetadata() == ["a subscription level of 1 or more"])
        product.subscription?.level = 2
        #expect(product.hasCompleteMetadata())
    }

    // Proves a price that applies in none of the given storefronts is reported as such.
    @Test func priceOutsideTheStorefronts() throws {
        let product = Product(
            appId: 1, productId: "coins", referenceName: "Coins", type: .consumable,
            pricing: Pricing(customPrices: ["JPN": 120]),
            localizations: [ProductLocalization(locale: "en_US", displayName: "Coins", description: "Coins")],
            createdAt: Self.epoch, updatedAt: Self.epoch)
        let usa = try #require(Storefront.named("USA"))
        #expect(product.missingMetadata(storefronts: [usa]) == ["a price that applies in at least one storefront"])
        #expect(product.hasCompleteMetadata())
    }
}
