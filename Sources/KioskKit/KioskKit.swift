import Synchronization

/// The shared client behind StoreKit's static entry points (`SKPaymentQueue.default()`,
/// `Product.products(for:)`, `Transaction.updates`, `AppStore.sync()`…).
///
/// ```swift
/// let client = try KioskKit.configure(configuration)
/// try await client.signIn(email: email, password: password)
/// SKPaymentQueue.default().add(observer)
/// ```
///
/// Name clashes: KioskKit keeps StoreKit's names (`SKPaymentQueue`, `Product`, `Transaction`, `AppStore`,
/// `VerificationResult`) unprefixed. A file that imports both Apple's StoreKit and KioskKit writes
/// `KioskKit.Product`, `KioskKit.Transaction` and so on.
public enum KioskKit {
    private static let shared = Mutex<KioskStoreClient?>(nil)

    /// Makes a client from `configuration` and sets it as the shared one.
    @discardableResult
    public static func configure(_ configuration: KioskStoreClient.Configuration) throws -> KioskStoreClient {
        let client = try KioskStoreClient(configuration: configuration)
        configure(client)
        return client
    }

    /// Sets the shared client (closing the previous one is the caller's business).
    public static func configure(_ client: KioskStoreClient) {
        shared.withLock { $0 = client }
    }

    /// The shared client, if one was set.
    public static var client: KioskStoreClient? {
        shared.withLock { $0 }
    }

    /// The shared client; using StoreKit's static entry points before ``configure(_:)`` is a programmer error.
    static var sharedClient: KioskStoreClient {
        guard let client else {
            preconditionFailure("KioskKit is not configured: call KioskKit.configure(_:) at launch.")
        }
        return client
    }
}
