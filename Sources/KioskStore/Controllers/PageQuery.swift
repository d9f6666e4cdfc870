import Hummingbird
import KioskCore

/// An admin list's `limit` and `offset`: one page of the list, in its order. A request without `limit` asks for
/// the whole list.
struct PageQuery {
    /// The largest page a request may ask for.
    static let maxLimit = 1000

    var limit: Int
    var offset: Int

    /// The page `request` asks for; nil when it has no `limit`. Throws 400 `invalid_value` naming the parameter when
    /// either is not a whole number in range.
    init?(_ request: Request) throws {
        let query = request.uri.queryParameters
        guard let limitText = query.get("limit") else {
            if query.get("offset") != nil {
                throw KioskError(
                    .invalidValue, "'offset' pages the list only with 'limit'.", field: "offset",
                    fix: "Add limit (1 to \(Self.maxLimit)), or leave out offset to list everything.")
            }
            return nil
        }
        limit = try Self.number(limitText, field: "limit", in: 1...Self.maxLimit)
        offset = try query.get("offset").map { try Self.number($0, field: "offset", in: 0...1_000_000_000) } ?? 0
    }

    /// Where the page after one of `shown` items out of `total` starts; nil after the last.
    func nextOffset(shown: Int, total: Int) -> Int? {
        offset + shown < total ? offset + shown : nil
    }

    private static func number(_ text: String, field: String, in range: ClosedRange<Int>) throws -> Int {
        guard let number = Int(text), range.contains(number) else {
            throw KioskError(
                .invalidValue,
                "'\(text.prefix(20))' is not a \(field) from \(range.lowerBound) to \(range.upperBound).",
                field: field, fix: "Give a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
        return number
    }
}
