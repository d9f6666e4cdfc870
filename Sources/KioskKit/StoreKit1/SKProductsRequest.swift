/// Hears the products an ``SKProductsRequest`` found.
public protocol SKProductsRequestDelegate: SKRequestDelegate {
    func productsRequest(_ request: SKProductsRequest, didReceive response: SKProductsResponse)
}

/// Asks the store for products by identifier.
///
/// ```swift
/// let request = SKProductsRequest(productIdentifiers: ["com.example.coins", "com.example.remove_ads"])
/// request.delegate = self
/// request.start()
/// ```
public final class SKProductsRequest: SKRequest, @unchecked Sendable {
    public let productIdentifiers: Set<String>

    /// A request through the client set with ``KioskKit/configure(_:)``.
    public convenience init(productIdentifiers: Set<String>) {
        self.init(productIdentifiers: productIdentifiers, client: KioskKit.sharedClient)
    }

    /// A request through an explicit client.
    public init(productIdentifiers: Set<String>, client: KioskStoreClient) {
        self.productIdentifiers = productIdentifiers
        super.init(client: client)
    }

    override func perform() async throws -> @Sendable (any SKRequestDelegate) -> Void {
        let answer = try await client.products(for: productIdentifiers.sorted())
        let response = SKProductsResponse(
            products: try answer.products.map(SKProduct.init),
            invalidProductIdentifiers: answer.invalidProductIdentifiers)
        return { delegate in
            (delegate as? any SKProductsRequestDelegate)?.productsRequest(self, didReceive: response)
        }
    }
}

/// What an ``SKProductsRequest`` found.
public final class SKProductsResponse: Sendable {
    /// The products on sale to the account, in the storefront's currency.
    public let products: [SKProduct]
    /// Every other requested identifier: unknown, not approved, not priced in the storefront, no agreement…
    public let invalidProductIdentifiers: [String]

    init(products: [SKProduct], invalidProductIdentifiers: [String]) {
        self.products = products
        self.invalidProductIdentifiers = invalidProductIdentifiers
    }
}
