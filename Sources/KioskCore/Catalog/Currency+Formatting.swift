extension Currency {
    /// The currency with this ISO 4217 code as Kiosk's storefronts use it (JPY with no digits after the point), or
    /// nil for a code no built-in storefront uses.
    public static func named(_ code: String) -> Currency? {
        Storefront.all.first { $0.currency.code == code }?.currency
    }

    /// `minorUnits` as people read an amount: the currency's code, then the decimal ("USD 0.49", "JPY 120",
    /// "USD -0.99"). The one way Kiosk writes an amount for people (the CLI, the console, messages); JSON keeps
    /// integers in fields whose names say they are minor units.
    public func text(minorUnits: Int) -> String {
        "\(code) \(decimalString(minorUnits: minorUnits))"
    }

    /// `minorUnits` of the currency `code` as people read it ("USD 0.49"): ``text(minorUnits:)`` of the currency
    /// ``named(_:)``, two digits after the point for a code no storefront uses.
    public static func text(minorUnits: Int, code: String) -> String {
        (named(code) ?? Currency(code: code, minorUnitExponent: 2)).text(minorUnits: minorUnits)
    }

    /// `minorUnits` as a plain decimal string with the currency's digits: 99 USD → "0.99", 120 JPY → "120".
    public func decimalString(minorUnits: Int) -> String {
        guard minorUnitExponent > 0 else { return String(minorUnits) }
        let sign = minorUnits < 0 ? "-" : ""
        let magnitude = minorUnits.magnitude
        var divisor: UInt = 1
        for _ in 0..<minorUnitExponent { divisor *= 10 }
        let fraction = String(magnitude % divisor)
        let padded = String(repeating: "0", count: minorUnitExponent - fraction.count) + fraction
        return "\(sign)\(magnitude / divisor).\(padded)"
    }

    /// Parses a plain decimal string ("0.99", "6", "120") into minor units; nil if it is not a number or has
    /// more significant digits after the point than the currency allows. A point must have digits on both sides
    /// ("1." and ".5" are refused). Never goes through floating point.
    public func minorUnits(decimalString text: String) -> Int? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigitCharacter)
        else { return nil }
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        guard fraction.allSatisfy(\.isASCIIDigitCharacter), parts.count == 1 || !fraction.isEmpty else { return nil }
        while fraction.count > minorUnitExponent, fraction.last == "0" { fraction.removeLast() }
        guard fraction.count <= minorUnitExponent else { return nil }
        fraction += String(repeating: "0", count: minorUnitExponent - fraction.count)
        guard let value = Int(whole + fraction) else { return nil }
        return value
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
