import Foundation
import KioskCore

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
    /// The decoder of Kiosk's own JSON APIs: ISO 8601 dates (`2026-01-31T12:00:00Z`) within `Date.kioskRange`; any
    /// other value is refused at its field.
    package static var kiosk: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = ISO8601DateFormatter().date(from: text), Date.kioskRange.contains(date) else {
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription: "'\(text.prefix(40))' is not an ISO 8601 date-time such as 2026-01-31T12:00:00Z "
                        + "from \(Date.kioskRangeText)")
            }
            return date
        }
        return decoder
    }
}
