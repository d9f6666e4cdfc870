/// A field of one of Apple's request bodies as sent, with strings, booleans and integers kept apart, so a wrong type
/// is answered like a wrong value.
enum JSONScalar: Decodable, Equatable {
    case string(String)
    case bool(Bool)
    case integer(Int64)
    case null
    /// A fraction, an array or an object: never a valid value of the fields Kiosk reads this way.
    case other

    /// Tries the types in the order they are most often sent, strings first: each failed attempt costs the decoder
    /// an error with a message, which made reading `verifyReceipt`'s `receipt-data` 7% of that endpoint's time.
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else {
            self = .other
        }
    }
}
