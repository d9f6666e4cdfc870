import Foundation
import Hummingbird

/// An App Store Server API error, answered exactly as Apple answers it: the HTTP status is the first three digits
/// of `errorCode`, the body `{"errorCode":<number>,"errorMessage":"<text>"}` with `Content-Type: application/json`
/// (no charset: Apple's Python client ignores the body otherwise), and `Retry-After` on 429.
struct ServerAPIError: Error, Sendable, Equatable {
    var errorCode: Int
    var errorMessage: String
    /// Seconds, for `429 Too Many Requests`.
    var retryAfter: Int?

    init(_ errorCode: Int, _ errorMessage: String, retryAfter: Int? = nil) {
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.retryAfter = retryAfter
    }

    var status: HTTPResponse.Status { HTTPResponse.Status(code: errorCode / 10_000) }

    func response() throws -> Response {
        var response = try ServerAPIAnswer.json(Body(errorCode: errorCode, errorMessage: errorMessage), status: status)
        if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        return response
    }

    private struct Body: Encodable {
        var errorCode: Int
        var errorMessage: String
    }

    // Apple's codes and texts (reference/apple-protocols.md §4.4). Add others beside these as endpoints need them.
    static let generalBadRequest = ServerAPIError(4_000_000, "Bad request.")
    static let invalidAppIdentifier = ServerAPIError(4_000_002, "Invalid request app identifier.")
    static let invalidRequestRevision = ServerAPIError(4_000_005, "Invalid request revision.")
    static let invalidTransactionId = ServerAPIError(4_000_006, "Invalid transaction id.")
    static let invalidOriginalTransactionId = ServerAPIError(4_000_008, "Invalid original transaction id.")
    static let accountNotFound = ServerAPIError(4_040_001, "Account not found.")
    static let appNotFound = ServerAPIError(4_040_003, "App not found.")
    static let originalTransactionIdNotFound = ServerAPIError(4_040_005, "Original transaction id not found.")
    static let serverNotificationURLNotFound = ServerAPIError(
        4_040_007, "No App Store Server Notification URL found for provided app. Check that a URL is configured "
            + "in App Store Connect for this environment.")
    static let testNotificationNotFound = ServerAPIError(4_040_008, "Either the test notification token is expired "
        + "or the notification and status are not yet available.")
    static let statusRequestNotFound = ServerAPIError(4_040_009, "The server didn't find a subscription-renewal-date "
        + "extension request for this requestIdentifier and product id.")
    static let transactionIdNotFound = ServerAPIError(4_040_010, "Transaction id not found.")
    static let appTransactionDoesNotExist = ServerAPIError(4_040_019, "No AppTransaction exists for the customer.")
    static let generalInternal = ServerAPIError(5_000_000, "An unknown error occurred.")

    static func rateLimitExceeded(retryAfter: Int) -> ServerAPIError {
        ServerAPIError(4_290_000, "Rate limit exceeded.", retryAfter: retryAfter)
    }
}

/// JSON answers of the App Store Server API: Apple's field names as the value's `Codable` conformance gives them,
/// nil fields omitted, `Content-Type: application/json` exactly.
enum ServerAPIAnswer {
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        let data = try encoder.encode(value)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// An answer with no body, for calls Apple answers with a bare status (consumption: 202; finish: 200).
    static func empty(_ status: HTTPResponse.Status) -> Response {
        Response(status: status)
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return encoder
    }()
}
