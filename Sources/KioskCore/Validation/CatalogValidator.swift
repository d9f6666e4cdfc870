/// The console's input rules, as App Store Connect enforces them, as pure functions.
///
/// Every check returns all the problems it finds as `KioskError`s (kind `invalidInput`) with a stable `code`, the
/// `field` path of the offending value under the `field` prefix the caller passes (`products[2]`), and a `fix`.
/// `require(_:)` turns a list into a throw of its first error for callers that stop at the first problem.
///
/// ```swift
/// let errors = CatalogValidator.validate(product: product, field: "products[0]")
/// try CatalogValidator.require(CatalogValidator.validateBundleId(bundleId))
/// ```
public enum CatalogValidator {
    /// App Store Connect's longest bundle id.
    public static let bundleIdMaxLength = 155
    /// App Store Connect's longest product id.
    public static let productIdMaxLength = 100
    /// The levels a subscription may have in its group: 1 (the highest) up to far more products than a group holds,
    /// so "the level after the lowest" can never overflow.
    public static let subscriptionLevels = 1...10_000
    /// App Store Connect's longest in-app purchase reference name.
    public static let referenceNameMaxLength = 64
    /// App Store Connect's longest app name.
    public static let appNameMaxLength = 30
    /// The longest name of a person (a tester's or account's first or last name), a key or a subscription group
    /// as customers see it. App Store Connect publishes no limit for these; this is Kiosk's.
    public static let nameMaxLength = 64

    /// Throws the first error of `errors`, if any.
    /// - Throws: `errors[0]`.
    public static func require(_ errors: [KioskError]) throws(KioskError) {
        if let first = errors.first { throw first }
    }

    /// Checks a bundle id: reverse-DNS, at least two dot-separated segments, each starting with an ASCII letter and
    /// made of ASCII letters, digits and hyphens; at most 155 characters; no wildcard.
    public static func validateBundleId(_ bundleId: String, field: String = "bundleId") -> [KioskError] {
        let fix = "Use the app's CFBundleIdentifier in reverse-DNS form, such as com.example.myapp."
        if bundleId.isEmpty {
            return [KioskError(.invalidBundleId, "The bundle id is empty.", field: field, fix: fix)]
        }
        if bundleId.count > bundleIdMaxLength {
            let message = "The bundle id has \(bundleId.count) characters; at most \(bundleIdMaxLength) are allowed."
            return [KioskError(.invalidBundleId, message, field: field, fix: fix)]
        }
        if bundleId.contains("*") {
            let message = "The bundle id '\(bundleId)' has a wildcard; an app needs an explicit bundle id."
            return [KioskError(.invalidBundleId, message, field: field, fix: fix)]
        }
        let segments = bundleId.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count >= 2 else {
            let message = "The bundle id '\(bundleId)' has one segment; reverse-DNS needs at least two."
            return [KioskError(.invalidBundleId, message, field: field, fix: fix)]
        }
        for segment in segments {
            guard let first = segment.first else {
                let message = "The bundle id '\(bundleId)' has an empty segment (a leading, trailing or double dot)."
                return [KioskError(.invalidBundleId, message, field: field, fix: fix)]
            }
            guard first.isASCIILetter, segment.allSatisfy({ $0.isASCIILetter || $0.isASCIIDigit || $0 == "-" })
            else {
                let message =
                    "The bundle id segment '\(segment)' must start with a letter and hold only letters, "
                    + "digits and hyphens."
                return [KioskError(.invalidBundleId, message, field: field, fix: fix)]
            }
        }
        return []
    }

    /// Checks a product id (also used for promotional offer identifiers): 1–100 ASCII letters, digits, underscores
    /// and periods.
    public static func validateProductId(
        _ productId: String, field: String = "productId", what: String = "product id"
    ) -> [KioskError] {
        let fix =
            "Use 1–\(productIdMaxLength) letters, digits, underscores and periods, such as com.example.coins_100."
        if productId.isEmpty {
            return [KioskError(.invalidProductId, "The \(what) is empty.", field: field, fix: fix)]
        }
        if productId.count > productIdMaxLength {
            let message = "The \(what) has \(productId.count) characters; at most \(productIdMaxLength) are allowed."
            return [KioskError(.invalidProductId, message, field: field, fix: fix)]
        }
        if let bad = productId.first(where: { !($0.isASCIILetter || $0.isASCIIDigit || $0 == "_" || $0 == ".") }) {
            let message =
                "The \(what) '\(productId)' contains '\(bad)'; only letters, digits, underscores and "
                + "periods are allowed."
            return [KioskError(.invalidProductId, message, field: field, fix: fix)]
        }
        return []
    }

    /// Checks a reference name (the console-only name of a product or offer): 1–64 characters, not only spaces.
    public static func validateReferenceName(_ name: String, field: String = "referenceName") -> [KioskError] {
        validateText(
            name, code: .invalidReferenceName, what: "reference name", limit: referenceNameMaxLength, field: field)
    }

    /// Checks an app name: 1–30 characters, not only spaces.
    public static func validateAppName(_ name: String, field: String = "name") -> [KioskError] {
        validateText(name, code: .invalidAppName, what: "app name", limit: appNameMaxLength, field: field)
    }

    /// Checks any other name (`what`, such as "first name"): 1–64 characters, not only spaces, one line.
    public static func validateName(_ name: String, what: String, field: String) -> [KioskError] {
        validateText(name, code: .invalidName, what: what, limit: nameMaxLength, field: field)
    }

    /// Checks that `text` has 1...`limit` characters, is not blank and holds no control character (NUL, line
    /// breaks, tabs…): names are one line of text.
    static func validateText(_ text: String, code: ErrorCode, what: String, limit: Int, field: String) -> [KioskError] {
        let fix = "Give a \(what) of 1–\(limit) characters."
        if let control = text.unicodeScalars.first(where: \.isControl) {
            let message = "The \(what) contains the control character U+\(control.hexCode)."
            return [KioskError(code, message, field: field, fix: "Remove it; a \(what) is one line of text.")]
        }
        if text.allSatisfy(\.isWhitespace) {
            return [KioskError(code, "The \(what) is empty.", field: field, fix: fix)]
        }
        if text.count > limit {
            let message = "The \(what) has \(text.count) characters; at most \(limit) are allowed."
            return [KioskError(code, message, field: field, fix: fix)]
        }
        return []
    }
}

extension Character {
    /// `A`–`Z` or `a`–`z`.
    var isASCIILetter: Bool { isASCII && isLetter }
    /// `0`–`9`.
    var isASCIIDigit: Bool { isASCII && isNumber }
}
