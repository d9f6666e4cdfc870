import Foundation
import KioskCore

/// An iOS 6-style transaction receipt (`SKPaymentTransaction.transactionReceipt`): the purchase-info fields of
/// one transaction, under Apple's hyphenated keys (`purchase-date-ms`, …). ``TransactionReceiptSigner`` renders
/// and signs it; ``TransactionReceiptVerifier`` checks and parses it.
///
/// Every value is a quoted string on the wire; dates go out three ways (`…-ms`, `… Etc/GMT`,
/// `… America/Los_Angeles`) and are read back from the milliseconds.
public struct TransactionReceipt: Sendable, Hashable {
    /// `environment`: Apple writes `Sandbox` and leaves the key out in production.
    public var environment: StoreEnvironment
    /// `transaction-id`.
    public var transactionId: String
    /// `original-transaction-id`.
    public var originalTransactionId: String
    /// `product-id`.
    public var productId: String
    /// `item-id`: the App Store id of the product.
    public var itemId: String
    /// `quantity`.
    public var quantity: Int
    /// `purchase-date-ms`, `purchase-date`, `purchase-date-pst`; the chain is validated at this instant.
    public var purchaseDate: Date
    /// `original-purchase-date-ms`, `original-purchase-date`, `original-purchase-date-pst`.
    public var originalPurchaseDate: Date
    /// `bid`: the app's bundle id.
    public var bundleId: String
    /// `bvrs`: the app's bundle version.
    public var bundleVersion: String
    /// `unique-identifier`: the device's identifier.
    public var uniqueIdentifier: String
    /// `unique-vendor-identifier`: the device's `identifierForVendor`.
    public var uniqueVendorIdentifier: String?
    /// `expires-date` (milliseconds), `expires-date-formatted`, `expires-date-formatted-pst`: auto-renewables only.
    public var expiresDate: Date?
    /// `web-order-line-item-id`: subscriptions only.
    public var webOrderLineItemId: String?

    /// Creates a receipt; every argument is the field of the same name.
    public init(
        environment: StoreEnvironment, transactionId: String, originalTransactionId: String, productId: String,
        itemId: String, quantity: Int, purchaseDate: Date, originalPurchaseDate: Date, bundleId: String,
        bundleVersion: String, uniqueIdentifier: String, uniqueVendorIdentifier: String? = nil,
        expiresDate: Date? = nil, webOrderLineItemId: String? = nil
    ) {
        self.environment = environment
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.itemId = itemId
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.bundleId = bundleId
        self.bundleVersion = bundleVersion
        self.uniqueIdentifier = uniqueIdentifier
        self.uniqueVendorIdentifier = uniqueVendorIdentifier
        self.expiresDate = expiresDate
        self.webOrderLineItemId = webOrderLineItemId
    }

    /// The `purchase-info` property list, keys in the order of Apple's receipts, as UTF-8: the bytes the
    /// signature covers.
    public var purchaseInfo: [UInt8] {
        var entries: [(key: String, value: String)] = [
            ("original-purchase-date-pst", Self.pacificDate(originalPurchaseDate)),
            ("purchase-date-ms", Self.milliseconds(purchaseDate)),
            ("unique-identifier", uniqueIdentifier),
            ("original-transaction-id", originalTransactionId),
        ]
        if let expiresDate { entries.append(("expires-date", Self.milliseconds(expiresDate))) }
        entries += [
            ("transaction-id", transactionId),
            ("original-purchase-date-ms", Self.milliseconds(originalPurchaseDate)),
        ]
        if let webOrderLineItemId { entries.append(("web-order-line-item-id", webOrderLineItemId)) }
        entries.append(("bvrs", bundleVersion))
        if let uniqueVendorIdentifier { entries.append(("unique-vendor-identifier", uniqueVendorIdentifier)) }
        if let expiresDate { entries.append(("expires-date-formatted-pst", Self.pacificDate(expiresDate))) }
        entries.append(("item-id", itemId))
        if let expiresDate { entries.append(("expires-date-formatted", Self.gmtDate(expiresDate))) }
        entries += [
            ("product-id", productId),
            ("purchase-date", Self.gmtDate(purchaseDate)),
            ("original-purchase-date", Self.gmtDate(originalPurchaseDate)),
            ("bid", bundleId),
            ("purchase-date-pst", Self.pacificDate(purchaseDate)),
            ("quantity", String(quantity)),
        ]
        return Array(ASCIIPropertyList.render(entries).utf8)
    }

    /// Reads the fields back from `purchase-info` bytes; unknown keys are ignored.
    ///
    /// - Throws: ``ReceiptDecodingError`` naming a missing key or a value that is not a number.
    init(purchaseInfo: [UInt8], environment: StoreEnvironment) throws {
        let fields = try ASCIIPropertyList.parse(String(decoding: purchaseInfo, as: UTF8.self))
        func string(_ key: String) throws -> String { try Self.string(key, in: fields) }
        func date(_ key: String) throws -> Date { try Self.date(key, in: fields) }
        guard let quantity = Int(try string("quantity")) else {
            throw ReceiptDecodingError("\"quantity\" is not a number")
        }
        self.init(
            environment: environment,
            transactionId: try string("transaction-id"),
            originalTransactionId: try string("original-transaction-id"),
            productId: try string("product-id"),
            itemId: try string("item-id"),
            quantity: quantity,
            purchaseDate: try date("purchase-date-ms"),
            originalPurchaseDate: try date("original-purchase-date-ms"),
            bundleId: try string("bid"),
            bundleVersion: try string("bvrs"),
            uniqueIdentifier: try string("unique-identifier"),
            uniqueVendorIdentifier: fields["unique-vendor-identifier"],
            expiresDate: fields["expires-date"] == nil ? nil : try date("expires-date"),
            webOrderLineItemId: fields["web-order-line-item-id"]
        )
    }

    /// Only `purchase-date-ms`, the instant the chain is validated at: all a verifier reads of `purchase-info`
    /// before the chain is trusted.
    ///
    /// - Throws: ``ReceiptDecodingError`` when it is missing or not milliseconds in `Date.kioskRange`.
    static func purchaseDate(purchaseInfo: [UInt8]) throws -> Date {
        try date("purchase-date-ms", in: ASCIIPropertyList.parse(String(decoding: purchaseInfo, as: UTF8.self)))
    }

    private static func string(_ key: String, in fields: [String: String]) throws -> String {
        guard let value = fields[key] else { throw ReceiptDecodingError("purchase-info lacks \"\(key)\"") }
        return value
    }

    private static func date(_ key: String, in fields: [String: String]) throws -> Date {
        guard let date = Date(checkedMillisecondsSince1970: try string(key, in: fields)) else {
            throw ReceiptDecodingError("\"\(key)\" is not a number of milliseconds from \(Date.kioskRangeText)")
        }
        return date
    }

    static func milliseconds(_ date: Date) -> String { AppleDateText.milliseconds(date) }
    static func gmtDate(_ date: Date) -> String { AppleDateText.gmt(date) }
    static func pacificDate(_ date: Date) -> String { AppleDateText.pacific(date) }
}
