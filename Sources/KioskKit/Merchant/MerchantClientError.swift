import Foundation

/// Why a ``MerchantClient`` call failed: the merchant's own error (`{"error": {"code", "message", "field",
/// "fix"}}` with a 4xx/5xx status), or a failure on the way (`network`, `invalid_response`, `no_user_token`,
/// `checksum_mismatch`) with no status.
public struct MerchantClientError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// The HTTP status the merchant answered with; nil when no answer came or the client refused to send.
    public var status: Int?
    /// The merchant's error code (e.g. `unauthorized`, `unknown_order`), or the client's own: `network`,
    /// `invalid_response`, `no_user_token`, `checksum_mismatch`.
    public var code: String
    public var message: String
    /// The request field the error is about, when it is about one.
    public var field: String?
    /// What to do about it, when the merchant said.
    public var fix: String?
    /// The underlying error (a connection failure, a decoding error).
    public var cause: (any Error)?

    public init(
        status: Int? = nil, code: String, message: String, field: String? = nil, fix: String? = nil,
        cause: (any Error)? = nil
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.fix = fix
        self.cause = cause
    }

    /// E.g. `merchant 404 unknown_order: No order o_123. (field: orderId) Fix: Create the order first.`
    public var description: String {
        var text = "merchant"
        if let status { text += " \(status)" }
        text += " \(code): \(message)"
        if let field { text += " (field: \(field))" }
        if let fix { text += " Fix: \(fix)" }
        if let cause { text += " (cause: \(cause))" }
        return text
    }

    public var errorDescription: String? { description }
}
