import Foundation
import Testing

@testable import KioskCore

@Suite("Strict JSON decoding")
struct StrictJSONDecodingTests {
    enum Colour: String, Codable { case red, blue }

    struct Line: Codable, Equatable {
        var sku: String
        var quantity: Int?
    }

    struct Order: Codable, Equatable {
        var productId: String
        var colour: Colour?
        var placed: Date?
        var lines: [Line]
        var prices: [String: Line]?
    }

    private func decode(_ json: String) throws -> Order {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try StrictJSONDecoding.decode(Order.self, from: Data(json.utf8), using: decoder)
    }

    private func unknownKey(_ json: String) -> StrictJSONDecoding.UnknownKey? {
        do {
            _ = try decode(json)
            return nil
        } catch {
            return error as? StrictJSONDecoding.UnknownKey
        }
    }

    @Test
    func everyKeyTheTypeAsksForIsAcceptedAtEveryDepth() throws {
        // Proves optional keys, nested arrays, dictionaries with numeric keys, enums and strategy-read dates all
        // decode: each key a synthesized `init(from:)` asks for counts as known, present or not.
        let order = try decode(
            """
            {"productId": "p", "colour": "red", "placed": "2026-01-31T12:00:00Z",
             "lines": [{"sku": "a"}, {"sku": "b", "quantity": 2}], "prices": {"5": {"sku": "c"}}}
            """)
        #expect(order.colour == .red && order.lines.count == 2 && order.prices?["5"]?.sku == "c")
        #expect(order.placed == Date(timeIntervalSince1970: 1_769_860_800))
        #expect(try decode(#"{"productId": "p", "lines": [], "colour": null}"#).colour == nil)
    }

    @Test
    func aKeyNoDecoderAskedForIsNamedWithItsPathAndTheKeysAccepted() {
        // Proves an unknown key is refused at the top level and inside an array element, naming what is accepted.
        #expect(
            unknownKey(#"{"productId": "p", "lines": [], "size": 3}"#)
                == .init(
                    path: "size", key: "size", accepted: ["colour", "lines", "placed", "prices", "productId"],
                    meant: nil))
        #expect(
            unknownKey(#"{"productId": "p", "lines": [{"sku": "a"}, {"sku": "b", "qty": 1}]}"#)
                == .init(path: "lines[1].qty", key: "qty", accepted: ["quantity", "sku"], meant: nil))
    }

    @Test
    func aMissingKeyBesideOneSpeltLikeItIsReportedAsThatMisspelling() {
        // Proves `productID` and `prodctId` are reported as unknown keys meaning `productId`, not as a missing key,
        // and that a missing key with nothing like it stays a missing key.
        #expect(unknownKey(#"{"productID": "p", "lines": []}"#)?.meant == "productId")
        #expect(unknownKey(#"{"prodctId": "p", "lines": []}"#)?.path == "prodctId")
        #expect(unknownKey(#"{"productId": "p", "lines": [{"skus": "a"}]}"#)?.path == "lines[0].skus")
        #expect(throws: DecodingError.self) { try decode(#"{"name": "p", "lines": []}"#) }
    }
}
