/// Fetches a freshly signed app receipt and writes it, atomically, to the client's
/// ``KioskStoreClient/appStoreReceiptURL`` (what `Bundle.main.appStoreReceiptURL` is on an Apple device).
///
/// StoreKit's sandbox receipt properties (expired, revoked, volume purchase) are not emulated.
public final class SKReceiptRefreshRequest: SKRequest, @unchecked Sendable {
    /// A request through the client set with ``KioskKit/configure(_:)``.
    public convenience init() {
        self.init(client: KioskKit.sharedClient)
    }

    /// A request through an explicit client.
    override public init(client: KioskStoreClient) {
        super.init(client: client)
    }

    override func perform() async throws -> @Sendable (any SKRequestDelegate) -> Void {
        try await client.refreshReceipt()
        return { _ in }
    }
}
