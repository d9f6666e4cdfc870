import AsyncHTTPClient
import Foundation
import KioskHTTPClient
import KioskProtocol
import NIOCore

/// One device of one app talking to a Kiosk store: its session, its durable payment queue, its receipt.
///
/// Everything in KioskKit hangs off a client, so several independent devices can live in one process (tests
/// run two devices of the same account). `SKPaymentQueue.default()`, `Product.products(for:)` and the other
/// StoreKit-style entry points use the client set with ``KioskKit/configure(_:)``; every one of them also has
/// a form taking an explicit client.
///
/// ```swift
/// let client = try KioskStoreClient(configuration: configuration)
/// try await client.signIn(email: "tester@example.com", password: "sandbox-pass")
/// client.paymentQueue.add(observer)
/// …
/// await client.close()
/// ```
///
/// Call ``close()`` before dropping a client: it stops the background work and shuts the HTTP client down.
public final class KioskStoreClient: Sendable {
    public let configuration: Configuration
    /// This device's payment queue (``SKPaymentQueue/default()`` for the shared client).
    public let paymentQueue: SKPaymentQueue
    /// Where ``SKReceiptRefreshRequest`` writes the app receipt (PKCS #7 DER), in the state directory.
    public let appStoreReceiptURL: URL
    let callbackQueue: DispatchQueue
    let verifier: TransactionVerifier
    private let http: HTTPClient
    private let api: StoreAPI

    /// Opens the device's state directory (creating it) and reads its stored session and queue.
    ///
    /// - Throws: ``KioskKitError`` `.stateDirectory` when the directory cannot be created or its state read.
    public init(configuration: Configuration) throws {
        let stateFile = try DeviceStateFile(directory: configuration.stateDirectory)
        let device = try stateFile.load()
        // The updates stream sends a keep-alive comment every ~15 s; silence for longer (45 s, or the request timeout
        // when that is longer) means a dead connection.
        let readTimeout = max(Duration.seconds(45), configuration.requestTimeout)
        // Fail fast: a connection that cannot be made (a refused port, a certificate of an untrusted root) is
        // reported at once rather than retried until the 10 s connect timeout; the payment queue retries on its own.
        let http = try JSONHTTPClient.makeHTTPClient(
            trusting: configuration.tlsTrustRoots, readTimeout: TimeAmount(clamping: readTimeout), failFast: true)
        let api = StoreAPI(
            http: http, serverURL: configuration.serverURL, sandbox: configuration.environment == .sandbox,
            requestTimeout: TimeAmount(clamping: configuration.requestTimeout))
        self.configuration = configuration
        self.http = http
        self.api = api
        self.callbackQueue = configuration.callbackQueue ?? DispatchQueue(label: "KioskKit.callbacks")
        self.appStoreReceiptURL = configuration.stateDirectory.appendingPathComponent("receipt")
        self.verifier = TransactionVerifier(
            rootCertificates: configuration.trustedRoots, bundleId: configuration.bundleId,
            environment: configuration.environment)
        self.paymentQueue = SKPaymentQueue(
            api: api, stateFile: stateFile, device: device, callbackQueue: callbackQueue,
            logger: configuration.logger, retryDelayMaximum: configuration.retryDelayMaximum)
    }

    /// Whether an account is signed in (the session survives relaunches).
    public var isSignedIn: Bool { account != nil }

    /// The signed-in account.
    public var account: AccountInfo? {
        paymentQueue.locked.withLock { $0.device.session?.account }
    }

    /// Signs an account in on this device and stores the session in the state directory. Signing in to another
    /// account starts an empty queue for it.
    ///
    /// - Throws: ``KioskKitError``; the store's codes include `invalid_credentials`, `account_wrong_environment`
    ///   (a sandbox tester on production or the reverse) and `unknown_app`.
    @discardableResult
    public func signIn(email: String, password: String) async throws -> AccountInfo {
        let answer = try await api.signIn(
            SignInRequest(
                email: email, password: password, bundleId: configuration.bundleId,
                deviceId: configuration.deviceId))
        try await paymentQueue.signIn(
            StoredSession(
                token: answer.sessionToken, environment: answer.environment, account: answer.account,
                storefront: answer.storefront))
        return answer.account
    }

    /// Signs out: the store forgets the session (best effort) and the device forgets its token. Unfinished
    /// transactions stay stored for the next sign-in of the same account.
    public func signOut() async throws {
        if let previous = try await paymentQueue.signOut() {
            try? await api.signOut(token: previous.token)
        }
    }

    /// Stops background work, writes the state and shuts the HTTP client down. The client is unusable after.
    public func close() async {
        await paymentQueue.close()
        try? await http.shutdown()
    }

    /// A client dropped without ``close()`` still shuts its HTTP client down (AsyncHTTPClient traps on a client
    /// released while running); after ``close()`` this does nothing.
    deinit {
        let http = self.http
        Task { try? await http.shutdown() }
    }

    func products(for identifiers: [String]) async throws -> ProductsResponse {
        try await api.products(identifiers, token: paymentQueue.requireSession().token)
    }

    func entitlements() async throws -> EntitlementsResponse {
        try await api.entitlements(token: paymentQueue.requireSession().token)
    }

    func cancelSubscription(_ originalTransactionId: UInt64, _ request: CancelSubscriptionRequest) async throws
        -> CancelSubscriptionResponse
    {
        try await api.cancelSubscription(
            String(originalTransactionId), request, token: paymentQueue.requireSession().token)
    }

    /// Fetches a fresh app receipt and replaces ``appStoreReceiptURL`` atomically.
    func refreshReceipt() async throws {
        let answer = try await api.receipt(token: paymentQueue.requireSession().token)
        guard let der = Data(base64Encoded: answer.receipt) else {
            throw KioskKitError(code: .invalidResponse, message: "The store's receipt is not base64.")
        }
        let url = appStoreReceiptURL
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try der.write(to: url, options: .atomic) })
            }
        }
    }
}
