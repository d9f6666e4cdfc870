import Foundation
import KioskProtocol

/// The error domain of ``SKError``, as on Apple platforms.
public let SKErrorDomain = "SKErrorDomain"

/// A StoreKit error: `code` carries Apple's `SKError.Code` numbers, so apps switch on it as they do with StoreKit.
///
/// ```swift
/// if let error = transaction.error as? SKError, error.code == .paymentCancelled { … }
/// ```
public struct SKError: Error, Sendable, CustomNSError, LocalizedError, CustomStringConvertible {
    /// Apple's `SKError.Code` (`paymentCancelled` is 2, `storeProductNotAvailable` 5…).
    public typealias Code = StoreKitErrorCode

    public var code: Code
    /// What went wrong, for logs and for the user.
    public var message: String
    /// The Kiosk failure behind this error, if any.
    public var underlyingError: (any Error)?

    public init(_ code: Code, message: String? = nil, underlyingError: (any Error)? = nil) {
        self.code = code
        self.message = message ?? "StoreKit error \(code.name) (\(code.rawValue))."
        self.underlyingError = underlyingError
    }

    public static var errorDomain: String { SKErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message]
        if let underlyingError { info[NSUnderlyingErrorKey] = underlyingError }
        return info
    }
    public var errorDescription: String? { message }
    public var description: String { "SKError.\(code.name) (\(code.rawValue)): \(message)" }

    /// The error a payment failure from the store means.
    init(_ info: StoreKitErrorInfo) {
        self.init(Code(rawValue: info.skErrorCode) ?? .unknown, message: info.message)
    }

    /// The `SKError` an app sees for a failed Kiosk call: the store's `skErrorCode` when it sent one, else
    /// `cloudServiceNetworkConnectionFailed` for network failures, `clientInvalid` when nobody is signed in
    /// and `unknown` otherwise.
    init(_ error: KioskKitError) {
        let code: Code =
            if let number = error.storeError?.skErrorCode, let known = Code(rawValue: number) {
                known
            } else if error.code == .network {
                .cloudServiceNetworkConnectionFailed
            } else if error.code == .notSignedIn || error.httpStatus == 401 {
                .clientInvalid
            } else {
                .unknown
            }
        self.init(code, message: error.storeError?.message ?? error.message, underlyingError: error)
    }

    /// Wraps any error thrown inside KioskKit as an `SKError`.
    init(wrapping error: any Error) {
        switch error {
        case let error as SKError: self = error
        case let error as KioskKitError: self.init(error)
        default: self.init(.unknown, message: "\(error)", underlyingError: error)
        }
    }
}
