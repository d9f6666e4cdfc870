/// StoreKit 2's `AppStore`: environment and sync.
public enum AppStore {
    /// A store environment, as signed transactions name it (`Production`, `Sandbox`).
    public struct Environment: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public static let production = Environment(rawValue: "Production")
        public static let sandbox = Environment(rawValue: "Sandbox")

        public var description: String { rawValue }
    }

    /// Whether the shared client can take payments now: configured and signed in.
    public static var canMakePayments: Bool { SKPaymentQueue.canMakePayments() }

    /// Brings the device up to date with the store: its unfinished transactions, and the refunds and revocations
    /// made since it last heard (to `Transaction.updates` and SK1's `didRevokeEntitlementsForProductIdentifiers`);
    /// then refreshes the app receipt. When it returns, SK1 observers have been called with what it brought.
    /// Creates no transactions (unlike `restoreCompletedTransactions`).
    public static func sync() async throws {
        try await sync(client: KioskKit.sharedClient)
    }

    /// ``sync()`` through an explicit client.
    public static func sync(client: KioskStoreClient) async throws {
        do {
            try await client.paymentQueue.syncNow()
            try await client.refreshReceipt()
        } catch {
            throw SKError(wrapping: error)
        }
    }
}
