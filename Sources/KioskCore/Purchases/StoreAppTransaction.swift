import Foundation

/// An account's app transaction in one app and environment: Apple's `AppTransaction`, the record that the
/// account got the app. One per (environment, app, account); `id` is its `appTransactionId`.
public struct StoreAppTransaction: Codable, Sendable, Hashable {
    public var environment: StoreEnvironment
    public var id: Int64
    public var appId: App.ID
    public var accountId: UUID
    /// When the account first got the app (first sign-in, or first sandbox test purchase).
    public var originalPurchaseDate: Date
    /// Once a parent or guardian withdrew consent for this (child's) account's use of the app: the UUID of the
    /// `RESCIND_CONSENT` notification that told the developer.
    public var consentRescindedBy: String?

    public init(
        environment: StoreEnvironment, id: Int64, appId: App.ID, accountId: UUID, originalPurchaseDate: Date,
        consentRescindedBy: String? = nil
    ) {
        self.environment = environment
        self.id = id
        self.appId = appId
        self.accountId = accountId
        self.originalPurchaseDate = originalPurchaseDate
        self.consentRescindedBy = consentRescindedBy
    }
}

/// The latest consumption information a developer sent for a transaction through the App Store Server API,
/// kept for the refund decision it informs.
public struct ConsumptionReport: Codable, Sendable, Hashable {
    public var environment: StoreEnvironment
    public var transactionId: Int64
    public var appId: App.ID
    /// 1 (`/inApps/v1/transactions/consumption`) or 2 (`/inApps/v2/…`).
    public var apiVersion: Int
    /// The request body as received (JSON).
    public var body: String
    public var receivedAt: Date

    public init(
        environment: StoreEnvironment, transactionId: Int64, appId: App.ID, apiVersion: Int, body: String,
        receivedAt: Date
    ) {
        self.environment = environment
        self.transactionId = transactionId
        self.appId = appId
        self.apiVersion = apiVersion
        self.body = body
        self.receivedAt = receivedAt
    }
}
