import ExtrasBase64
import Foundation
import KioskCore
import Synchronization
import X509

/// Kiosk's counterpart of `SignedDataVerifier` in Apple's App Store Server Library: verifies signed
/// transactions, renewal infos, notifications and app transactions for one app in one environment, and decodes them.
///
/// First the JWS, as ``JWSVerifier`` checks it: ES256, `x5c` of exactly three certificates, the leaf and the
/// intermediate leading to one of the trusted roots with Apple's marker extensions, the leaf's signature. The chain
/// is validated at the payload's `signedDate` (else `receiptCreationDate`) when online checks are off, and at the
/// clock's now when they are on. With online checks, the intermediate's status is then asked from its OCSP
/// responder (issuer: the root) and the leaf's (issuer: the intermediate); a verified chain is remembered for
/// 15 minutes. Last, the payload's identity, exactly as Apple compares it: `bundleId`, `environment` (`receiptType`
/// for app transactions) and, in production, `appAppleId` for notifications and app transactions.
///
/// ```swift
/// let verifier = try SignedDataVerifier(
///     rootCertificates: [kioskSandboxRoot], environment: .sandbox, bundleId: "com.example.app", appAppleId: nil)
/// let transaction = try await verifier.verifyAndDecodeTransaction(signedTransaction)
/// ```
public struct SignedDataVerifier: Sendable {
    /// Whether to ask OCSP responders about the chain, and how.
    public struct OnlineChecks: Sendable {
        let transport: (any OCSPTransport)?

        /// No network: the chain is validated at the payload's signing date.
        public static let disabled = OnlineChecks(transport: nil)

        /// OCSP over `transport` (default: HTTP), and the chain validated at the clock's now.
        public static func enabled(transport: any OCSPTransport = HTTPOCSPTransport()) -> OnlineChecks {
            OnlineChecks(transport: transport)
        }
    }

    /// How long a chain that passed the online checks is trusted without asking again, as Apple's verifiers cache it.
    public static let verifiedChainLifetime: TimeInterval = 15 * 60
    /// How many verified chains are remembered.
    static let verifiedChainCapacity = 32

    public let rootCertificates: [Certificate]
    public let environment: StoreEnvironment
    public let bundleId: String
    /// The app's Apple id; required in production, where notifications and app transactions must carry it.
    public let appAppleId: Int64?
    private let jwsVerifier: JWSVerifier
    private let statusChecker: OCSPStatusChecker?
    private let clock: any KioskClock
    private let verifiedChains = VerifiedChainCache()

    /// Creates a verifier for one app in one environment.
    ///
    /// - Parameters:
    ///   - rootCertificates: The trusted roots (for Kiosk, the environment's exported root).
    ///   - environment: The environment payloads must name.
    ///   - bundleId: The app's bundle id.
    ///   - appAppleId: The app's Apple id; required in production (as Apple's verifier requires it).
    ///   - onlineChecks: ``OnlineChecks/disabled`` (default) or ``OnlineChecks/enabled(transport:)``.
    ///   - clock: "Now" for online checks, and for payloads without a signing date.
    /// - Throws: ``KioskError`` `app_apple_id_required` in production without `appAppleId`.
    public init(
        rootCertificates: [Certificate], environment: StoreEnvironment, bundleId: String, appAppleId: Int64?,
        onlineChecks: OnlineChecks = .disabled, clock: any KioskClock = SystemClock()
    ) throws {
        if environment == .production, appAppleId == nil {
            throw KioskError(
                .appAppleIdRequired, "A production SignedDataVerifier needs the app's appAppleId.",
                field: "appAppleId",
                fix: "Pass the app's Apple id (shown by `kiosk apps list`), as Apple's verifier requires in production."
            )
        }
        self.init(
            uncheckedRootCertificates: rootCertificates, environment: environment, bundleId: bundleId,
            appAppleId: appAppleId, onlineChecks: onlineChecks, clock: clock)
    }

    /// Creates a verifier for transactions and renewal infos only, which carry no `appAppleId`, as a device verifies
    /// them (KioskKit). In production, notifications and app transactions are then refused with
    /// `invalidAppIdentifier`, since there is no `appAppleId` to compare.
    public static func forTransactions(
        rootCertificates: [Certificate], environment: StoreEnvironment, bundleId: String,
        onlineChecks: OnlineChecks = .disabled, clock: any KioskClock = SystemClock()
    ) -> SignedDataVerifier {
        SignedDataVerifier(
            uncheckedRootCertificates: rootCertificates, environment: environment, bundleId: bundleId, appAppleId: nil,
            onlineChecks: onlineChecks, clock: clock)
    }

    private init(
        uncheckedRootCertificates rootCertificates: [Certificate], environment: StoreEnvironment, bundleId: String,
        appAppleId: Int64?, onlineChecks: OnlineChecks, clock: any KioskClock
    ) {
        self.rootCertificates = rootCertificates
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.jwsVerifier = JWSVerifier(rootCertificates: rootCertificates, clock: clock)
        self.statusChecker = onlineChecks.transport.map(OCSPStatusChecker.init)
        self.clock = clock
    }

    /// Verifies a signed transaction (`signedTransactionInfo`) and checks its `bundleId` and `environment`.
    ///
    /// - Throws: ``SignedDataVerificationError``.
    public func verifyAndDecodeTransaction(_ signedTransaction: String) async throws -> JWSTransactionDecodedPayload {
        let payload = try await verifiedPayload(signedTransaction, as: JWSTransactionDecodedPayload.self)
        try requireBundleId(payload.bundleId)
        try requireEnvironment(payload.environment)
        return payload
    }

    /// Verifies a signed renewal info (`signedRenewalInfo`) and checks its `environment` (it carries no bundle id).
    ///
    /// - Throws: ``SignedDataVerificationError``.
    public func verifyAndDecodeRenewalInfo(_ signedRenewalInfo: String) async throws -> JWSRenewalInfoDecodedPayload {
        let payload = try await verifiedPayload(signedRenewalInfo, as: JWSRenewalInfoDecodedPayload.self)
        try requireEnvironment(payload.environment)
        return payload
    }

    /// Verifies a notification's `signedPayload`; its identity comes from `data`, else `summary`, else `appData`.
    /// The nested signed transaction, renewal info and app transaction are not verified here: verify them with the
    /// methods of this verifier.
    ///
    /// - Throws: ``SignedDataVerificationError``.
    public func verifyAndDecodeNotification(_ signedPayload: String) async throws -> NotificationPayload {
        let payload = try await verifiedPayload(signedPayload, as: NotificationPayload.self)
        let identity: (bundleId: String, appAppleId: Int64, environment: String)
        if let data = payload.data {
            identity = (data.bundleId, data.appAppleId, data.environment)
        } else if let summary = payload.summary {
            identity = (summary.bundleId, summary.appAppleId, summary.environment)
        } else if let appData = payload.appData {
            identity = (appData.bundleId, appData.appAppleId, appData.environment)
        } else {
            throw SignedDataVerificationError(
                .invalidAppIdentifier, "the notification has no data, summary or appData to name its app")
        }
        try requireBundleId(identity.bundleId)
        try requireAppAppleId(identity.appAppleId)
        try requireEnvironment(identity.environment)
        return payload
    }

    /// Verifies a signed app transaction and checks its `bundleId`, in production its `appAppleId`, and its
    /// `receiptType` (an app transaction's environment).
    ///
    /// - Throws: ``SignedDataVerificationError``.
    public func verifyAndDecodeAppTransaction(_ signedAppTransaction: String) async throws -> AppTransactionPayload {
        let payload = try await verifiedPayload(signedAppTransaction, as: AppTransactionPayload.self)
        try requireBundleId(payload.bundleId)
        try requireAppAppleId(payload.appAppleId)
        try requireEnvironment(payload.receiptType)
        return payload
    }

    /// Verifies an app receipt (PKCS #7 DER) with ``AppReceiptVerifier`` at its creation date, then its
    /// `bundleId`, its receipt type (`Production` in production, `ProductionSandbox` in the sandbox) and, in
    /// production, its app item id. Online checks do not apply: receipts are verified offline, as devices do.
    ///
    /// - Throws: ``SignedDataVerificationError``.
    public func verifyAndDecodeAppReceipt(_ receiptDER: [UInt8]) async throws -> AppReceipt {
        let result = await AppReceiptVerifier(rootCertificates: rootCertificates).verify(receiptDER)
        let receipt: AppReceipt
        switch result {
        case .invalid(let failure): throw SignedDataVerificationError(failure)
        case .verified(let verified): receipt = verified
        }
        try requireBundleId(receipt.bundleId)
        let expectedType: AppReceipt.ReceiptType = environment == .production ? .production : .productionSandbox
        guard receipt.receiptType == expectedType else {
            throw SignedDataVerificationError(
                .invalidEnvironment,
                "the receipt type is \(receipt.receiptType.rawValue), but a \(environment.appleName) receipt "
                    + "has type \(expectedType.rawValue)")
        }
        try requireAppAppleId(receipt.appItemId)
        return receipt
    }

    /// ``verifyAndDecodeAppReceipt(_:)`` for a receipt in base64, as apps send it.
    public func verifyAndDecodeAppReceipt(base64 receipt: String) async throws -> AppReceipt {
        guard let der = Data(base64Encoded: receipt, options: .ignoreUnknownCharacters), !der.isEmpty else {
            throw SignedDataVerificationError(.verificationFailure, "the receipt is not base64")
        }
        return try await verifyAndDecodeAppReceipt(Array(der))
    }

    // MARK: - Steps

    private func verifiedPayload<Payload: Decodable>(_ jws: String, as type: Payload.Type) async throws -> Payload {
        let result: JWSVerificationResult
        if statusChecker != nil {
            result = await jwsVerifier.verify(jws) { _ in clock.now() }
        } else {
            result = await jwsVerifier.verify(jws)
        }
        switch result {
        case .invalid(let failure):
            throw SignedDataVerificationError(failure)
        case .verified(let header, let payloadJSON):
            if let statusChecker, let x5c = header.x5c {
                try await requireUnrevoked(x5c, checker: statusChecker)
            }
            do {
                return try JSONDecoder().decode(Payload.self, from: Data(payloadJSON))
            } catch {
                throw SignedDataVerificationError(
                    .verificationFailure, "the payload is not a \(Payload.self): \(error)")
            }
        }
    }

    /// The online checks of a chain that already verified: intermediate against the root, leaf against the
    /// intermediate, unless this `x5c` passed them within ``verifiedChainLifetime``.
    private func requireUnrevoked(_ x5c: [String], checker: OCSPStatusChecker) async throws {
        let now = clock.now()
        let key = x5c.prefix(2).joined(separator: ".")
        if verifiedChains.contains(key, at: now) { return }
        guard x5c.count == 3, let leafDER = try? Base64.decode(string: x5c[0]),
            let intermediateDER = try? Base64.decode(string: x5c[1]),
            let leaf = try? Certificate(derEncoded: leafDER),
            let intermediate = try? Certificate(derEncoded: intermediateDER),
            let root = rootCertificates.first(where: {
                $0.subject == intermediate.issuer
                    && $0.publicKey.isValidSignature(intermediate.signature, for: intermediate)
            })
        else {
            throw SignedDataVerificationError(
                .invalidChain, "the verified chain could not be read again for online checks")
        }
        try await checker.requireGood(intermediate, role: "intermediate certificate", issuer: root, now: now)
        try await checker.requireGood(leaf, role: "leaf certificate", issuer: intermediate, now: now)
        verifiedChains.insert(key, until: now + Self.verifiedChainLifetime, capacity: Self.verifiedChainCapacity)
    }

    private func requireBundleId(_ bundleId: String) throws {
        guard bundleId == self.bundleId else {
            throw SignedDataVerificationError(
                .invalidAppIdentifier, "signed for bundle id \(bundleId), expected \(self.bundleId)")
        }
    }

    private func requireAppAppleId(_ appAppleId: Int64) throws {
        guard environment == .production else { return }
        guard let expected = self.appAppleId else {
            throw SignedDataVerificationError(
                .invalidAppIdentifier, "this verifier was made without an appAppleId, which production requires")
        }
        guard appAppleId == expected else {
            throw SignedDataVerificationError(
                .invalidAppIdentifier, "signed for appAppleId \(appAppleId), expected \(expected)")
        }
    }

    private func requireEnvironment(_ name: String) throws {
        guard name == environment.appleName else {
            throw SignedDataVerificationError(
                .invalidEnvironment, "signed for environment \(name), expected \(environment.appleName)")
        }
    }
}

/// Chains (by their leaf and intermediate `x5c` entries) that passed the online checks, with when that expires.
private final class VerifiedChainCache: Sendable {
    private let entries = Mutex<[String: Date]>([:])

    func contains(_ key: String, at now: Date) -> Bool {
        entries.withLock { ($0[key] ?? .distantPast) > now }
    }

    func insert(_ key: String, until expiry: Date, capacity: Int) {
        entries.withLock { entries in
            entries[key] = expiry
            while entries.count > capacity, let oldest = entries.min(by: { $0.value < $1.value })?.key {
                entries[oldest] = nil
            }
        }
    }
}
