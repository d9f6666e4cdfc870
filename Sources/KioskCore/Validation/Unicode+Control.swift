extension Unicode.Scalar {
    /// Whether this is a control character (Unicode category Cc: NUL, tab, line breaks, escape, DEL, C1), which no
    /// name or identifier may hold. Cc is U+0000–U+001F and U+007F–U+009F, a set Unicode's stability policy fixes for
    /// good, so the value is compared directly: looking up each scalar's category was 8% of a merchant delivery's
    /// samples, checking a 4 KB signed transaction.
    package var isControl: Bool { value < 0x20 || (0x7F...0x9F).contains(value) }

    /// The code point as four or more upper-case hex digits, as in `U+0000`.
    package var hexCode: String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

extension Product {
    /// Whether any of the product's texts (id, names, localizations, offer ids and names) holds a control
    /// character: hostile input, refused whatever else the rules would let pass.
    package var hasControlCharacters: Bool {
        let texts =
            [productId, referenceName]
            + localizations.flatMap { [$0.locale, $0.displayName, $0.description] }
            + promotionalOffers.flatMap { [$0.identifier, $0.referenceName] }
            + winBackOffers.flatMap { [$0.identifier, $0.referenceName] }
        return texts.contains { $0.unicodeScalars.contains(where: \.isControl) }
    }
}

extension SubscriptionGroup {
    /// Whether any of the group's texts holds a control character.
    package var hasControlCharacters: Bool {
        let texts =
            [referenceName] + localizations.flatMap { [$0.locale, $0.name, $0.customAppName ?? ""] }
        return texts.contains { $0.unicodeScalars.contains(where: \.isControl) }
    }
}
