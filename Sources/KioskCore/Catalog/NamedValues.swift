/// A closed set of string values (a product type, a duration, a payment mode) that names all of them when a
/// request or file holds another: "'foo' is not one of 'consumable', 'non_consumable', …".
public protocol NamedValues: RawRepresentable, CaseIterable, Decodable where RawValue == String {}

extension NamedValues {
    /// Every value, quoted and comma-separated, as errors list them.
    public static var listed: String { allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ") }

    /// Reads the value, or fails naming every value there is.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(rawValue: text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "'\(text)' is not one of \(Self.listed)"))
        }
        self = value
    }
}
