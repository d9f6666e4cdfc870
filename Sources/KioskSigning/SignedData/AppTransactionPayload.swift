/// The payload of a signed app transaction, in Apple's `AppTransaction` shape: the environment is
/// `receiptType` (not `environment`), `appAppleId` a number, dates integer milliseconds.
public struct AppTransactionPayload: Codable, Sendable, Hashable {
    /// `Production` or `Sandbox`.
    public var receiptType: String
    public var appAppleId: Int64
    public var bundleId: String
    public var applicationVersion: String
    public var versionExternalIdentifier: Int64?
    public var receiptCreationDate: Int64
    public var originalPurchaseDate: Int64
    public var originalApplicationVersion: String
    public var deviceVerification: String?
    public var deviceVerificationNonce: String?
    public var preorderDate: Int64?
    public var appTransactionId: String
    /// `iOS`, `macOS`, `tvOS` or `visionOS`.
    public var originalPlatform: String
    public var signedDate: Int64?

    public init(
        receiptType: String, appAppleId: Int64, bundleId: String, applicationVersion: String,
        versionExternalIdentifier: Int64? = nil, receiptCreationDate: Int64, originalPurchaseDate: Int64,
        originalApplicationVersion: String, deviceVerification: String? = nil, deviceVerificationNonce: String? = nil,
        preorderDate: Int64? = nil, appTransactionId: String, originalPlatform: String = "iOS",
        signedDate: Int64? = nil
    ) {
        self.receiptType = receiptType
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.applicationVersion = applicationVersion
        self.versionExternalIdentifier = versionExternalIdentifier
        self.receiptCreationDate = receiptCreationDate
        self.originalPurchaseDate = originalPurchaseDate
        self.originalApplicationVersion = originalApplicationVersion
        self.deviceVerification = deviceVerification
        self.deviceVerificationNonce = deviceVerificationNonce
        self.preorderDate = preorderDate
        self.appTransactionId = appTransactionId
        self.originalPlatform = originalPlatform
        self.signedDate = signedDate
    }
}
