import Foundation

/// A one-time offer code for an auto-renewable product (App Store Connect "offer codes"): redeemed once, by one
/// account, it prices the subscription like an offer of type 3 whose identifier is the reference name.
public struct OfferCode: ScheduledOffer, Codable, Sendable, Hashable {
    /// 12 upper-case letters and digits, without the ambiguous 0, O, 1, I and L.
    public var code: String
    public var appId: App.ID
    public var productId: String
    /// Apple's `offerIdentifier` of the redeemed transaction.
    public var referenceName: String
    public var schedule: OfferSchedule
    public var createdAt: Date
    public var redemption: Redemption?
    /// The App Store Connect batch (``OfferCodeBatch``) the code belongs to; nil for a code made by Kiosk's own API.
    public var batchId: OfferCodeBatch.ID?

    /// Who redeemed the code, when, and the transaction the payment answered.
    public struct Redemption: Codable, Sendable, Hashable {
        public var accountId: UUID
        public var redeemedAt: Date
        /// Nil only inside the purchase that redeems, until its transaction is known.
        public var transactionId: Int64?

        public init(accountId: UUID, redeemedAt: Date, transactionId: Int64?) {
            self.accountId = accountId
            self.redeemedAt = redeemedAt
            self.transactionId = transactionId
        }
    }

    public init(
        code: String, appId: App.ID, productId: String, referenceName: String, schedule: OfferSchedule,
        createdAt: Date, redemption: Redemption? = nil, batchId: OfferCodeBatch.ID? = nil
    ) {
        self.code = code
        self.appId = appId
        self.productId = productId
        self.referenceName = referenceName
        self.schedule = schedule
        self.createdAt = createdAt
        self.redemption = redemption
        self.batchId = batchId
    }

    /// The letters codes are made of: no 0/O, 1/I/L that a customer could mistype.
    public static let alphabet = Array("ABCDEFGHJKMNPQRSTUVWXYZ23456789")
    public static let length = 12
    /// How many codes one request may create.
    public static let batchLimit = 1...1000

    /// A new random code from the system's secure generator.
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
    }

    /// Checks the offer's terms like a promotional offer's: a period in range, a number of periods fitting the
    /// payment mode and a valid pricing unless it is a free trial; empty when they are fine.
    public static func validateTerms(referenceName: String, schedule: OfferSchedule) -> [KioskError] {
        var errors: [KioskError] = []
        if referenceName.trimmingCharacters(in: .whitespaces).isEmpty || referenceName.count > 64 {
            errors.append(
                KioskError(
                    .invalidReferenceName, "The offer's reference name must be 1–64 characters.",
                    field: "referenceName", fix: "Name the offer, e.g. \"Spring 2026 free month\"."))
        }
        // The catalog rules name fields under a prefix ("offer.period"); a code request has them at the top level.
        let termErrors = CatalogValidator.validateOfferSchedule(schedule, field: "offer").map { error in
            var error = error
            error.field = error.field.map { String($0.dropFirst("offer.".count)) }
            return error
        }
        return errors + termErrors
    }
}
