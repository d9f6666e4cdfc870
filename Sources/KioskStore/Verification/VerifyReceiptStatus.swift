/// The `status` of a `verifyReceipt` answer, with the condition that produces each
/// (Apple's verifyReceipt documentation, `status`). Answers always come with HTTP 200.
enum VerifyReceiptStatus: Int, Sendable {
    /// The receipt is valid (an expired subscription inside still answers 0).
    case valid = 0
    /// The request was not an HTTP POST of a JSON object.
    case notPostOfJSON = 21000
    /// `receipt-data` is missing, not base64, or not a receipt.
    case malformedReceiptData = 21002
    /// The receipt's signature or certificate chain does not verify.
    case notAuthenticated = 21003
    /// `password` is not the app's shared secret, or is missing where a subscription needs it.
    case sharedSecretMismatch = 21004
    /// The store could not read its database; try again.
    case serverUnavailable = 21005
    /// An iOS 6-style receipt of an auto-renewable subscription that has expired; the receipt is still decoded.
    case subscriptionExpired = 21006
    /// A sandbox receipt sent to production: send it to `/sandbox/verifyReceipt`.
    case sandboxReceiptSentToProduction = 21007
    /// A production receipt sent to the sandbox: send it to `/verifyReceipt`.
    case productionReceiptSentToSandbox = 21008
    /// An internal data access error; try again.
    case internalDataAccessError = 21009
    /// The account the receipt belongs to (or its app, or its purchase) no longer exists.
    case accountNotFound = 21010

    /// Apple's internal data access errors, answered with `is-retryable: true`.
    static let retryableRange = 21100...21199

    /// The statuses the sandbox test controls may arm (`kiosk test fail-next --api verifyReceipt --error 21005`):
    /// the temporary ones a merchant server must retry.
    static func isArmable(_ status: Int) -> Bool {
        status == serverUnavailable.rawValue || status == internalDataAccessError.rawValue
            || retryableRange.contains(status)
    }
}
