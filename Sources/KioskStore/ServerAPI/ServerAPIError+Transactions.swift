/// Apple's error codes and texts for bad input to the transaction endpoints (reference/apple-protocols.md §4.4).
extension ServerAPIError {
    static let startDateAfterEndDate = ServerAPIError(
        4_000_013, "Invalid request. The end date precedes the start date.")
    static let invalidStartDate = ServerAPIError(
        4_000_015, "Invalid request. The start date is not a timestamp value in milliseconds.")
    static let invalidEndDate = ServerAPIError(
        4_000_016, "Invalid request. The end date is not a timestamp value in milliseconds.")
    static let invalidSort = ServerAPIError(4_000_021, "Invalid request. The sort parameter is invalid.")
    static let invalidProductType = ServerAPIError(4_000_022, "Invalid request. The product type parameter is invalid.")
    static let invalidProductId = ServerAPIError(4_000_023, "Invalid request. The product id parameter is invalid.")
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
}
