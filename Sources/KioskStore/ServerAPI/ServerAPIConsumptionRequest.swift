import Foundation

/// The body of `PUT /inApps/v1|v2/transactions/consumption/{transactionId}`, checked field by field with
/// Apple's error code for each, so a wrong type is reported like a wrong value.
///
/// Version 1 (deprecated, all integers but two booleans and a UUID): every field is required but
/// `refundPreference`, `customerConsented` must be true. Version 2: `customerConsented` (true),
/// `sampleContentProvided` and `deliveryStatus` are required; `consumptionPercentage` (0–100000) and
/// `refundPreference` are optional.
enum ServerAPIConsumptionRequest {
    /// Apple's V2 `deliveryStatus` values.
    static let deliveryStatuses: Set<String> = [
        "DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE",
        "UNDELIVERED_OTHER",
    ]
    /// Apple's V2 `refundPreference` values.
    static let refundPreferences: Set<String> = ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"]

    /// - Throws: ``ServerAPIError``: `4000000` when the body is not a JSON object, else the first bad field's code.
    static func validate(_ body: Data, version: Int) throws {
        guard let fields = try? JSONDecoder().decode([String: JSONScalar].self, from: body) else {
            throw ServerAPIError(4_000_000, "Invalid request. The request body is not a JSON object.")
        }
        // Apple's clients leave out unset fields; a null is the same.
        let present = fields.filter { $0.value != .null }
        guard present["customerConsented"] == .bool(true) else { throw ServerAPIError.invalidCustomerConsented }
        guard case .bool = present["sampleContentProvided"] else { throw ServerAPIError.invalidSampleContentProvided }
        if version == 1 {
            try integer(present["consumptionStatus"], in: 0...3, else: .invalidConsumptionStatus)
            try integer(present["platform"], in: 0...2, else: .invalidPlatform)
            try integer(present["deliveryStatus"], in: 0...5, else: .invalidDeliveryStatus)
            guard case .string(let token) = present["appAccountToken"], token.isEmpty || UUID(uuidString: token) != nil
            else { throw ServerAPIError.invalidAppAccountToken }
            try integer(present["accountTenure"], in: 0...7, else: .invalidAccountTenure)
            try integer(present["playTime"], in: 0...7, else: .invalidPlayTime)
            try integer(present["lifetimeDollarsRefunded"], in: 0...7, else: .invalidLifetimeDollarsRefunded)
            try integer(present["lifetimeDollarsPurchased"], in: 0...7, else: .invalidLifetimeDollarsPurchased)
            try integer(present["userStatus"], in: 0...4, else: .invalidUserStatus)
            if let preference = present["refundPreference"] {
                try integer(preference, in: 0...3, else: .invalidRefundPreference)
            }
        } else {
            guard case .string(let status) = present["deliveryStatus"], deliveryStatuses.contains(status) else {
                throw ServerAPIError.invalidDeliveryStatus
            }
            if let percentage = present["consumptionPercentage"] {
                try integer(percentage, in: 0...100_000, else: .invalidConsumptionPercentage)
            }
            if let preference = present["refundPreference"] {
                guard case .string(let name) = preference, refundPreferences.contains(name) else {
                    throw ServerAPIError.invalidRefundPreference
                }
            }
        }
    }

    private static func integer(_ value: JSONScalar?, in range: ClosedRange<Int64>, else error: ServerAPIError) throws {
        guard case .integer(let number) = value, range.contains(number) else { throw error }
    }
}
