import KioskMerchant
import Testing

/// The names `kiosk merchant init` derives from a catalog, as a person would choose them.
@Suite struct GrantNamesTests {
    // A consumable's display name gives the balance and the amount; the product id is the fallback.
    @Test func consumables() {
        #expect(GrantNames.consumable(displayName: "100 Coins", productId: "com.example.coins.100") == ("coins", 100))
        #expect(GrantNames.consumable(displayName: "1,000 Gems", productId: "g") == ("gems", 1000))
        #expect(GrantNames.consumable(displayName: "Pile of 50 coins", productId: "p") == ("pile-of-coins", 50))
        #expect(GrantNames.consumable(displayName: "Coins", productId: "com.example.coins.100") == ("coins", 100))
        #expect(GrantNames.consumable(displayName: nil, productId: "com.example.coins.100") == ("coins", 100))
        #expect(GrantNames.consumable(displayName: nil, productId: "com.example.gems") == ("gems", 1))
        // Beyond what a balance credits per unit (10¹²), a number is a word, not an amount.
        #expect(
            GrantNames.consumable(displayName: "99999999999999 Coins", productId: "com.example.coins")
                == ("coins", 1))
    }

    // Entitlements and slugs: words joined by hyphens, lower case, other characters dropped.
    @Test func entitlementsAndSlugs() {
        #expect(GrantNames.entitlement(displayName: "Remove Ads", productId: "com.example.removeads") == "remove-ads")
        #expect(GrantNames.entitlement(displayName: "", productId: "com.example.removeads") == "removeads")
        #expect(GrantNames.entitlement(displayName: "✨", productId: "com.example.pro") == "pro")
        #expect(GrantNames.slug("  Coin Club — Gold! ") == "coin-club-gold")
        #expect(GrantNames.slug("Käse Plus") == "käse-plus")
    }
}
