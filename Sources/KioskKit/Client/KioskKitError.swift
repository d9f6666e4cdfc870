import KioskProtocol

/// Why a Kiosk call failed: a stable code, a message that says what to do, the store's own error when it sent
/// one, and the underlying cause.
///
/// StoreKit-facing APIs report failures as ``SKError``; this type is for Kiosk's own calls (sign-in,
/// configuration, state directory) and is the ``SKError/underlyingError`` of the `SKError`s made from it.
public struct KioskKitError: Error, Sendable, CustomStringConvertible {
    /// A stable, comparable error code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case notSignedIn, network, store, invalidResponse, stateDirectory
        }

        private let base: Base

        /// No account is signed in on this client; call ``KioskStoreClient/signIn(email:password:)``.
        public static let notSignedIn = Code(base: .notSignedIn)
        /// The store could not be reached or the connection broke; retrying may succeed.
        public static let network = Code(base: .network)
        /// The store answered with an error; ``KioskKitError/storeError`` says which.
        public static let store = Code(base: .store)
        /// The store's answer could not be read.
        public static let invalidResponse = Code(base: .invalidResponse)
        /// The state directory could not be read or written.
        public static let stateDirectory = Code(base: .stateDirectory)

        public var description: String { base.rawValue }
    }

    public var code: Code
    public var message: String
    /// The HTTP status, when the store answered.
    public var httpStatus: Int?
    /// The store's error body (`code`, `message`, `fix`, `skErrorCode`…), when it sent one.
    public var storeError: ErrorResponse.Body?
    public var cause: (any Error)?

    public init(
        code: Code, message: String, httpStatus: Int? = nil, storeError: ErrorResponse.Body? = nil,
        cause: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.storeError = storeError
        self.cause = cause
    }

    /// Whether the same request may succeed later: the network failed or the store had a transient (5xx)
    /// failure that carries no StoreKit error for the app.
    var isRetryable: Bool {
        if code == .network { return true }
        guard code == .store, let httpStatus else { return false }
        return httpStatus >= 500 && storeError?.skErrorCode == nil
    }

    public var description: String {
        var text = "KioskKitError.\(code): \(message)"
        if let storeError {
            text += " [\(storeError.code)]"
            if let fix = storeError.fix { text += " Fix: \(fix)" }
        }
        if let cause { text += " (cause: \(cause))" }
        return text
    }
}
