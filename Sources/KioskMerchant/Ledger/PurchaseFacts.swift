import Foundation
import KioskCore
import KioskSigning

/// One transaction as a verified source states it (a signed transaction, a `verifyReceipt` answer, a
/// notification): the same shape whichever it came from, so the ledger has one way to apply it.
public struct PurchaseFacts: Sendable, Hashable {
    public var environment: StoreEnvironment
    public var bundleId: String
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var quantity: Int
    public var purchaseDate: Date
    public var expiresDate: Date?
    /// Set when the store refunded or revoked it.
    public var revocationDate: Date?
    public var revocationReason: String?
    /// The order's token the app passed with the payment, if it did.
    public var appAccountToken: UUID?
    /// The customer's `appTransactionId` in the app (signed transactions carry it; receipts do not).
    public var appTransactionId: String?
    /// When the source signed this state.
    public var signedDate: Date
    /// The store's revision of this state (`kioskRevision`: higher is newer); nil in data without one.
    public var revision: Int64?
    /// Whether this is a copy signed earlier, the store's present answer, or a reversal: see `supersedes(_:)`.
    var provenance: StateProvenance = .copy

    public var isRevoked: Bool { revocationDate != nil }
}

extension PurchaseFacts {
    /// The facts of a verified signed transaction.
    ///
    /// - Throws: `malformed_signed_data` at `field` when a date is outside `Date.kioskRange`.
    init(_ payload: JWSTransactionDecodedPayload, environment: StoreEnvironment, field: String) throws {
        func date(_ milliseconds: Int64) throws -> Date { try Self.date(milliseconds, field: field) }
        self.init(
            environment: environment, bundleId: payload.bundleId, transactionId: payload.transactionId,
            originalTransactionId: payload.originalTransactionId, productId: payload.productId,
            quantity: payload.quantity, purchaseDate: try date(payload.purchaseDate),
            expiresDate: try payload.expiresDate.map(date),
            revocationDate: try payload.revocationDate.map(date),
            revocationReason: payload.revocationType?.rawValue
                ?? payload.revocationReason.map { $0 == 1 ? "issue_in_app" : "other" },
            appAccountToken: payload.appAccountToken.flatMap(UUID.init(uuidString:)),
            appTransactionId: payload.appTransactionId, signedDate: try date(payload.signedDate),
            revision: payload.kioskRevision)
    }

    /// A verified payload's date, checked: the store never signs one outside `Date.kioskRange`.
    static func date(_ milliseconds: Int64, field: String) throws -> Date {
        guard let date = Date(checkedMillisecondsSince1970: milliseconds) else {
            throw KioskError(
                .malformedSignedData, "\(field) holds a date outside \(Date.kioskRangeText).", field: field,
                fix: "Send data exactly as the store signed it; nothing was granted.")
        }
        return date
    }
}
