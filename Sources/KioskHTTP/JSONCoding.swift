import Foundation

extension JSONEncoder {
    /// The encoder of Kiosk's own JSON APIs: ISO 8601 dates, sorted keys, no escaped slashes.
    package static var kiosk: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

extension JSONDecoder {
    /// The decoder of Kiosk's own JSON APIs: ISO 8601 dates.
    package static var kiosk: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
