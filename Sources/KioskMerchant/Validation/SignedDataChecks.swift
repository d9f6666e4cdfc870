import ExtrasBase64
import Foundation
import KioskCore
import KioskSigning

/// Verifies what the store signed, for every configured app and environment, with Kiosk's `SignedDataVerifier`
/// (the same checks as Apple's): the chain to the configured root, the signature, the bundle id, the environment
/// and, for production notifications, the app's Apple id.
struct SignedDataChecks: Sendable {
    private let verifiers: [String: [StoreEnvironment: SignedDataVerifier]]
    private let configuration: LoadedMerchantConfiguration

    init(configuration: LoadedMerchantConfiguration, clock: any KioskClock) throws {
        var verifiers: [String: [StoreEnvironment: SignedDataVerifier]] = [:]
        for (bundleId, app) in configuration.apps {
            for environment in app.environments {
                let roots = app.roots[environment] ?? []
                verifiers[bundleId, default: [:]][environment] =
                    if let appAppleId = app.settings.appAppleId {
                        try SignedDataVerifier(
                            rootCertificates: roots, environment: environment, bundleId: bundleId,
                            appAppleId: appAppleId, clock: clock)
                    } else {
                        SignedDataVerifier.forTransactions(
                            rootCertificates: roots, environment: environment, bundleId: bundleId, clock: clock)
                    }
            }
        }
        self.verifiers = verifiers
        self.configuration = configuration
    }

    /// A verified signed transaction, with the app it belongs to.
    func transaction(_ signedTransaction: String, field: String = "signedTransaction") async throws
        -> (app: LoadedMerchantConfiguration.LoadedApp, facts: PurchaseFacts)
    {
        let claims = try Self.peek(signedTransaction, field: field)
        let (app, verifier) = try self.verifier(
            bundleId: claims["bundleId"] as? String, environment: claims["environment"] as? String, field: field)
        do {
            let payload = try await verifier.verifyAndDecodeTransaction(signedTransaction)
            return (app, try PurchaseFacts(payload, environment: verifier.environment, field: field))
        } catch let error as SignedDataVerificationError {
            throw Self.refusal(error, field: field)
        }
    }

    /// A verified notification with its verified signed transaction and renewal info.
    func notification(_ signedPayload: String) async throws -> VerifiedNotification {
        let field = "signedPayload"
        let claims = try Self.peek(signedPayload, field: field)
        let identity =
            (claims["data"] as? [String: Any]) ?? (claims["summary"] as? [String: Any])
            ?? (claims["appData"] as? [String: Any]) ?? [:]
        let (app, verifier) = try self.verifier(
            bundleId: identity["bundleId"] as? String, environment: identity["environment"] as? String, field: field)
        do {
            let payload = try await verifier.verifyAndDecodeNotification(signedPayload)
            var facts: PurchaseFacts?
            var renewal: RenewalState?
            if let signed = payload.data?.signedTransactionInfo {
                facts = try PurchaseFacts(
                    try await verifier.verifyAndDecodeTransaction(signed), environment: verifier.environment,
                    field: field)
                if payload.notificationType == .refundReversed { facts?.provenance = .reversal }
            }
            if let signed = payload.data?.signedRenewalInfo {
                let info = try await verifier.verifyAndDecodeRenewalInfo(signed)
                renewal = RenewalState(
                    environment: verifier.environment, originalTransactionId: info.originalTransactionId,
                    autoRenewStatus: info.autoRenewStatus, autoRenewProductId: info.autoRenewProductId,
                    expirationIntent: info.expirationIntent,
                    gracePeriodExpiresDate: try info.gracePeriodExpiresDate.map {
                        try PurchaseFacts.date($0, field: field)
                    },
                    signedDate: try PurchaseFacts.date(info.signedDate, field: field))
            }
            var appTransaction: AppTransactionPayload?
            if let signed = payload.appData?.signedAppTransactionInfo {
                appTransaction = try await verifier.verifyAndDecodeAppTransaction(signed)
            }
            return VerifiedNotification(
                app: app, environment: verifier.environment, payload: payload, facts: facts, renewal: renewal,
                appTransaction: appTransaction)
        } catch let error as SignedDataVerificationError {
            throw Self.refusal(error, field: field)
        }
    }

    private func verifier(bundleId: String?, environment: String?, field: String) throws
        -> (LoadedMerchantConfiguration.LoadedApp, SignedDataVerifier)
    {
        guard let bundleId, let app = configuration.apps[bundleId] else {
            throw KioskError(
                .wrongApp, "The signed data is for \(bundleId ?? "no app"), which this merchant does not sell for.",
                field: field,
                fix:
                    "Send data the store signed for one of: \(configuration.apps.keys.sorted().joined(separator: ", "))."
            )
        }
        guard let name = environment, let environment = StoreEnvironment(appleName: name),
            let verifier = verifiers[bundleId]?[environment]
        else {
            throw KioskError(
                .wrongEnvironment,
                "The signed data is from the \(environment ?? "unnamed") environment, which \(bundleId) does not accept here.",
                field: field,
                fix: "Send data from \(app.environments.map(\.appleName).sorted().joined(separator: " or ")).")
        }
        return (app, verifier)
    }

    /// The claims of a compact JWS, unverified: only to choose the verifier that then checks everything.
    private static func peek(_ jws: String, field: String) throws -> [String: Any] {
        // Split as bytes: splitting the String walks its 4 KB as characters, 8% of a replayed delivery's samples.
        let parts = jws.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3,
            let bytes = try? Base64.decode(bytes: parts[1], options: [.base64UrlAlphabet, .omitPaddingCharacter]),
            let claims = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else {
            throw KioskError(
                .malformedSignedData, "\(field) is not a compact JWS (three base64url parts with JSON claims).",
                field: field, fix: "Send the transaction's jwsRepresentation (signedTransaction) unchanged.")
        }
        return claims
    }

    private static func refusal(_ error: SignedDataVerificationError, field: String) -> KioskError {
        if case .malformed = error.jwsFailure {
            return KioskError(
                .malformedSignedData, "The signed data was refused: \(error.detail).", field: field,
                fix: "Send data exactly as the store signed it; nothing was granted.")
        }
        let code: ErrorCode =
            switch error.status {
            case .invalidAppIdentifier: .wrongApp
            case .invalidEnvironment: .wrongEnvironment
            case .retryableVerificationFailure: .verificationUnavailable
            case .verificationFailure, .invalidCertificate, .invalidChainLength, .invalidChain: .invalidSignature
            }
        if error.status == .retryableVerificationFailure {
            return KioskError(
                code, "The signed data could not be checked now: \(error.detail)", field: field, fix: "Retry later.")
        }
        return KioskError(
            code, "The signed data was refused: \(error.detail).", field: field,
            fix: "Send data exactly as the store signed it; nothing was granted.")
    }
}

/// A notification whose payload and nested signed data all verified.
struct VerifiedNotification: Sendable {
    var app: LoadedMerchantConfiguration.LoadedApp
    var environment: StoreEnvironment
    var payload: NotificationPayload
    var facts: PurchaseFacts?
    var renewal: RenewalState?
    /// The customer's app transaction, for a notification about the customer (`RESCIND_CONSENT`'s `appData`).
    var appTransaction: AppTransactionPayload?
}
