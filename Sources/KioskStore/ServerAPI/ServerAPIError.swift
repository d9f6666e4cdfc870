import Foundation
import Hummingbird
import KioskProtocol

/// An App Store Server API error, answered exactly as Apple answers it: the HTTP status is the first three digits
/// of `errorCode`, the body `{"errorCode":<number>,"errorMessage":"<text>"}` with `Content-Type: application/json`
/// (no charset: Apple's Python client ignores the body otherwise), and `Retry-After` on 429.
struct ServerAPIError: Error, Sendable, Equatable {
    var errorCode: Int
    var errorMessage: String
    /// Seconds, for `429 Too Many Requests`.
    var retryAfter: String?

    init(_ errorCode: Int, _ errorMessage: String, retryAfter: String? = nil) {
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.retryAfter = retryAfter
    }

    var status: HTTPResponse.Status { HTTPResponse.Status(code: errorCode / 10_000) }

    func response() throws -> Response {
        var response = try ServerAPIAnswer.json(Body(errorCode: errorCode, errorMessage: errorMessage), status: status)
        if let retryAfter { response.headers[.retryAfter] = retryAfter }
        return response
    }

    private struct Body: Encodable {
        var errorCode: Int
        var errorMessage: String
    }

    // Apple's codes and texts (App Store Server API: Error codes). Add others beside these as endpoints need them.
    static let generalBadRequest = ServerAPIError(4_000_000, "Bad request.")
    static let invalidAppIdentifier = ServerAPIError(4_000_002, "Invalid request app identifier.")
    static let invalidRequestRevision = ServerAPIError(4_000_005, "Invalid request revision.")
    static let invalidTransactionId = ServerAPIError(4_000_006, "Invalid transaction id.")
    static let invalidOriginalTransactionId = ServerAPIError(4_000_008, "Invalid original transaction id.")
    static let accountNotFound = ServerAPIError(4_040_001, "Account not found.")
    static let appNotFound = ServerAPIError(4_040_003, "App not found.")
    static let originalTransactionIdNotFound = ServerAPIError(4_040_005, "Original transaction id not found.")
    static let serverNotificationURLNotFound = ServerAPIError(
        4_040_007,
        "No App Store Server Notification URL found for provided app. Check that a URL is configured "
            + "in App Store Connect for this environment.")
    static let testNotificationNotFound = ServerAPIError(
        4_040_008,
        "Either the test notification token is expired "
            + "or the notification and status are not yet available.")
    static let statusRequestNotFound = ServerAPIError(
        4_040_009,
        "The server didn't find a subscription-renewal-date "
            + "extension request for this requestIdentifier and product id.")
    static let transactionIdNotFound = ServerAPIError(4_040_010, "Transaction id not found.")
    static let appTransactionDoesNotExist = ServerAPIError(4_040_019, "No AppTransaction exists for the customer.")
    static let generalInternal = ServerAPIError(5_000_000, "An unknown error occurred.")

    static let startDateTooFarInPast = ServerAPIError(
        4_000_012, "Invalid request. The start date is earlier than the allowed start date.")
    static let startDateAfterEndDate = ServerAPIError(
        4_000_013, "Invalid request. The end date precedes the start date or the dates are the same.")
    static let invalidPaginationToken = ServerAPIError(4_000_014, "Invalid request. The pagination token is invalid.")
    static let invalidStartDate = ServerAPIError(
        4_000_015, "Invalid request. The start date is not a timestamp value in milliseconds.")
    static let invalidEndDate = ServerAPIError(
        4_000_016, "Invalid request. The end date is not a timestamp value in milliseconds.")
    static let invalidNotificationType = ServerAPIError(
        4_000_018, "Invalid request. The notification type or subtype is invalid.")
    static let multipleFiltersSupplied = ServerAPIError(
        4_000_019, "Invalid request. Only one filter, transactionId or notificationType, can be provided.")
    static let invalidTestNotificationToken = ServerAPIError(
        4_000_020, "Invalid request. The test notification token is invalid.")
    static let invalidExtendByDays = ServerAPIError(4_000_009, "Invalid extend by days value.")
    static let invalidExtendReasonCode = ServerAPIError(4_000_010, "Invalid extend reason code.")
    static let invalidRequestIdentifier = ServerAPIError(4_000_011, "Invalid request identifier.")
    static let invalidProductId = ServerAPIError(4_000_023, "Invalid request. The product id parameter is invalid.")
    static let invalidEmptyStorefrontCountryCodeList = ServerAPIError(
        4_000_027, "Invalid request. The storefront country code list is empty.")
    static let invalidStorefrontCountryCode = ServerAPIError(
        4_000_028, "Invalid request. A storefront country code was invalid.")
    static let invalidStatus = ServerAPIError(4_000_031, "Invalid request. The status parameter is invalid.")
    static let subscriptionExtensionIneligible = ServerAPIError(
        4_030_004, "Forbidden - subscription state ineligible for extension.")
    static let subscriptionMaxExtension = ServerAPIError(
        4_030_005, "Forbidden - subscription has reached maximum extension count.")
    static let invalidSort = ServerAPIError(4_000_021, "Invalid request. The sort parameter is invalid.")
    static let invalidProductType = ServerAPIError(4_000_022, "Invalid request. The product type parameter is invalid.")
    static let invalidSubscriptionGroupIdentifier = ServerAPIError(
        4_000_024, "Invalid request. The subscription group identifier parameter is invalid.")
    static let invalidExcludeRevoked = ServerAPIError(
        4_000_025, "Invalid request. The exclude revoked parameter is invalid.")
    static let invalidInAppOwnershipType = ServerAPIError(
        4_000_026, "Invalid request. The in-app ownership type parameter is invalid.")
    static let invalidRevoked = ServerAPIError(4_000_030, "Invalid request. The revoked parameter is invalid.")
    static let invalidAccountTenure = ServerAPIError(4_000_032, "Invalid request. The account tenure field is invalid.")
    static let invalidAppAccountToken = ServerAPIError(
        4_000_033, "Invalid request. The app account token field must contain a valid UUID or an empty string.")
    static let invalidConsumptionStatus = ServerAPIError(
        4_000_034, "Invalid request. The consumption status field is invalid.")
    static let invalidCustomerConsented = ServerAPIError(
        4_000_035, "Invalid request. The customer consented field is required and must indicate the customer consented."
    )
    static let invalidDeliveryStatus = ServerAPIError(
        4_000_036, "Invalid request. The delivery status field is invalid.")
    static let invalidLifetimeDollarsPurchased = ServerAPIError(
        4_000_037, "Invalid request. The lifetime dollars purchased field is invalid.")
    static let invalidLifetimeDollarsRefunded = ServerAPIError(
        4_000_038, "Invalid request. The lifetime dollars refunded field is invalid.")
    static let invalidPlatform = ServerAPIError(4_000_039, "Invalid request. The platform field is invalid.")
    static let invalidPlayTime = ServerAPIError(4_000_040, "Invalid request. The playtime field is invalid.")
    static let invalidSampleContentProvided = ServerAPIError(
        4_000_041, "Invalid request. The sample content provided field is invalid.")
    static let invalidUserStatus = ServerAPIError(4_000_042, "Invalid request. The user status field is invalid.")
    static let invalidTransactionNotConsumable = ServerAPIError(
        4_000_043,
        "Invalid request. The transaction id parameter must represent a consumable or auto-renewable subscription.")
    static let invalidRefundPreference = ServerAPIError(
        4_000_000, "Invalid request. The refund preference field is invalid.")
    static let invalidConsumptionPercentage = ServerAPIError(
        4_000_000, "Invalid request. The consumption percentage field is invalid.")
    static let invalidAppAccountTokenUUID = ServerAPIError(
        4_000_183, "Invalid request. The app account token field must be a valid UUID.")
    static let transactionIdIsNotOriginalTransactionId = ServerAPIError(
        4_000_187, "Invalid request. The transaction ID provided is not an original transaction ID.")

    static func rateLimitExceeded(retryAfter: String) -> ServerAPIError {
        ServerAPIError(4_290_000, "Rate limit exceeded.", retryAfter: retryAfter)
    }
}

/// JSON answers of the App Store Server API: Apple's field names as the value's `Codable` conformance gives them,
/// nil fields omitted, `Content-Type: application/json` exactly.
enum ServerAPIAnswer {
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        try encoded(value, status: status)
    }

    /// Get Transaction Info's answer, the Server API's most frequent: `{"signedTransactionInfo":"…"}`, the bytes
    /// `JSONEncoder` writes, written directly. A compact JWS is base64url parts and dots, which JSON carries as they
    /// are, and scanning its 4 KB for characters to escape took a tenth of the call's CPU at 64 connections. Text
    /// that would need escaping goes through the encoder.
    static func json(_ value: TransactionInfoResponse) throws -> Response {
        var jws = value.signedTransactionInfo
        guard jws.withUTF8(carriedAsItIs) else { return try encoded(value, status: .ok) }
        var body = ByteBuffer()
        body.reserveCapacity(jws.utf8.count + 28)
        body.writeStaticString(#"{"signedTransactionInfo":""#)
        body.writeString(jws)
        body.writeStaticString(#""}"#)
        return jsonResponse(body, status: .ok)
    }

    /// verifyReceipt's answer: an app receipt's answer (and every failure) written by
    /// ``VerifyReceiptResponse/jsonBytes()``, the same bytes as the encoder's.
    static func json(_ value: VerifyReceiptAnswer) throws -> Response {
        switch value {
        case .appReceipt(let answer): jsonResponse(ByteBuffer(bytes: try answer.jsonBytes()), status: .ok)
        case .transactionReceipt: try encoded(value, status: .ok)
        }
    }

    /// Whether a JSON string holds these bytes as they are, as `JSONEncoder` writes them with unescaped slashes: no
    /// `"`, `\` or control character. One pass with no early exit, which the compiler makes vector instructions of:
    /// testing each byte of a 4 KB JWS against base64url's alphabet in turn was 3% of Get Transaction Info's samples
    /// at 64 connections.
    private static func carriedAsItIs(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var escaped: UInt8 = 0
        for byte in bytes {
            escaped |=
                (byte < 0x20 ? 1 : 0) | (byte == UInt8(ascii: "\"") ? 1 : 0) | (byte == UInt8(ascii: "\\") ? 1 : 0)
        }
        return escaped == 0
    }

    private static func encoded(_ value: some Encodable, status: HTTPResponse.Status) throws -> Response {
        jsonResponse(ByteBuffer(bytes: try encoder.encode(value)), status: status)
    }

    private static func jsonResponse(_ body: ByteBuffer, status: HTTPResponse.Status) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
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
