/// The paths of Kiosk's client protocol: what KioskKit sends and the store serves.
///
/// Production lives under `/storekit/v1`, the sandbox under `/sandbox/storekit/v1`; the sandbox-only test
/// controls are ``TestControlRoutes`` (absent in production). Every client call after sign-in carries
/// `Authorization: Bearer <sessionToken>`; test controls carry the admin token.
public enum StoreKitPaths {
    /// `/storekit/v1` or `/sandbox/storekit/v1`.
    public static func base(sandbox: Bool) -> String {
        sandbox ? "/sandbox/storekit/v1" : "/storekit/v1"
    }

    /// `POST` a `SignInRequest` → `SignInResponse`. `DELETE` signs the session out.
    public static let sessions = "/sessions"
    /// `POST` a `ProductsRequest` → `ProductsResponse`.
    public static let products = "/products"
    /// `POST` a `PaymentRequest` → `QueueEntry` (the payment's outcome so far).
    public static let payments = "/payments"
    /// `GET` → `QueueSnapshot`: every unfinished entry of the session's account and app (sync at launch).
    public static let unfinished = "/queue"
    /// `POST` → `QueueEntry`: finishes the entry `{sequence}` (idempotent).
    public static func finish(sequence: Int64) -> String { "/queue/\(sequence)/finish" }
    /// `GET ?after=N` → `text/event-stream` of `QueueEntry` events (`id:` is the sequence); resumable.
    public static let updates = "/updates"
    /// `POST` a `RestoreRequest` → `QueueSnapshot` of the `restored` entries it created.
    public static let restore = "/restore"
    /// `GET` → `ReceiptResponse`: a freshly signed app receipt (an `SKReceiptRefreshRequest`).
    public static let receipt = "/receipt"
    /// `GET` → `EntitlementsResponse`: what the account owns now in this app.
    public static let entitlements = "/entitlements"
    /// `POST` a `CancelSubscriptionRequest` → `CancelSubscriptionResponse`: turns auto-renew off through the
    /// retention flow (idempotent by the request's identifier).
    public static func cancelSubscription(originalTransactionId: String) -> String {
        "/subscriptions/\(originalTransactionId)/cancel"
    }
}
