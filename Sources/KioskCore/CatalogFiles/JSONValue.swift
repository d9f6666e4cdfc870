import Foundation

/// Any JSON value, kept as it was read so that parts of a file Kiosk does not interpret (Xcode's test settings,
/// app policies) survive a read and a write unchanged.
public enum JSONValue: Codable, Sendable, Hashable {
    case null
    case bool(Bool)
    /// Numbers as written: an integer when the text is one, else an exact decimal (Xcode's sync dates have more
    /// digits than a `Double` keeps), else (beyond a decimal's range, such as 1e300) a double.
    case integer(Int)
    case decimal(Decimal)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Reads any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Decimal.self) {
            self = .decimal(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Writes the value back as it was read.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .decimal(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }
}
