import Foundation
import KioskCore

// `verifyReceipt`'s answers in Apple's JSON shape (verifyReceipt documentation, `responseBody`): the store encodes
// them, the merchant (or any Swift client) decodes them, from Kiosk or from Apple. Keys are Apple's snake_case;
// every date is the `name` / `name_ms` / `name_pst` triple and reads back from `name_ms`; transaction values are
// strings where Apple writes strings.

/// The answer for an app receipt, or any failure (`status` other than 0, with `message`): Apple's `responseBody`.
/// ``jsonBytes()`` writes it as `JSONEncoder` would, about three times as fast.
public struct VerifyReceiptResponse: Codable, Sendable, Hashable, ReceiptObject {
    public var status: Int
    public var environment: String?
    public var receipt: AppReceiptInfo?
    /// Newest first; present when the account has auto-renewable subscriptions.
    public var latestReceiptInfo: [ReceiptTransactionInfo]?
    public var pendingRenewalInfo: [PendingRenewalInfo]?
    /// A receipt signed now listing what the account owns now (base64).
    public var latestReceipt: String?
    public var message: String?
    /// Apple's `is-retryable`, for statuses 21100–21199.
    public var isRetryable: Bool?

    public init(
        status: Int, environment: String? = nil, receipt: AppReceiptInfo? = nil,
        latestReceiptInfo: [ReceiptTransactionInfo]? = nil, pendingRenewalInfo: [PendingRenewalInfo]? = nil,
        latestReceipt: String? = nil, message: String? = nil, isRetryable: Bool? = nil
    ) {
        self.status = status
        self.environment = environment
        self.receipt = receipt
        self.latestReceiptInfo = latestReceiptInfo
        self.pendingRenewalInfo = pendingRenewalInfo
        self.latestReceipt = latestReceipt
        self.message = message
        self.isRetryable = isRetryable
    }

    enum CodingKeys: String, CodingKey {
        case status, environment, receipt, message
        case latestReceiptInfo = "latest_receipt_info"
        case pendingRenewalInfo = "pending_renewal_info"
        case latestReceipt = "latest_receipt"
        case isRetryable = "is-retryable"
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = ReceiptFieldContainer(encoder)
        try writeFields(to: &fields)
    }

    func writeFields(to fields: inout some ReceiptFieldSink) throws {
        try fields.value(CodingKeys.status.rawValue, Int64(status))
        try fields.value(CodingKeys.environment.rawValue, environment)
        try fields.value(CodingKeys.receipt.rawValue, receipt)
        try fields.value(CodingKeys.latestReceiptInfo.rawValue, latestReceiptInfo)
        try fields.value(CodingKeys.pendingRenewalInfo.rawValue, pendingRenewalInfo)
        try fields.value(CodingKeys.latestReceipt.rawValue, latestReceipt)
        try fields.value(CodingKeys.message.rawValue, message)
        try fields.value(CodingKeys.isRetryable.rawValue, isRetryable)
    }

    /// The bytes `JSONEncoder` writes for this answer with `.sortedKeys` and `.withoutEscapingSlashes` (what the
    /// store sends), written directly: the encoder's keyed containers were 13.8% of a `verifyReceipt` run's samples at
    /// 64 connections.
    public func jsonBytes() throws -> [UInt8] {
        var writer = ReceiptJSONWriter()
        try writeFields(to: &writer)
        return writer.object()
    }
}

/// The decoded app receipt (Apple's `responseBody.Receipt`).
public struct AppReceiptInfo: Codable, Sendable, Hashable, ReceiptObject {
    public var receiptType: String
    public var adamId: Int64
    public var appItemId: Int64
    public var bundleId: String
    public var applicationVersion: String
    public var downloadId: Int64?
    public var versionExternalIdentifier: Int64?
    public var originalApplicationVersion: String?
    public var receiptCreationDate: Date
    public var requestDate: Date
    public var originalPurchaseDate: Date
    public var expirationDate: Date?
    public var inApp: [ReceiptTransactionInfo]

    public init(
        receiptType: String, adamId: Int64, appItemId: Int64, bundleId: String, applicationVersion: String,
        downloadId: Int64?, versionExternalIdentifier: Int64?, originalApplicationVersion: String?,
        receiptCreationDate: Date, requestDate: Date, originalPurchaseDate: Date, expirationDate: Date?,
        inApp: [ReceiptTransactionInfo]
    ) {
        self.receiptType = receiptType
        self.adamId = adamId
        self.appItemId = appItemId
        self.bundleId = bundleId
        self.applicationVersion = applicationVersion
        self.downloadId = downloadId
        self.versionExternalIdentifier = versionExternalIdentifier
        self.originalApplicationVersion = originalApplicationVersion
        self.receiptCreationDate = receiptCreationDate
        self.requestDate = requestDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expirationDate = expirationDate
        self.inApp = inApp
    }

    public init(from decoder: any Decoder) throws {
        let fields = try ReceiptFieldReader(decoder)
        self.init(
            receiptType: try fields.value("receipt_type"), adamId: try fields.value("adam_id"),
            appItemId: try fields.value("app_item_id"), bundleId: try fields.value("bundle_id"),
            applicationVersion: try fields.value("application_version"), downloadId: try fields.optional("download_id"),
            versionExternalIdentifier: try fields.optional("version_external_identifier"),
            originalApplicationVersion: try fields.optional("original_application_version"),
            receiptCreationDate: try fields.date("receipt_creation_date"), requestDate: try fields.date("request_date"),
            originalPurchaseDate: try fields.date("original_purchase_date"),
            expirationDate: try fields.optionalDate("expiration_date"), inApp: try fields.value("in_app"))
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = ReceiptFieldContainer(encoder)
        try writeFields(to: &fields)
    }

    func writeFields(to fields: inout some ReceiptFieldSink) throws {
        try fields.value("receipt_type", receiptType)
        try fields.value("adam_id", adamId)
        try fields.value("app_item_id", appItemId)
        try fields.value("bundle_id", bundleId)
        try fields.value("application_version", applicationVersion)
        try fields.value("download_id", downloadId)
        try fields.value("version_external_identifier", versionExternalIdentifier)
        try fields.value("original_application_version", originalApplicationVersion)
        try fields.date("receipt_creation_date", receiptCreationDate)
        try fields.date("request_date", requestDate)
        try fields.date("original_purchase_date", originalPurchaseDate)
        try fields.date("expiration_date", expirationDate)
        try fields.value("in_app", inApp)
    }
}

/// A transaction of `in_app` and `latest_receipt_info` (Apple's `responseBody.Latest_receipt_info`): every value
/// a string.
public struct ReceiptTransactionInfo: Codable, Sendable, Hashable, ReceiptObject {
    public var quantity: String
    public var productId: String
    public var transactionId: String
    public var originalTransactionId: String
    public var isTrialPeriod: String
    public var inAppOwnershipType: String?
    public var purchaseDate: Date
    public var originalPurchaseDate: Date
    public var expiresDate: Date?
    public var isInIntroOfferPeriod: String?
    public var webOrderLineItemId: String?
    public var subscriptionGroupIdentifier: String?
    public var appAccountToken: String?
    public var cancellationDate: Date?
    public var cancellationReason: String?

    public init(
        quantity: String, productId: String, transactionId: String, originalTransactionId: String,
        isTrialPeriod: String, inAppOwnershipType: String?, purchaseDate: Date, originalPurchaseDate: Date,
        expiresDate: Date? = nil, isInIntroOfferPeriod: String? = nil, webOrderLineItemId: String? = nil,
        subscriptionGroupIdentifier: String? = nil, appAccountToken: String? = nil, cancellationDate: Date? = nil,
        cancellationReason: String? = nil
    ) {
        self.quantity = quantity
        self.productId = productId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.isTrialPeriod = isTrialPeriod
        self.inAppOwnershipType = inAppOwnershipType
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.webOrderLineItemId = webOrderLineItemId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.appAccountToken = appAccountToken
        self.cancellationDate = cancellationDate
        self.cancellationReason = cancellationReason
    }

    public init(from decoder: any Decoder) throws {
        let fields = try ReceiptFieldReader(decoder)
        self.init(
            quantity: try fields.value("quantity"), productId: try fields.value("product_id"),
            transactionId: try fields.value("transaction_id"),
            originalTransactionId: try fields.value("original_transaction_id"),
            isTrialPeriod: try fields.optional("is_trial_period") ?? "false",
            inAppOwnershipType: try fields.optional("in_app_ownership_type"),
            purchaseDate: try fields.date("purchase_date"),
            originalPurchaseDate: try fields.date("original_purchase_date"),
            expiresDate: try fields.optionalDate("expires_date"),
            isInIntroOfferPeriod: try fields.optional("is_in_intro_offer_period"),
            webOrderLineItemId: try fields.optional("web_order_line_item_id"),
            subscriptionGroupIdentifier: try fields.optional("subscription_group_identifier"),
            appAccountToken: try fields.optional("app_account_token"),
            cancellationDate: try fields.optionalDate("cancellation_date"),
            cancellationReason: try fields.optional("cancellation_reason"))
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = ReceiptFieldContainer(encoder)
        try writeFields(to: &fields)
    }

    func writeFields(to fields: inout some ReceiptFieldSink) throws {
        try fields.value("quantity", quantity)
        try fields.value("product_id", productId)
        try fields.value("transaction_id", transactionId)
        try fields.value("original_transaction_id", originalTransactionId)
        try fields.value("is_trial_period", isTrialPeriod)
        try fields.value("in_app_ownership_type", inAppOwnershipType)
        try fields.date("purchase_date", purchaseDate)
        try fields.date("original_purchase_date", originalPurchaseDate)
        try fields.date("expires_date", expiresDate)
        try fields.value("is_in_intro_offer_period", isInIntroOfferPeriod)
        try fields.value("web_order_line_item_id", webOrderLineItemId)
        try fields.value("subscription_group_identifier", subscriptionGroupIdentifier)
        try fields.value("app_account_token", appAccountToken)
        try fields.date("cancellation_date", cancellationDate)
        try fields.value("cancellation_reason", cancellationReason)
    }
}

/// One auto-renewable subscription's renewal state (Apple's `responseBody.Pending_renewal_info`).
public struct PendingRenewalInfo: Codable, Sendable, Hashable, ReceiptObject {
    public var autoRenewProductId: String
    public var productId: String
    public var originalTransactionId: String
    /// "1" when it will renew, else "0".
    public var autoRenewStatus: String
    public var isInBillingRetryPeriod: String?
    public var expirationIntent: String?
    public var priceConsentStatus: String?
    public var gracePeriodExpiresDate: Date?

    public init(
        autoRenewProductId: String, productId: String, originalTransactionId: String, autoRenewStatus: String,
        isInBillingRetryPeriod: String?, expirationIntent: String?, priceConsentStatus: String?,
        gracePeriodExpiresDate: Date?
    ) {
        self.autoRenewProductId = autoRenewProductId
        self.productId = productId
        self.originalTransactionId = originalTransactionId
        self.autoRenewStatus = autoRenewStatus
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.expirationIntent = expirationIntent
        self.priceConsentStatus = priceConsentStatus
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
    }

    public init(from decoder: any Decoder) throws {
        let fields = try ReceiptFieldReader(decoder)
        self.init(
            autoRenewProductId: try fields.value("auto_renew_product_id"), productId: try fields.value("product_id"),
            originalTransactionId: try fields.value("original_transaction_id"),
            autoRenewStatus: try fields.value("auto_renew_status"),
            isInBillingRetryPeriod: try fields.optional("is_in_billing_retry_period"),
            expirationIntent: try fields.optional("expiration_intent"),
            priceConsentStatus: try fields.optional("price_consent_status"),
            gracePeriodExpiresDate: try fields.optionalDate("grace_period_expires_date"))
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = ReceiptFieldContainer(encoder)
        try writeFields(to: &fields)
    }

    func writeFields(to fields: inout some ReceiptFieldSink) throws {
        try fields.value("auto_renew_product_id", autoRenewProductId)
        try fields.value("product_id", productId)
        try fields.value("original_transaction_id", originalTransactionId)
        try fields.value("auto_renew_status", autoRenewStatus)
        try fields.value("is_in_billing_retry_period", isInBillingRetryPeriod)
        try fields.value("expiration_intent", expirationIntent)
        try fields.value("price_consent_status", priceConsentStatus)
        try fields.date("grace_period_expires_date", gracePeriodExpiresDate)
    }
}

/// The answer for an iOS 6-style transaction receipt: the old shape, whose `receipt` and `latest_receipt_info` are
/// single transaction objects.
public struct LegacyVerifyReceiptResponse: Codable, Sendable, Hashable {
    public var status: Int
    public var receipt: LegacyReceiptInfo
    public var latestReceiptInfo: LegacyReceiptInfo?
    /// The latest period's fields when the subscription expired (status 21006).
    public var latestExpiredReceiptInfo: LegacyReceiptInfo?
    public var latestReceipt: String?
    public var autoRenewProductId: String?
    public var autoRenewStatus: Int?
    public var expirationIntent: String?
    public var message: String?

    public init(
        status: Int, receipt: LegacyReceiptInfo, latestReceiptInfo: LegacyReceiptInfo? = nil,
        latestExpiredReceiptInfo: LegacyReceiptInfo? = nil, latestReceipt: String? = nil,
        autoRenewProductId: String? = nil, autoRenewStatus: Int? = nil, expirationIntent: String? = nil,
        message: String? = nil
    ) {
        self.status = status
        self.receipt = receipt
        self.latestReceiptInfo = latestReceiptInfo
        self.latestExpiredReceiptInfo = latestExpiredReceiptInfo
        self.latestReceipt = latestReceipt
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case status, receipt, message
        case latestReceiptInfo = "latest_receipt_info"
        case latestExpiredReceiptInfo = "latest_expired_receipt_info"
        case latestReceipt = "latest_receipt"
        case autoRenewProductId = "auto_renew_product_id"
        case autoRenewStatus = "auto_renew_status"
        case expirationIntent = "expiration_intent"
    }
}

/// An iOS 6-style receipt's fields: hyphens of the receipt become underscores; `expires_date` is milliseconds, with
/// `expires_date_formatted` and `expires_date_formatted_pst` beside it.
public struct LegacyReceiptInfo: Codable, Sendable, Hashable, ReceiptObject {
    public var quantity: String
    public var productId: String
    public var transactionId: String
    public var originalTransactionId: String
    public var itemId: String
    public var bid: String
    public var bvrs: String
    public var uniqueIdentifier: String
    public var uniqueVendorIdentifier: String?
    public var appItemId: String
    public var versionExternalIdentifier: String
    public var isTrialPeriod: String
    public var isInIntroOfferPeriod: String
    public var purchaseDate: Date
    public var originalPurchaseDate: Date
    public var webOrderLineItemId: String?
    public var expiresDate: Date?
    public var cancellationDate: Date?
    public var cancellationReason: String?

    public init(
        quantity: String, productId: String, transactionId: String, originalTransactionId: String, itemId: String,
        bid: String, bvrs: String, uniqueIdentifier: String, uniqueVendorIdentifier: String?, appItemId: String,
        versionExternalIdentifier: String, isTrialPeriod: String, isInIntroOfferPeriod: String, purchaseDate: Date,
        originalPurchaseDate: Date, webOrderLineItemId: String?, expiresDate: Date?, cancellationDate: Date?,
        cancellationReason: String?
    ) {
        self.quantity = quantity
        self.productId = productId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.itemId = itemId
        self.bid = bid
        self.bvrs = bvrs
        self.uniqueIdentifier = uniqueIdentifier
        self.uniqueVendorIdentifier = uniqueVendorIdentifier
        self.appItemId = appItemId
        self.versionExternalIdentifier = versionExternalIdentifier
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.webOrderLineItemId = webOrderLineItemId
        self.expiresDate = expiresDate
        self.cancellationDate = cancellationDate
        self.cancellationReason = cancellationReason
    }

    public init(from decoder: any Decoder) throws {
        let fields = try ReceiptFieldReader(decoder)
        let expires: String? = try fields.optional("expires_date")
        self.init(
            quantity: try fields.value("quantity"), productId: try fields.value("product_id"),
            transactionId: try fields.value("transaction_id"),
            originalTransactionId: try fields.value("original_transaction_id"), itemId: try fields.value("item_id"),
            bid: try fields.value("bid"), bvrs: try fields.value("bvrs"),
            uniqueIdentifier: try fields.value("unique_identifier"),
            uniqueVendorIdentifier: try fields.optional("unique_vendor_identifier"),
            appItemId: try fields.value("app_item_id"),
            versionExternalIdentifier: try fields.value("version_external_identifier"),
            isTrialPeriod: try fields.value("is_trial_period"),
            isInIntroOfferPeriod: try fields.value("is_in_intro_offer_period"),
            purchaseDate: try fields.date("purchase_date"),
            originalPurchaseDate: try fields.date("original_purchase_date"),
            webOrderLineItemId: try fields.optional("web_order_line_item_id"),
            expiresDate: try expires.map { try fields.milliseconds($0, at: "expires_date") },
            cancellationDate: try fields.optionalDate("cancellation_date"),
            cancellationReason: try fields.optional("cancellation_reason"))
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = ReceiptFieldContainer(encoder)
        try writeFields(to: &fields)
    }

    func writeFields(to fields: inout some ReceiptFieldSink) throws {
        try fields.value("quantity", quantity)
        try fields.value("product_id", productId)
        try fields.value("transaction_id", transactionId)
        try fields.value("original_transaction_id", originalTransactionId)
        try fields.value("item_id", itemId)
        try fields.value("bid", bid)
        try fields.value("bvrs", bvrs)
        try fields.value("unique_identifier", uniqueIdentifier)
        try fields.value("unique_vendor_identifier", uniqueVendorIdentifier)
        try fields.value("app_item_id", appItemId)
        try fields.value("version_external_identifier", versionExternalIdentifier)
        try fields.value("is_trial_period", isTrialPeriod)
        try fields.value("is_in_intro_offer_period", isInIntroOfferPeriod)
        try fields.date("purchase_date", purchaseDate)
        try fields.date("original_purchase_date", originalPurchaseDate)
        try fields.value("web_order_line_item_id", webOrderLineItemId)
        if let expiresDate {
            try fields.value("expires_date", AppleDateText.milliseconds(expiresDate))
            try fields.value("expires_date_formatted", AppleDateText.gmt(expiresDate))
            try fields.value("expires_date_formatted_pst", AppleDateText.pacific(expiresDate))
        }
        try fields.date("cancellation_date", cancellationDate)
        try fields.value("cancellation_reason", cancellationReason)
    }
}

/// A key of a receipt object, by Apple's name.
private struct ReceiptKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Reads a receipt object's fields by Apple's names; a date from its `_ms` member.
private struct ReceiptFieldReader {
    let container: KeyedDecodingContainer<ReceiptKey>

    init(_ decoder: any Decoder) throws { container = try decoder.container(keyedBy: ReceiptKey.self) }

    func value<T: Decodable>(_ name: String) throws -> T {
        try container.decode(T.self, forKey: ReceiptKey(stringValue: name))
    }

    func optional<T: Decodable>(_ name: String) throws -> T? {
        try container.decodeIfPresent(T.self, forKey: ReceiptKey(stringValue: name))
    }

    func date(_ name: String) throws -> Date {
        try milliseconds(try value(name + "_ms"), at: name + "_ms")
    }

    func optionalDate(_ name: String) throws -> Date? {
        let text: String? = try optional(name + "_ms")
        return try text.map { try milliseconds($0, at: name + "_ms") }
    }

    /// A date from Apple's milliseconds since 1970, as text.
    func milliseconds(_ text: String, at name: String) throws -> Date {
        guard let date = Date(checkedMillisecondsSince1970: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: ReceiptKey(stringValue: name), in: container,
                debugDescription: "'\(text.prefix(40))' is not milliseconds since 1970 in \(Date.kioskRangeText)")
        }
        return date
    }
}

/// A receipt object: its fields, by Apple's names, listed once in `writeFields(to:)` for both of its writers
/// (``ReceiptFieldContainer`` for any `Encoder`, ``ReceiptJSONWriter`` for the store's JSON bytes).
protocol ReceiptObject: Encodable {
    func writeFields(to fields: inout some ReceiptFieldSink) throws
}

/// Where a receipt object's fields are written, by Apple's names; a nil value is left out.
protocol ReceiptFieldSink {
    mutating func value(_ name: String, _ value: String?) throws
    mutating func value(_ name: String, _ value: Int64?) throws
    mutating func value(_ name: String, _ value: Bool?) throws
    mutating func value(_ name: String, _ value: (some ReceiptObject)?) throws
    mutating func value(_ name: String, _ value: [some ReceiptObject]?) throws
}

extension ReceiptFieldSink {
    /// A date as its triple: `name` (GMT wall clock), `name_ms` and `name_pst`.
    mutating func date(_ name: String, _ date: Date?) throws {
        guard let date else { return }
        try value(name, AppleDateText.gmt(date))
        try value(name + "_ms", AppleDateText.milliseconds(date))
        try value(name + "_pst", AppleDateText.pacific(date))
    }
}

/// Writes a receipt object's fields into an `Encoder`'s keyed container.
private struct ReceiptFieldContainer: ReceiptFieldSink {
    var container: KeyedEncodingContainer<ReceiptKey>

    init(_ encoder: any Encoder) { container = encoder.container(keyedBy: ReceiptKey.self) }

    mutating func value(_ name: String, _ value: String?) throws { try encode(value, name) }
    mutating func value(_ name: String, _ value: Int64?) throws { try encode(value, name) }
    mutating func value(_ name: String, _ value: Bool?) throws { try encode(value, name) }
    mutating func value(_ name: String, _ value: (some ReceiptObject)?) throws { try encode(value, name) }
    mutating func value(_ name: String, _ value: [some ReceiptObject]?) throws { try encode(value, name) }

    private mutating func encode(_ value: (some Encodable)?, _ name: String) throws {
        try container.encodeIfPresent(value, forKey: ReceiptKey(stringValue: name))
    }
}
