import Crypto
import Foundation

/// The payload of an on-device app receipt (`Bundle.main.appStoreReceiptURL`), attribute by attribute as Apple
/// encodes it (Receipt Validation Programming Guide: Receipt Fields). ``AppReceiptSigner`` wraps it in PKCS #7;
/// ``AppReceiptVerifier`` checks and decodes it.
///
/// ```swift
/// let receipt = AppReceipt(receiptType: .productionSandbox, …, inApp: [purchase])
/// let der = try AppReceiptSigner(identity: identity).sign(receipt)
/// let verified = await AppReceiptVerifier(rootCertificates: [identity.root]).verify(der).receipt
/// ```
public struct AppReceipt: Sendable, Hashable {
    /// Attribute 0: the store environment that issued the receipt.
    public var receiptType: ReceiptType
    /// Attribute 1: the App Store id of the app; 0 in the sandbox.
    public var appItemId: Int64
    /// Attribute 2: the app's `CFBundleIdentifier`.
    public var bundleId: String
    /// Attribute 3: `CFBundleVersion` (iOS) or `CFBundleShortVersionString` (macOS) at issue time.
    public var applicationVersion: String
    /// Attribute 4: random bytes that go into ``sha1Hash``.
    public var opaqueValue: [UInt8]
    /// Attribute 5: ``deviceHash(deviceId:opaqueValue:bundleId:)`` for the device the receipt was issued to.
    public var sha1Hash: [UInt8]
    /// Attribute 12: when the receipt was signed; its chain is validated at this instant.
    public var receiptCreationDate: Date
    /// Attribute 18: when the app was first bought or downloaded.
    public var originalPurchaseDate: Date?
    /// Attribute 19: the application version of the original purchase (sandbox: `1.0`).
    public var originalApplicationVersion: String
    /// Attribute 21: when a volume-purchase receipt expires.
    public var expirationDate: Date?
    /// Attribute 15: the id of the app's download transaction.
    public var downloadId: Int64?
    /// Attribute 16: the App Store's id of the installed app version.
    public var versionExternalIdentifier: Int64?
    /// Attribute 17, once per purchase.
    public var inApp: [InAppPurchase]

    /// Creates a receipt payload; every argument is the field of the same name.
    public init(
        receiptType: ReceiptType, appItemId: Int64, bundleId: String, applicationVersion: String,
        opaqueValue: [UInt8], sha1Hash: [UInt8], receiptCreationDate: Date, originalPurchaseDate: Date? = nil,
        originalApplicationVersion: String, expirationDate: Date? = nil, downloadId: Int64? = nil,
        versionExternalIdentifier: Int64? = nil, inApp: [InAppPurchase]
    ) {
        self.receiptType = receiptType
        self.appItemId = appItemId
        self.bundleId = bundleId
        self.applicationVersion = applicationVersion
        self.opaqueValue = opaqueValue
        self.sha1Hash = sha1Hash
        self.receiptCreationDate = receiptCreationDate
        self.originalPurchaseDate = originalPurchaseDate
        self.originalApplicationVersion = originalApplicationVersion
        self.expirationDate = expirationDate
        self.downloadId = downloadId
        self.versionExternalIdentifier = versionExternalIdentifier
        self.inApp = inApp
    }

    /// The receipt type (attribute 0), kept raw so a type this code does not know still decodes.
    public struct ReceiptType: RawRepresentable, Sendable, Hashable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// An App Store receipt.
        public static let production = ReceiptType(rawValue: "Production")
        /// A sandbox receipt.
        public static let productionSandbox = ReceiptType(rawValue: "ProductionSandbox")
    }

    /// One in-app purchase (attribute 17), attribute by attribute as Apple's Receipt Fields list them.
    public struct InAppPurchase: Sendable, Hashable {
        /// Attribute 1701.
        public var quantity: Int
        /// Attribute 1702.
        public var productId: String
        /// Attribute 1703.
        public var transactionId: String
        /// Attribute 1705.
        public var originalTransactionId: String
        /// Attribute 1704.
        public var purchaseDate: Date
        /// Attribute 1706.
        public var originalPurchaseDate: Date
        /// Attribute 1707.
        public var productType: ProductType
        /// Attribute 1708: auto-renewable subscriptions only.
        public var expiresDate: Date?
        /// Attribute 1711: the subscription purchase event's id.
        public var webOrderLineItemId: Int64?
        /// Attribute 1712: set when the purchase was refunded or revoked.
        public var cancellationDate: Date?
        /// Attribute 1713.
        public var isTrialPeriod: Bool?
        /// Attribute 1719.
        public var isInIntroOfferPeriod: Bool?
        /// Attribute 1721.
        public var promotionalOfferId: String?

        /// Creates a purchase; every argument is the field of the same name.
        public init(
            quantity: Int, productId: String, transactionId: String, originalTransactionId: String,
            purchaseDate: Date, originalPurchaseDate: Date, productType: ProductType, expiresDate: Date? = nil,
            webOrderLineItemId: Int64? = nil, cancellationDate: Date? = nil, isTrialPeriod: Bool? = nil,
            isInIntroOfferPeriod: Bool? = nil, promotionalOfferId: String? = nil
        ) {
            self.quantity = quantity
            self.productId = productId
            self.transactionId = transactionId
            self.originalTransactionId = originalTransactionId
            self.purchaseDate = purchaseDate
            self.originalPurchaseDate = originalPurchaseDate
            self.productType = productType
            self.expiresDate = expiresDate
            self.webOrderLineItemId = webOrderLineItemId
            self.cancellationDate = cancellationDate
            self.isTrialPeriod = isTrialPeriod
            self.isInIntroOfferPeriod = isInIntroOfferPeriod
            self.promotionalOfferId = promotionalOfferId
        }
    }

    /// The product type (attribute 1707), kept raw so a value this code does not know still decodes.
    public struct ProductType: RawRepresentable, Sendable, Hashable {
        public var rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        public static let nonConsumable = ProductType(rawValue: 0)
        public static let consumable = ProductType(rawValue: 1)
        public static let nonRenewingSubscription = ProductType(rawValue: 2)
        public static let autoRenewableSubscription = ProductType(rawValue: 3)
    }

    /// The value of attribute 5 that a device recomputes to check the receipt was issued to it:
    /// SHA-1 of the 16 raw bytes of `deviceId`, then `opaqueValue`, then the whole DER UTF8String of `bundleId`
    /// (tag and length included, as attribute 2 carries it).
    ///
    /// - Parameter deviceId: `identifierForVendor` on iOS, iPadOS, tvOS and watchOS.
    public static func deviceHash(deviceId: UUID, opaqueValue: [UInt8], bundleId: String) -> [UInt8] {
        var hash = Insecure.SHA1()
        withUnsafeBytes(of: deviceId.uuid) { hash.update(bufferPointer: $0) }
        hash.update(data: opaqueValue)
        hash.update(data: ReceiptAttribute.derUTF8String(bundleId))
        return Array(hash.finalize())
    }

    /// Whether ``sha1Hash`` is the device hash of this receipt's opaque value and bundle id for `deviceId`.
    public func hashMatches(deviceId: UUID) -> Bool {
        Self.deviceHash(deviceId: deviceId, opaqueValue: opaqueValue, bundleId: bundleId) == sha1Hash
    }
}
