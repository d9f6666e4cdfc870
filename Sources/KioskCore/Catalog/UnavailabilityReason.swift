/// Why a product is not offered to clients in one storefront and environment: a stable `code`, a `message` saying
/// what is wrong and a `fix` saying what to do. Part of `ProductAvailability`.
public struct UnavailabilityReason: Codable, Sendable, Hashable {
    /// Stable snake_case code: `product_deleted`, `wrong_app`, `not_cleared_for_sale`, `missing_metadata`,
    /// `not_approved`, `removed_from_sale`, `review_findings`, `agreement_not_active`, `not_available_in_territory`
    /// or `no_price_in_storefront`.
    public var code: String
    /// What is wrong, for people.
    public var message: String
    /// What to do about it, for people.
    public var fix: String

    /// A reason with its code, message and fix.
    public init(code: String, message: String, fix: String) {
        self.code = code
        self.message = message
        self.fix = fix
    }
}
