import Foundation
import Logging
import X509

extension KioskStoreClient {
    /// Where the store is and who this device is.
    ///
    /// ```swift
    /// let configuration = KioskStoreClient.Configuration(
    ///     serverURL: URL(string: "http://127.0.0.1:8080")!, environment: .sandbox, bundleId: "com.example.shop",
    ///     deviceId: deviceId, stateDirectory: appSupport.appendingPathComponent("kiosk"), trustedRoots: [root])
    /// ```
    public struct Configuration: Sendable {
        /// `http(s)://host:port` of the Kiosk store.
        public var serverURL: URL
        /// `.sandbox` (sandbox testers) or `.production` (customer accounts).
        public var environment: AppStore.Environment
        /// The app's bundle id; sessions and signed transactions are bound to it.
        public var bundleId: String
        /// The device's stable id (`identifierForVendor`); keep it with the state directory.
        public var deviceId: UUID
        /// Where the device keeps its session, queue and receipt. One directory per device.
        public var stateDirectory: URL
        /// The roots signed transactions must chain to: the store's exported root of this environment.
        public var trustedRoots: [Certificate]
        /// Roots trusted for an `https` store besides the system's: the Kiosk TLS root (`kiosk certs tls`) when the
        /// device does not have it installed.
        public var tlsTrustRoots: [Certificate]
        /// Where observers and delegates are called; nil for a serial queue of the client's own.
        public var callbackQueue: DispatchQueue?
        /// The longest wait between retries of a payment, a finish or the updates stream.
        public var retryDelayMaximum: Duration
        /// How long an ordinary call waits for the store's answer before it fails (and, for a payment or a
        /// finish, is retried with the same idempotency key).
        public var requestTimeout: Duration
        public var logger: Logger

        public init(
            serverURL: URL, environment: AppStore.Environment, bundleId: String, deviceId: UUID,
            stateDirectory: URL, trustedRoots: [Certificate], callbackQueue: DispatchQueue? = nil,
            retryDelayMaximum: Duration = .seconds(30), requestTimeout: Duration = .seconds(30),
            tlsTrustRoots: [Certificate] = [], logger: Logger = Logger(label: "KioskKit")
        ) {
            self.serverURL = serverURL
            self.environment = environment
            self.bundleId = bundleId
            self.deviceId = deviceId
            self.stateDirectory = stateDirectory
            self.trustedRoots = trustedRoots
            self.callbackQueue = callbackQueue
            self.retryDelayMaximum = retryDelayMaximum
            self.requestTimeout = requestTimeout
            self.tlsTrustRoots = tlsTrustRoots
            self.logger = logger
        }
    }
}
