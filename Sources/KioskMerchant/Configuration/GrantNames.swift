import Foundation

/// The names `kiosk merchant init` gives what a catalog product grants, as a person would choose them: "100 Coins"
/// credits 100 of the balance `coins`, "Remove Ads" unlocks `remove-ads`, and every subscription of the group
/// "Coin Club" unlocks the one entitlement `coin-club`, whatever its level.
public enum GrantNames {
    /// A consumable's balance and the amount one unit credits, from its display name ("100 Coins", "1,000 gems"),
    /// else from its product id (`com.example.coins.100`: 100 `coins`; `com.example.gems`: 1 `gems`).
    public static func consumable(displayName: String?, productId: String) -> (balance: String, amount: Int64) {
        if let displayName, let named = counted(displayName) { return named }
        let parts = productId.split(separator: ".").map(String.init)
        if parts.count >= 2, let amount = amount(parts[parts.count - 1]) {
            return (slug(parts[parts.count - 2]), amount)
        }
        return (slug(parts.last ?? productId), 1)
    }

    /// An entitlement's name from the display name ("Remove Ads" → `remove-ads`), else from the product id's last
    /// part.
    public static func entitlement(displayName: String?, productId: String) -> String {
        if let displayName, !slug(displayName).isEmpty { return slug(displayName) }
        return slug(productId.split(separator: ".").last.map(String.init) ?? productId)
    }

    /// `Coin Club` → `coin-club`: lower-case letters and digits, other runs of characters as one hyphen.
    public static func slug(_ text: String) -> String {
        var result = ""
        for character in text.lowercased() {
            if character.isLetter || character.isNumber {
                result.append(character)
            } else if !result.isEmpty, result.last != "-" {
                result.append("-")
            }
        }
        while result.last == "-" { result.removeLast() }
        return result
    }

    /// "100 Coins" → (`coins`, 100); nil without a number or without a word beside it.
    private static func counted(_ text: String) -> (balance: String, amount: Int64)? {
        let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
        guard let index = words.firstIndex(where: { amount($0) != nil }), let value = amount(words[index]) else {
            return nil
        }
        let rest = slug(words.enumerated().filter { $0.offset != index }.map(\.element).joined(separator: " "))
        return rest.isEmpty ? nil : (rest, value)
    }

    /// A whole number of 1…10¹² written with optional thousands separators ("1,000"); nil otherwise.
    private static func amount(_ text: String) -> Int64? {
        let digits = text.filter { $0 != "," && $0 != "_" }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let value = Int64(digits),
            MerchantConfiguration.ProductSettings.amounts.contains(value)
        else { return nil }
        return value
    }
}
