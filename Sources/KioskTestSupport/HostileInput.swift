/// The values a bad-input campaign puts in a field's place, and the answers a route must give them: the catalogue the
/// hostile-input suites of both servers share.
///
/// A number field is tried with every ``HostileNumber``, a text field with every ``HostileText``, each in a JSON
/// body built from a template whose `$` the value replaces; ``HostileOutcome`` says what the route must answer.
public enum HostileNumber: String, CaseIterable, Sendable {
    case zero = "0"
    case negative = "-1"
    /// Beyond a Double: not a number JSON parsers can hold.
    case overDouble = "1e400"
    case underDouble = "-1e400"
    case huge = "1e300"
    case nearInt64 = "9.3e18"
    case int64Max = "9223372036854775807"
    case beyondInt64 = "9223372036854775808"
    case int64Min = "-9223372036854775808"
    case belowInt64 = "-9223372036854775809"
    /// Year 10000 in milliseconds.
    case year10000 = "253402300800000"
    /// Before year 1 in milliseconds.
    case beforeYear1 = "-62135596800001"
    case fraction = "0.5"
    case nanText = "\"NaN\""
    case digitText = "\"12\""
    case null = "null"
    case array = "[]"
    case object = "{}"
    case bool = "true"

    /// What a whole-number field answers: values out of its range get `outOfRange`, the rest the refusal every
    /// Kiosk JSON body gives (a number no Int64 holds, a number no parser holds, a wrong type); `null` is `null`.
    public func integerField(_ field: String, outOfRange: HostileOutcome, null: HostileOutcome) -> HostileOutcome {
        switch self {
        case .zero, .negative, .int64Max, .int64Min, .year10000, .beforeYear1: outOfRange
        case .huge, .nearInt64, .beyondInt64, .belowInt64, .fraction: .refused(400, "invalid_value", field: field)
        case .overDouble, .underDouble: .refused(400, "invalid_json", field: nil)
        case .nanText, .digitText, .array, .object, .bool: .refused(400, "invalid_type", field: field)
        case .null: null
        }
    }
}

/// Text an attacker sends in a string field's place.
public enum HostileText: String, CaseIterable, Sendable {
    case nul, escape, newline
    /// One character over the 4,096 every Kiosk text field allows.
    case tooLong
    /// Over a 64 KiB body on its own.
    case farTooLong
    /// Over the 1 MiB a Kiosk JSON route (outside catalog imports and signed-data uploads) takes.
    case overBody
    /// A hundred thousand nested arrays.
    case deep

    /// The JSON value.
    public var json: String {
        switch self {
        case .nul: #""a\u0000b""#
        case .escape: #""a\u001bb""#
        case .newline: #""a\nb""#
        case .tooLong: "\"" + String(repeating: "x", count: 4_097) + "\""
        case .farTooLong: "\"" + String(repeating: "x", count: 70_000) + "\""
        case .overBody: "\"" + String(repeating: "x", count: 2 * 1_048_576) + "\""
        case .deep: String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        }
    }

    /// What a Kiosk text field answers, on a route whose body limit is `bodyLimit` bytes.
    public func kioskField(_ field: String, bodyLimit: Int) -> HostileOutcome {
        switch self {
        case .nul, .escape, .newline: .refused(400, "invalid_character", field: field)
        case .tooLong: .refused(400, "text_too_long", field: field)
        case .farTooLong where bodyLimit > 70_000: .refused(400, "text_too_long", field: field)
        case .farTooLong, .overBody: .refused(413, "body_too_large", field: nil)
        case .deep where bodyLimit > 200_000: .malformedJSON
        case .deep: .refused(413, "body_too_large", field: nil)
        }
    }
}

/// What a route must answer a hostile value.
public enum HostileOutcome: Equatable, Sendable, CustomStringConvertible {
    /// Kiosk's refusal: the status and `{"error": {"code", "field", …}}`.
    case refused(Int, String, field: String?)
    /// `invalid_json` at the line and column where the body stops being JSON.
    case malformedJSON
    /// Apple's App Store Server API refusal: the status and `errorCode`.
    case apple(Int, Int)
    /// Apple's `verifyReceipt`: HTTP 200 and this `status`.
    case receiptStatus(Int)
    /// Taken (the value is one the field allows): this status.
    case accepted(Int)

    public var description: String {
        switch self {
        case .refused(let status, let code, let field): "\(status) \(code)\(field.map { " at \($0)" } ?? "")"
        case .malformedJSON: "400 invalid_json at a line and column"
        case .apple(let status, let code): "\(status) errorCode \(code)"
        case .receiptStatus(let status): "status \(status)"
        case .accepted(let status): "\(status)"
        }
    }

    /// The outcome an answer (status and JSON body) shows.
    public static func of(status: Int, json: [String: Any]) -> HostileOutcome {
        if let error = json["error"] as? [String: Any], let code = error["code"] as? String {
            let field = error["field"] as? String
            if code == "invalid_json", field?.hasPrefix("line ") == true { return .malformedJSON }
            return .refused(status, code, field: field)
        }
        if let code = json["errorCode"] as? Int { return .apple(status, code) }
        if status == 200, let receipt = json["status"] as? Int, receipt != 0 { return .receiptStatus(receipt) }
        return .accepted(status)
    }
}
